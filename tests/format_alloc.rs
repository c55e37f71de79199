//! Decoding allocates no more than the input justifies: a header that claims a huge
//! table in a short input fails before the table is allocated. Its own test binary,
//! because it caps the whole process's heap.

use std::alloc::System;

use cap::Cap;
use concurrent_cuckoo_filter::{CuckooFilter, DecodeError};

#[global_allocator]
static ALLOCATOR: Cap<System> = Cap::new(System, usize::MAX);

/// Far below the 32 GiB the forged header claims, far above what decoding 100 bytes needs.
const HEAP_LIMIT: usize = 64 << 20;

#[test]
fn a_huge_claimed_table_is_never_allocated() {
    let filter = CuckooFilter::with_capacity(100);
    let mut forged = filter.to_bytes()[..48].to_vec();
    // 2^32 buckets: a 32 GiB table, announced in a 100-byte input.
    forged[24..32].copy_from_slice(&(1u64 << 32).to_le_bytes());
    forged[40..48].copy_from_slice(&(1u64 << 32).to_le_bytes());
    forged.resize(100, 0);

    ALLOCATOR
        .set_limit(ALLOCATOR.allocated() + HEAP_LIMIT)
        .unwrap();
    let from_bytes: Result<CuckooFilter, _> = CuckooFilter::from_bytes(&forged);
    let from_stream: Result<CuckooFilter, _> = CuckooFilter::read_from(forged.as_slice());
    ALLOCATOR.set_limit(usize::MAX).unwrap();
    // An attempt to allocate the table would have been refused (`OutOfMemory`).
    assert!(
        matches!(from_bytes, Err(DecodeError::Truncated)),
        "{from_bytes:?}"
    );
    assert!(
        matches!(from_stream, Err(DecodeError::Truncated)),
        "{from_stream:?}"
    );
}
