//! `xorf`'s `BinaryFuse16`: a static filter built once from all keys; lookups only. The
//! speed reference for a filter that cannot change.

use xorf::{BinaryFuse16, Filter as _};

use super::{Caps, Filter, PeerDef};

pub const DEF: PeerDef = PeerDef {
    name: "xorf-bfuse16",
    about: "xorf BinaryFuse16 built from all keys at once (static: no insert/remove)",
    build: |_| Box::new(Fuse(None)),
};

/// `None` until [`Filter::build`] runs: a static filter does not exist before its keys do.
struct Fuse(Option<BinaryFuse16>);

impl Filter for Fuse {
    fn caps(&self) -> Caps {
        Caps::STATIC
    }
    fn insert(&mut self, _key: u64) -> bool {
        false
    }
    fn remove(&mut self, _key: u64) -> bool {
        false
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.0.as_ref().is_some_and(|f| f.contains(&key))
    }
    fn memory_bytes(&self) -> usize {
        let table = self.0.as_ref().map_or(0, |f| f.fingerprints.len() * 2);
        table + std::mem::size_of::<BinaryFuse16>()
    }
    fn build(&mut self, keys: &[u64]) -> bool {
        self.0 = BinaryFuse16::try_from(keys).ok();
        self.0.is_some()
    }
}
