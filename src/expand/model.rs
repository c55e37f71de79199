//! A single-threaded table that doubles in place: the reference for the scheme in
//! `scheme.rs`. It has no locks and no SIMD, and places, kicks, removes and doubles
//! exactly as the module docs describe, so the simulations (load at each doubling,
//! false positives per era, keys lost to removes) measure the scheme itself, and the
//! concurrent engine can be checked against it.

use std::collections::VecDeque;

use super::scheme::{Era, Place, Scheme, Split};
use crate::error::InsertError;

/// Moves a kick path may take: 5 with 4 slots, 3 with 8 (the core filter's bounds).
fn max_moves(slots: usize) -> usize {
    if slots <= 4 { 5 } else { 3 }
}

/// A table of `buckets(era) × slots` codes that doubles when an insert finds no room.
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
    /// Load at each doubling so far: the share of slots in use when an insert found no
    /// room and the table doubled.
    loads_at_doubling: Vec<f64>,
}

impl ExpandModel {
    /// A table of `base_buckets` buckets (even, at least 2) of `slots` slots of `bits`
    /// bits (8 or 16) that doubles up to `max_doublings` times.
    pub fn new(base_buckets: u64, bits: u32, slots: usize, max_doublings: u32) -> Self {
        let scheme = Scheme::new(base_buckets, bits);
        Self {
            scheme,
            slots,
            era: 0,
            max_era: max_doublings.min(scheme.max_era()),
            codes: vec![0; base_buckets as usize * slots],
            len: 0,
            loads_at_doubling: Vec::new(),
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
        self.len
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
        let places = self.scheme.locate(hash, self.era);
        places
            .iter()
            .map(|&place| self.matching(place).count())
            .sum()
    }

    /// Removes the longest code that answers for `hash` (the rule that never costs
    /// another key its code); false if none does.
    pub fn remove(&mut self, hash: u64) -> bool {
        let places = self.scheme.locate(hash, self.era);
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

    /// Adds a copy of `hash`, doubling the table when no kick path frees a slot.
    ///
    /// # Errors
    ///
    /// `TooManyCopies` when both buckets hold only codes that answer for this key,
    /// `Full` when no path frees a slot and the table may not double again. Either way
    /// nothing changed.
    pub fn insert(&mut self, hash: u64) -> Result<(), InsertError> {
        loop {
            let places = self.scheme.locate(hash, self.era);
            let copies: usize = places.iter().map(|&p| self.matching(p).count()).sum();
            let free = |model: &Self, place: Place| {
                model
                    .bucket(place.bucket)
                    .iter()
                    .filter(|&&c| c == 0)
                    .count()
            };
            let (free1, free2) = (free(self, places[0]), free(self, places[1]));
            if free1 + free2 == 0 && copies == 2 * self.slots {
                return Err(InsertError::TooManyCopies);
            }
            let target = if free1 + free2 > 0 {
                Some(if free1 >= free2 { places[0] } else { places[1] })
            } else {
                self.kick(places)
            };
            if let Some(place) = target {
                let slot = self.bucket(place.bucket).iter().position(|&c| c == 0);
                let slot = slot.expect("a freed slot");
                self.bucket_mut(place.bucket)[slot] = place.code;
                self.len += 1;
                return Ok(());
            }
            if !self.double() {
                return Err(InsertError::Full);
            }
        }
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
            for slot in 0..self.slots {
                let index = bucket * self.slots + slot;
                match self.scheme.split(self.codes[index], self.era) {
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

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    /// Random inserts (with duplicates), removes of live keys, and lookups, checked
    /// against an exact multiset, through many doublings: no live key is ever missed and
    /// no remove of a live key fails.
    fn churn(bits: u32, slots: usize, base: u64, seed: u64, steps: usize) -> ExpandModel {
        let mut model = ExpandModel::new(base, bits, slots, 24);
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
                    match model.insert(hash) {
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
                        model.remove(hash),
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
                        model.count(hash) >= copies,
                        "step {step}, era {}: key {hash:#x} lost a copy",
                        model.era()
                    );
                }
            }
        }
        for (&hash, &copies) in &live {
            assert!(model.count(hash) >= copies, "key {hash:#x} lost a copy");
        }
        model
    }

    #[test]
    fn removes_never_cost_another_key_through_ten_doublings() {
        for (bits, slots) in [(16, 4), (8, 4), (16, 8), (8, 8)] {
            // About 0.3 keys net per step: enough steps to pass ten doublings.
            let steps = if slots == 4 { 60_000 } else { 150_000 };
            let model = churn(bits, slots, 6, u64::from(bits) + slots as u64, steps);
            assert!(
                model.era() >= 10,
                "{bits}x{slots}: only {} doublings",
                model.era()
            );
        }
    }

    /// Keys built to collide: the same base bucket and the same first stream block, so
    /// they share both buckets and every code bit at era 0, and part ways one bit per
    /// doubling; duplicates of each; removes in random order across doublings.
    #[test]
    fn removes_of_keys_that_share_codes_and_buckets_lose_nothing() {
        for bits in [8u32, 16] {
            let mut rng = fastrand::Rng::with_seed(u64::from(bits));
            for _round in 0..20 {
                let mut model = ExpandModel::new(4, bits, 4, 24);
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
