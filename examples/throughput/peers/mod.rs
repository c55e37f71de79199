//! One adapter per peer filter, all behind the same two small traits.
//!
//! [`Filter`] is the single-owner view every peer has (`&mut self` writes). [`Concurrent`] is
//! the shared view (`&self` writes from many threads) that only thread-safe filters have; a
//! [`Shared`] wrapper turns one into the other, so a thread-safe peer implements only
//! [`Concurrent`]. Adding a peer means adding one file here and one line in [`CATALOG`].

mod atomic_cuckoo;
mod cuckoofilter;
mod fastbloom;
mod ours;
mod ours_growable;
mod qfilter;
mod sbbf;
mod scalable;
mod xorf;

use crate::keys::{Op, Probe};

/// What a filter can do; the runners print "n/a" with a reason for the rest.
#[derive(Clone, Copy, Debug)]
pub struct Caps {
    /// Accepts keys one at a time (false for static filters built once from all keys).
    pub insert: bool,
    /// Can delete a key.
    pub remove: bool,
    /// Runs the mixed workload. False for a variant of another peer that differs only in
    /// how it issues a batch of lookups, which a stream of interleaved operations cannot
    /// use: its mixed rows would repeat the other peer's.
    pub mixed: bool,
}

impl Caps {
    /// Inserts and removes, like ours.
    pub const DYNAMIC: Caps = Caps {
        insert: true,
        remove: true,
        mixed: true,
    };
    /// Like ours, with inserts and lookups batched: no mixed rows (a stream of
    /// interleaved operations cannot be batched).
    pub const BATCH_VARIANT: Caps = Caps {
        insert: true,
        remove: true,
        mixed: false,
    };
    /// Inserts but cannot delete (Bloom filters).
    pub const INSERT_ONLY: Caps = Caps {
        insert: true,
        remove: false,
        mixed: true,
    };
    /// Built once from all keys; lookups only.
    pub const STATIC: Caps = Caps {
        insert: false,
        remove: false,
        mixed: false,
    };
}

/// Counts kept by the batch kernels. The keys of the rare misses are kept (not just counted)
/// so a run can tell a real false negative from a key whose insert had failed.
#[derive(Default, Debug)]
pub struct Tally {
    /// Lookups of never-inserted keys that answered "present".
    pub false_pos: u64,
    /// Lookups of never-inserted keys.
    pub negatives: u64,
    /// Keys expected present that answered "absent" (candidates for false negatives).
    pub missed: Misses,
    /// Keys whose insert returned an error.
    pub insert_failed: Vec<u64>,
    /// Removes of a key expected present that found nothing to remove.
    pub remove_missed: u64,
}

impl Tally {
    /// Adds `other`'s counts to `self`.
    pub fn merge(&mut self, other: Tally) {
        self.false_pos += other.false_pos;
        self.negatives += other.negatives;
        other
            .missed
            .keys()
            .iter()
            .for_each(|&key| self.missed.record(key, true));
        self.insert_failed.extend(other.insert_failed);
        self.remove_missed += other.remove_missed;
    }
}

/// The single-owner view of a filter. Every peer has one.
///
/// The provided batch methods are monomorphized for each peer, so a run pays one dynamic call
/// per batch and the per-key calls inside the loop are static and inlinable.
pub trait Filter {
    /// What this filter supports.
    fn caps(&self) -> Caps;
    /// Inserts one key; `false` if the filter refused it (full).
    fn insert(&mut self, key: u64) -> bool;
    /// Removes one copy of `key`; `false` if none was found. Only called when `caps().remove`.
    fn remove(&mut self, key: u64) -> bool;
    /// Membership query: `false` means definitely absent.
    fn contains(&self, key: u64) -> bool;
    /// Bytes of memory the filter holds (as exactly as the peer lets us know).
    fn memory_bytes(&self) -> usize;

    /// The thread-safe view, if this filter can be written from several threads at once.
    fn concurrent(&self) -> Option<&dyn Concurrent> {
        None
    }

    /// Builds a static filter from all `keys` at once; `false` if the build failed. Only
    /// called when `!caps().insert`.
    fn build(&mut self, keys: &[u64]) -> bool {
        let _ = keys;
        false
    }

    /// Inserts every key, recording the ones refused.
    fn insert_all(&mut self, keys: &[u64], tally: &mut Tally) {
        insert_each(keys, tally, |key| self.insert(key));
    }

    /// Runs lookups whose expected answer is known.
    fn probe_all(&self, probes: &[Probe], tally: &mut Tally) {
        probe_each(probes, tally, |key| self.contains(key));
    }

    /// Looks every key up and returns how many were found: the timed lookup loop, which
    /// like the reference's does nothing with an answer but count it.
    fn count_found(&self, keys: &[u64]) -> usize {
        count_each(keys, |key| self.contains(key))
    }

    /// Runs a mixed operation sequence.
    fn run_ops(&mut self, ops: &[Op], tally: &mut Tally) {
        run_each(ops, tally, |op| match op {
            Op::Insert(key) => self.insert(key),
            Op::Remove(key) => self.remove(key),
            Op::Read(probe) => self.contains(probe.key),
        });
    }
}

/// The shared view of a thread-safe filter: writes through `&self`.
pub trait Concurrent: Sync {
    /// What this filter supports.
    fn caps(&self) -> Caps;
    /// Inserts one key; `false` if the filter refused it (full).
    fn insert(&self, key: u64) -> bool;
    /// Removes one copy of `key`; `false` if none was found.
    fn remove(&self, key: u64) -> bool;
    /// Membership query.
    fn contains(&self, key: u64) -> bool;
    /// Bytes of memory the filter holds.
    fn memory_bytes(&self) -> usize;

    /// Inserts every key, recording the ones refused (like [`Filter::insert_all`]).
    fn insert_all(&self, keys: &[u64], tally: &mut Tally) {
        insert_each(keys, tally, |key| self.insert(key));
    }

    /// Runs lookups whose expected answer is known (like [`Filter::probe_all`]).
    fn probe_all(&self, probes: &[Probe], tally: &mut Tally) {
        probe_each(probes, tally, |key| self.contains(key));
    }

    /// Counts the keys found (like [`Filter::count_found`]).
    fn count_found(&self, keys: &[u64]) -> usize {
        count_each(keys, |key| self.contains(key))
    }

    /// Runs a mixed operation sequence (monomorphized, like [`Filter::run_ops`]).
    fn run_ops(&self, ops: &[Op], tally: &mut Tally) {
        run_each(ops, tally, |op| match op {
            Op::Insert(key) => self.insert(key),
            Op::Remove(key) => self.remove(key),
            Op::Read(probe) => self.contains(probe.key),
        });
    }
}

/// Adapts a thread-safe filter to the single-owner trait by plain delegation, so the
/// single-threaded runs measure exactly the code the multi-threaded runs do.
pub struct Shared<T>(pub T);

impl<T: Concurrent> Filter for Shared<T> {
    fn caps(&self) -> Caps {
        self.0.caps()
    }
    #[inline]
    fn insert(&mut self, key: u64) -> bool {
        self.0.insert(key)
    }
    #[inline]
    fn remove(&mut self, key: u64) -> bool {
        self.0.remove(key)
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.0.contains(key)
    }
    fn memory_bytes(&self) -> usize {
        self.0.memory_bytes()
    }
    fn insert_all(&mut self, keys: &[u64], tally: &mut Tally) {
        self.0.insert_all(keys, tally);
    }
    fn probe_all(&self, probes: &[Probe], tally: &mut Tally) {
        self.0.probe_all(probes, tally);
    }
    fn count_found(&self, keys: &[u64]) -> usize {
        self.0.count_found(keys)
    }
    fn concurrent(&self) -> Option<&dyn Concurrent> {
        Some(&self.0)
    }
}

/// Runs `ops` through `apply` (which performs one and returns its outcome: inserted,
/// removed, or found) and books each outcome, for both filter traits alike.
#[inline(always)]
fn run_each(ops: &[Op], tally: &mut Tally, mut apply: impl FnMut(Op) -> bool) {
    for &op in ops {
        let outcome = apply(op);
        match op {
            Op::Insert(key) if !outcome => tally.insert_failed.push(key),
            Op::Insert(_) => {}
            Op::Remove(_) => tally.remove_missed += u64::from(!outcome),
            Op::Read(probe) => probe_one(probe, tally, outcome),
        }
    }
}

/// Inserts every key one at a time and records the ones refused.
#[inline(always)]
pub fn insert_each(keys: &[u64], tally: &mut Tally, mut insert: impl FnMut(u64) -> bool) {
    for &key in keys {
        if !insert(key) {
            tally.insert_failed.push(key);
        }
    }
}

/// Looks up every probe one key at a time and books each answer.
#[inline(always)]
pub fn probe_each(probes: &[Probe], tally: &mut Tally, contains: impl Fn(u64) -> bool) {
    for &probe in probes {
        probe_one(probe, tally, contains(probe.key));
    }
}

/// Looks every key up one at a time and counts the ones found.
#[inline(always)]
pub fn count_each(keys: &[u64], contains: impl Fn(u64) -> bool) -> usize {
    keys.iter().filter(|&&key| contains(key)).count()
}

/// Books one lookup, without a branch on its answer, so the loop stays predictable at any
/// positive rate.
#[inline(always)]
pub fn probe_one(probe: Probe, tally: &mut Tally, found: bool) {
    tally.negatives += u64::from(!probe.present);
    tally.false_pos += u64::from(found & !probe.present);
    tally.missed.record(probe.key, probe.present & !found);
}

/// Keys recorded without a branch on whether to record them: `if missed { push }` compiled
/// to a branch on the lookup's answer, which mispredicted on half the keys at 50%
/// positives and cost the cheapest lookups up to a third of their rate. Here every key is
/// written to a spare slot and kept by advancing the length by the miss bit; the only
/// branch (grow the spare) is taken once per recorded key, and those are rare.
#[derive(Debug)]
pub struct Misses {
    /// `slots[..len]` are the recorded keys; `slots[len]` is the spare.
    slots: Vec<u64>,
    len: usize,
}

impl Default for Misses {
    fn default() -> Self {
        Self {
            slots: vec![0],
            len: 0,
        }
    }
}

impl Misses {
    #[inline(always)]
    pub fn record(&mut self, key: u64, keep: bool) {
        self.slots[self.len] = key;
        self.len += usize::from(keep);
        if self.len == self.slots.len() {
            self.slots.push(0);
        }
    }

    pub fn keys(&self) -> &[u64] {
        &self.slots[..self.len]
    }
}

/// Everything a peer needs to size itself the same way as the others.
#[derive(Clone, Copy, Debug)]
pub struct Sizing {
    /// Items the filter must hold.
    pub items: usize,
    /// Target load factor of our filter (cuckoo peers with a fixed layout reuse it).
    pub load: f64,
    /// Our filter's fingerprint bits.
    pub fp_bits: u32,
    /// Our filter's slots per bucket.
    pub slots: usize,
    /// FPR bound of our filter at the target load: `2·b·α / 2^f`. Peers that take an FPR
    /// target get this one ("same FPR").
    pub target_fpr: f64,
    /// Bits per item our filter uses when holding `items`. Peers that take a size get this
    /// ("same bits/item").
    pub bits_per_item: f64,
    /// Seed for peers that take one.
    pub seed: u64,
}

/// A named way to build one peer.
pub struct PeerDef {
    /// Short name used on the command line and in tables.
    pub name: &'static str,
    /// One line on what is measured and how it was configured.
    pub about: &'static str,
    /// Builds an empty filter sized for `Sizing::items`.
    pub build: fn(&Sizing) -> Box<dyn Filter>,
}

/// Whether `name` is one of this crate's own rows (`ours`, `ours-batch`, `ours-owned`, ...): a false
/// negative from any of them fails the run.
pub fn is_ours(name: &str) -> bool {
    // `ours-growable` too: its removes never cost another key (the chain of sub-filters
    // it replaced could, and was left out here).
    [
        ours::DEF,
        ours::BATCHED,
        ours::OWNED,
        ours::OWNED_FOLD,
        ours_growable::DEF,
    ]
    .iter()
    .any(|peer| peer.name == name)
}

/// Every peer, in table order. `ours` must stay first: the others' ratios are against it.
pub const CATALOG: &[PeerDef] = &[
    ours::DEF,
    ours::BATCHED,
    ours::OWNED,
    cuckoofilter::PLAIN,
    cuckoofilter::MUTEX,
    cuckoofilter::RWLOCK,
    atomic_cuckoo::DEF,
    scalable::DEF,
    ours_growable::DEF,
    scalable::GROWN,
    qfilter::DEF,
    fastbloom::SAME_FPR,
    fastbloom::SAME_BITS,
    sbbf::DEF,
    xorf::DEF,
];

/// Peers of the catalog that `--peers all` adds to the default set (`headline`): a part
/// of ours (`ours-owned`) and the growable filters (`ours-growable`, `scalable-grown`),
/// each measured for its own question (exclusive access, growth), which together take
/// longer than the headline comparison itself on 2 cores.
pub const BEYOND_HEADLINE: &[&str] = &[
    ours::OWNED.name,
    ours_growable::DEF.name,
    scalable::GROWN.name,
];

/// Peers that run only when named: they measure a part of ours (see each one's `about`),
/// not a filter a user would pick.
pub const NAMED_ONLY: &[PeerDef] = &[ours::OWNED_FOLD];

/// Builds our filter once to learn its exact memory use, which fixes the "same bits/item"
/// sizing for the Bloom peers.
pub fn sizing(items: usize, load: f64, fp_bits: u32, slots: usize, seed: u64) -> Sizing {
    let mut s = Sizing {
        items,
        load,
        fp_bits,
        slots,
        target_fpr: 2.0 * slots as f64 * load / 2f64.powi(fp_bits as i32),
        bits_per_item: 0.0,
        seed,
    };
    let probe = (ours::DEF.build)(&s);
    s.bits_per_item = 8.0 * probe.memory_bytes() as f64 / items.max(1) as f64;
    s
}

/// A key mixer for the peers that take a pre-hashed `u64` (sbbf). It is a bijection
/// (splitmix64's finalizer), about as cheap as a hash can be, so it favours those peers
/// slightly over peers that hash with a real hasher.
#[inline]
pub fn mix64(mut x: u64) -> u64 {
    x ^= x >> 30;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}
