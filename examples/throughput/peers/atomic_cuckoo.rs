//! `atomic-cuckoo-filter`: lock-free inserts into free slots, but evictions and removes take
//! one filter-wide writer lock. Configured with our fingerprint width and slots per bucket.

use atomic_cuckoo_filter::CuckooFilter;

use super::{Caps, Concurrent, PeerDef, Shared, Sizing};

pub const DEF: PeerDef = PeerDef {
    name: "atomic-cuckoo",
    about: "atomic-cuckoo-filter, our fingerprint × slots, capacity(items) (rounds up to 2^k buckets)",
    build: |s| Box::new(Shared(Atomic::new(s))),
};

struct Atomic {
    filter: CuckooFilter,
    fp_bits: usize,
}

impl Atomic {
    fn new(s: &Sizing) -> Self {
        let fp_bits = s.fp_bits as usize;
        let filter = CuckooFilter::builder()
            .capacity(s.items)
            .fingerprint_size(fp_bits)
            .bucket_size(s.slots)
            .build()
            .expect("8/16/32-bit fingerprints and 4/8 slots are valid for atomic-cuckoo-filter");
        Self { filter, fp_bits }
    }
}

impl Concurrent for Atomic {
    fn caps(&self) -> Caps {
        Caps::DYNAMIC
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
        // It reports no size; its table is `capacity × fingerprint bits` packed into
        // `usize` words (see its `build`).
        let words = (self.filter.capacity() * self.fp_bits).div_ceil(usize::BITS as usize);
        words * std::mem::size_of::<usize>() + std::mem::size_of::<Self>()
    }
}
