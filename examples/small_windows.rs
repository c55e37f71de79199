//! Early slides of small `RecentFilter` windows: how often an insert finds no room and
//! forgets the oldest generation before its time, by window and by writing threads.
//!
//! ```text
//! cargo run --release --example small_windows -- [--windows 16,32,64,230,300,500,1000]
//!     [--threads 1,24,64] [--inserts 2M] [--seeds 2]
//! ```
//!
//! For each window, thread count and seed: `T` threads (not pinned: on a small machine
//! most of them wait for a core, as the writers of a busy service do) share `--inserts`
//! inserts of distinct keys into one `RecentFilter::with_window(window)`, each key
//! looked up right after its insert. Printed per window and thread count, summed over
//! the seeds: the slides, the early ones, the keys not found though fewer than
//! `guaranteed_window() − T` inserts began after theirs (each insert is stamped from one
//! shared counter as it begins; `T` allows for those in flight), and the table's slots
//! and the filter's bytes. A key missed within the guarantee is a false negative unless
//! a slide came early. (A key missed later is not: a thread preempted between its insert
//! and its lookup may find its key aged out by the others' inserts.)

#[path = "throughput/count.rs"]
mod count;

use std::sync::atomic::{AtomicU64, Ordering};

use clap::Parser;
use concurrent_cuckoo_filter::RecentFilter;

use crate::count::parse_count;

#[derive(Parser, Debug)]
#[command(about = "Early slides of small RecentFilter windows, by window and threads")]
struct Args {
    /// Windows, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "16,32,64,230,300,500,1000"
    )]
    windows: Vec<usize>,
    /// Thread counts, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,24,64")]
    threads: Vec<usize>,
    /// Inserts per run, shared out over its threads.
    #[arg(long, default_value = "2M", value_parser = parse_count)]
    inserts: usize,
    /// Runs per window and thread count, each with its own keys.
    #[arg(long, default_value_t = 2)]
    seeds: u64,
}

/// What one run saw.
#[derive(Default)]
struct Run {
    slides: u64,
    early: u64,
    /// Keys not found within the guarantee.
    lost: u64,
}

/// `threads` threads share `inserts` inserts into `filter`; keys are distinct across
/// threads and seeds.
fn run(filter: &RecentFilter, threads: usize, inserts: usize, seed: u64) -> Run {
    let per_thread = inserts.div_ceil(threads) as u64;
    let begun = AtomicU64::new(0);
    // Inserts that may begin after a key's own while it must still be found.
    let within = (filter.guaranteed_window() as u64).saturating_sub(threads as u64);
    let lost: u64 = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads as u64)
            .map(|t| {
                let begun = &begun;
                scope.spawn(move || {
                    let mut lost = 0;
                    for i in 0..per_thread {
                        let key = (seed << 48) ^ (t << 32) ^ i;
                        let stamp = begun.fetch_add(1, Ordering::SeqCst);
                        filter.insert(&key);
                        let missed = !filter.contains(&key);
                        let since = begun.load(Ordering::SeqCst) - stamp - 1;
                        lost += u64::from(missed && since < within);
                    }
                    lost
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });
    let stats = filter.stats();
    Run {
        slides: stats.slides,
        early: stats.early_slides,
        lost,
    }
}

fn main() {
    let args = Args::parse();
    println!(
        "{} inserts a run, {} runs (seeds) each; slides, early slides and keys lost within \
         the guarantee summed over the runs",
        args.inserts, args.seeds
    );
    println!("| window | threads | slots | bytes | slides | early slides | lost |");
    println!("|--:|--:|--:|--:|--:|--:|--:|");
    for &window in &args.windows {
        for &threads in &args.threads {
            let mut total = Run::default();
            let (mut slots, mut bytes) = (0, 0);
            for seed in 1..=args.seeds {
                let filter = RecentFilter::with_window(window);
                slots = filter.stats().table.capacity;
                bytes = filter.memory_usage();
                let run = run(&filter, threads.max(1), args.inserts, seed);
                total.slides += run.slides;
                total.early += run.early;
                total.lost += run.lost;
            }
            println!(
                "| {window} | {threads} | {slots} | {bytes} | {} | {} | {} |",
                total.slides, total.early, total.lost
            );
        }
    }
}
