//! `serde` support (feature `serde`): a filter serialises as its snapshot-format bytes,
//! so every serde format carries the same versioned, checksummed encoding.

use std::fmt;
use std::hash::BuildHasher;

use serde::de::{self, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::DecodeError;
use crate::filter::CuckooFilter;
use crate::fingerprint::{Fingerprint, GrowableFingerprint};
use crate::growable::GrowableCuckooFilter;
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
    /// [`DecodeError`] becomes the format's custom error.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_bytes(EncodingVisitor(Self::from_bytes))
    }
}

impl<F: GrowableFingerprint, const B: usize, S: BuildHasher + 'static> Serialize
    for GrowableCuckooFilter<F, B, S>
{
    /// A snapshot (see [`GrowableCuckooFilter::to_bytes`]) as serde bytes.
    fn serialize<T: Serializer>(&self, serializer: T) -> Result<T::Ok, T::Error> {
        serializer.serialize_bytes(&self.to_bytes())
    }
}

impl<'de, F: GrowableFingerprint, const B: usize> Deserialize<'de>
    for GrowableCuckooFilter<F, B, DefaultHashBuilder>
{
    /// Decodes bytes written by `serialize` (see [`GrowableCuckooFilter::from_bytes`]);
    /// a [`DecodeError`] becomes the format's custom error.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_bytes(EncodingVisitor(Self::from_bytes))
    }
}

/// Decodes a filter from serde bytes with `.0`.
struct EncodingVisitor<T>(fn(&[u8]) -> Result<T, DecodeError>);

impl<'de, T> Visitor<'de> for EncodingVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the bytes of an encoded cuckoo filter")
    }

    fn visit_bytes<E: de::Error>(self, bytes: &[u8]) -> Result<Self::Value, E> {
        (self.0)(bytes).map_err(E::custom)
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
