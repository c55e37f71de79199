//! This crate's filter, in any of its six layouts (fingerprint 8/16/32 bits × 4/8 slots),
//! inserting and looking keys up one by one (`ours`) or in batches with `insert_many` and
//! `contains_many` (`ours-batch`), or one by one through `exclusive()` (`ours-owned`,
//! and `ours-owned-fold`, which hashes with one multiply instead of the default's two).

use std::cell::RefCell;
use std::hash::{BuildHasher, Hasher};

use concurrent_cuckoo_filter::CuckooFilter;

use crate::keys::Probe;

use super::{
    Caps, Concurrent, Filter, PeerDef, Shared, Sizing, Tally, count_each, insert_each, probe_each,
    probe_one,
};

pub const DEF: PeerDef = PeerDef {
    name: "ours",
    about: "concurrent-cuckoo-filter, --fingerprint × --slots, sized so --items fill it to --load",
    build: |s| build(s, false),
};

pub const BATCHED: PeerDef = PeerDef {
    name: "ours-batch",
    about: "ours, with the inserts and lookups of a run issued through insert_many and contains_many (buckets prefetched a block of 16 keys ahead)",
    build: |s| build(s, true),
};

pub const OWNED: PeerDef = PeerDef {
    name: "ours-owned",
    about: "ours, every insert, remove and lookup through exclusive() (no lock, no version check), as a host that owns its filter calls it; single-threaded",
    build: |s| build_owned(s, concurrent_cuckoo_filter::DefaultHashBuilder::new()),
};

/// Run only when named (never by `all`): it measures what the default hash costs, not a
/// configuration the crate offers.
pub const OWNED_FOLD: PeerDef = PeerDef {
    name: "ours-owned-fold",
    about: "ours-owned hashing each key with one folded multiply (OneFold, in this file) instead of the stable default hasher's two, as the C++ reference hashes with one multiply-add: what the default hash costs a lookup",
    build: |s| build_owned(s, OneFold),
};

/// A one-multiply hasher for `ours-owned-fold`: `fold(seed ^ word, K)` for each 8-byte
/// word written, where `fold` xors the halves of the 128-bit product. It is the default
/// hasher's absorbing step without its final fold. It promises no stability and is no
/// hasher for stored filters; it is here to measure that final fold.
#[derive(Clone, Copy)]
struct OneFold;

struct OneFoldHasher(u64);

impl BuildHasher for OneFold {
    type Hasher = OneFoldHasher;
    fn build_hasher(&self) -> OneFoldHasher {
        OneFoldHasher(0x243F_6A88_85A3_08D3)
    }
}

impl Hasher for OneFoldHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for word in bytes.chunks(8) {
            let mut padded = [0; 8];
            padded[..word.len()].copy_from_slice(word);
            self.write_u64(u64::from_le_bytes(padded));
        }
    }
    #[inline]
    fn write_u64(&mut self, word: u64) {
        let product = u128::from(self.0 ^ word) * 0x9E37_79B9_7F4A_7C15;
        self.0 = (product as u64) ^ ((product >> 64) as u64);
    }
}

/// Wraps one monomorphization. The impls are stamped out per layout by a macro rather than
/// written generically, so this file depends only on the crate's public constructors, not on
/// the names of its internal fingerprint traits.
struct Ours<T> {
    filter: T,
    /// Inserts and lookups of a run go through `insert_many` and `contains_many`
    /// (`ours-batch`).
    batched: bool,
}

/// `ours-owned`: the single-owner trait's `&self` lookups borrow the filter mutably, once
/// per batch in the timed loops, to call `exclusive()`.
struct Owned<T>(RefCell<T>);

/// Exact bucket count (not `capacity`), so --load is the load after --items inserts.
fn buckets(s: &Sizing) -> usize {
    (s.items as f64 / (s.slots as f64 * s.load)).ceil().max(2.0) as usize
}

macro_rules! layouts {
    ($(($fp:ty, $slots:literal)),* $(,)?) => {
        $(
            impl Concurrent for Ours<CuckooFilter<$fp, $slots>> {
                fn caps(&self) -> Caps {
                    if self.batched {
                        Caps::BATCH_VARIANT
                    } else {
                        Caps::DYNAMIC
                    }
                }
                #[inline]
                fn insert(&self, key: u64) -> bool {
                    self.filter.insert(&key).is_ok()
                }
                #[inline]
                fn remove(&self, key: u64) -> bool {
                    self.filter.remove(&key)
                }
                #[inline]
                fn contains(&self, key: u64) -> bool {
                    self.filter.contains(&key)
                }
                fn memory_bytes(&self) -> usize {
                    self.filter.memory_usage()
                }
                fn insert_all(&self, keys: &[u64], tally: &mut Tally) {
                    if !self.batched {
                        return insert_each(keys, tally, |key| self.insert(key));
                    }
                    // A batch stops at a refused key: record it and go on after it.
                    let mut rest = keys;
                    while let Err(stopped) = self.filter.insert_many(rest) {
                        let refused = stopped.inserted();
                        tally.insert_failed.push(rest[refused]);
                        rest = &rest[refused + 1..];
                    }
                }
                fn probe_all(&self, probes: &[Probe], tally: &mut Tally) {
                    if !self.batched {
                        return probe_each(probes, tally, |key| self.filter.contains(&key));
                    }
                    // `for_each`, not a `zip`: the batch hands its answers over a block
                    // at a time that way.
                    self.filter
                        .contains_many(probes.iter().map(|probe| probe.key))
                        .enumerate()
                        .for_each(|(i, found)| probe_one(probes[i], tally, found));
                }
                fn count_found(&self, keys: &[u64]) -> usize {
                    if !self.batched {
                        return count_each(keys, |key| self.filter.contains(&key));
                    }
                    self.filter.contains_many(keys).filter(|&found| found).count()
                }
            }
        )*

        $(
            impl<S: BuildHasher> Filter for Owned<CuckooFilter<$fp, $slots, S>> {
                fn caps(&self) -> Caps {
                    Caps::BATCH_VARIANT
                }
                #[inline]
                fn insert(&mut self, key: u64) -> bool {
                    self.0.get_mut().exclusive().insert(&key).is_ok()
                }
                #[inline]
                fn remove(&mut self, key: u64) -> bool {
                    self.0.get_mut().exclusive().remove(&key)
                }
                #[inline]
                fn contains(&self, key: u64) -> bool {
                    self.0.borrow_mut().exclusive().contains(&key)
                }
                fn memory_bytes(&self) -> usize {
                    self.0.borrow().memory_usage()
                }
                fn probe_all(&self, probes: &[Probe], tally: &mut Tally) {
                    let mut filter = self.0.borrow_mut();
                    let owned = filter.exclusive();
                    probe_each(probes, tally, |key| owned.contains(&key));
                }
                fn count_found(&self, keys: &[u64]) -> usize {
                    let mut filter = self.0.borrow_mut();
                    let owned = filter.exclusive();
                    keys.iter().filter(|&&key| owned.contains(&key)).count()
                }
            }
        )*

        fn build_owned<S: BuildHasher + 'static>(s: &Sizing, hasher: S) -> Box<dyn Filter> {
            match (s.fp_bits, s.slots) {
                $(
                    (fp, $slots) if fp == <$fp>::BITS => Box::new(Owned(RefCell::new(
                        CuckooFilter::builder()
                            .fingerprint::<$fp>()
                            .slots::<$slots>()
                            .buckets(buckets(s))
                            .hasher(hasher)
                            .build()
                            .expect("the layout and size were validated by the CLI"),
                    ))),
                )*
                (fp, slots) => unreachable!("CLI accepted fingerprint {fp} × {slots} slots"),
            }
        }

        fn build(s: &Sizing, batched: bool) -> Box<dyn Filter> {
            let buckets = buckets(s);
            match (s.fp_bits, s.slots) {
                $(
                    (fp, $slots) if fp == <$fp>::BITS => Box::new(Shared(Ours {
                        filter: CuckooFilter::builder()
                            .fingerprint::<$fp>()
                            .slots::<$slots>()
                            .buckets(buckets)
                            .build()
                            .expect("the layout and size were validated by the CLI"),
                        batched,
                    })),
                )*
                (fp, slots) => unreachable!("CLI accepted fingerprint {fp} × {slots} slots"),
            }
        }
    };
}

layouts!((u8, 4), (u8, 8), (u16, 4), (u16, 8), (u32, 4), (u32, 8));
