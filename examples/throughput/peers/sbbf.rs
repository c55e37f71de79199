//! `sbbf-rs-safe`: a split-block Bloom filter (Parquet/Impala style, SIMD), single-threaded,
//! no removal. It takes pre-hashed keys: we feed it `mix64(key)`.

use super::{Caps, Filter, PeerDef, mix64};

pub const DEF: PeerDef = PeerDef {
    name: "sbbf",
    about: "sbbf-rs-safe Filter::new(ceil(our bits/item), items), keys hashed with mix64",
    build: |s| {
        let bits_per_key = s.bits_per_item.ceil().max(1.0) as usize;
        Box::new(Sbbf(sbbf_rs_safe::Filter::new(bits_per_key, s.items)))
    },
};

struct Sbbf(sbbf_rs_safe::Filter);

impl Filter for Sbbf {
    fn caps(&self) -> Caps {
        Caps::INSERT_ONLY
    }
    #[inline]
    fn insert(&mut self, key: u64) -> bool {
        self.0.insert_hash(mix64(key));
        true
    }
    fn remove(&mut self, _key: u64) -> bool {
        unreachable!("caps() says a Bloom filter cannot remove")
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.0.contains_hash(mix64(key))
    }
    fn memory_bytes(&self) -> usize {
        self.0.as_bytes().len() + std::mem::size_of::<Self>()
    }
}
