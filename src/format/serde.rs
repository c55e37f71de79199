//! `serde` support (feature `serde`): a filter serialises as its snapshot-format bytes,
//! so every serde format carries the same versioned, checksummed encoding.

use std::fmt;
use std::hash::BuildHasher;
use std::marker::PhantomData;

use serde::de::{self, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::filter::CuckooFilter;
use crate::fingerprint::Fingerprint;
use crate::hash::DefaultHashBuilder;

impl<F: Fingerprint, const B: usize, S: BuildHasher + 'static> Serialize for CuckooFilter<F, B, S> {
    /// A snapshot (see [`CuckooFilter::to_bytes`]) as serde bytes.
    fn serialize<T: Serializer>(&self, serializer: T) -> Result<T::Ok, T::Error> {
        serializer.serialize_bytes(&self.to_bytes())
    }
}

impl<'de, F: Fingerprint, const B: usize> Deserialize<'de>
    for CuckooFilter<F, B, DefaultHashBuilder>
{
    /// Decodes bytes written by `serialize` (see [`CuckooFilter::from_bytes`]); a
    /// [`DecodeError`](crate::DecodeError) becomes the format's custom error.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_bytes(EncodingVisitor(PhantomData))
    }
}

struct EncodingVisitor<F, const B: usize>(PhantomData<fn() -> F>);

impl<'de, F: Fingerprint, const B: usize> Visitor<'de> for EncodingVisitor<F, B> {
    type Value = CuckooFilter<F, B, DefaultHashBuilder>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the bytes of an encoded cuckoo filter")
    }

    fn visit_bytes<E: de::Error>(self, bytes: &[u8]) -> Result<Self::Value, E> {
        CuckooFilter::from_bytes(bytes).map_err(E::custom)
    }

    /// Formats without a bytes type (JSON, for one) write a sequence of numbers. The
    /// buffer grows with the elements that arrive, not with a length hint.
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut bytes = Vec::new();
        while let Some(byte) = seq.next_element::<u8>()? {
            bytes.push(byte);
        }
        self.visit_bytes(&bytes)
    }
}
