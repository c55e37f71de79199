//! `RecentFilter` against the core `CuckooFilter` on 1, 2, 4, … threads, and the tail of
//! the insert latency while the window slides (issue 34).
//!
//! ```text
//! cargo run --release --example recent_scaling -- [--keys-per-thread 1M] [--window 4M]
//!     [--threads 1,2,4,8,16] [--rounds 5] [--prefill] [--latency-inserts 4M]
//! ```
//!
//! One release binary that runs anywhere: by default its thread counts are the powers of
//! two up to the machine's cores (1 and 2 on the 2-core development VM; 1 to 16 on a
//! 16-core machine), each thread pinned to its own core.
//!
//! Each round, for each thread count `T` (the order of the two filters alternates from
//! round to round):
//!
//! - `insert`: `T` threads each insert `--keys-per-thread` fresh random keys, into a
//!   `RecentFilter::with_window(--window)` and into a `CuckooFilter::with_capacity` of
//!   all the keys (issue 34's set-up). With `--prefill` the window is full before the
//!   timing starts, so every timed insert runs at the window's full load.
//! - `contains`: the same threads then look up their own keys in both filters.
//! - `admit` / `take`: `admit` of fresh keys into a new window (each one records its
//!   key), then `take` of those keys; against the core filter's `insert` and `remove`
//!   of the same keys (the closest it has).
//!
//! Printed: the median Mops/s of each, the ratio of `RecentFilter` to the core filter
//! (the median of the rounds' ratios) and each filter's scaling from one thread.
//!
//! The latency run (unless `--latency-inserts 0`): two threads (or `--latency-threads`)
//! insert into a full window of `--window` keys, timing every insert, so the run spans
//! several slides; the same into a core filter, and the same loop with no insert in it,
//! the machine's and the clock's own floor. Printed: the median, p99.9, p99.999 and
//! longest insert, how many took over 20 µs, and the share of the window's inserts that
//! kicked.

#[path = "throughput/count.rs"]
mod count;

use std::sync::Barrier;
use std::time::Instant;

use clap::Parser;
use concurrent_cuckoo_filter::{CuckooFilter, RecentFilter};
use core_affinity::CoreId;

use crate::count::parse_count;

#[derive(Parser, Debug)]
#[command(about = "RecentFilter against CuckooFilter on many threads, and its insert latency tail")]
struct Args {
    /// Keys each thread inserts (and looks up, admits, takes) per measurement.
    #[arg(long, default_value = "1M", value_parser = parse_count)]
    keys_per_thread: usize,
    /// The RecentFilter's window.
    #[arg(long, default_value = "4M", value_parser = parse_count)]
    window: usize,
    /// Thread counts, comma-separated; by default the powers of two up to the cores.
    #[arg(long, value_delimiter = ',')]
    threads: Vec<usize>,
    /// Rounds; medians are reported.
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Fill the window before timing its inserts and admits.
    #[arg(long)]
    prefill: bool,
    /// Inserts per thread in the latency run (0: skip it).
    #[arg(long, default_value = "4M", value_parser = parse_count)]
    latency_inserts: usize,
    /// Threads in the latency run.
    #[arg(long, default_value_t = 2)]
    latency_threads: usize,
    /// What times each insert of the latency run: `wall` (the monotonic clock) or `cpu`
    /// (the thread's CPU time, which leaves out the time the thread was not running: on a
    /// shared VM, preemptions put milliseconds into the wall-clock tail of any filter).
    #[arg(long, default_value = "wall")]
    latency_clock: String,
}

/// `n` random keys from `seed` (distinct with overwhelming probability).
fn keys(n: usize, seed: u64) -> Vec<u64> {
    let mut rng = fastrand::Rng::with_seed(seed);
    (0..n).map(|_| rng.u64(..)).collect()
}

/// Runs `work(keys[t])` on `keys.len()` threads, thread `t` pinned to
/// `cores[t % cores.len()]`, all released together by a barrier; each thread's result.
fn on_threads<R: Send>(
    cores: &[CoreId],
    keys: &[Vec<u64>],
    work: impl Fn(&[u64]) -> R + Sync,
) -> Vec<R> {
    let barrier = Barrier::new(keys.len());
    std::thread::scope(|scope| {
        let handles: Vec<_> = keys
            .iter()
            .enumerate()
            .map(|(t, mine)| {
                let (barrier, work, core) = (&barrier, &work, cores[t % cores.len()]);
                scope.spawn(move || {
                    core_affinity::set_for_current(core);
                    barrier.wait();
                    work(mine)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

/// [`on_threads`], timed: Mops/s from the first start to the last finish.
fn timed(cores: &[CoreId], keys: &[Vec<u64>], work: impl Fn(&[u64]) + Sync) -> f64 {
    let spans = on_threads(cores, keys, |mine| {
        let start = Instant::now();
        work(mine);
        (start, Instant::now())
    });
    let start = spans.iter().map(|s| s.0).min().unwrap();
    let end = spans.iter().map(|s| s.1).max().unwrap();
    let ops: usize = keys.iter().map(Vec::len).sum();
    ops as f64 / end.duration_since(start).as_secs_f64() / 1e6
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The samples of one operation at one thread count: Mops/s of each filter per round.
#[derive(Default)]
struct Samples {
    recent: Vec<f64>,
    core: Vec<f64>,
}

impl Samples {
    fn push(&mut self, recent: f64, core: f64) {
        self.recent.push(recent);
        self.core.push(core);
    }

    fn ratio(&self) -> f64 {
        median(
            self.recent
                .iter()
                .zip(&self.core)
                .map(|(r, c)| r / c)
                .collect(),
        )
    }
}

const OPS: [&str; 4] = ["insert", "contains", "admit", "take"];

fn window_of(args: &Args, seed: u64) -> RecentFilter {
    let window = RecentFilter::with_window(args.window);
    if args.prefill {
        for key in keys(args.window, seed) {
            window.insert(&key);
        }
    }
    window
}

/// One round at `threads` threads: each operation on both filters, in the order
/// `recent_first` says. Returns Mops/s per operation, `(recent, core)`.
fn round(
    args: &Args,
    cores: &[CoreId],
    threads: usize,
    seed: u64,
    recent_first: bool,
) -> [(f64, f64); 4] {
    let per_thread: Vec<Vec<u64>> = (0..threads as u64)
        .map(|t| keys(args.keys_per_thread, seed * 1_000 + t))
        .collect();
    let all = threads * args.keys_per_thread;
    let mut out = [(0.0, 0.0); 4];

    // Two passes per filter: insert then contains, and admit then take (for the core
    // filter insert then remove), each on a fresh filter.
    type WindowOp = fn(&RecentFilter, &u64) -> bool;
    let recent_pass = |out: &mut [(f64, f64); 4], first: usize, ops: [WindowOp; 2]| {
        let window = window_of(args, seed + first as u64);
        for (slot, op) in [first, first + 1].into_iter().zip(ops) {
            out[slot].0 = timed(cores, &per_thread, |mine| {
                std::hint::black_box(mine.iter().filter(|k| op(&window, k)).count());
            });
        }
    };
    let core_pass = |out: &mut [(f64, f64); 4], first: usize| {
        let core = CuckooFilter::with_capacity(all);
        out[first].1 = timed(cores, &per_thread, |mine| {
            for k in mine {
                core.insert(k).expect("sized for every key");
            }
        });
        out[first + 1].1 = timed(cores, &per_thread, |mine| {
            let found = |k| {
                if first == 0 {
                    core.contains(k)
                } else {
                    core.remove(k)
                }
            };
            assert!(
                mine.iter().all(found),
                "a core lookup or remove missed a key"
            );
        });
    };
    let lookups: [WindowOp; 2] = [
        |w, k| {
            w.insert(k);
            true
        },
        |w, k| w.contains(k),
    ];
    let doorkeeper: [WindowOp; 2] = [|w, k| w.admit(k), |w, k| w.take(k)];
    for (first, ops) in [(0, lookups), (2, doorkeeper)] {
        if recent_first {
            recent_pass(&mut out, first, ops);
            core_pass(&mut out, first);
        } else {
            core_pass(&mut out, first);
            recent_pass(&mut out, first, ops);
        }
    }
    out
}

/// Nanoseconds on the clock `--latency-clock` names.
fn clock_ns(cpu: bool, origin: Instant) -> u64 {
    if cpu {
        let now = cpu_time::ThreadTime::try_now().expect("per-thread CPU time");
        now.as_duration().as_nanos() as u64
    } else {
        origin.elapsed().as_nanos() as u64
    }
}

/// Every insert of `threads` threads into `insert`'s filter, timed one by one; sorted ns.
fn latencies(
    cores: &[CoreId],
    threads: usize,
    inserts: usize,
    seed: u64,
    cpu: bool,
    insert: impl Fn(u64) + Sync,
) -> Vec<u64> {
    let per_thread: Vec<Vec<u64>> = (0..threads as u64)
        .map(|t| keys(inserts, seed * 1_000 + t))
        .collect();
    let origin = Instant::now();
    let mut all: Vec<u64> = on_threads(cores, &per_thread, |mine| {
        let mut ns = Vec::with_capacity(mine.len());
        for &key in mine {
            let start = clock_ns(cpu, origin);
            insert(key);
            ns.push(clock_ns(cpu, origin) - start);
        }
        ns
    })
    .into_iter()
    .flatten()
    .collect();
    all.sort_unstable();
    all
}

fn tail(label: &str, ns: &[u64]) {
    let at = |q: f64| ns[((ns.len() as f64 * q) as usize).min(ns.len() - 1)];
    let over = ns.iter().filter(|&&t| t > 20_000).count();
    println!(
        "| {label} | {} | {} | {} | {:.1} | {} |",
        at(0.5),
        at(0.999),
        at(0.99999),
        *ns.last().unwrap() as f64 / 1e3,
        over
    );
}

fn main() {
    let args = Args::parse();
    let cores = core_affinity::get_core_ids().unwrap_or_default();
    assert!(!cores.is_empty(), "no cores to pin to");
    let threads: Vec<usize> = if args.threads.is_empty() {
        std::iter::successors(Some(1usize), |t| Some(t * 2))
            .take_while(|&t| t <= cores.len())
            .collect()
    } else {
        args.threads.clone()
    };
    println!(
        "recent_scaling: {} cores, threads {threads:?}, {} keys per thread, window {}{}, {} rounds, RUSTFLAGS at run time {:?}",
        cores.len(),
        args.keys_per_thread,
        args.window,
        if args.prefill { " (prefilled)" } else { "" },
        args.rounds,
        std::env::var("RUSTFLAGS").unwrap_or_default(),
    );

    let mut samples: Vec<[Samples; 4]> = threads.iter().map(|_| Default::default()).collect();
    for r in 0..args.rounds {
        for (i, &t) in threads.iter().enumerate() {
            let measured = round(&args, &cores, t, (r * 64 + i) as u64 + 1, (r + i) % 2 == 0);
            for (op, (recent, core)) in measured.into_iter().enumerate() {
                samples[i][op].push(recent, core);
            }
        }
        eprintln!("round {} of {} done", r + 1, args.rounds);
    }

    println!();
    println!(
        "| op | threads | RecentFilter Mops/s | CuckooFilter Mops/s | Recent ÷ core | Recent T/1T | core T/1T |"
    );
    println!("|---|--:|--:|--:|--:|--:|--:|");
    for (op, name) in OPS.iter().enumerate() {
        let recent_1t = median(samples[0][op].recent.clone());
        let core_1t = median(samples[0][op].core.clone());
        for (i, &t) in threads.iter().enumerate() {
            let s = &samples[i][op];
            let (recent, core) = (median(s.recent.clone()), median(s.core.clone()));
            println!(
                "| {name} | {t} | {recent:.1} | {core:.1} | {:.2} | {:.2} | {:.2} |",
                s.ratio(),
                recent / recent_1t,
                core / core_1t
            );
        }
    }
    println!("(core: insert for admit, remove for take; ratios are medians of the rounds' ratios)");

    if args.latency_inserts > 0 {
        let t = args.latency_threads;
        let cpu = match args.latency_clock.as_str() {
            "wall" => false,
            "cpu" => true,
            other => panic!("--latency-clock {other}: wall or cpu"),
        };
        let window = RecentFilter::with_window(args.window);
        for key in keys(args.window, 99) {
            window.insert(&key);
        }
        let before = window.stats();
        let recent = latencies(&cores, t, args.latency_inserts, 100, cpu, |k| {
            window.insert(&k)
        });
        let after = window.stats();
        let slides = after.slides - before.slides;
        let core = CuckooFilter::with_capacity(t * args.latency_inserts);
        let core_ns = latencies(&cores, t, args.latency_inserts, 200, cpu, |k| {
            core.insert(&k).expect("sized for every key")
        });
        // The same loop around no insert at all: what the machine and the clock put into
        // any tail (preemptions, interrupts, the clock's own reads).
        let floor = latencies(&cores, t, args.latency_inserts, 300, cpu, |k| {
            std::hint::black_box(k);
        });
        println!();
        println!(
            "Insert latency ({} clock), {t} threads, {} inserts each; window {} full before (the run slid it {slides} times):",
            args.latency_clock, args.latency_inserts, args.window
        );
        println!("| filter | median ns | p99.9 ns | p99.999 ns | max µs | inserts over 20 µs |");
        println!("|---|--:|--:|--:|--:|--:|");
        tail("RecentFilter", &recent);
        tail("CuckooFilter", &core_ns);
        tail("no insert (the floor)", &floor);
        let kicked = after.table.kicked_inserts - before.table.kicked_inserts;
        println!(
            "(RecentFilter over the run: {} early slides, {} repeated sweeps, {:.1}% of the inserts kicked)",
            after.early_slides - before.early_slides,
            after.repeated_sweeps - before.repeated_sweeps,
            100.0 * kicked as f64 / (t * args.latency_inserts) as f64,
        );
    }
}
