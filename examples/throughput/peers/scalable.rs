//! `scalable_cuckoo_filter`: a growing chain of cuckoo filters; single-threaded. Never
//! reports "full": it grows instead.

use scalable_cuckoo_filter::ScalableCuckooFilter;

use super::{Caps, Filter, PeerDef};

pub const DEF: PeerDef = PeerDef {
    name: "scalable-cuckoo",
    about: "scalable_cuckoo_filter::new(items, same FPR as ours); grows when full; single-threaded",
    build: |s| Box::new(Scalable(ScalableCuckooFilter::new(s.items, s.target_fpr))),
};

pub const GROWN: PeerDef = PeerDef {
    name: "scalable-grown",
    about: "scalable_cuckoo_filter::new(items/8, same FPR as ours): grows while filled, as ours-growable does",
    build: |s| {
        let first = (s.items / super::ours_growable::FIRST_SHARE).max(1);
        Box::new(Scalable(ScalableCuckooFilter::new(first, s.target_fpr)))
    },
};

struct Scalable(ScalableCuckooFilter<u64>);

impl Filter for Scalable {
    fn caps(&self) -> Caps {
        Caps::DYNAMIC
    }
    #[inline]
    fn insert(&mut self, key: u64) -> bool {
        self.0.insert(&key);
        true
    }
    #[inline]
    fn remove(&mut self, key: u64) -> bool {
        self.0.remove(&key)
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.0.contains(&key)
    }
    fn memory_bytes(&self) -> usize {
        // `bits()` counts its bucket bits and its overflow list.
        (self.0.bits() / 8) as usize + std::mem::size_of_val(&self.0)
    }
}
