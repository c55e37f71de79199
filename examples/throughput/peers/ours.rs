//! This crate's filter, in any of its six layouts (fingerprint 8/16/32 bits × 4/8 slots).

use concurrent_cuckoo_filter::CuckooFilter;

use super::{Caps, Concurrent, Filter, PeerDef, Shared, Sizing};

pub const DEF: PeerDef = PeerDef {
    name: "ours",
    about: "concurrent-cuckoo-filter, --fingerprint × --slots, sized so --items fill it to --load",
    build,
};

/// Wraps one monomorphization. The impls are stamped out per layout by a macro rather than
/// written generically, so this file depends only on the crate's public constructors, not on
/// the names of its internal fingerprint traits.
struct Ours<T>(T);

macro_rules! layouts {
    ($(($fp:ty, $slots:literal)),* $(,)?) => {
        $(
            impl Concurrent for Ours<CuckooFilter<$fp, $slots>> {
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
            }
        )*

        fn build(s: &Sizing) -> Box<dyn Filter> {
            // Exact bucket count (not `capacity`), so --load is the load after --items inserts.
            let buckets = (s.items as f64 / (s.slots as f64 * s.load)).ceil().max(2.0) as usize;
            match (s.fp_bits, s.slots) {
                $(
                    (fp, $slots) if fp == <$fp>::BITS => Box::new(Shared(Ours(
                        CuckooFilter::builder()
                            .fingerprint::<$fp>()
                            .slots::<$slots>()
                            .buckets(buckets)
                            .build()
                            .expect("the layout and size were validated by the CLI"),
                    ))),
                )*
                (fp, slots) => unreachable!("CLI accepted fingerprint {fp} × {slots} slots"),
            }
        }
    };
}

layouts!((u8, 4), (u8, 8), (u16, 4), (u16, 8), (u32, 4), (u32, 8));
