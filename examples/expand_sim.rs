//! Simulates the tables that double in place (the reference model in `src/expand/`,
//! links of `bits − 4` doublings each) against the chain of sub-filters they replaced
//! (here a list of the crate's `CuckooFilter`s, each with twice the buckets of the one
//! before, inserts going to the newest until it is full, lookups asking every one: what
//! the chain's type did), from the same first capacity: the load at which each doubling
//! happened (the model doubling only when an insert finds no kick path, the scheme's
//! limit, not early above 95% as the engine does), and the false-positive rate
//! measured on fresh negative keys at the end of each doubling (the newest table or
//! sub-filter at 90% load), beside the model's bound.
//!
//! ```text
//! cargo run --release --example expand_sim -- [first capacity] [bits] [doublings] [negatives] [link doublings] [shared]
//! cargo run --release --example expand_sim -- 1000 16 12 1000000
//! cargo run --release --example expand_sim -- 100 16 15 100000 15   # one table, no links
//! cargo run --release --example expand_sim -- 1000 16 12 1000000 12 shared  # kind 4
//! ```
//!
//! `NaN`: that era doubled (or the chain grew) before its newest table reached 90%.

use concurrent_cuckoo_filter::{CuckooFilter, DefaultHashBuilder, ExpandChain, InsertError};
use std::hash::BuildHasher;

fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The share of `negatives` fresh keys that `contains` claims.
fn measured_fpr(negatives: usize, seed: u64, contains: impl Fn(u64) -> bool) -> f64 {
    let mut state = seed ^ 0xDEAD_BEEF;
    let hits = (0..negatives)
        .filter(|_| contains(splitmix(&mut state)))
        .count();
    hits as f64 / negatives as f64
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |i: usize, default: u64| args.get(i).map_or(default, |a| a.parse().unwrap());
    let capacity = arg(1, 1000) as usize;
    let bits = arg(2, 16) as u32;
    let eras = arg(3, 12) as u32;
    let negatives = arg(4, 1_000_000) as usize;
    // How far each link doubles before the next starts: as far as one table doubles well.
    let link_doublings = arg(5, u64::from(bits) - 4) as u32;
    // `shared`: both sides store the key's one stream (snapshot kind 4); else the
    // Feistel pairing (kind 3).
    let shared = args.get(6).is_some_and(|a| a == "shared");
    let slots = 4;
    // The core filter's sizing: 95% load, a few spare buckets, an even count.
    let base = ((capacity as f64 / 0.95 / slots as f64).ceil() as u64
        + 2
        + (capacity as f64).sqrt() as u64 / 16)
        .next_multiple_of(2);
    println!("first capacity {capacity}: {base} base buckets of {slots} slots, {bits}-bit codes");
    println!(
        "doublings | in place: load at doubling | FPR at 90% | bound | links | chain FPR at 90% (newest) | chain sub-filters"
    );

    // Fill until `Full`, measuring each era once, when its load first reaches 90%.
    let links = 1 + eras as usize / (link_doublings as usize + 1);
    // Doubling only when an insert finds no kick path (not early, above 95%, as the
    // engine does): the loads each era of the scheme reaches.
    let model = if shared {
        ExpandChain::with_shared_code(base, bits, slots, link_doublings, links)
    } else {
        ExpandChain::new(base, bits, slots, link_doublings, links)
    };
    let mut model = model.doubling_when_no_path();
    let mut expand_rows = vec![(f64::NAN, f64::NAN, 0); eras as usize + 1];
    let mut state = 1u64;
    while model.doublings() <= eras {
        let era = model.doublings() as usize;
        if model.load() >= 0.90 && expand_rows[era].0.is_nan() {
            let fpr = measured_fpr(negatives, era as u64, |h| model.contains(h));
            expand_rows[era] = (fpr, model.false_positive_bound(), model.links());
        }
        // A key whose two buckets hold only codes that answer for it is refused
        // (`TooManyCopies`); the fill goes on with the next key.
        if model.insert(splitmix(&mut state)) == Err(InsertError::Full) {
            break;
        }
    }

    // The chain: 16-bit only (the library's chain is generic; 8-bit when asked).
    let mut chain_rows = Vec::new();
    let hasher = DefaultHashBuilder::new();
    macro_rules! chain {
        ($f:ty) => {{
            let sub = |buckets: usize| {
                CuckooFilter::builder()
                    .fingerprint::<$f>()
                    .buckets(buckets)
                    .hasher(hasher.clone())
                    .build()
                    .unwrap()
            };
            let first: CuckooFilter<$f, 4, DefaultHashBuilder> = CuckooFilter::builder()
                .fingerprint::<$f>()
                .capacity(capacity)
                .hasher(hasher.clone())
                .build()
                .unwrap();
            let mut chain = vec![first];
            let mut state = 7u64;
            for growths in 0..=eras as usize {
                // Insert until the newest sub-filter is sub-filter `growths` at 90%.
                for inserted in 0u64.. {
                    let newest = chain.last().unwrap();
                    if chain.len() > growths + 1 {
                        break;
                    }
                    if chain.len() == growths + 1
                        && inserted % 256 == 0
                        && newest.len() as f64 >= 0.90 * newest.capacity() as f64
                    {
                        break;
                    }
                    let hash = hasher.hash_one(splitmix(&mut state));
                    if newest.insert_hash(hash).is_err() {
                        // Full: the chain adds a sub-filter twice the size and inserts there.
                        let next = sub(2 * newest.buckets());
                        let _ = next.insert_hash(hash);
                        chain.push(next);
                    }
                }
                if chain.len() != growths + 1 {
                    chain_rows.push((f64::NAN, chain.len()));
                    continue;
                }
                let fpr = measured_fpr(negatives, growths as u64, |h| {
                    chain.iter().any(|sub| sub.contains_hash(h))
                });
                chain_rows.push((fpr, chain.len()));
            }
        }};
    }
    if bits == 8 {
        chain!(u8)
    } else {
        chain!(u16)
    }

    let loads = model.loads_at_doubling();
    for (era, ((fpr, bound, links), (chain_fpr, subs))) in
        expand_rows.into_iter().zip(chain_rows).enumerate()
    {
        let load = loads
            .get(era)
            .map_or("-".to_string(), |l| format!("{:.1}%", 100.0 * l));
        println!(
            "{era:>3} | {load:>8} | {:.4}% | {:.4}% | {links} | {:.4}% | {subs}",
            100.0 * fpr,
            100.0 * bound,
            100.0 * chain_fpr
        );
    }
}
