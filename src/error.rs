//! Typed errors. Every failure is one of these; nothing panics on bad input.

use std::fmt;

/// Why an insert did not add the key. In every case the filter holds exactly what it held
/// before the call: no fingerprint was evicted or lost.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum InsertError {
    /// No path of fingerprint moves to an empty slot exists within the search bound: the
    /// filter is (nearly) full. Remove items or build a larger filter.
    Full,
    /// Both of the key's buckets hold nothing but copies of its fingerprint (2 × slots
    /// copies of this key, or of keys indistinguishable from it). Detected before any
    /// kick search starts, since moving such copies can never free a slot for the key.
    TooManyCopies,
}

impl fmt::Display for InsertError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Full => "cuckoo filter is full: no kick path to an empty slot",
            Self::TooManyCopies => {
                "both candidate buckets hold only copies of this key's fingerprint"
            }
        })
    }
}

impl std::error::Error for InsertError {}

/// Why [`insert_many`](crate::CuckooFilter::insert_many) stopped: the key at position
/// [`inserted`](Self::inserted) of the batch could not be inserted, for the reason
/// [`error`](Self::error) gives. The keys before it are in the filter, that key and the
/// ones after it are not, and nothing else changed (no fingerprint was evicted or lost).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct InsertManyError {
    pub(crate) inserted: usize,
    pub(crate) error: InsertError,
}

impl InsertManyError {
    /// How many keys of the batch were inserted (all of those before the failed one).
    pub fn inserted(&self) -> usize {
        self.inserted
    }

    /// Why the next key could not be inserted.
    pub fn error(&self) -> InsertError {
        self.error
    }
}

impl fmt::Display for InsertManyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "batch insert stopped after {} keys", self.inserted)
    }
}

impl std::error::Error for InsertManyError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

/// Why a [`Builder`](crate::Builder) could not build a filter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BuildError {
    /// Neither [`capacity`](crate::Builder::capacity) nor
    /// [`buckets`](crate::Builder::buckets) was set.
    MissingSize,
    /// The requested size needs more than 2^32 buckets (the bucket index is a 32-bit range
    /// reduction) or more memory than this platform can address.
    TooLarge,
    /// The stripe count must be a power of two from 1 to 65,536.
    InvalidStripes(usize),
    /// The allocator could not provide the table.
    OutOfMemory,
    /// A growable filter's growth factor is not a power of two from 2 to
    /// [`MAX_GROWTH`](crate::MAX_GROWTH).
    InvalidGrowth,
    /// A [`RecentFilter`](crate::RecentFilter)'s generations must be 2 to 16, and leave
    /// the fingerprint at least 4 bits of its own.
    InvalidGenerations(usize),
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MissingSize => f.write_str("no capacity or bucket count was given"),
            Self::TooLarge => f.write_str("requested size exceeds 2^32 buckets"),
            Self::InvalidStripes(n) => {
                write!(f, "stripe count {n} is not a power of two from 1 to 65,536")
            }
            Self::OutOfMemory => f.write_str("the table could not be allocated"),
            Self::InvalidGrowth => {
                f.write_str("the growth factor must be a power of two from 2 to 256")
            }
            Self::InvalidGenerations(n) => write!(
                f,
                "{n} generations: a window takes 2 to 16, and leaves a fingerprint 4 bits"
            ),
        }
    }
}

impl std::error::Error for BuildError {}
