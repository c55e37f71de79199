//! A single-threaded table that doubles in place: the reference for the scheme in
//! `scheme.rs`. It has no locks and no SIMD, and places, kicks, removes and doubles
//! exactly as the module docs describe, so the simulations (load at each doubling,
//! false positives per era, keys lost to removes) measure the scheme itself, and the
//! concurrent engine can be checked against it.

use std::collections::VecDeque;

use super::engine::{GAUGE_BUCKETS, loaded_to_double};
use super::scheme::{Era, Key, Pairing, Place, Scheme, Split, stream_window};
use super::stash::{GROUP_KEYS, group_of, stash_groups};
use crate::error::InsertError;

/// Moves a kick path may take: 5 with 4 slots, 3 with 8 (the core filter's bounds).
fn max_moves(slots: usize) -> usize {
    if slots <= 4 { 5 } else { 3 }
}

/// A table of `buckets(era) × slots` codes that doubles when an insert finds no room,
/// or (as the engine does) after a kick above 95% load at era 0, 92.5% later.
#[doc(hidden)]
#[derive(Clone, Debug)]
pub struct ExpandModel {
    scheme: Scheme,
    slots: usize,
    era: Era,
    /// The most era this table may reach (at most the scheme's).
    max_era: Era,
    /// Bucket `b`'s codes are `codes[b * slots..][..slots]`; 0 is an empty slot.
    codes: Vec<u32>,
    len: usize,
    /// Keys the table took beside its buckets at this era, entry by entry as the
    /// engine's stash holds them (`stash.rs`: groups of `GROUP_KEYS` entries, a key
    /// taking the first free entry of its group).
    stash: Vec<Option<Key>>,
    /// Whether an insert that finds no room always doubles (the scheme alone, for
    /// measurements and for tests of eras past what the engine's policy reaches), rather
    /// than as the engine does (`ExpandTable::grow`): at most once an insert, at least
    /// three quarters full unless the key's group of the stash is full, the stash taking
    /// a key it spends no doubling on.
    always_doubles: bool,
    /// Whether the table doubles after a kick above 95% load (92.5% past era 0) as the
    /// engine does (`ExpandTable::grow_if_loaded`), rather than only when an insert finds
    /// no room (the scheme's limit, which `examples/expand_sim.rs` measures).
    doubles_early: bool,
    /// Load at each doubling so far: the share of slots in use when an insert found no
    /// room and the table doubled.
    loads_at_doubling: Vec<f64>,
}

impl ExpandModel {
    /// A table of `base_buckets` buckets (even, at least 2) of `slots` slots of `bits`
    /// bits (8 or 16) that doubles up to `max_doublings` times.
    pub fn new(base_buckets: u64, bits: u32, slots: usize, max_doublings: u32) -> Self {
        Self::with_scheme(Scheme::new(base_buckets, bits), slots, max_doublings)
    }

    /// [`new`](Self::new) with both sides storing the key's one stream (the pairing of
    /// snapshot kind 4) rather than a Feistel round of it.
    pub fn with_shared_code(
        base_buckets: u64,
        bits: u32,
        slots: usize,
        max_doublings: u32,
    ) -> Self {
        let scheme = Scheme::with_pairing(base_buckets, bits, Pairing::SharedCode);
        Self::with_scheme(scheme, slots, max_doublings)
    }

    fn with_scheme(scheme: Scheme, slots: usize, max_doublings: u32) -> Self {
        let base_buckets = scheme.buckets(0);
        Self {
            scheme,
            slots,
            era: 0,
            max_era: max_doublings.min(scheme.max_era()),
            codes: vec![0; base_buckets as usize * slots],
            len: 0,
            stash: vec![None; stash_groups(base_buckets * slots as u64) * GROUP_KEYS],
            always_doubles: false,
            loads_at_doubling: Vec::new(),
            doubles_early: true,
        }
    }

    /// Doublings so far.
    pub fn era(&self) -> u32 {
        self.era
    }

    /// Buckets now.
    pub fn buckets(&self) -> u64 {
        self.scheme.buckets(self.era)
    }

    /// Codes stored (a void's copies each count).
    pub fn len(&self) -> usize {
        self.len + self.stashed()
    }

    /// Whether no code is stored.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The share of slots in use.
    pub fn load(&self) -> f64 {
        self.len as f64 / self.codes.len() as f64
    }

    /// The load at which each doubling so far happened.
    pub fn loads_at_doubling(&self) -> &[f64] {
        &self.loads_at_doubling
    }

    /// Every slot's code, bucket by bucket (0: empty).
    #[cfg(test)]
    pub(crate) fn codes(&self) -> &[u32] {
        &self.codes
    }

    fn bucket(&self, bucket: u64) -> &[u32] {
        &self.codes[bucket as usize * self.slots..][..self.slots]
    }

    fn bucket_mut(&mut self, bucket: u64) -> &mut [u32] {
        &mut self.codes[bucket as usize * self.slots..][..self.slots]
    }

    /// Slots of `place`'s bucket whose code answers for `place`'s key.
    fn matching(&self, place: Place) -> impl Iterator<Item = usize> + '_ {
        let era = self.era;
        self.bucket(place.bucket)
            .iter()
            .enumerate()
            .filter(move |&(_, &code)| self.scheme.matches(code, place.code, era))
            .map(|(slot, _)| slot)
    }

    /// Whether `hash` is probably present.
    pub fn contains(&self, hash: u64) -> bool {
        self.count(hash) > 0
    }

    /// Codes in `hash`'s two buckets that answer for it.
    pub fn count(&self, hash: u64) -> usize {
        self.count_key(self.scheme.key(hash))
    }

    fn count_key(&self, key: Key) -> usize {
        let places = self.scheme.locate_key(key, self.era);
        places
            .iter()
            .map(|&place| self.matching(place).count())
            .sum::<usize>()
            + self.stash[self.stash_group(key)]
                .iter()
                .filter(|&&stashed| stashed == Some(key))
                .count()
    }

    /// Removes the longest code that answers for `hash` (the rule that never costs
    /// another key its code); false if none does.
    pub fn remove(&mut self, hash: u64) -> bool {
        self.remove_key(self.scheme.key(hash))
    }

    /// How many stream bits the longest match for `key` knows: 32 for a stashed copy,
    /// else the era and the length of the longest code that answers.
    fn longest_match(&self, key: Key) -> Option<u32> {
        if self.stash[self.stash_group(key)].contains(&Some(key)) {
            return Some(32);
        }
        self.scheme
            .locate_key(key, self.era)
            .iter()
            .flat_map(|&place| self.matching(place).map(move |slot| (place.bucket, slot)))
            .map(|(bucket, slot)| {
                self.era + self.scheme.len_of(self.bucket(bucket)[slot], self.era)
            })
            .max()
    }

    fn remove_key(&mut self, key: Key) -> bool {
        // A stashed copy is the longest match there is: the key's whole identity.
        let group = self.stash_group(key);
        if let Some(entry) = self.stash[group]
            .iter_mut()
            .find(|stashed| **stashed == Some(key))
        {
            *entry = None;
            return true;
        }
        let places = self.scheme.locate_key(key, self.era);
        let longest = places
            .iter()
            .flat_map(|&place| self.matching(place).map(move |slot| (place.bucket, slot)))
            .max_by_key(|&(bucket, slot)| self.scheme.len_of(self.bucket(bucket)[slot], self.era));
        let Some((bucket, slot)) = longest else {
            return false;
        };
        self.bucket_mut(bucket)[slot] = 0;
        self.len -= 1;
        true
    }

    /// Adds a copy of `hash`, doubling the table when no kick path frees a slot, or
    /// after a kick that left it more than 95% full, 92.5% past era 0 (see
    /// `doubles_early`).
    ///
    /// # Errors
    ///
    /// `TooManyCopies` when both buckets hold only this key's fresh code (or only codes
    /// that answer for it, with its group of the stash full),
    /// `Full` when no path frees a slot and the table may not double again. Either way
    /// no code was added or lost (the table may have doubled first, which changes no
    /// answer).
    pub fn insert(&mut self, hash: u64) -> Result<(), InsertError> {
        self.insert_key(self.scheme.key(hash))
    }

    fn insert_key(&mut self, key: Key) -> Result<(), InsertError> {
        let mut doubled = false;
        loop {
            let places = self.scheme.locate_key(key, self.era);
            let copies: usize = places.iter().map(|&p| self.matching(p).count()).sum();
            let emptier = self.emptier(places);
            if emptier.is_none() && copies == 2 * self.slots {
                // As the engine's `overflow`: codes that may be other keys' (not all the
                // key's fresh one) leave the key to the stash, if its group has room.
                let all_fresh = places.iter().all(|place| {
                    self.bucket(place.bucket)
                        .iter()
                        .all(|&code| code == place.code)
                });
                if all_fresh || self.always_doubles || !self.stash_has_room(key) {
                    return Err(InsertError::TooManyCopies);
                }
                self.stash_add(key);
                return Ok(());
            }
            if let Some(place) = emptier {
                self.store(place);
                return Ok(());
            }
            if let Some(place) = self.kick(places) {
                self.store(place);
                self.double_if_loaded(places[0].bucket);
                return Ok(());
            }
            // The engine's growth policy (`ExpandTable::grow`): under three quarters
            // full, or once the insert has doubled, a key goes to the stash while it has
            // room; at the last era the insert fails; otherwise the table doubles.
            let under_three_quarters = self.len < self.codes.len() / 4 * 3;
            let refused = !self.always_doubles
                && (under_three_quarters || doubled)
                && self.stash_has_room(key);
            if refused {
                self.stash_add(key);
                return Ok(());
            }
            if self.era >= self.max_era {
                return Err(InsertError::Full);
            }
            doubled = self.double();
        }
    }

    /// The engine's early doubling (`ExpandTable::grow_if_loaded`, asked by a kick from
    /// one of the first `GAUGE_BUCKETS` buckets): above 95% load (92.5% past era 0) the
    /// table doubles after a kick rather than when a kick search fails.
    fn double_if_loaded(&mut self, first_bucket: u64) {
        if self.doubles_early
            && !self.always_doubles
            && first_bucket < GAUGE_BUCKETS
            && loaded_to_double(self.era, self.len, self.codes.len())
        {
            self.double();
        }
    }

    /// Keys stashed.
    pub fn stashed(&self) -> usize {
        self.stash.iter().flatten().count()
    }

    /// The entries of `key`'s group of the stash.
    fn stash_group(&self, key: Key) -> std::ops::Range<usize> {
        let group = group_of(key, self.stash.len() / GROUP_KEYS);
        group * GROUP_KEYS..(group + 1) * GROUP_KEYS
    }

    fn stash_has_room(&self, key: Key) -> bool {
        self.stash[self.stash_group(key)].contains(&None)
    }

    /// Stashes `key` in the first free entry of its group, which has one.
    fn stash_add(&mut self, key: Key) {
        let group = self.stash_group(key);
        let free = self.stash[group].iter_mut().find(|e| e.is_none());
        *free.expect("a free entry") = Some(key);
    }

    /// Moves each stashed key, in entry order, into the emptier of its buckets if either
    /// has a free slot (no kicks), as the engine does after each doubling.
    fn unstash(&mut self) {
        for at in 0..self.stash.len() {
            let Some(key) = self.stash[at] else {
                continue;
            };
            if let Some(place) = self.emptier(self.scheme.locate_key(key, self.era)) {
                self.store(place);
                self.stash[at] = None;
            }
        }
    }

    /// The emptier of two places' buckets (the first on a tie), if either has a free
    /// slot.
    fn emptier(&self, places: [Place; 2]) -> Option<Place> {
        let free = |place: Place| {
            self.bucket(place.bucket)
                .iter()
                .filter(|&&c| c == 0)
                .count()
        };
        match (free(places[0]), free(places[1])) {
            (0, 0) => None,
            (free1, free2) => Some(if free1 >= free2 { places[0] } else { places[1] }),
        }
    }

    /// Stores `place`'s code in the first free slot of its bucket.
    fn store(&mut self, place: Place) {
        let slot = self.bucket(place.bucket).iter().position(|&c| c == 0);
        self.bucket_mut(place.bucket)[slot.expect("a free slot")] = place.code;
        self.len += 1;
    }

    /// The same table, doubling only when an insert finds no room, never early (see
    /// `doubles_early`).
    pub fn doubling_when_no_path(mut self) -> Self {
        self.doubles_early = false;
        self
    }

    /// The same table, doubling whenever an insert finds no room (see `always_doubles`).
    pub fn doubling_whenever_full(mut self) -> Self {
        self.always_doubles = true;
        self
    }

    /// A breadth-first search from both places for a path to an empty slot, then the
    /// moves along it from the empty end back; the place whose bucket it freed, or
    /// `None` (nothing moved).
    fn kick(&mut self, places: [Place; 2]) -> Option<Place> {
        // (bucket, parent node, slot in the parent's bucket, depth)
        let mut nodes: Vec<(u64, usize, usize, usize)> = Vec::new();
        let mut queue = VecDeque::new();
        for (root, place) in places.iter().enumerate() {
            nodes.push((place.bucket, usize::MAX, root, 0));
            queue.push_back(root);
        }
        let limit = max_moves(self.slots);
        let end = 'search: loop {
            let node = queue.pop_front()?;
            let (bucket, _, _, depth) = nodes[node];
            if depth == limit {
                continue;
            }
            for slot in 0..self.slots {
                let code = self.bucket(bucket)[slot];
                let next = self.scheme.partner(bucket, code, self.era).bucket;
                nodes.push((next, node, slot, depth + 1));
                if self.bucket(next).contains(&0) {
                    break 'search nodes.len() - 1;
                }
                queue.push_back(nodes.len() - 1);
            }
        };
        // Move from the empty end back to a root.
        let mut node = end;
        while nodes[node].1 != usize::MAX {
            let (to, parent, slot, _) = nodes[node];
            let from = nodes[parent].0;
            let code = self.bucket(from)[slot];
            let moved = self.scheme.partner(from, code, self.era);
            debug_assert_eq!(moved.bucket, to);
            let free = self.bucket(to).iter().position(|&c| c == 0)?;
            self.bucket_mut(to)[free] = moved.code;
            self.bucket_mut(from)[slot] = 0;
            node = parent;
        }
        Some(places[nodes[node].2])
    }

    /// Doubles the table: every code moves to its bucket's lower or upper descendant,
    /// and a void is copied into both. False (nothing changed) past the last era.
    pub fn double(&mut self) -> bool {
        if self.era >= self.max_era {
            return false;
        }
        self.loads_at_doubling.push(self.load());
        let buckets = self.scheme.buckets(self.era) as usize;
        let mut upper = vec![0u32; self.codes.len()];
        for bucket in 0..buckets {
            let spot = self.scheme.base_and_descendant(bucket as u64);
            for slot in 0..self.slots {
                let index = bucket * self.slots + slot;
                match self.scheme.split_at(spot, self.codes[index], self.era) {
                    _ if self.codes[index] == 0 => {}
                    Split::One { to_upper, code } => {
                        if to_upper {
                            upper[index] = code;
                            self.codes[index] = 0;
                        } else {
                            self.codes[index] = code;
                        }
                    }
                    Split::Both { code } => {
                        self.codes[index] = code;
                        upper[index] = code;
                        self.len += 1;
                    }
                }
            }
        }
        self.codes.extend(upper);
        self.era += 1;
        // The stash goes on in the new era's, larger as the table is, in entry order.
        let slots = self.codes.len() as u64;
        let carried = std::mem::replace(
            &mut self.stash,
            vec![None; stash_groups(slots) * GROUP_KEYS],
        );
        for key in carried.into_iter().flatten() {
            self.stash_add(key);
        }
        self.unstash();
        true
    }

    /// The expected false-positive rate of a key never inserted: each code in its two
    /// buckets answers for it with probability 2^−len (1/(2^bits − 1) at era 0), and a
    /// code lies in one of its buckets with probability 2/N.
    pub fn false_positive_bound(&self) -> f64 {
        let era = self.era;
        let bits = self.scheme.bits();
        let mass: f64 = self
            .codes
            .iter()
            .filter(|&&code| code != 0)
            .map(|&code| {
                if era == 0 {
                    1.0 / ((1u64 << bits) - 1) as f64
                } else {
                    0.5f64.powi(self.scheme.len_of(code, era) as i32)
                }
            })
            .sum();
        2.0 * mass / self.buckets() as f64
    }
}

/// Tables that double in place, one after another ("links", see the module docs): when
/// the newest has doubled as far as it may and an insert finds no room, a link with
/// its buckets starts, and every key's stream goes on in it where the newest
/// stopped spending bits on addresses. Inserts go to the newest link, lookups ask every
/// link, and a remove takes from the newest link that answers (its codes know more of
/// the stream than any older link's, so it is the longest match).
#[doc(hidden)]
#[derive(Clone, Debug)]
pub struct ExpandChain {
    /// Each link with the stream bit it starts at.
    links: Vec<(ExpandModel, u32)>,
    /// Doublings each link makes before the next link starts.
    link_doublings: u32,
    /// The newest link's load when each later link started.
    loads_at_new_link: Vec<f64>,
    max_links: usize,
    /// Whether the links double early (`ExpandModel::doubles_early`).
    doubles_early: bool,
}

impl ExpandChain {
    /// A first link of `base_buckets` buckets (see [`ExpandModel::new`]), each link
    /// doubling `link_doublings` times, at most `max_links` links.
    pub fn new(
        base_buckets: u64,
        bits: u32,
        slots: usize,
        link_doublings: u32,
        max_links: usize,
    ) -> Self {
        let first = ExpandModel::new(base_buckets, bits, slots, link_doublings);
        Self::from_first(first, link_doublings, max_links)
    }

    /// [`new`](Self::new) with shared-code links (see [`ExpandModel::with_shared_code`]).
    pub fn with_shared_code(
        base_buckets: u64,
        bits: u32,
        slots: usize,
        link_doublings: u32,
        max_links: usize,
    ) -> Self {
        let first = ExpandModel::with_shared_code(base_buckets, bits, slots, link_doublings);
        Self::from_first(first, link_doublings, max_links)
    }

    fn from_first(first: ExpandModel, link_doublings: u32, max_links: usize) -> Self {
        Self {
            links: vec![(first, 0)],
            link_doublings,
            loads_at_new_link: Vec::new(),
            max_links,
            doubles_early: true,
        }
    }

    /// The same chain, whose links double only when an insert finds no room (see
    /// [`ExpandModel::doubling_when_no_path`]): the loads the scheme itself reaches.
    pub fn doubling_when_no_path(mut self) -> Self {
        self.doubles_early = false;
        for (link, _) in &mut self.links {
            link.doubles_early = false;
        }
        self
    }

    /// Every link's codes, oldest first.
    #[cfg(test)]
    pub(crate) fn link_codes(&self) -> Vec<Vec<u32>> {
        self.links
            .iter()
            .map(|(link, _)| link.codes().to_vec())
            .collect()
    }

    /// Links so far.
    pub fn links(&self) -> usize {
        self.links.len()
    }

    /// Doublings over all links (a new link's start counts as one).
    pub fn doublings(&self) -> u32 {
        let (newest, _) = self.links.last().expect("a link");
        (self.links.len() as u32 - 1) * (self.link_doublings + 1) + newest.era()
    }

    /// Codes stored over all links.
    pub fn len(&self) -> usize {
        self.links.iter().map(|(link, _)| link.len()).sum()
    }

    /// Whether no code is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The load of the newest link.
    pub fn load(&self) -> f64 {
        self.links.last().expect("a link").0.load()
    }

    /// The load at each doubling, oldest first: every link's own, and the newest
    /// link's load when the next one started (which counts as a doubling).
    pub fn loads_at_doubling(&self) -> Vec<f64> {
        let mut loads = Vec::new();
        for (index, (link, _)) in self.links.iter().enumerate() {
            loads.extend_from_slice(link.loads_at_doubling());
            loads.extend(self.loads_at_new_link.get(index));
        }
        loads
    }

    /// The key as each link sees it, oldest first: the next link's base bucket is the
    /// key's first bucket in the link before at that link's last era (the engine's
    /// `LinkSizes::Same`).
    fn keys(&self, hash: u64) -> impl Iterator<Item = Key> + '_ {
        let mut previous: Option<Key> = None;
        self.links
            .iter()
            .enumerate()
            .map(move |(index, (link, start))| {
                let key = match previous {
                    None => link.scheme.key(hash),
                    Some(before) => {
                        let (older, _) = &self.links[index - 1];
                        let era = self.link_doublings;
                        // The bits both windows hold come from the older link's, with the
                        // earlier links' non-zero fixes in them; the rest are new.
                        let kept = 32 - era;
                        let fresh =
                            stream_window(hash, *start) & u32::MAX.checked_shl(kept).unwrap_or(0);
                        let stream = (before.stream >> era) | fresh;
                        Key {
                            base_bucket: older.scheme.side_one_rank(before, era),
                            stream: link.scheme.nonzero_block(stream),
                        }
                    }
                };
                previous = Some(key);
                key
            })
    }

    /// Whether `hash` is probably present in any link.
    pub fn contains(&self, hash: u64) -> bool {
        self.count(hash) > 0
    }

    /// Codes that answer for `hash` over all links.
    pub fn count(&self, hash: u64) -> usize {
        let keys: Vec<Key> = self.keys(hash).collect();
        self.links
            .iter()
            .zip(keys)
            .map(|((link, _), key)| link.count_key(key))
            .sum()
    }

    /// Removes the longest match for `hash` over all links (the newest of equals): a
    /// match in the link that starts at stream bit `start` knows the stream up to
    /// `start` plus its era and length (a code) or 32 (a stashed copy).
    pub fn remove(&mut self, hash: u64) -> bool {
        let keys: Vec<Key> = self.keys(hash).collect();
        let longest = self
            .links
            .iter()
            .zip(&keys)
            .enumerate()
            .filter_map(|(i, ((link, start), &key))| Some((start + link.longest_match(key)?, i)))
            .max();
        longest.is_some_and(|(_, i)| self.links[i].0.remove_key(keys[i]))
    }

    /// Adds a copy of `hash` to the newest link, starting a new link when the newest
    /// may not double again and has no room.
    ///
    /// # Errors
    ///
    /// As [`ExpandModel::insert`], `Full` only when no further link may start.
    pub fn insert(&mut self, hash: u64) -> Result<(), InsertError> {
        loop {
            let key = self.keys(hash).last().expect("a link");
            let links = self.links.len();
            let (newest, start) = self.links.last_mut().expect("a link");
            match newest.insert_key(key) {
                // A link that stopped short of its doublings (at 2^32 buckets) ends the
                // chain: the next link's keys assume the older one's last era.
                Err(InsertError::Full)
                    if links < self.max_links && newest.era() == self.link_doublings =>
                {
                    let next_start = *start + self.link_doublings;
                    let bits = newest.scheme.bits();
                    let base = newest.buckets();
                    if next_start > 64 || base > 1 << 32 {
                        return Err(InsertError::Full);
                    }
                    let mut link = ExpandModel::with_scheme(
                        Scheme::with_pairing(base, bits, newest.scheme.pairing()),
                        newest.slots,
                        self.link_doublings,
                    );
                    link.doubles_early = self.doubles_early;
                    self.loads_at_new_link.push(newest.load());
                    self.links.push((link, next_start));
                }
                result => return result,
            }
        }
    }

    /// The false-positive bound over all links (a negative key is tested in each).
    pub fn false_positive_bound(&self) -> f64 {
        self.links
            .iter()
            .map(|(link, _)| link.false_positive_bound())
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    /// What the churn drives: a single table or a chain of links.
    trait Table {
        fn insert(&mut self, hash: u64) -> Result<(), InsertError>;
        fn remove(&mut self, hash: u64) -> bool;
        fn count(&self, hash: u64) -> usize;
        fn doublings(&self) -> u32;
    }

    impl Table for ExpandModel {
        fn insert(&mut self, hash: u64) -> Result<(), InsertError> {
            ExpandModel::insert(self, hash)
        }
        fn remove(&mut self, hash: u64) -> bool {
            ExpandModel::remove(self, hash)
        }
        fn count(&self, hash: u64) -> usize {
            ExpandModel::count(self, hash)
        }
        fn doublings(&self) -> u32 {
            self.era()
        }
    }

    impl Table for ExpandChain {
        fn insert(&mut self, hash: u64) -> Result<(), InsertError> {
            ExpandChain::insert(self, hash)
        }
        fn remove(&mut self, hash: u64) -> bool {
            ExpandChain::remove(self, hash)
        }
        fn count(&self, hash: u64) -> usize {
            ExpandChain::count(self, hash)
        }
        fn doublings(&self) -> u32 {
            ExpandChain::doublings(self)
        }
    }

    /// Random inserts (with duplicates), removes of live keys, and lookups, checked
    /// against an exact multiset, through many doublings: no live key is ever missed and
    /// no remove of a live key fails.
    fn churn<T: Table>(mut table: T, seed: u64, steps: usize) -> T {
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut live: HashMap<u64, usize> = HashMap::new();
        let mut keys: Vec<u64> = Vec::new();
        for step in 0..steps {
            match rng.u8(0..10) {
                0..=5 => {
                    // Mostly new keys, some copies of live ones.
                    let hash = if keys.is_empty() || rng.u8(0..8) != 0 {
                        rng.u64(..)
                    } else {
                        keys[rng.usize(0..keys.len())]
                    };
                    match table.insert(hash) {
                        Ok(()) => {
                            *live.entry(hash).or_default() += 1;
                            keys.push(hash);
                        }
                        Err(InsertError::TooManyCopies) => {}
                        Err(InsertError::Full) => break,
                    }
                }
                6..=8 if !keys.is_empty() => {
                    let hash = keys.swap_remove(rng.usize(0..keys.len()));
                    assert!(
                        table.remove(hash),
                        "step {step}: a live key's remove failed"
                    );
                    let count = live.get_mut(&hash).unwrap();
                    *count -= 1;
                    if *count == 0 {
                        live.remove(&hash);
                    }
                }
                _ => {}
            }
            if step % 997 == 0 {
                for (&hash, &copies) in &live {
                    assert!(
                        table.count(hash) >= copies,
                        "step {step}, doubling {}: key {hash:#x} lost a copy",
                        table.doublings()
                    );
                }
            }
        }
        for (&hash, &copies) in &live {
            assert!(table.count(hash) >= copies, "key {hash:#x} lost a copy");
        }
        table
    }

    /// A model of either pairing: shared codes (`shared`) or the Feistel round.
    fn model(base: u64, bits: u32, slots: usize, max: u32, shared: bool) -> ExpandModel {
        if shared {
            ExpandModel::with_shared_code(base, bits, slots, max)
        } else {
            ExpandModel::new(base, bits, slots, max)
        }
    }

    #[test]
    fn removes_never_cost_another_key_through_ten_doublings() {
        for (bits, slots, shared) in [
            (16, 4, true),
            (8, 4, true),
            (16, 8, true),
            (8, 8, true),
            (16, 4, false),
            (8, 4, false),
        ] {
            // About 0.3 keys net per step: enough steps to pass ten doublings.
            let steps = if slots == 4 { 60_000 } else { 150_000 };
            // Past the eras the engine's policy reaches at 8 bits (its tables stop
            // doubling well there, and the engine starts a link instead).
            let model = model(6, bits, slots, 24, shared).doubling_whenever_full();
            let model = churn(model, u64::from(bits) + slots as u64, steps);
            assert!(
                model.era() >= 10,
                "{bits}x{slots}: only {} doublings",
                model.era()
            );
        }
    }

    #[test]
    fn removes_never_cost_another_key_across_links() {
        // Short links (3 doublings each), so that ten doublings pass through several.
        for (bits, slots, seed) in
            (0..4).flat_map(|seed| [(16, 4, seed), (8, 4, seed), (8, 8, seed)])
        {
            let steps = if slots == 4 { 60_000 } else { 150_000 };
            // Both pairings, a seed each turn.
            let chain = if seed % 2 == 0 {
                ExpandChain::with_shared_code(6, bits, slots, 3, 8)
            } else {
                ExpandChain::new(6, bits, slots, 3, 8)
            };
            let chain = churn(
                chain,
                u64::from(bits) * 3 + slots as u64 + 100 * seed,
                steps,
            );
            assert!(
                chain.links() >= 3,
                "{bits}x{slots}: only {} links",
                chain.links()
            );
            assert!(
                chain.doublings() >= 10,
                "{bits}x{slots}: {} doublings",
                chain.doublings()
            );
        }
    }

    /// Keys built to collide: the same base bucket and the same first stream block, so
    /// they share both buckets and every code bit at era 0, and part ways one bit per
    /// doubling; duplicates of each; removes in random order across doublings.
    #[test]
    fn removes_of_keys_that_share_codes_and_buckets_lose_nothing() {
        for (bits, shared) in [(8u32, true), (16, true), (8, false), (16, false)] {
            let mut rng = fastrand::Rng::with_seed(u64::from(bits));
            for _round in 0..20 {
                let mut model = model(4, bits, 4, 24, shared);
                let low = rng.u32(..);
                let block = rng.u32(1..1 << bits);
                // Streams equal in the first block, different past it.
                let keys: Vec<u64> = (0..6u64)
                    .map(|k| (u64::from(block) | (k + 1) << bits) << 32 | u64::from(low))
                    .collect();
                let mut live: Vec<u64> = Vec::new();
                for &key in &keys {
                    for _ in 0..rng.usize(1..3) {
                        if model.insert(key).is_ok() {
                            live.push(key);
                        }
                    }
                }
                // Filler keys make the table double several times between removes.
                for phase in 0..4 {
                    for _ in 0..(model.buckets() as usize * 4) {
                        if model.insert(rng.u64(..)) == Err(InsertError::Full) {
                            break;
                        }
                    }
                    if !live.is_empty() {
                        let gone = live.swap_remove(rng.usize(0..live.len()));
                        assert!(model.remove(gone), "phase {phase}");
                    }
                    for &key in &keys {
                        let copies = live.iter().filter(|&&k| k == key).count();
                        assert!(
                            model.count(key) >= copies,
                            "bits {bits} phase {phase} era {}: key {key:#x} lost a copy",
                            model.era()
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn a_failed_insert_changes_nothing() {
        let mut model = ExpandModel::new(2, 16, 4, 0);
        let mut rng = fastrand::Rng::with_seed(9);
        loop {
            let before = model.clone();
            match model.insert(rng.u64(..)) {
                Ok(()) => {}
                Err(_) => {
                    assert_eq!(model.codes, before.codes);
                    break;
                }
            }
        }
    }
}
