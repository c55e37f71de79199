//! Cache admission on real traces: S3-FIFO with a `RecentFilter` ghost against the same
//! cache with an exact ghost and with a Bloom ghost, LRU with a `RecentFilter`
//! doorkeeper, and the caches Rust users pick (moka, quick_cache, lru).
//!
//! ```text
//! cargo run --release --example admission -- --trace ../shared/traces/lirs_multi2.txt.gz
//! cargo run --release --example admission -- --trace A.txt.gz --trace B.txt.gz \
//!     [--cache-sizes 1%,5%,20%] [--json FILE] [--plot FILE] [--throughput]
//! cargo run --release --example admission        # a synthetic Zipf trace
//! ```
//!
//! A trace is gzip text (or plain text), one signed 64-bit decimal key a line. Without
//! `--cache-sizes`, a trace listed in the reference table of the `README.md` beside it
//! is replayed at that table's sizes (and checked against it), any other at 1%, 5% and
//! 20% of its distinct keys.

mod ghost;
mod plot;
mod policies;
mod reference;
mod s3fifo;
mod throughput;
mod trace;

use std::collections::BTreeSet;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};

use policies::POLICIES;
use trace::Trace;

#[derive(Parser)]
#[command(about = "Replays cache traces through admission policies and reports hit ratios")]
struct Cli {
    /// Trace files (gzip or plain text, one key a line): several after one `--trace` (a
    /// shell glob) or one per `--trace`. Without one, a synthetic Zipf trace with
    /// one-hit wonders.
    #[arg(long = "trace", num_args = 1..)]
    traces: Vec<PathBuf>,
    /// Cache sizes: fractions of the trace's distinct keys (`5%`) or entry counts.
    #[arg(long, value_delimiter = ',')]
    cache_sizes: Vec<String>,
    /// Writes one JSON object per line: trace, cache_size, policy, hit_ratio, ...
    #[arg(long)]
    json: Option<PathBuf>,
    /// Draws hit ratio against cache size, one panel per trace (SVG).
    #[arg(long)]
    plot: Option<PathBuf>,
    /// Hits an object needs in S3-FIFO's small queue to move to the main one (the
    /// paper's default is 2; the reference table gives 1 and 2).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(1..=2))]
    promote_after: u8,
    /// Only these policies (comma-separated names).
    #[arg(long, value_delimiter = ',')]
    policies: Vec<String>,
    /// Requests in the synthetic trace.
    #[arg(long, default_value_t = 2_000_000)]
    synthetic_requests: usize,
    /// Replays run at once (one per core by default).
    #[arg(long)]
    jobs: Option<usize>,
    /// Also times s3fifo+recent as a concurrent sharded cache from 1 and 2 threads, on
    /// the first trace.
    #[arg(long)]
    throughput: bool,
}

/// One replay's result.
#[derive(Clone, serde::Serialize)]
pub struct Result {
    pub trace: String,
    pub requests: usize,
    pub distinct_keys: usize,
    pub cache_size: usize,
    pub policy: &'static str,
    pub hit_ratio: f64,
    pub hits: u64,
    /// Admission metadata (ghost or doorkeeper) bytes per cache entry; null where the
    /// crate does not expose it.
    pub metadata_bytes_per_entry: Option<f64>,
    pub promote_after: u8,
}

fn main() {
    let cli = Cli::parse();
    if let Err(message) = run(&cli) {
        eprintln!("admission: {message}");
        std::process::exit(2);
    }
}

fn run(cli: &Cli) -> std::result::Result<(), String> {
    let policies: Vec<&'static str> = if cli.policies.is_empty() {
        POLICIES.to_vec()
    } else {
        cli.policies
            .iter()
            .map(|name| {
                POLICIES
                    .iter()
                    .copied()
                    .chain(policies::DIAGNOSTICS)
                    .find(|p| p == name)
                    .ok_or_else(|| {
                        format!(
                            "unknown policy {name:?}; the policies are {}",
                            POLICIES.join(", ")
                        )
                    })
            })
            .collect::<std::result::Result<_, _>>()?
    };
    let mut traces = Vec::new();
    let mut references = Vec::new();
    if cli.traces.is_empty() {
        traces.push(Trace::synthetic(cli.synthetic_requests));
        references.push(Vec::new());
    }
    for path in &cli.traces {
        let trace = Trace::load(path)?;
        let directory = path.parent().map(PathBuf::from).unwrap_or_default();
        let rows: Vec<_> = reference::load(&directory)
            .into_iter()
            .filter(|row| row.trace == trace.name)
            .collect();
        traces.push(trace);
        references.push(rows);
    }

    // (trace, cache size) pairs, then every policy on each.
    let mut work = Vec::new();
    for (t, trace) in traces.iter().enumerate() {
        for size in cache_sizes(&cli.cache_sizes, trace, &references[t])? {
            for &policy in &policies {
                work.push((t, size, policy));
            }
        }
    }
    let total: u64 = work
        .iter()
        .map(|&(t, _, _)| traces[t].keys.len() as u64)
        .sum();
    let bar = ProgressBar::new(total).with_style(
        ProgressStyle::with_template(
            "{msg} [{bar:40}] {human_pos}/{human_len} requests replayed ({per_sec}, {eta})",
        )
        .unwrap()
        .progress_chars("=> "),
    );
    bar.set_message("replaying");
    let jobs = cli
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    let next = AtomicUsize::new(0);
    let results = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| {
                while let Some(&(t, size, policy)) = work.get(next.fetch_add(1, Ordering::Relaxed))
                {
                    let trace = &traces[t];
                    let outcome =
                        policies::replay(policy, &trace.keys, size, cli.promote_after, &|n| {
                            bar.inc(n)
                        });
                    results.lock().unwrap().push(Result {
                        trace: trace.name.clone(),
                        requests: trace.keys.len(),
                        distinct_keys: trace.distinct,
                        cache_size: size,
                        policy,
                        hit_ratio: outcome.hits as f64 / trace.keys.len() as f64,
                        hits: outcome.hits,
                        metadata_bytes_per_entry: outcome
                            .metadata_bytes
                            .map(|b| b as f64 / size as f64),
                        promote_after: cli.promote_after,
                    });
                }
            });
        }
    });
    bar.finish_and_clear();
    let mut results = results.into_inner().unwrap();
    let order = |r: &Result| {
        let t = traces.iter().position(|t| t.name == r.trace).unwrap_or(0);
        let p = policies.iter().position(|p| *p == r.policy).unwrap_or(0);
        (t, r.cache_size, p)
    };
    results.sort_by_key(order);

    print_hit_ratios(&traces, &policies, &results, &references, cli.promote_after);
    print_metadata(&policies, &results);
    print_checks(&results, &references, cli.promote_after);

    if let Some(path) = &cli.json {
        let mut file =
            std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
        for result in &results {
            let line = serde_json::to_string(result).expect("results serialise");
            writeln!(file, "{line}").map_err(|e| format!("{}: {e}", path.display()))?;
        }
        println!("\nwrote {} results to {}", results.len(), path.display());
    }
    if let Some(path) = &cli.plot {
        plot::draw(path, &traces, &policies, &results)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        println!("drew {}", path.display());
    }
    if cli.throughput {
        throughput::report(&traces[0], cli.promote_after);
    }
    Ok(())
}

/// The sizes to replay `trace` at: those asked for, else the reference table's, else
/// 1%, 5% and 20% of its distinct keys.
fn cache_sizes(
    asked: &[String],
    trace: &Trace,
    reference: &[reference::Row],
) -> std::result::Result<Vec<usize>, String> {
    if asked.is_empty() && !reference.is_empty() {
        return Ok(reference.iter().map(|row| row.cache_size).collect());
    }
    let defaults = ["1%".to_string(), "5%".into(), "20%".into()];
    let asked = if asked.is_empty() {
        &defaults[..]
    } else {
        asked
    };
    asked
        .iter()
        .map(|size| {
            let size = size.trim();
            let entries = if let Some(percent) = size.strip_suffix('%') {
                let percent: f64 = percent
                    .parse()
                    .map_err(|_| format!("bad cache size {size:?}"))?;
                (trace.distinct as f64 * percent / 100.0).round() as usize
            } else {
                size.parse().map_err(|_| {
                    format!("bad cache size {size:?}: a percentage or an entry count")
                })?
            };
            if entries < 2 {
                return Err(format!(
                    "cache size {size:?} is under 2 entries for {}",
                    trace.name
                ));
            }
            Ok(entries)
        })
        .collect()
}

fn find<'a>(results: &'a [Result], trace: &str, size: usize, policy: &str) -> Option<&'a Result> {
    results
        .iter()
        .find(|r| r.trace == trace && r.cache_size == size && r.policy == policy)
}

fn print_hit_ratios(
    traces: &[Trace],
    policies: &[&'static str],
    results: &[Result],
    references: &[Vec<reference::Row>],
    promote_after: u8,
) {
    println!(
        "Hit ratio, % of all requests (cold misses included); S3-FIFO promotes after {promote_after} hit(s) in its small queue"
    );
    for (t, trace) in traces.iter().enumerate() {
        println!(
            "\n{} ({} requests, {} distinct keys)",
            trace.name,
            trace.keys.len(),
            trace.distinct
        );
        let mut header = format!("{:>14}", "cache size");
        for policy in policies {
            header += &format!(" | {policy:>14}");
        }
        if !references[t].is_empty() {
            header += "  | reference: lru, doorkeeper, W-TinyLFU, s3fifo";
        }
        println!("{header}");
        let sizes: Vec<usize> = {
            let mut sizes: Vec<usize> = results
                .iter()
                .filter(|r| r.trace == trace.name)
                .map(|r| r.cache_size)
                .collect();
            sizes.dedup();
            sizes
        };
        for size in sizes {
            let fraction = 100.0 * size as f64 / trace.distinct as f64;
            let mut line = format!("{:>14}", format!("{size} ({fraction:.1}%)"));
            for policy in policies {
                match find(results, &trace.name, size, policy) {
                    Some(r) => line += &format!(" | {:>14.2}", 100.0 * r.hit_ratio),
                    None => line += &format!(" | {:>14}", "-"),
                }
            }
            if let Some(row) = references[t].iter().find(|row| row.cache_size == size) {
                line += &format!(
                    "  | {:.1}, {:.1}, {:.1}, {:.1}",
                    row.lru,
                    row.doorkeeper,
                    row.w_tinylfu,
                    row.s3fifo(promote_after)
                );
            }
            println!("{line}");
        }
    }
}

fn print_metadata(policies: &[&'static str], results: &[Result]) {
    println!(
        "\nAdmission metadata (ghost or doorkeeper, not the values), bytes per cache entry, over all runs:"
    );
    for policy in policies {
        let mut values: Vec<f64> = results
            .iter()
            .filter(|r| r.policy == *policy)
            .filter_map(|r| r.metadata_bytes_per_entry)
            .collect();
        values.sort_by(f64::total_cmp);
        if values.is_empty() {
            println!("{policy:>16}: not exposed by the crate");
        } else {
            let median = values[values.len() / 2];
            println!(
                "{policy:>16}: median {median:.2}, from {:.2} to {:.2}",
                values[0],
                values[values.len() - 1]
            );
        }
    }
}

/// The goals, checked on every (trace, size) replayed: the simulator against the
/// reference, and the filter ghost against the exact and the Bloom ones.
fn print_checks(results: &[Result], references: &[Vec<reference::Row>], promote_after: u8) {
    let pp = |r: Option<&Result>| r.map(|r| 100.0 * r.hit_ratio);
    let pairs: BTreeSet<(&str, usize)> = results
        .iter()
        .map(|r| (r.trace.as_str(), r.cache_size))
        .collect();
    println!("\nDifferences in pp (goal in brackets):");
    println!(
        "{:>20} {:>7} | {:>14} | {:>14} | {:>18} | {:>20} | {:>20}",
        "trace",
        "size",
        "lru - ref",
        "s3fifo-exact",
        "lru+dk - ref dk",
        "recent - exact",
        "recent - bloom"
    );
    println!(
        "{:>20} {:>7} | {:>14} | {:>14} | {:>18} | {:>20} | {:>20}",
        "", "", "(|d| <= 0.5)", "- ref (<= 0.5)", "(|d| <= 0.3)", "(|d| <= 0.3)", "(>= -0.1)"
    );
    let show = |d: Option<f64>| d.map_or("-".to_string(), |d| format!("{d:+.2}"));
    for &(trace, size) in &pairs {
        let get = |policy| pp(find(results, trace, size, policy));
        let row = references
            .iter()
            .flatten()
            .find(|row| row.trace == trace && row.cache_size == size);
        let lru = get("lru").zip(row).map(|(v, row)| v - row.lru);
        let exact = get("s3fifo-exact")
            .zip(row)
            .map(|(v, row)| v - row.s3fifo(promote_after));
        let dk = get("lru+doorkeeper")
            .zip(row)
            .map(|(v, row)| v - row.doorkeeper);
        let recent_exact = get("s3fifo+recent")
            .zip(get("s3fifo-exact"))
            .map(|(a, b)| a - b);
        let recent_bloom = get("s3fifo+recent")
            .zip(get("s3fifo+bloom"))
            .map(|(a, b)| a - b);
        println!(
            "{trace:>20} {size:>7} | {:>14} | {:>14} | {:>18} | {:>20} | {:>20}",
            show(lru),
            show(exact),
            show(dk),
            show(recent_exact),
            show(recent_bloom)
        );
    }
}
