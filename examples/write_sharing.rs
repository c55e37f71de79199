//! Where two writing threads lose their time: the same writes on one shared filter, and
//! on one private filter per thread.
//!
//! ```text
//! cargo run --release --example write_sharing -- [--items 1M] [--ops 2M] [--rounds 9]
//! ```
//!
//! Every thread runs the same kind of work: it inserts a fresh key and removes its own
//! oldest one, over and over, so the load stays at the prefill (80%). Four set-ups take
//! turns, round after round:
//!
//! | set-up | threads | filter(s) |
//! |---|--:|---|
//! | `1T whole` | 1 | one filter sized for `--items` |
//! | `2T shared` | 2 | the same, both threads writing into it |
//! | `1T half` | 1 | one filter sized for `--items / 2` |
//! | `2T private` | 2 | one half-size filter per thread |
//!
//! `2T shared` against `1T whole`, and `2T private` against `1T half`, compare runs in
//! which each thread's code and table size are the same; only in the first pair do the
//! threads share table lines and stripe locks. The CPU time per write (each thread's
//! `CLOCK_THREAD_CPUTIME_ID`, summed) says what the sharing costs. The program also hands
//! one cache line back and forth between the two cores, the cost a write pays each time
//! the other core was the last to write a line it touches.

#[path = "throughput/count.rs"]
mod count;

use std::collections::VecDeque;
use std::sync::Barrier;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use clap::Parser;
use concurrent_cuckoo_filter::CuckooFilter;
use core_affinity::CoreId;

use crate::count::parse_count;

#[derive(Parser, Debug)]
#[command(
    about = "CPU time per write with two threads: one shared filter against one private filter each"
)]
struct Args {
    /// Items the whole filter is sized for (at 95% load); the prefill is 80% of them.
    #[arg(long, default_value = "1M", value_parser = parse_count)]
    items: usize,
    /// Writes (inserts plus removes) per measurement, summed over the threads.
    #[arg(long, default_value = "2M", value_parser = parse_count)]
    ops: usize,
    /// Rounds of the four set-ups; medians are reported.
    #[arg(long, default_value_t = 9)]
    rounds: usize,
}

/// One thread's writes: insert `fresh[j]`, then remove the oldest key it holds.
struct Plan {
    prefill: Vec<u64>,
    fresh: Vec<u64>,
}

impl Plan {
    fn new(seed: u64, prefill: usize, inserts: usize) -> Self {
        let mut rng = fastrand::Rng::with_seed(seed);
        Self {
            prefill: (0..prefill).map(|_| rng.u64(..)).collect(),
            fresh: (0..inserts).map(|_| rng.u64(..)).collect(),
        }
    }
}

fn filter_for(items: usize) -> CuckooFilter {
    CuckooFilter::builder()
        .buckets((items as f64 / 0.95 / 4.0) as usize)
        .build()
        .expect("a filter this size fits in memory")
}

/// Runs `plans[t]` on thread `t` (pinned to `cores[t]`) against `filters[t]`; returns the
/// wall time from the first start to the last finish and the CPU time of all threads.
/// Panics if any write fails: a failed insert or a missed remove would be a bug.
fn run(filters: &[&CuckooFilter], plans: &[Plan], cores: &[CoreId]) -> (f64, f64) {
    for (filter, plan) in filters.iter().zip(plans) {
        for key in &plan.prefill {
            filter.insert(key).expect("prefill to 80% cannot fail");
        }
    }
    let barrier = Barrier::new(plans.len());
    let results: Vec<(Instant, Instant, u64)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..plans.len())
            .map(|t| {
                let (filter, plan, core, barrier) = (filters[t], &plans[t], cores[t], &barrier);
                scope.spawn(move || {
                    core_affinity::set_for_current(core);
                    let mut held: VecDeque<u64> = plan.prefill.iter().copied().collect();
                    barrier.wait();
                    let (start, cpu) = (Instant::now(), thread_cpu_ns());
                    for &key in &plan.fresh {
                        filter.insert(&key).expect("inserts at 80% load succeed");
                        held.push_back(key);
                        let oldest = held.pop_front().expect("the thread holds keys");
                        assert!(filter.remove(&oldest), "a held key was not found");
                    }
                    (start, Instant::now(), thread_cpu_ns() - cpu)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let start = results.iter().map(|r| r.0).min().unwrap();
    let end = results.iter().map(|r| r.1).max().unwrap();
    let cpu: u64 = results.iter().map(|r| r.2).sum();
    (end.duration_since(start).as_secs_f64(), cpu as f64)
}

fn thread_cpu_ns() -> u64 {
    let now = cpu_time::ThreadTime::try_now().expect("per-thread CPU time");
    now.as_duration().as_nanos() as u64
}

/// One-way time to hand a cache line from one core to the other: two threads bounce a
/// counter, each waiting for the other's increment.
fn line_handoff_ns(cores: &[CoreId]) -> f64 {
    let rounds = 200_000u64;
    let counter = AtomicU64::new(0);
    let start = std::thread::scope(|scope| {
        let counter = &counter;
        scope.spawn(move || {
            core_affinity::set_for_current(cores[1]);
            for i in 0..rounds {
                while counter.load(Ordering::Acquire) != 2 * i + 1 {}
                counter.store(2 * i + 2, Ordering::Release);
            }
        });
        core_affinity::set_for_current(cores[0]);
        let start = Instant::now();
        for i in 0..rounds {
            counter.store(2 * i + 1, Ordering::Release);
            while counter.load(Ordering::Acquire) != 2 * i + 2 {}
        }
        start
    });
    start.elapsed().as_nanos() as f64 / (2 * rounds) as f64
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The plans of one set-up: `threads` threads doing `writes` writes in all, starting from
/// `prefill` keys in all (each thread prefills its share). Seeds differ per set-up and per
/// thread, so no two plans share keys.
fn plans(seed: u64, threads: usize, prefill: usize, writes: usize) -> Vec<Plan> {
    // A write is an insert or a remove, and every insert is followed by a remove.
    (0..threads as u64)
        .map(|t| Plan::new(seed + t, prefill / threads, writes / threads / 2))
        .collect()
}

fn main() {
    let args = Args::parse();
    let cores = core_affinity::get_core_ids().unwrap_or_default();
    assert!(cores.len() >= 2, "needs two cores to pin to");
    let (whole, half) = (args.items, args.items / 2);
    let prefill = |items: usize| items * 8 / 10;

    let names = ["1T whole", "2T shared", "1T half", "2T private"];
    let mut cpu_per_write: [Vec<f64>; 4] = Default::default();
    let mut wall_per_write: [Vec<f64>; 4] = Default::default();
    let mut handoff = Vec::new();
    for round in 0..args.rounds {
        let shared = filter_for(whole);
        let (own_a, own_b) = (filter_for(half), filter_for(half));
        let measured = [
            run(
                &[&filter_for(whole)],
                &plans(1, 1, prefill(whole), args.ops),
                &cores,
            ),
            run(
                &[&shared, &shared],
                &plans(10, 2, prefill(whole), args.ops),
                &cores,
            ),
            run(
                &[&filter_for(half)],
                &plans(20, 1, prefill(half), args.ops),
                &cores,
            ),
            run(
                &[&own_a, &own_b],
                &plans(30, 2, 2 * prefill(half), args.ops),
                &cores,
            ),
        ];
        drop((shared, own_a, own_b));
        for (k, (wall, cpu)) in measured.into_iter().enumerate() {
            cpu_per_write[k].push(cpu / args.ops as f64);
            wall_per_write[k].push(wall * 1e9 / args.ops as f64);
        }
        handoff.push(line_handoff_ns(&cores));
        eprintln!("round {}/{} done", round + 1, args.rounds);
    }

    println!(
        "{whole} items ({half} per private filter), prefill 80%, {} writes per run, median of {} rounds",
        args.ops, args.rounds
    );
    println!("| set-up | CPU ns per write | wall ns per write |");
    println!("|---|--:|--:|");
    let cpu: Vec<f64> = cpu_per_write.into_iter().map(median).collect();
    let wall: Vec<f64> = wall_per_write.into_iter().map(median).collect();
    for k in 0..4 {
        println!("| {} | {:.1} | {:.1} |", names[k], cpu[k], wall[k]);
    }
    println!(
        "CPU per write, 2T ÷ 1T: shared {:.2}×, private {:.2}×",
        cpu[1] / cpu[0],
        cpu[3] / cpu[2]
    );
    println!(
        "wall-clock 2T/1T (write rate): shared {:.2}, private {:.2}",
        wall[0] / wall[1],
        wall[2] / wall[3]
    );
    println!(
        "one cache line handed between the two cores: {:.1} ns one way (median)",
        median(handoff)
    );
}
