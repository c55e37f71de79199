//! Growth past one table: *links* (module docs, "Links"), concurrent.
//!
//! A link is a table that doubles in place (`engine.rs`). When the newest link has
//! doubled as often as its codes pay for and an insert finds no room, a link with as
//! many buckets starts (twice as many in chains decoded from older snapshots:
//! [`LinkSizes`]), in which every key's stream goes on where the newest link stopped
//! spending bits on addresses. Inserts go to the newest link; lookups ask every link;
//! a remove takes from the newest link that answers, whose code is the longest match.
//!
//! No code ever moves between links, so a lookup that asks each link in turn (each
//! with its own consistent read) misses nothing: a key's copy stays in the link it went
//! into. A link is published once, before the count that makes it visible is raised
//! with `Release`; an insert that reads the count with `Acquire` and lands in the new
//! link happens after it, and so does any lookup that starts after that insert ends.

use std::collections::TryReserveError;

use smallvec::SmallVec;

use super::engine::target_stripes;
use super::engine::{ExpandTable, LookupPath};
use super::scheme::{Era, Key, Pairing, Scheme, stream_window};
use super::segments::{LaterSegments, Segments};
use crate::engine::FirstPass;
use crate::error::InsertError;
use crate::fingerprint::Fingerprint;
use crate::stripe::Access;
use crate::sync::{AtomicU32, AtomicU64, Lock, LockGuard, Ordering};

/// Links a chain may have: each spends `link doublings` bits of a key's 96-bit stream on
/// addresses (one more under [`LinkSizes::Twice`]), and a link's stream window may start
/// no later than bit 64.
pub(crate) const MAX_LINKS: usize = 12;

/// How many buckets a link starts with, against the link before at its last era. A
/// snapshot records which (`format/growable.rs`), and a chain keeps its rule for life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LinkSizes {
    /// As many: a key's base bucket in the new link is its side-1 bucket in the older
    /// link at that link's last era, numbered among the side-1 buckets (so it lies in
    /// the new link's lower half). A link's start doubles the chain's buckets, as a
    /// doubling does. Every chain this crate builds.
    Same,
    /// Twice as many: the key's side-1 bucket one doubling past the older link's last
    /// era. The rule of every snapshot written before [`Same`](Self::Same); a chain
    /// decoded from one goes on with it.
    Twice,
}

impl LinkSizes {
    /// Stream bits a link's start spends on its keys' base bucket past the older link's
    /// last era.
    #[inline(always)]
    pub(crate) const fn extra_bits(self) -> Era {
        match self {
            Self::Same => 0,
            Self::Twice => 1,
        }
    }
}

/// `hash` as the link of `scheme` starting at stream bit `start` sees it, from the key
/// the link before saw (`older`), whose links each double `link_doublings` times: its
/// base bucket is the key's first bucket in the older link at that link's last era (one
/// doubling past it under [`LinkSizes::Twice`]), numbered among the older link's side-1
/// buckets, and its stream goes on where the older link stopped spending bits on
/// addresses.
#[inline(always)]
pub(crate) fn next_link_key(
    hash: u64,
    older: (Scheme, Key),
    (link_doublings, sizes): (Era, LinkSizes),
    scheme: Scheme,
    start: u32,
) -> Key {
    let (older, before) = older;
    let era = link_doublings + sizes.extra_bits();
    // The bits both windows hold come from the older link's (with the earlier links'
    // non-zero fixes in them); the rest are new (none when links never double).
    let kept = 32 - era;
    let fresh = stream_window(hash, start) & u32::MAX.checked_shl(kept).unwrap_or(0);
    let stream = (before.stream >> era) | fresh;
    Key {
        base_bucket: older.side_one_rank(before, era),
        stream: scheme.nonzero_block(stream),
    }
}

/// Where a link stands in its chain: its buckets before its first doubling, the stream
/// bit its keys start at, the doublings made before it starts (its own start counting
/// as one), and the most doublings it may make.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LinkShape {
    pub(crate) base: u64,
    pub(crate) start: u32,
    pub(crate) doublings_before: u32,
    pub(crate) max_era: Era,
}

/// Every link a chain may have, in order: the first has `first_base` buckets, each
/// doubles `per_link` times and the next starts with as many buckets as it then has
/// (twice as many under [`LinkSizes::Twice`]), and all together make at most `limit`
/// doublings, a link's start counting as one, of `bits`-bit codes. A link may exist
/// only after one that reaches its last era, within [`MAX_LINKS`], within 2^32 buckets,
/// and while its stream window starts by bit 64. The one rule that starting a link,
/// reckoning a chain's reach or its memory, and decoding a snapshot all follow.
pub(crate) fn link_shapes(
    first_base: u64,
    bits: u32,
    (per_link, sizes): (Era, LinkSizes),
    limit: u32,
) -> impl Iterator<Item = LinkShape> {
    let extra = sizes.extra_bits();
    let mut next = Some((first_base, 0u32, 0u32));
    (0..MAX_LINKS).map_while(move |_| {
        let (base, start, doublings_before) = next.take()?;
        if doublings_before > limit || start > 64 || base > 1 << 32 {
            return None;
        }
        let max_era = per_link
            .min(limit - doublings_before)
            .min(Scheme::new(base, bits).max_era());
        if max_era == per_link {
            // At most 2^33: `base · 2^per_link` is within 2^32 (the era bound above).
            next = Some((
                (base << per_link) << extra,
                start + per_link + extra,
                doublings_before + per_link + 1,
            ));
        }
        Some(LinkShape {
            base,
            start,
            doublings_before,
            max_era,
        })
    })
}

/// Bytes of every link's table, of `F`-bit codes in `B`-slot buckets, once a chain of
/// these links (from [`link_shapes`]) has made `doublings` doublings; `None` past the
/// last link's reach.
pub(crate) fn tables_bytes<F: Fingerprint, const B: usize>(
    shapes: impl Iterator<Item = LinkShape>,
    doublings: u32,
) -> Option<u128> {
    let bytes = |buckets: u64| u128::from(buckets) * (B as u128) * u128::from(F::BITS) / 8;
    let mut total = 0;
    for link in shapes {
        // A link is reached only when `doublings` passed the one before: at its start.
        let era = (doublings - link.doublings_before).min(link.max_era);
        total += bytes(link.base << era);
        if doublings <= link.doublings_before + link.max_era {
            return Some(total);
        }
    }
    None
}

/// The chain's mutable state, boxed so the chain holds no atomic inline, with the
/// slots of its later links.
struct Control<F, const B: usize> {
    links: AtomicU32,
    /// Held by the one thread that starts a link (and by a snapshot or a clear).
    growing: Lock,
    /// Inserts refused with `Full` and with `TooManyCopies` (stats).
    refused_full: AtomicU64,
    refused_copies: AtomicU64,
    /// The chain's rule for link sizes (fixed; here, where it costs no padding).
    sizes: LinkSizes,
    later_links: LaterSegments<ExpandTable<F, B>>,
}

/// `repr(C)` with the first link first (see `GrowableCuckooFilter`).
#[repr(C)]
pub(crate) struct Chain<F, const B: usize> {
    /// The first link; the later ones are in `control` ([`links`](Self::links)).
    first_link: ExpandTable<F, B>,
    control: Box<Control<F, B>>,
    /// Doublings each link makes before the next one starts.
    link_doublings: Era,
    /// Doublings over all links at most, a link's start counting as one; beside
    /// `link_doublings`, where it costs no padding.
    max_doublings: u32,
}

crate::raw::assert_freeze!(Chain<u8, 4>, Chain<u16, 4>);

impl<F: Fingerprint, const B: usize> Chain<F, B> {
    /// A chain whose first link has `base` buckets in `stripes` stripes (as
    /// [`ExpandTable::new`] takes them). Each link doubles `link_doublings` times (at
    /// most as often as its codes and size allow) before the next one starts, and the
    /// links together at most `max_doublings` times, a link's start counting as one.
    /// Every link bounds its kick paths to `moves` moves and grows by `step` doublings
    /// at a time.
    pub(crate) fn new(
        base: u64,
        stripes: usize,
        link_doublings: Era,
        max_doublings: u32,
        moves: usize,
        step: Era,
        pairing: Pairing,
    ) -> Result<Self, TryReserveError> {
        let link_doublings = link_doublings.min(Scheme::new(base, F::BITS).max_era());
        let mut first =
            ExpandTable::new(base, stripes, link_doublings.min(max_doublings), pairing)?;
        first.limit_moves(moves);
        first.set_step(step);
        Ok(Self::from_links(
            std::iter::once(first),
            (link_doublings, LinkSizes::Same),
            max_doublings,
        ))
    }

    /// A chain of at most `max_links` links, each doubling `link_doublings` times (for
    /// tests and models); the default kick bound, one doubling per growth.
    #[cfg(any(test, feature = "test-hooks"))]
    pub(crate) fn with_links(
        base: u64,
        stripes: usize,
        link_doublings: Era,
        max_links: usize,
        pairing: Pairing,
    ) -> Result<Self, TryReserveError> {
        let per_link = link_doublings.min(Scheme::new(base, F::BITS).max_era());
        let max_doublings = max_links.clamp(1, MAX_LINKS) as u32 * (per_link + 1) - 1;
        Self::new(
            base,
            stripes,
            per_link,
            max_doublings,
            usize::MAX,
            1,
            pairing,
        )
    }

    /// A chain of these links (at least one), oldest first, for a decoder that has
    /// checked them: each link but the last at era `link_doublings`, and each link's
    /// base as `sizes` says from the one before at that era.
    pub(crate) fn from_links(
        mut tables: impl ExactSizeIterator<Item = ExpandTable<F, B>>,
        (link_doublings, sizes): (Era, LinkSizes),
        max_doublings: u32,
    ) -> Self {
        let count = tables.len();
        let first = tables.next().expect("a chain has a first link");
        let chain = Self {
            first_link: first,
            control: Box::new(Control {
                links: AtomicU32::new(count as u32),
                growing: Lock::default(),
                refused_full: AtomicU64::new(0),
                refused_copies: AtomicU64::new(0),
                sizes,
                later_links: LaterSegments::new(),
            }),
            link_doublings,
            max_doublings,
        };
        let max_later = chain.max_links() - 1;
        if count > 1 {
            chain.first_link.leave_plain();
        }
        for (index, table) in tables.enumerate() {
            let _ = chain.links().publish(index + 1, table, max_later);
        }
        chain
    }

    /// The links' tables, oldest first. Link `j`'s keys start at stream bit
    /// `j · link_doublings` (`j · (link_doublings + 1)` under [`LinkSizes::Twice`]; see
    /// [`link_shapes`]).
    #[inline(always)]
    fn links(&self) -> Segments<'_, ExpandTable<F, B>> {
        Segments::new(&self.first_link, &self.control.later_links)
    }

    /// The links this chain may have under a limit of `limit` doublings.
    fn shapes(&self, limit: u32) -> impl Iterator<Item = LinkShape> + use<F, B> {
        let first_base = self.links().get(0).map_or(0, |first| first.buckets(0));
        link_shapes(first_base, F::BITS, self.link_rule(), limit)
    }

    /// The most links: as many as the doubling limit and the stream allow.
    pub(crate) fn max_links(&self) -> usize {
        let by_doublings = self.max_doublings / (self.link_doublings + 1) + 1;
        (by_doublings as usize).min(MAX_LINKS)
    }

    /// Doublings each link makes before the next starts.
    pub(crate) fn link_doublings(&self) -> Era {
        self.link_doublings
    }

    /// Doublings each link makes, and how big the next one starts.
    pub(crate) fn link_rule(&self) -> (Era, LinkSizes) {
        (self.link_doublings, self.control.sizes)
    }

    /// The most doublings over all links.
    pub(crate) fn max_doublings(&self) -> u32 {
        self.max_doublings
    }

    /// The first link (for the models, which drive one table).
    #[cfg(any(test, feature = "test-hooks"))]
    pub(crate) fn first(&self) -> Option<&ExpandTable<F, B>> {
        self.links().get(0)
    }

    /// Links now (at least 1).
    #[inline]
    pub(crate) fn link_count(&self) -> usize {
        self.control.links.load(Ordering::Acquire) as usize
    }

    /// Every published link, oldest first, with `hash` as each sees it (see
    /// [`next_link_key`]).
    #[inline]
    fn keyed(&self, hash: u64, links: usize) -> impl Iterator<Item = (&ExpandTable<F, B>, Key)> {
        let rule = self.link_rule();
        // Stream bits each link start moves the next link's window on.
        let stride = rule.0 + rule.1.extra_bits();
        let mut previous: Option<(&ExpandTable<F, B>, Key)> = None;
        (0..links).map_while(move |index| {
            let link = self.links().get(index)?;
            let key = match previous {
                None => link.key(hash),
                Some((older, before)) => next_link_key(
                    hash,
                    (older.scheme(), before),
                    rule,
                    link.scheme(),
                    index as u32 * stride,
                ),
            };
            previous = Some((link, key));
            Some((link, key))
        })
    }

    /// The first link, and the path a lookup takes: one of the first link's plain
    /// paths where it is the whole filter ([`ExpandTable::path`]).
    #[inline(always)]
    pub(crate) fn path(&self) -> (&ExpandTable<F, B>, LookupPath) {
        (&self.first_link, self.first_link.path())
    }

    /// The first link (for a filter with a frozen chain, which leaves the plain paths).
    pub(crate) fn first_link(&self) -> &ExpandTable<F, B> {
        &self.first_link
    }

    /// Whether a code in any link answers for `hash`.
    #[inline]
    pub(crate) fn contains<A: Access>(&self, access: A, hash: u64) -> bool {
        // A filter of one table, the one most users have: one test, then the
        // buckets, where the general path tests the link count, the stash, the era and
        // the pairing.
        match self.path() {
            (table, LookupPath::NeverGrew) => table.contains_plain(access, hash),
            (table, LookupPath::Grown) => table.contains_plain_grown(access, hash),
            (_, LookupPath::General) => self.contains_general(access, hash),
        }
    }

    /// [`contains`](Self::contains) past the plain paths' test: a jump to one of two
    /// lookups out of line.
    #[inline]
    pub(crate) fn contains_general<A: Access>(&self, access: A, hash: u64) -> bool {
        let links = self.link_count();
        if links == 1 {
            return self.first_contains(access, hash);
        }
        self.contains_linked(access, hash, links)
    }

    /// [`contains`](Self::contains) over two links or more. Out of line: its array of
    /// probes gave every one-link lookup a 376-byte frame and six saved registers.
    ///
    /// Every link's buckets are fetched before any is read, so that the misses of a
    /// key in a later link, or in none, overlap instead of following one another:
    /// at 8 M keys in two links, 1.4x the pre-sized filter's time for present keys
    /// and 2.1x for absent ones, against 2.3x and 2.5x link by link (BENCHMARKS.md).
    #[inline(never)]
    fn contains_linked<A: Access>(&self, access: A, hash: u64, links: usize) -> bool {
        if links == 2
            && let Some(answer) = self.contains_in_two(access, hash)
        {
            return answer;
        }
        let mut probes = [None; MAX_LINKS];
        for (probe, (table, key)) in probes.iter_mut().zip(self.keyed(hash, links)) {
            table.prefetch(key);
            *probe = Some((table, key));
        }
        probes
            .iter()
            .map_while(|probe| *probe)
            .any(|(table, key)| table.contains(access, key))
    }

    /// [`contains`](Self::contains) for a caller that fetched `hash`'s buckets already
    /// ([`prefetch`](Self::prefetch), a batch's pipeline): link by link, stopping at
    /// the first that answers, which costs fewer instructions where the misses are
    /// already under way.
    #[inline]
    pub(crate) fn contains_fetched<A: Access>(&self, access: A, hash: u64) -> bool {
        match self.path() {
            (table, LookupPath::NeverGrew) => return table.contains_plain_in_line(access, hash),
            (table, LookupPath::Grown) => return table.contains_plain_grown_in_line(access, hash),
            (_, LookupPath::General) => {}
        }
        let links = self.link_count();
        if links == 1 {
            return self.first_contains(access, hash);
        }
        self.contains_fetched_linked(access, hash, links)
    }

    /// [`contains_fetched`](Self::contains_fetched) over two links or more. Out of
    /// line, as [`contains_linked`](Self::contains_linked).
    #[inline(never)]
    fn contains_fetched_linked<A: Access>(&self, access: A, hash: u64, links: usize) -> bool {
        self.keyed(hash, links)
            .any(|(table, key)| table.contains(access, key))
    }

    /// [`contains`](Self::contains) in a chain of two links (a 16-bit filter grown from
    /// 1,000 holds from about 2 M keys to many times that in two): both links' buckets
    /// located and fetched, then each link read where it was located, without a second
    /// locating (`ExpandTable::fetch`). Through the general links' loop, 453
    /// instructions a lookup (half of the keys present, `examples/instructions.rs
    /// linked contains`); so, 370. (A batch's keys, fetched a block ahead, are read
    /// link by link instead: both links located for every key measured 595
    /// instructions a key against 567.) `None` if the chain does not list two links
    /// (it cannot happen: a link is published before the count that includes it).
    #[inline(always)]
    fn contains_in_two<A: Access>(&self, access: A, hash: u64) -> Option<bool> {
        let mut keyed = self.keyed(hash, 2);
        let ((older, key), (newer, newer_key)) = (keyed.next()?, keyed.next()?);
        let (fetched, newer_fetched) = (older.fetch(key), newer.fetch(newer_key));
        Some(
            older.contains_fetched(access, fetched)
                || newer.contains_fetched(access, newer_fetched),
        )
    }

    /// [`contains`](Self::contains) of a chain of one link past the plain paths (a
    /// table that stashed, or with a frozen chain). Out of line, as the linked case:
    /// in line, its stash test's call gave every general lookup a frame.
    #[inline(never)]
    fn first_contains<A: Access>(&self, access: A, hash: u64) -> bool {
        let first = self.links().get(0);
        first.is_some_and(|table| table.contains(access, table.key(hash)))
    }

    /// [`prefetch`](Self::prefetch) of each of `hashes`, the lookup path read once for
    /// them all: a hint, so a path that changes meanwhile costs nothing but a fetch.
    #[inline]
    pub(crate) fn prefetch_many(&self, hashes: &[u64]) {
        match self.path() {
            (table, LookupPath::NeverGrew) => {
                hashes.iter().for_each(|&hash| table.prefetch_plain(hash));
            }
            (table, LookupPath::Grown) => {
                hashes
                    .iter()
                    .for_each(|&hash| table.prefetch_plain_grown(hash));
            }
            (_, LookupPath::General) => hashes.iter().for_each(|&hash| self.prefetch(hash)),
        }
    }

    /// Starts fetching `hash`'s buckets in every link into the cache (a hint).
    #[inline]
    pub(crate) fn prefetch(&self, hash: u64) {
        match self.path() {
            (table, LookupPath::NeverGrew) => return table.prefetch_plain(hash),
            (table, LookupPath::Grown) => return table.prefetch_plain_grown(hash),
            (_, LookupPath::General) => {}
        }
        let links = self.link_count();
        if links == 1 {
            if let Some(first) = self.links().get(0) {
                first.prefetch(first.key(hash));
            }
            return;
        }
        self.keyed(hash, links)
            .for_each(|(table, key)| table.prefetch(key));
    }

    /// Bytes of every link's table segments.
    pub(crate) fn table_bytes(&self) -> usize {
        self.links().iter().map(ExpandTable::table_bytes).sum()
    }

    /// Codes over all links that answer for `hash`.
    pub(crate) fn count<A: Access>(&self, access: A, hash: u64) -> usize {
        self.keyed(hash, self.link_count())
            .map(|(table, key)| table.count(access, key))
            .sum()
    }

    /// Removes the longest match for `hash`: a code from the newest link that has one,
    /// unless an older link's stash holds the key and knows more of its stream. False if
    /// nothing answers.
    ///
    /// Link `i`'s window starts at stream bit `i · stride`, so a match there knows the
    /// stream up to `i · stride` plus what it knows in the link: its era and length for a
    /// code, 32 bits for a stashed copy. A newer link's codes know more than an older
    /// link's (module docs, "Links"), but an older link's stashed copy can know more
    /// than them; removing the newer code then could take another key's only copy.
    pub(crate) fn remove<A: Access>(&self, access: A, hash: u64) -> bool {
        let keyed: SmallVec<[_; 4]> = self.keyed(hash, self.link_count()).collect();
        let older = &keyed[..keyed.len().saturating_sub(1)];
        if older.iter().any(|&(table, key)| table.stash_holds(key)) {
            let rule = self.link_rule();
            let stride = rule.0 + rule.1.extra_bits();
            // The longest, the newest of equals.
            let longest = keyed
                .iter()
                .enumerate()
                .filter_map(|(i, &(table, key))| {
                    let known = table.longest_match(access, key)?;
                    Some((i as u32 * stride + known, i))
                })
                .max();
            return longest.is_some_and(|(_, i)| keyed[i].0.remove(access, keyed[i].1));
        }
        keyed
            .into_iter()
            .rev()
            .any(|(table, key)| table.remove(access, key))
    }

    /// Adds a code for `hash` to the newest link (only if no link answers for it when
    /// `unique`), starting the next link when the newest may not double again and has
    /// no room. On `Err` nothing was added or lost.
    ///
    /// A unique insert must see every copy in the older links, and one that read the
    /// link count before a link started may still be placing into the link before. So
    /// a unique insert places only while the link count is the one it read (checked
    /// under its pair lock; if not, it starts over in the newer link), and before it
    /// looks at the older links it passes through their pair locks for its key: every
    /// placement that checked the count before has then ended, and none that checks it
    /// after can succeed. (Without this, two unique inserts of one key on either side
    /// of a link's start both added it: loom model (q).)
    #[inline]
    pub(crate) fn insert<A: Access>(
        &self,
        access: A,
        hash: u64,
        unique: bool,
    ) -> Result<bool, InsertError> {
        // One link and a plain insert whose pair has a free slot, most inserts: inline,
        // as `contains` does. Everything else, out of line: with the loop below inlined,
        // every insert paid its frame (six saved registers, 152 bytes of stack).
        let mut first_pass = FirstPass::Protocol;
        if !unique && self.link_count() == 1 {
            let first = &self.first_link;
            first_pass = first.insert_plain(access, first.key(hash));
            if first_pass == FirstPass::Placed {
                return Ok(true);
            }
        }
        self.insert_slow(access, hash, unique, first_pass)
    }

    /// [`insert`](Self::insert) past its inline first pass. A plain key whose first pass
    /// found both buckets of the one link full goes straight to that link's kick search,
    /// and only if the search did not place it (a refusal, or a link started
    /// meanwhile), through the whole protocol from the start, which a failed insert
    /// leaves unchanged: a kicking insert then pays the protocol's frame and loop only
    /// when its search failed (about 40 instructions a kicking insert saved, and a
    /// refused key searches twice).
    #[inline(never)]
    fn insert_slow<A: Access>(
        &self,
        access: A,
        hash: u64,
        unique: bool,
        first_pass: FirstPass,
    ) -> Result<bool, InsertError> {
        if first_pass == FirstPass::Kick {
            let first = &self.first_link;
            let current = || self.link_count() == 1;
            if let Some(Ok(inserted)) = first.insert_kicking(access, first.key(hash), &current) {
                return Ok(inserted);
            }
        }
        self.insert_protocol(access, hash, unique)
    }

    /// [`insert_slow`](Self::insert_slow) past a first pass or a kick search that placed
    /// nothing: the protocol, its refusals counted.
    #[inline(never)]
    fn insert_protocol<A: Access>(
        &self,
        access: A,
        hash: u64,
        unique: bool,
    ) -> Result<bool, InsertError> {
        let mut started = false;
        let result = loop {
            let links = self.link_count();
            // One link, most filters' case, inline: its own insert checks a unique key's
            // copies under its pair lock, and no other link can hold one.
            let (newest, key) = if links == 1 {
                (&self.first_link, self.first_link.key(hash))
            } else {
                match self.newest_for(access, hash, links, unique) {
                    Ok(newest) => newest,
                    Err(answered) => break answered,
                }
            };
            let current = || self.link_count() == links;
            let inserted = if links == 1 {
                newest.insert_protocol(access, key, unique, &current)
            } else {
                newest.insert_while(access, key, unique, &current)
            };
            let Some(result) = inserted else {
                continue;
            };
            match result {
                Err(InsertError::Full)
                    if !started
                        && newest.era() == self.link_doublings
                        && (newest.len() >= newest.capacity() / 2 || newest.stash_is_full()) =>
                {
                    if !self.start_link::<A>(links) {
                        break Err(InsertError::Full);
                    }
                    started = true;
                }
                result => break result,
            }
        };
        if let Err(error) = result {
            A::count_one(match error {
                InsertError::TooManyCopies => &self.control.refused_copies,
                _ => &self.control.refused_full,
            });
        }
        result
    }

    /// The newest of `links` links (two or more) and `hash`'s key there, where an
    /// insert goes; or the insert's answer, for a unique one whose key an older link
    /// already holds. Out of line: the one-link insert stays small (with this inlined,
    /// the later links' key arithmetic was hoisted into every insert).
    #[inline(never)]
    fn newest_for<A: Access>(
        &self,
        access: A,
        hash: u64,
        links: usize,
        unique: bool,
    ) -> Result<(&ExpandTable<F, B>, Key), Result<bool, InsertError>> {
        if unique {
            // With exclusive access no placement can be under way.
            for (table, key) in self
                .keyed(hash, links)
                .take(links - 1)
                .filter(|_| A::SHARED)
            {
                table.pass_pair_lock(key);
            }
            if self
                .keyed(hash, links)
                .any(|(table, key)| table.count(access, key) > 0)
            {
                return Err(Ok(false));
            }
        }
        self.keyed(hash, links).last().ok_or(Err(InsertError::Full))
    }

    /// Starts the next link now (for models); false past the last.
    #[cfg(any(test, feature = "test-hooks"))]
    pub(crate) fn start_link_now(&self) -> bool {
        let links = self.link_count();
        self.start_link::<crate::stripe::Shared>(links) && self.link_count() > links
    }

    /// Starts link number `links` if the chain still has `links` links (true if it, or
    /// another thread, did); false past the last link, or if the memory cannot be had.
    /// Out of line: it runs once a link, and inlined it weighed on every insert.
    #[cold]
    #[inline(never)]
    fn start_link<A: Access>(&self, links: usize) -> bool {
        let _growing = A::SHARED.then(|| self.control.growing.lock());
        if self.link_count() != links {
            return true;
        }
        let Some(newest) = self.links().get(links - 1) else {
            return false;
        };
        let Some(LinkShape { base, max_era, .. }) = self.shapes(self.max_doublings).nth(links)
        else {
            return false;
        };
        // As many stripes as the table wants, as long as twice their words divide it.
        let per_word = if B * (F::BITS as usize) < 64 { 2 } else { 1 };
        let mut stripes = target_stripes(base);
        while !base.is_multiple_of(2 * stripes as u64 * per_word) {
            stripes /= 2;
        }
        let Ok(mut table) = ExpandTable::new(base, stripes, max_era, newest.pairing()) else {
            return false;
        };
        table.limit_moves(newest.moves());
        table.set_step(newest.step());
        // Before any key can be in the new link.
        self.first_link.leave_plain();
        if !self.links().publish(links, table, self.max_links() - 1) {
            return false;
        }
        self.control
            .links
            .store(links as u32 + 1, Ordering::Release);
        true
    }

    /// Doublings so far over all links (a new link's start counts as one).
    pub(crate) fn doublings(&self) -> u32 {
        let links = self.link_count();
        let newest = self.links().get(links - 1).map_or(0, ExpandTable::era);
        (links as u32 - 1) * (self.link_doublings + 1) + newest
    }

    /// The most doublings this chain can make: its limit, or fewer where a link's size
    /// (at most 2^32 buckets) or the stream (a link starts by bit 64) stops it first.
    pub(crate) fn reachable_doublings(&self) -> u32 {
        self.reachable_within(self.max_doublings)
    }

    /// [`reachable_doublings`](Self::reachable_doublings) under a limit of `limit`
    /// doublings instead of the chain's own.
    fn reachable_within(&self, limit: u32) -> u32 {
        self.shapes(limit)
            .last()
            .map_or(0, |last| last.doublings_before + last.max_era)
    }

    /// Bytes of every link's table once the chain has made `doublings` doublings (a
    /// link's start counting as one), whatever its limit; `None` where a link's size or
    /// the stream stops it first.
    pub(crate) fn table_bytes_after(&self, doublings: u32) -> Option<u128> {
        tables_bytes::<F, B>(self.shapes(u32::MAX), doublings)
    }

    /// The link inserts go to.
    pub(crate) fn newest_table(&self) -> Option<&ExpandTable<F, B>> {
        self.links().get(self.link_count() - 1)
    }

    /// Every published link's table, oldest first.
    pub(crate) fn tables(&self) -> impl Iterator<Item = &ExpandTable<F, B>> {
        (0..self.link_count()).filter_map(|index| self.links().get(index))
    }

    /// Codes stored over all links.
    pub(crate) fn len(&self) -> usize {
        self.tables().map(ExpandTable::len).sum()
    }

    /// Slots over all links.
    pub(crate) fn capacity(&self) -> usize {
        self.tables().map(ExpandTable::capacity).sum()
    }

    /// Bytes over all links, and the chain's own. Each link's struct lives in the
    /// chain (the first) or in its slots (the rest), so it is counted there.
    pub(crate) fn memory_usage(&self) -> usize {
        let own = std::mem::size_of::<ExpandTable<F, B>>();
        std::mem::size_of::<Self>()
            + std::mem::size_of::<Control<F, B>>()
            + self.links().later_slot_bytes()
            + self
                .tables()
                .map(|table| table.memory_usage() - own)
                .sum::<usize>()
    }

    /// The false-positive bound over all links (a key never inserted is tested in each).
    pub(crate) fn false_positive_bound(&self) -> f64 {
        self.tables().map(ExpandTable::false_positive_bound).sum()
    }

    /// Inserts refused with `Full`, and with `TooManyCopies`.
    pub(crate) fn refusals(&self) -> (u64, u64) {
        (
            self.control.refused_full.load(Ordering::Relaxed),
            self.control.refused_copies.load(Ordering::Relaxed),
        )
    }

    /// Holds the link count still (no link starts) while the guard lives: for a
    /// snapshot, which then pauses each link in turn.
    pub(crate) fn hold_links(&self) -> LockGuard<'_> {
        self.control.growing.lock()
    }

    /// Empties every link; the links stay, with their memory, and inserts still go to
    /// the newest.
    pub(crate) fn clear(&self) {
        let _growing = self.control.growing.lock();
        self.tables().for_each(ExpandTable::clear);
    }

    /// Every link's codes at its current era, oldest first, for tests.
    #[cfg(test)]
    pub(crate) fn codes(&self) -> Vec<Vec<u64>> {
        self.tables().map(ExpandTable::codes).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expand::churn::{Churned, concurrent_churn};
    use crate::expand::model::ExpandChain;
    use crate::stripe::Shared;

    fn chain<F: Fingerprint, const B: usize>(
        base: u64,
        doublings: Era,
        links: usize,
    ) -> Chain<F, B> {
        Chain::with_links(base, 1, doublings, links, Pairing::SharedCode).unwrap()
    }

    /// A chain that never grew finds every key it holds, of either pairing: only a
    /// shared-code table takes a plain path (`ExpandTable::path`), and a table of
    /// the Feistel pairing (kind 3) looked up there would miss keys in their second
    /// bucket.
    #[test]
    fn a_chain_that_never_grew_finds_its_keys_in_either_pairing() {
        for pairing in [Pairing::SharedCode, Pairing::Feistel] {
            let chain = Chain::<u16, 4>::with_links(1024, 4, 4, 2, pairing).unwrap();
            let mut rng = fastrand::Rng::with_seed(11);
            let keys: Vec<u64> = (0..3_000).map(|_| rng.u64(..)).collect();
            for &key in &keys {
                chain.insert(Shared, key, false).unwrap();
            }
            assert_eq!((chain.link_count(), chain.doublings()), (1, 0));
            assert!(
                keys.iter().all(|&key| chain.contains(Shared, key)),
                "{pairing:?}"
            );
        }
    }

    /// Drives the chain and the model chain with the same random inserts (with
    /// duplicates) and removes of live keys: every answer agrees, and every link holds
    /// the model link's codes slot for slot.
    fn drives_like_the_model<F: Fingerprint, const B: usize>(
        base: u64,
        doublings: Era,
        links: usize,
        seed: u64,
    ) {
        let engine = chain::<F, B>(base, doublings, links);
        let mut model = ExpandChain::with_shared_code(base, F::BITS, B, doublings, links);
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut keys: Vec<u64> = Vec::new();
        let mut step = 0;
        loop {
            step += 1;
            if rng.u8(0..10) < 7 {
                let hash = if keys.is_empty() || rng.u8(0..8) != 0 {
                    rng.u64(..)
                } else {
                    keys[rng.usize(0..keys.len())]
                };
                let expected = model.insert(hash);
                let got = engine.insert(Shared, hash, false).map(|_| ());
                assert_eq!(got, expected, "step {step}: insert {hash:#x}");
                match expected {
                    Ok(()) => keys.push(hash),
                    Err(InsertError::Full) => break,
                    Err(InsertError::TooManyCopies) => {}
                }
            } else if !keys.is_empty() {
                let hash = keys.swap_remove(rng.usize(0..keys.len()));
                assert!(model.remove(hash));
                assert!(engine.remove(Shared, hash), "step {step}: remove {hash:#x}");
            }
            let probe = rng.u64(..);
            assert_eq!(
                engine.count(Shared, probe),
                model.count(probe),
                "step {step}"
            );
            if step % 401 == 0 {
                assert_eq!(engine.link_count(), model.links(), "step {step}");
                let codes: Vec<Vec<u32>> = engine
                    .codes()
                    .into_iter()
                    .map(|link| link.into_iter().map(|c| c as u32).collect())
                    .collect();
                assert_eq!(codes, model.link_codes(), "step {step}");
            }
        }
        assert_eq!(engine.link_count(), links, "every link started");
        assert_eq!(engine.doublings(), model.doublings());
        assert_eq!(engine.len(), model.len());
        for &hash in &keys {
            assert!(engine.contains(Shared, hash));
        }
    }

    #[test]
    fn links_hold_the_model_chains_codes_slot_for_slot() {
        drives_like_the_model::<u16, 4>(8, 3, 3, 1);
        drives_like_the_model::<u8, 4>(8, 2, 4, 2);
        drives_like_the_model::<u8, 8>(8, 2, 4, 3);
    }

    impl<F: Fingerprint, const B: usize> Churned for Chain<F, B> {
        fn insert(&self, hash: u64) -> bool {
            Chain::insert(self, Shared, hash, false).is_ok()
        }
        fn remove(&self, hash: u64) -> bool {
            Chain::remove(self, Shared, hash)
        }
        fn contains(&self, hash: u64) -> bool {
            Chain::contains(self, Shared, hash)
        }
        fn doublings(&self) -> u32 {
            Chain::doublings(self)
        }
    }

    /// Three threads insert the same keys, each only if absent, through both link
    /// starts of a small chain: each key ends with one copy, and exactly one of the
    /// three inserts says it added it. This runs the unique path's lock passes and
    /// retries on real threads; the race they close is too narrow to hit here (six runs
    /// without them passed), and loom model (q) is what catches it.
    #[test]
    fn unique_inserts_of_one_key_across_link_starts_add_one_copy() {
        use std::sync::atomic::{AtomicU8, Ordering::Relaxed};
        for round in 0..4u64 {
            let chain = chain::<u16, 4>(8, 2, 3);
            let keys: Vec<u64> = (0..1_500u64)
                .map(|i| {
                    (round << 32 | i)
                        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
                        .rotate_left(29)
                })
                .collect();
            let added: Vec<AtomicU8> = keys.iter().map(|_| AtomicU8::new(0)).collect();
            std::thread::scope(|scope| {
                for _ in 0..3 {
                    scope.spawn(|| {
                        for (key, added) in keys.iter().zip(&added) {
                            match chain.insert(Shared, *key, true) {
                                Ok(true) => {
                                    added.fetch_add(1, Relaxed);
                                }
                                Ok(false) => {}
                                Err(error) => panic!("{error:?} at {} links", chain.link_count()),
                            }
                        }
                    });
                }
            });
            assert_eq!(chain.link_count(), 3, "both links started");
            for (key, added) in keys.iter().zip(&added) {
                assert_eq!(chain.count(Shared, *key), 1, "key {key:#x}");
                assert_eq!(added.load(Relaxed), 1, "key {key:#x}");
            }
        }
    }

    /// The churn of `churn.rs` through links that start while writers insert and a
    /// reader looks up (links of 2 doublings: a new one every third doubling).
    #[test]
    fn concurrent_writers_and_a_reader_miss_nothing_across_links() {
        let mut lookups = 0;
        for round in 0..4 {
            lookups += concurrent_churn(&chain::<u16, 4>(8, 2, 4), 64 << 9, 9, round);
            lookups += concurrent_churn(&chain::<u8, 4>(8, 2, 4), 64 << 9, 9, round);
        }
        assert!(lookups > 1000, "the reader ran {lookups} lookups");
    }
}
