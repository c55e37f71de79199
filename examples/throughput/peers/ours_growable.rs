//! This crate's growable filter (default layout: 16-bit fingerprints, 4 slots), started
//! at an eighth of `--items` so that filling it doubles its table three times,
//! beside `scalable-grown`, the single-threaded `scalable_cuckoo_filter` started the same
//! way.

use concurrent_cuckoo_filter::GrowableCuckooFilter;

use crate::keys::Probe;

use super::{Caps, Concurrent, Filter, PeerDef, Shared, Sizing, Tally, count_each, probe_each};

/// The first table's share of `--items`: 1/8, so a fill doubles it three times.
pub const FIRST_SHARE: usize = 8;

pub const DEF: PeerDef = PeerDef {
    name: "ours-growable",
    about: "GrowableCuckooFilter, 16-bit x 4, first capacity --items/8, doubling in place (3 doublings when full)",
    build,
};

fn build(s: &Sizing) -> Box<dyn Filter> {
    Box::new(Shared(Growable(GrowableCuckooFilter::with_capacity(
        (s.items / FIRST_SHARE).max(1),
    ))))
}

struct Growable(GrowableCuckooFilter);

impl Concurrent for Growable {
    fn caps(&self) -> Caps {
        Caps::DYNAMIC
    }
    #[inline]
    fn insert(&self, key: u64) -> bool {
        self.0.insert(&key).is_ok()
    }
    #[inline]
    fn remove(&self, key: u64) -> bool {
        self.0.remove(&key)
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.0.contains(&key)
    }
    fn memory_bytes(&self) -> usize {
        self.0.memory_usage()
    }
    fn probe_all(&self, probes: &[Probe], tally: &mut Tally) {
        probe_each(probes, tally, |key| self.0.contains(&key));
    }
    fn count_found(&self, keys: &[u64]) -> usize {
        count_each(keys, |key| self.0.contains(&key))
    }
}
