//! Instructions per lookup, for counting under callgrind (deterministic where timings on
//! a shared 2-core machine are not): the core filter against the table that doubles in
//! place, pre-sized or grown from 1,000, at 20,000 keys (all in cache).
//!
//! ```text
//! cargo build --release --example lookup_instructions
//! for which in none core presized grown; do for rounds in 0 20; do
//!   valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!     target/release/examples/lookup_instructions $which $rounds 2>&1 | grep Collected
//! done; done
//! ```
//!
//! Instructions per lookup = (collected at 20 rounds − at 0) / 400,000, less the loop's
//! own (`none`).

use std::hint::black_box;

use concurrent_cuckoo_filter::{CuckooFilter, DoublingTable};

const KEYS: u64 = 20_000;

fn spread(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let which = args.next().unwrap_or_else(|| "core".into());
    let rounds: u64 = args.next().and_then(|r| r.parse().ok()).unwrap_or(20);
    let first = if which == "grown" {
        1_000
    } else {
        KEYS as usize
    };
    let doubling = DoublingTable::<u16, 4>::with_capacity(first);
    let core = CuckooFilter::with_capacity(KEYS as usize);
    for i in 0..KEYS {
        doubling.insert_hash(spread(i)).expect("fits");
        core.insert_hash(spread(i)).expect("fits");
    }
    let mut hits = 0u64;
    for round in 0..rounds {
        for i in 0..KEYS {
            let hash = black_box(spread(i + round));
            hits += u64::from(match which.as_str() {
                "none" => hash != 0,
                "core" => core.contains_hash(hash),
                _ => doubling.contains_hash(hash),
            });
        }
    }
    println!("{which}: {hits} hits");
}
