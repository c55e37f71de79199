//! The `cuckoofilter` crate: single-threaded (8-bit fingerprints, 4 slots, power-of-two
//! buckets, SipHash), and the same filter behind a lock as the "just put a lock around it"
//! baseline for concurrent runs.
//!
//! Note: on `NotEnoughSpace` this crate has already evicted some other item (its own doc
//! says so), so the runs' false-negative counts are expected to be non-zero for it once an
//! insert has failed.

use std::collections::hash_map::DefaultHasher;
use std::sync::Mutex;

use parking_lot::RwLock;

use super::{Caps, Concurrent, Filter, PeerDef, Shared, Sizing};

type Inner = cuckoofilter::CuckooFilter<DefaultHasher>;

pub const PLAIN: PeerDef = PeerDef {
    name: "cuckoofilter",
    about: "cuckoofilter 8-bit × 4, with_capacity(items) (rounds up to 2^k slots); single-threaded",
    build: |s| Box::new(Plain(new_inner(s))),
};

pub const MUTEX: PeerDef = PeerDef {
    name: "cuckoofilter+Mutex",
    about: "cuckoofilter inside std::sync::Mutex: every operation takes the lock",
    build: |s| Box::new(Shared(InMutex(Mutex::new(new_inner(s))))),
};

pub const RWLOCK: PeerDef = PeerDef {
    name: "cuckoofilter+RwLock",
    about: "cuckoofilter inside parking_lot::RwLock: lookups share a read lock",
    build: |s| Box::new(Shared(InRwLock(RwLock::new(new_inner(s))))),
};

fn new_inner(s: &Sizing) -> Inner {
    Inner::with_capacity(s.items)
}

struct Plain(Inner);

impl Filter for Plain {
    fn caps(&self) -> Caps {
        Caps::DYNAMIC
    }
    #[inline]
    fn insert(&mut self, key: u64) -> bool {
        self.0.add(&key).is_ok()
    }
    #[inline]
    fn remove(&mut self, key: u64) -> bool {
        self.0.delete(&key)
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.0.contains(&key)
    }
    fn memory_bytes(&self) -> usize {
        self.0.memory_usage()
    }
}

struct InMutex(Mutex<Inner>);

impl InMutex {
    /// A panic while holding the lock cannot leave this filter half-updated in a way that
    /// matters to a benchmark, so poisoning is ignored.
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Concurrent for InMutex {
    fn caps(&self) -> Caps {
        Caps::DYNAMIC
    }
    #[inline]
    fn insert(&self, key: u64) -> bool {
        self.lock().add(&key).is_ok()
    }
    #[inline]
    fn remove(&self, key: u64) -> bool {
        self.lock().delete(&key)
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.lock().contains(&key)
    }
    fn memory_bytes(&self) -> usize {
        self.lock().memory_usage() + std::mem::size_of::<Mutex<()>>()
    }
}

struct InRwLock(RwLock<Inner>);

impl Concurrent for InRwLock {
    fn caps(&self) -> Caps {
        Caps::DYNAMIC
    }
    #[inline]
    fn insert(&self, key: u64) -> bool {
        self.0.write().add(&key).is_ok()
    }
    #[inline]
    fn remove(&self, key: u64) -> bool {
        self.0.write().delete(&key)
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.0.read().contains(&key)
    }
    fn memory_bytes(&self) -> usize {
        self.0.read().memory_usage() + std::mem::size_of::<RwLock<()>>()
    }
}
