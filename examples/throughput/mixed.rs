//! A mixed workload in the style of libcuckoo's universal benchmark: every filter is
//! prefilled, then T threads run pre-generated sequences of lookups, inserts and removes.
//!
//! Each thread owns disjoint key ranges and a model of which of its keys are present, so
//! every lookup's right answer is known even while other threads write: false negatives are
//! counted exactly and false positives measured on keys nobody inserted.

use std::sync::Barrier;
use std::time::Instant;

use indicatif::ProgressBar;
use serde::Serialize;

use crate::keys::{KeySpace, Mix, Op, ThreadPlan, thread_plan};
use crate::peers::{Concurrent, Filter, PeerDef, Sizing, Tally};
use crate::reference::failures;
use crate::report::median;
use crate::system::thread_cpu_ns;

pub struct Config {
    pub items: usize,
    pub prefill_percent: u32,
    pub ops: usize,
    pub samples: usize,
    pub threads: Vec<usize>,
    /// Thread `t` is pinned to `cores[t % len]`; empty: no pinning.
    pub cores: Vec<core_affinity::CoreId>,
    pub seed: u64,
}

/// One peer at one thread count.
#[derive(Serialize, Debug)]
pub struct Row {
    pub mix: Mix,
    pub peer: &'static str,
    pub threads: usize,
    /// Why this peer cannot run this workload (then every measurement is empty).
    pub not_applicable: Option<&'static str>,
    /// Aggregate operations per second of each sample.
    pub samples: Vec<f64>,
    pub ops_per_sec: Option<f64>,
    /// CPU time per operation, summed over the threads (median of the samples); `None`
    /// where the platform does not report per-thread CPU time.
    pub cpu_ns_per_op: Option<f64>,
    pub false_negatives: usize,
    pub false_positives: u64,
    pub negative_lookups: u64,
    pub insert_failed: usize,
    pub remove_missed: u64,
}

/// Why `filter` cannot run `mix` on `threads` threads, if it cannot.
fn not_applicable(filter: &dyn Filter, mix: &Mix, threads: usize) -> Option<&'static str> {
    let caps = filter.caps();
    if !caps.insert {
        Some("static")
    } else if !caps.mixed {
        Some("batch variant")
    } else if mix.removes > 0 && !caps.remove {
        Some("no remove")
    } else if threads > 1 && filter.concurrent().is_none() {
        Some("single-threaded")
    } else {
        None
    }
}

struct Subject {
    def: &'static PeerDef,
    filter: Box<dyn Filter>,
    not_applicable: Option<&'static str>,
    samples: Vec<f64>,
    cpu_ns: Vec<f64>,
    tally: Tally,
}

pub fn run(
    cfg: &Config,
    mix: Mix,
    sizing: &Sizing,
    peers: &[&'static PeerDef],
    bar: &ProgressBar,
) -> Vec<Row> {
    let space = KeySpace::new(cfg.seed);
    let prefill = cfg.items * cfg.prefill_percent as usize / 100;
    let mut rows = Vec::new();
    for &threads in &cfg.threads {
        let plans: Vec<ThreadPlan> = (0..threads)
            .map(|t| {
                let (prefill, ops) = (prefill / threads, cfg.ops / threads);
                thread_plan(&space, t as u64, mix, prefill, ops, cfg.samples, cfg.seed)
            })
            .collect();
        let total_ops: usize = plans.iter().map(|p| p.samples[0].len()).sum();

        let mut subjects: Vec<Subject> = peers
            .iter()
            .map(|def| {
                let mut filter = (def.build)(sizing);
                let not_applicable = not_applicable(filter.as_ref(), &mix, threads);
                let mut tally = Tally::default();
                if not_applicable.is_none() {
                    for plan in &plans {
                        filter.insert_all(&plan.prefill, &mut tally);
                    }
                }
                bar.inc(1);
                Subject {
                    def,
                    filter,
                    not_applicable,
                    samples: Vec::new(),
                    cpu_ns: Vec::new(),
                    tally,
                }
            })
            .collect();

        // Peers take turns sample by sample; each sample continues the previous one's state.
        for sample in 0..cfg.samples {
            for s in subjects.iter_mut().filter(|s| s.not_applicable.is_none()) {
                let ops: Vec<&[Op]> = plans.iter().map(|p| &p.samples[sample][..]).collect();
                let (secs, cpu_ns, tally) = match s.filter.concurrent() {
                    Some(shared) => run_shared(shared, &ops, &cfg.cores),
                    // Single-threaded filters only run with one thread (see `not_applicable`).
                    None => run_exclusive(s.filter.as_mut(), ops[0]),
                };
                s.samples.push(total_ops as f64 / secs);
                if let Some(ns) = cpu_ns {
                    s.cpu_ns.push(ns as f64 / total_ops as f64);
                }
                s.tally.merge(tally);
                bar.inc(1);
            }
        }

        rows.extend(subjects.into_iter().map(|s| {
            let (insert_failed, false_negatives) = failures(&s.tally);
            Row {
                mix,
                peer: s.def.name,
                threads,
                not_applicable: s.not_applicable,
                ops_per_sec: (!s.samples.is_empty()).then(|| median(&s.samples)),
                cpu_ns_per_op: (!s.cpu_ns.is_empty()).then(|| median(&s.cpu_ns)),
                samples: s.samples,
                false_negatives,
                false_positives: s.tally.false_pos,
                negative_lookups: s.tally.negatives,
                insert_failed,
                remove_missed: s.tally.remove_missed,
            }
        }));
    }
    rows
}

/// Runs one sample of a thread-safe filter: thread `t` runs `ops[t]`. All threads start at
/// one barrier; the time is from the first start to the last finish, so a straggler counts
/// against throughput. Also returns the CPU time all threads spent, if the platform says.
fn run_shared(
    filter: &dyn Concurrent,
    ops: &[&[Op]],
    cores: &[core_affinity::CoreId],
) -> (f64, Option<u64>, Tally) {
    let barrier = Barrier::new(ops.len());
    let results: Vec<(Instant, Instant, Option<u64>, Tally)> = std::thread::scope(|scope| {
        let handles: Vec<_> = ops
            .iter()
            .enumerate()
            .map(|(t, &ops)| {
                let barrier = &barrier;
                scope.spawn(move || {
                    if !cores.is_empty() {
                        core_affinity::set_for_current(cores[t % cores.len()]);
                    }
                    let mut tally = Tally::default();
                    barrier.wait();
                    let start = Instant::now();
                    let cpu_start = thread_cpu_ns();
                    filter.run_ops(ops, &mut tally);
                    let cpu = cpu_start.zip(thread_cpu_ns()).map(|(a, b)| b - a);
                    (start, Instant::now(), cpu, tally)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a benchmark thread panicked"))
            .collect()
    });
    let start = results
        .iter()
        .map(|r| r.0)
        .min()
        .expect("at least one thread");
    let end = results
        .iter()
        .map(|r| r.1)
        .max()
        .expect("at least one thread");
    let cpu = results.iter().map(|r| r.2).sum::<Option<u64>>();
    let mut tally = Tally::default();
    for (_, _, _, t) in results {
        tally.merge(t);
    }
    (end.duration_since(start).as_secs_f64(), cpu, tally)
}

/// Runs one sample of a single-threaded filter on the calling thread (pinned to the first
/// core, like thread 0 of [`run_shared`]). Some peers hold thread-local state (a `ThreadRng`)
/// and could not be moved to another thread anyway.
fn run_exclusive(filter: &mut dyn Filter, ops: &[Op]) -> (f64, Option<u64>, Tally) {
    let mut tally = Tally::default();
    let start = Instant::now();
    let cpu_start = thread_cpu_ns();
    filter.run_ops(ops, &mut tally);
    let cpu = cpu_start.zip(thread_cpu_ns()).map(|(a, b)| b - a);
    (start.elapsed().as_secs_f64(), cpu, tally)
}

/// Progress units [`run`] reports, for sizing the bar.
pub fn work_units(cfg: &Config, peers: usize) -> u64 {
    (cfg.threads.len() * peers * (1 + cfg.samples)) as u64
}
