//! `qfilter`: a quotient filter (rank-select, Rust port of the "counting quotient filter"
//! family); single-threaded.

use super::{Caps, Filter, PeerDef};

pub const DEF: PeerDef = PeerDef {
    name: "qfilter",
    about: "qfilter::Filter::new(items, same FPR as ours), insert_duplicated (multiset, like ours)",
    build: |s| {
        Box::new(QFilter(
            qfilter::Filter::new(s.items as u64, s.target_fpr)
                .expect("capacity and FPR are within qfilter's limits"),
        ))
    },
};

struct QFilter(qfilter::Filter);

impl Filter for QFilter {
    fn caps(&self) -> Caps {
        Caps::DYNAMIC
    }
    #[inline]
    fn insert(&mut self, key: u64) -> bool {
        // `insert` would refuse a key whose fingerprint is already present, which turns a
        // later remove of the other key into a false negative; duplicates keep the
        // multiset semantics our filter has.
        self.0.insert_duplicated(key).is_ok()
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
        self.0.memory_usage() + std::mem::size_of_val(&self.0)
    }
}
