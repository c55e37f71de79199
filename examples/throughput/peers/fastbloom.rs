//! `fastbloom`'s `AtomicBloomFilter`: lock-free concurrent inserts and lookups, no removal.
//! Configured twice: for our FPR, and for our bits per item.

use fastbloom::AtomicBloomFilter;

use super::{Caps, Concurrent, PeerDef, Shared, Sizing};

pub const SAME_FPR: PeerDef = PeerDef {
    name: "fastbloom=fpr",
    about: "fastbloom AtomicBloomFilter, with_false_pos(our FPR bound).expected_items(items)",
    build: |s| {
        let f = AtomicBloomFilter::with_false_pos(s.target_fpr)
            .seed(&seed(s))
            .expected_items(s.items);
        Box::new(Shared(Bloom(f)))
    },
};

pub const SAME_BITS: PeerDef = PeerDef {
    name: "fastbloom=bits",
    about: "fastbloom AtomicBloomFilter, with_num_bits(our bits/item × items), optimal hash count",
    build: |s| {
        let bits = (s.bits_per_item * s.items as f64).ceil() as usize;
        let f = AtomicBloomFilter::with_num_bits(bits.max(64))
            .seed(&seed(s))
            .expected_items(s.items);
        Box::new(Shared(Bloom(f)))
    },
};

fn seed(s: &Sizing) -> u128 {
    u128::from(s.seed)
}

struct Bloom(AtomicBloomFilter);

impl Concurrent for Bloom {
    fn caps(&self) -> Caps {
        Caps::INSERT_ONLY
    }
    #[inline]
    fn insert(&self, key: u64) -> bool {
        // Returns "was maybe present"; a Bloom filter never refuses an insert.
        self.0.insert(&key);
        true
    }
    fn remove(&self, _key: u64) -> bool {
        unreachable!("caps() says a Bloom filter cannot remove")
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.0.contains(&key)
    }
    fn memory_bytes(&self) -> usize {
        self.0.num_bits() / 8 + std::mem::size_of::<Self>()
    }
}
