//! What reading the geometry from the header costs a `FilterView` lookup: the view's own
//! `contains_hash` (a branch on the recorded geometry per key) against its
//! `typed::<F, B>()` lookups (the geometry fixed at compile time: the code the view ran
//! when it was generic over `F` and `B`), and the owned filter's, for every geometry.
//!
//! ```text
//! cargo run --release --example view_geometry -- [--slots 1M] [--rounds 301] [--pass 128K]
//! ```
//!
//! Each filter has `--slots` slots at 95% load. A round times one pass of `--pass`
//! consecutive pre-hashed keys (positive, then negative, separately) on each path, one
//! after another in an order that rotates by round (the pass after the owned filter's
//! finds less of the snapshot in the cache). The thread is pinned to the last core.
//! Short passes are rarely preempted on a loaded machine, so the 10th percentile over
//! the rounds shows the unloaded speed; the median is beside it.

#[path = "throughput/count.rs"]
mod count;

use std::hint::black_box;
use std::time::Instant;

use clap::Parser;
use concurrent_cuckoo_filter::{CuckooFilter, FilterView, Fingerprint};

use crate::count::parse_count;

#[derive(Parser, Debug)]
#[command(about = "ns per FilterView lookup, geometry from the header against fixed")]
struct Args {
    /// Slots per filter (buckets × slots per bucket), filled to 95%.
    #[arg(long, default_value = "1M", value_parser = parse_count)]
    slots: usize,
    /// Rounds; the 10th percentile and the median are reported.
    #[arg(long, default_value_t = 301)]
    rounds: usize,
    /// Keys per timed pass.
    #[arg(long, default_value = "128K", value_parser = parse_count)]
    pass: usize,
}

/// Keys `0..n` spread over the `u64` range: odd multiples are inserted, even ones not.
fn keys(n: usize, inserted: bool) -> impl Iterator<Item = u64> {
    (0..n as u64).map(move |i| (2 * i + u64::from(inserted)).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// ns per key of `lookup` over `hashes`, one key at a time.
#[inline(never)]
fn pass(hashes: &[u64], lookup: impl Fn(u64) -> bool) -> f64 {
    let start = Instant::now();
    let mut hits = 0usize;
    for &hash in hashes {
        hits += usize::from(lookup(black_box(hash)));
    }
    black_box(hits);
    start.elapsed().as_nanos() as f64 / hashes.len() as f64
}

/// The 10th percentile and the median.
fn summary(mut samples: Vec<f64>) -> (f64, f64) {
    samples.sort_by(f64::total_cmp);
    (samples[samples.len() / 10], samples[samples.len() / 2])
}

fn geometry<F: Fingerprint, const B: usize>(args: &Args) {
    let filter: CuckooFilter<F, B> = CuckooFilter::builder()
        .fingerprint::<F>()
        .slots::<B>()
        .buckets(args.slots / B)
        .build()
        .expect("the filter fits in memory");
    let items = args.slots * 95 / 100;
    filter
        .insert_many(keys(items, true))
        .expect("95% load fits");
    let bytes = filter.to_bytes();
    let view = FilterView::new(&bytes).expect("a snapshot just taken");
    let typed = view.typed::<F, B>().expect("the snapshot's own geometry");
    for (kind, inserted) in [("positive", true), ("negative", false)] {
        let hashes: Vec<u64> = keys(items, inserted).map(|k| filter.hash(&k)).collect();
        let pass_len = args.pass.min(hashes.len());
        let mut samples: [Vec<f64>; 3] = Default::default();
        for round in 0..args.rounds {
            let at = (round * pass_len) % (hashes.len() - pass_len + 1);
            let hashes = &hashes[at..at + pass_len];
            for turn in 0..3 {
                let path = (round + turn) % 3;
                samples[path].push(match path {
                    0 => pass(hashes, |h| view.contains_hash(h)),
                    1 => pass(hashes, |h| typed.contains_hash(h)),
                    _ => pass(hashes, |h| filter.contains_hash(h)),
                });
            }
        }
        let [view_ns, typed_ns, owned_ns] = samples.map(summary);
        println!(
            "| {}-bit × {B} | {kind} | {:.2} ({:.2}) | {:.2} ({:.2}) | {:.3} | {:.2} ({:.2}) |",
            F::BITS,
            view_ns.0,
            view_ns.1,
            typed_ns.0,
            typed_ns.1,
            view_ns.0 / typed_ns.0,
            owned_ns.0,
            owned_ns.1,
        );
    }
}

fn main() {
    let args = Args::parse();
    assert!(
        args.rounds >= 10 && args.pass > 0,
        "--rounds 10 or more, --pass 1 or more"
    );
    if let Some(core) = core_affinity::get_core_ids().and_then(|ids| ids.last().copied()) {
        core_affinity::set_for_current(core);
    }
    println!(
        "ns per lookup, p10 (median) over {} rounds of {} keys; {} slots at 95% load",
        args.rounds, args.pass, args.slots
    );
    println!("| geometry | keys | view | typed | view / typed (p10) | owned |");
    println!("|---|---|--:|--:|--:|--:|");
    geometry::<u8, 4>(&args);
    geometry::<u8, 8>(&args);
    geometry::<u16, 4>(&args);
    geometry::<u16, 8>(&args);
    geometry::<u32, 4>(&args);
    geometry::<u32, 8>(&args);
}
