//! Batched operations: many keys' memory accesses in flight at once.
//!
//! A single lookup or insert waits for its two buckets, and out of cache that wait is
//! most of its cost: the core cannot look far enough ahead to start the next keys' loads
//! while one key's misses are outstanding (and an insert's lock instruction stops it
//! from trying). [`Located`] hashes and locates keys a [`BLOCK`] at a time and
//! prefetches both buckets of each, one block ahead of the keys being handed out, so by
//! the time a key is probed or inserted its buckets are (usually) in cache and the misses
//! of the keys in between overlap.
//!
//! Each key is then handled exactly as the one-key operation handles it, when it is
//! handed out: `contains_many` probes with [`RawFilter::contains_at`] (stamp, load,
//! validate) and `insert_many` inserts with [`RawFilter::insert_at`], so a batch does
//! what the one-key operation in a loop would, also when other writes come between its
//! keys. A prefetch is only a cache hint: it reads nothing a result depends on.

use std::convert::Infallible;

use crate::fingerprint::Fingerprint;
use crate::index::Candidates;
use crate::raw::RawFilter;

/// Keys per block. A block is located and prefetched while the previous one is handled,
/// so 16 to 32 keys' buckets are in flight: enough to cover a DRAM miss (hundreds of
/// cycles) with the tens of cycles each key takes, within the core's capacity for
/// outstanding misses.
pub(crate) const BLOCK: usize = 16;

/// Tables smaller than this are handled key by key, without prefetching. Such a table
/// stays in the core's L2 cache, where a lookup is bound by its instruction count, and
/// the locate-prefetch-probe pipeline adds about 30 instructions to the 70 of a lookup.
/// Measured on the 2-core dev VM (Ice Lake server, 1.25 MiB L2 per core) with the first
/// revision of this pipeline (which probed a block at once; the lookahead was the same),
/// default configuration at 95% load, positive lookups, pipelined against key by key in
/// one process (median of 9 passes, ns per key): 12.6 / 9.6 at 128 K items (a 0.26 MB
/// table), 13.0 / 10.0 at 256 K (0.55 MB), 14.2 / 14.9 at 512 K (1.1 MB), 15.3 / 17.5 at
/// 1 M, 15.1 / 22.3 at 2 M.
#[cfg(all(target_arch = "x86_64", not(cuckoo_loom)))]
const PIPELINE_FROM_TABLE_BYTES: usize = 1 << 20;
/// Elsewhere no prefetch is issued (see `sync::prefetch`), so the pipeline would only
/// add instructions.
#[cfg(all(not(target_arch = "x86_64"), not(cuckoo_loom)))]
const PIPELINE_FROM_TABLE_BYTES: usize = usize::MAX;

/// Whether the growable filter's batches over `table_bytes` of tables are fetched
/// ahead: from the core filter's size on, since the one engine (`growth -- lookups
/// --items 1M`, 16 bits, a 2.1 MB table, batched ns per key, pipelined against one key
/// at a time, two alternations: pre-sized 14.5 / 15.0 and 14.6 / 16.1, grown from 1,000
/// 17.0 / 18.4 and 17.1 / 19.1). Before it, when a lookup cost 40% more instructions,
/// only from 4 times that size (18.9 against 16.2 at 1 M, pipelined the slower). Since
/// the pipeline folds block by block and the hint is compiled for the era's kind
/// (`bc19e67`), pre-sized at 1 M: 10.3–10.5 ns pipelined against 11.7–11.9 one key at
/// a time (the core filter's 6.5–6.7 and 9.5–9.9). (Keeping each key's sides from its
/// fetch to its lookup, no second hash and partner, measured no faster in an earlier
/// version, and at `956fd1d` cost 13 instructions a key more than it saved: the sides
/// travel through the blocks.)
#[cfg(not(cuckoo_loom))]
pub(crate) fn growable_pipelines(table_bytes: usize) -> bool {
    table_bytes >= PIPELINE_FROM_TABLE_BYTES
}

/// The loom models' tables are tiny: pipeline them anyway, as the core filter's.
#[cfg(cuckoo_loom)]
pub(crate) fn growable_pipelines(_: usize) -> bool {
    true
}

/// Whether batches on `raw`'s table go through the prefetch pipeline.
#[cfg(not(cuckoo_loom))]
pub(crate) fn pipelines<F: Fingerprint, const B: usize>(raw: &RawFilter<F, B>) -> bool {
    raw.table.memory_usage() >= PIPELINE_FROM_TABLE_BYTES
}

/// The loom models' tables are tiny: pipeline them anyway, so the models check that path.
#[cfg(cuckoo_loom)]
pub(crate) fn pipelines<F: Fingerprint, const B: usize>(_: &RawFilter<F, B>) -> bool {
    true
}

/// The candidates of a stream of hashes, in order, each key's buckets fetched a block
/// ahead of it being handed out (or located key by key for a cache-sized table).
pub(crate) struct Located<'a, F, const B: usize, H> {
    raw: &'a RawFilter<F, B>,
    hashes: H,
    /// Whether the table is large enough for the pipeline to pay off.
    pipelined: bool,
    /// `blocks[current][next..len]`: located, prefetched, not yet handed out.
    /// `blocks[current ^ 1][..ahead]`: the next block, located and being fetched.
    blocks: [[Candidates; BLOCK]; 2],
    current: usize,
    next: usize,
    len: usize,
    ahead: usize,
    /// `hashes` returned `None`; it is not polled again (it need not be fused).
    exhausted: bool,
}

impl<'a, F: Fingerprint, const B: usize, H: Iterator<Item = u64>> Located<'a, F, B, H> {
    pub(crate) fn new(raw: &'a RawFilter<F, B>, hashes: H) -> Self {
        Self {
            raw,
            hashes,
            pipelined: pipelines(raw),
            blocks: [[Candidates::default(); BLOCK]; 2],
            current: 0,
            next: 0,
            len: 0,
            ahead: 0,
            exhausted: false,
        }
    }

    /// The next hash, or `None` from then on.
    #[inline]
    fn next_hash(&mut self) -> Option<u64> {
        if self.exhausted {
            return None;
        }
        let hash = self.hashes.next();
        self.exhausted = hash.is_none();
        hash
    }

    /// Makes the current block non-empty if any key is left: moves on to the block
    /// located ahead and starts locating and fetching the one after it. Returns false
    /// once every key has been handed out.
    #[inline]
    fn ready(&mut self) -> bool {
        while self.next == self.len {
            if self.ahead == 0 {
                self.locate_ahead(); // only empty at the start, or at the end
                if self.ahead == 0 {
                    return false;
                }
            }
            self.current ^= 1;
            (self.next, self.len, self.ahead) = (0, self.ahead, 0);
            self.locate_ahead();
        }
        true
    }

    /// `Iterator::try_fold`, block by block, without `next`'s bookkeeping per key: `fold`
    /// (and so `for_each`, `count`, `sum`, and the adapters that forward to it) and
    /// `insert_many` go through here. (`try_fold` itself cannot be overridden on stable
    /// Rust.)
    #[inline]
    pub(crate) fn try_fold_blocks<Acc, E>(
        mut self,
        mut acc: Acc,
        mut g: impl FnMut(Acc, Candidates) -> Result<Acc, E>,
    ) -> Result<Acc, E> {
        let raw = self.raw;
        if !self.pipelined {
            if self.exhausted {
                return Ok(acc);
            }
            return self
                .hashes
                .try_fold(acc, |acc, hash| g(acc, raw.locate(hash)));
        }
        while self.ready() {
            for &c in &self.blocks[self.current][self.next..self.len] {
                acc = g(acc, c)?;
            }
            self.next = self.len;
        }
        Ok(acc)
    }

    /// Locates up to a block of keys into the block after the current one and
    /// prefetches their buckets. The count is kept as it goes, so that a panicking key
    /// iterator leaves every key already taken from it in place.
    fn locate_ahead(&mut self) {
        while self.ahead < BLOCK {
            let Some(hash) = self.next_hash() else { break };
            let c = self.raw.locate(hash);
            self.raw.prefetch(c);
            self.blocks[self.current ^ 1][self.ahead] = c;
            self.ahead += 1;
        }
    }
}

impl<F: Fingerprint, const B: usize, H: Iterator<Item = u64>> Iterator for Located<'_, F, B, H> {
    type Item = Candidates;

    #[inline]
    fn next(&mut self) -> Option<Candidates> {
        if !self.pipelined {
            return self.next_hash().map(|hash| self.raw.locate(hash));
        }
        if !self.ready() {
            return None;
        }
        let c = self.blocks[self.current][self.next];
        self.next += 1;
        Some(c)
    }

    #[inline]
    fn fold<Acc, G: FnMut(Acc, Candidates) -> Acc>(self, acc: Acc, mut g: G) -> Acc {
        let Ok(acc) = self.try_fold_blocks(acc, |acc, c| Ok::<_, Infallible>(g(acc, c)));
        acc
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let pending = self.len - self.next + self.ahead;
        let (low, high) = if self.exhausted {
            (0, Some(0))
        } else {
            self.hashes.size_hint()
        };
        (
            low.saturating_add(pending),
            high.and_then(|high| high.checked_add(pending)),
        )
    }
}

/// Once `None`, always `None`: the key iterator is not polled after its first `None`.
impl<F: Fingerprint, const B: usize, H: Iterator<Item = u64>> std::iter::FusedIterator
    for Located<'_, F, B, H>
{
}

/// A stream of hashes handed out `ahead` keys after each was passed to `prefetch`: the
/// growable filter's pipeline, whose lookups locate a key anew at the era they read.
/// `prefetch` takes the hashes a block at a time (one at a time through `next`), so
/// that it can decide how to fetch them once a block.
pub(crate) struct FetchedAhead<I, P> {
    hashes: I,
    prefetch: P,
    ring: [u64; BLOCK],
    /// Where the oldest hash waits, and how many wait.
    head: usize,
    waiting: usize,
    ahead: usize,
}

impl<I: Iterator<Item = u64>, P: FnMut(&[u64])> FetchedAhead<I, P> {
    /// `ahead` at most [`BLOCK`]; 0 hands each hash out as it comes, unfetched.
    pub(crate) fn new(hashes: I, ahead: usize, prefetch: P) -> Self {
        Self {
            hashes,
            prefetch,
            ring: [0; BLOCK],
            head: 0,
            waiting: 0,
            ahead: ahead.min(BLOCK),
        }
    }
}

impl<I: Iterator<Item = u64>, P: FnMut(&[u64])> Iterator for FetchedAhead<I, P> {
    type Item = u64;

    #[inline]
    fn next(&mut self) -> Option<u64> {
        if self.ahead == 0 {
            return self.hashes.next();
        }
        while self.waiting < self.ahead {
            let Some(hash) = self.hashes.next() else {
                break;
            };
            (self.prefetch)(std::slice::from_ref(&hash));
            self.ring[(self.head + self.waiting) % BLOCK] = hash;
            self.waiting += 1;
        }
        if self.waiting == 0 {
            return None;
        }
        let hash = self.ring[self.head];
        self.head = (self.head + 1) % BLOCK;
        self.waiting -= 1;
        Some(hash)
    }

    /// Block by block, as the core filter's pipeline (`Located::try_fold_blocks`): the
    /// next `ahead` hashes are fetched before the current block's are handed out, so
    /// each is still fetched `ahead` or more keys early, without the ring's bookkeeping
    /// for every key (`count` and `sum` over a batch come here).
    #[inline]
    fn fold<Acc, G: FnMut(Acc, u64) -> Acc>(mut self, mut acc: Acc, mut g: G) -> Acc {
        if self.ahead == 0 {
            return self.hashes.fold(acc, g);
        }
        // The hashes `next` fetched already form the first block.
        let mut blocks = [[0u64; BLOCK]; 2];
        let mut current = 0;
        let mut len = self.waiting;
        for (k, slot) in blocks[current][..len].iter_mut().enumerate() {
            *slot = self.ring[(self.head + k) % BLOCK];
        }
        let mut exhausted = false;
        loop {
            let mut fetched = 0;
            while fetched < self.ahead && !exhausted {
                match self.hashes.next() {
                    Some(hash) => {
                        blocks[current ^ 1][fetched] = hash;
                        fetched += 1;
                    }
                    None => exhausted = true,
                }
            }
            (self.prefetch)(&blocks[current ^ 1][..fetched]);
            for &hash in &blocks[current][..len] {
                acc = g(acc, hash);
            }
            if fetched == 0 {
                return acc;
            }
            (current, len) = (current ^ 1, fetched);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every hash comes out in order, after its prefetch and `ahead` more (exactly so,
    /// key by key through `next`; at least so, block by block through `fold`, after
    /// `taken` hashes through `next`).
    #[test]
    fn fetched_ahead_hands_out_every_hash_in_order_after_its_prefetch() {
        for ahead in [0, 1, 5, BLOCK, BLOCK + 3] {
            for n in [0u64, 1, 7, 16, 17, 100] {
                for taken in [usize::MAX, 0, 1, 3] {
                    let fetched = std::cell::RefCell::new(Vec::<u64>::new());
                    let lead = ahead.min(BLOCK) as u64;
                    let check = |h: u64, exact: bool| {
                        if lead > 0 {
                            let due = (h + lead).min(n);
                            let now = fetched.borrow().len() as u64;
                            assert!(if exact { now == due } else { now >= due });
                        }
                    };
                    let mut hashes =
                        FetchedAhead::new(0..n, ahead, |h: &[u64]| fetched.borrow_mut().extend(h));
                    let mut out: Vec<u64> = hashes
                        .by_ref()
                        .take(taken)
                        .inspect(|&h| check(h, true))
                        .collect();
                    out = hashes.fold(out, |mut out, h| {
                        check(h, false);
                        out.push(h);
                        out
                    });
                    assert_eq!(out, (0..n).collect::<Vec<_>>(), "ahead {ahead}, n {n}");
                    let expected: Vec<u64> = if ahead == 0 {
                        Vec::new()
                    } else {
                        (0..n).collect()
                    };
                    assert_eq!(*fetched.borrow(), expected, "ahead {ahead}, n {n}");
                }
            }
        }
    }
}
