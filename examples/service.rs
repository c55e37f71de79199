//! A service that keeps one shared, growing filter across restarts.
//!
//! Worker threads (default: one per core) serve a stream of requests against one
//! `GrowableCuckooFilter` that starts small: lookups of keys acknowledged earlier (which
//! must be found) and of keys never inserted, inserts of new keys, and inserts and
//! removes of short-lived keys. A background thread writes a snapshot every few
//! seconds: into a temporary file beside the real one, `fsync`ed, then renamed over it,
//! so a crash at any instant leaves the last complete snapshot in place. The file starts
//! with what each worker had acknowledged when the snapshot began; on start, the
//! service restores the filter from the file and checks every one of those keys.
//!
//! ```text
//! cargo run --release --example service -- --file /tmp/filter.snapshot --seconds 20
//! # kill it at any moment (kill -9), then start it again with the same file:
//! cargo run --release --example service -- --file /tmp/filter.snapshot --check-only
//! ```
//!
//! Keys: worker `w`'s `n`-th durable key is `w << 40 | n`, its short-lived keys have bit
//! 39 set, and never-inserted keys bit 38; the filter hashes them with its stable hasher.
//! It prints (on stderr, with a progress line) requests per second, growth events,
//! snapshot durations and the longest request any worker saw while a snapshot ran; on
//! stdout, one line per snapshot event, which `tests/service.rs` reads.

use std::fs::{self, File};
use std::io::{self, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use clap::Parser;
use concurrent_cuckoo_filter::GrowableCuckooFilter;
use indicatif::{ProgressBar, ProgressStyle};

#[derive(Parser, Debug)]
#[command(about = "A service keeping a growing cuckoo filter across restarts")]
struct Args {
    /// The snapshot file (restored from when it exists).
    #[arg(long, default_value = "service.snapshot")]
    file: PathBuf,
    /// Worker threads (default: one per core).
    #[arg(long)]
    threads: Option<usize>,
    /// How long to serve, in seconds.
    #[arg(long, default_value_t = 10)]
    seconds: u64,
    /// Milliseconds between snapshots.
    #[arg(long, default_value_t = 2_000)]
    snapshot_every_ms: u64,
    /// Keys the first table holds; it doubles past that.
    #[arg(long, default_value_t = 100_000)]
    initial_capacity: usize,
    /// Percent of requests that insert a new durable key.
    #[arg(long, default_value_t = 10)]
    insert_percent: u64,
    /// Percent of requests that insert and then remove a short-lived key.
    #[arg(long, default_value_t = 5)]
    churn_percent: u64,
    /// Only restore the file and check it, then exit.
    #[arg(long)]
    check_only: bool,
    /// Sleep this long in the middle of each snapshot write, after the acknowledged
    /// counts and before the filter (for tests that kill the service during a write).
    #[arg(long, default_value_t = 0)]
    stall_write_ms: u64,
}

/// The file's first bytes: what follows is a worker count, each worker's acknowledged
/// count, and the filter's own encoding (which carries its own checksum).
const FILE_MAGIC: &[u8; 8] = b"CCSVC\x00\x00\x01";

type Filter = GrowableCuckooFilter;

fn durable(worker: u64, n: u64) -> u64 {
    (worker << 40) | n
}

fn short_lived(worker: u64, n: u64) -> u64 {
    (worker << 40) | (1 << 39) | (n & ((1 << 38) - 1))
}

fn never_inserted(worker: u64, n: u64) -> u64 {
    (worker << 40) | (1 << 38) | (n & ((1 << 38) - 1))
}

/// Reads a snapshot file: each worker's acknowledged count, and the filter.
fn restore(path: &Path) -> io::Result<(Vec<u64>, Filter)> {
    let mut reader = BufReader::new(File::open(path)?);
    let mut magic = [0u8; 8];
    reader.read_exact(&mut magic)?;
    if &magic != FILE_MAGIC {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "not a service snapshot",
        ));
    }
    let mut word = [0u8; 8];
    reader.read_exact(&mut word)?;
    let workers = u64::from_le_bytes(word);
    if workers > 4_096 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "implausible worker count",
        ));
    }
    let mut acknowledged = Vec::new();
    for _ in 0..workers {
        reader.read_exact(&mut word)?;
        acknowledged.push(u64::from_le_bytes(word));
    }
    let filter = Filter::read_from(&mut reader)
        .map_err(|error| io::Error::new(io::ErrorKind::InvalidData, error))?;
    Ok((acknowledged, filter))
}

/// Every key acknowledged before the snapshot began must be in the restored filter.
fn check(acknowledged: &[u64], filter: &Filter) -> u64 {
    let mut missing = 0;
    for (worker, &count) in acknowledged.iter().enumerate() {
        missing += (0..count)
            .filter(|&n| !filter.contains(&durable(worker as u64, n)))
            .count() as u64;
    }
    missing
}

/// Writes a snapshot: a temporary file beside `path`, synced, then renamed over it.
fn snapshot(path: &Path, acknowledged: &[u64], filter: &Filter, stall: Duration) -> io::Result<()> {
    let temporary = path.with_extension("tmp");
    // No `BufWriter`: `write_to` already writes in 64 KiB blocks.
    let mut out = File::create(&temporary)?;
    out.write_all(FILE_MAGIC)?;
    out.write_all(&(acknowledged.len() as u64).to_le_bytes())?;
    for count in acknowledged {
        out.write_all(&count.to_le_bytes())?;
    }
    out.flush()?;
    thread::sleep(stall);
    filter.write_to(&mut out)?;
    out.sync_all()?;
    fs::rename(&temporary, path)?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        File::open(dir)?.sync_all()?; // the rename itself is durable
    }
    Ok(())
}

/// Request latencies one worker saw, split by whether a snapshot was running.
#[derive(Default)]
struct Latencies {
    during_snapshot: Vec<u32>,
    otherwise_max: u64,
}

fn median_and_max(mut values: Vec<u32>) -> (u32, u32) {
    values.sort_unstable();
    let median = values.get(values.len() / 2).copied().unwrap_or(0);
    (median, values.last().copied().unwrap_or(0))
}

fn main() -> io::Result<()> {
    let args = Args::parse();
    let threads = args
        .threads
        .unwrap_or_else(|| thread::available_parallelism().map_or(2, |n| n.get()));

    let (start_counts, filter) = match restore(&args.file) {
        Ok((acknowledged, filter)) => {
            let missing = check(&acknowledged, &filter);
            let keys: u64 = acknowledged.iter().sum();
            println!(
                "RESTORED keys={keys} missing={missing} doublings={} len={}",
                filter.doublings(),
                filter.len()
            );
            if missing > 0 {
                eprintln!("{missing} acknowledged keys missing from the restored filter");
                std::process::exit(1);
            }
            (acknowledged, filter)
        }
        Err(error) if error.kind() == io::ErrorKind::NotFound => {
            println!("FRESH");
            (Vec::new(), Filter::with_capacity(args.initial_capacity))
        }
        Err(error) => return Err(error),
    };
    if args.check_only {
        return Ok(());
    }

    // Workers resume after the keys the snapshot vouches for.
    let acknowledged: Vec<AtomicU64> = (0..threads)
        .map(|w| AtomicU64::new(start_counts.get(w).copied().unwrap_or(0)))
        .collect();
    let requests = AtomicU64::new(0);
    let false_negatives = AtomicU64::new(0);
    let snapshot_running = AtomicBool::new(false);
    let stop = AtomicBool::new(false);
    let latencies: Vec<Mutex<Latencies>> = (0..threads).map(|_| Mutex::default()).collect();
    let deadline = Instant::now() + Duration::from_secs(args.seconds);
    let progress = ProgressBar::new_spinner();
    progress.set_style(ProgressStyle::with_template("{spinner} {elapsed} {msg}").unwrap());

    thread::scope(|s| {
        for worker in 0..threads {
            let (filter, acknowledged, requests) = (&filter, &acknowledged, &requests);
            let (false_negatives, snapshot_running, stop) =
                (&false_negatives, &snapshot_running, &stop);
            let latencies = &latencies[worker];
            s.spawn(move || {
                let w = worker as u64;
                let mut rng = fastrand::Rng::with_seed(w + 1);
                let mut own = Latencies::default();
                let mut churn = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    for _ in 0..256 {
                        let began = Instant::now();
                        let roll = rng.u64(0..100);
                        let done = acknowledged[worker].load(Ordering::Relaxed);
                        if roll < args.insert_percent {
                            filter
                                .insert(&durable(w, done))
                                .expect("a growable filter refused");
                            acknowledged[worker].store(done + 1, Ordering::Release);
                        } else if roll < args.insert_percent + args.churn_percent {
                            churn += 1;
                            filter.insert(&short_lived(w, churn)).expect("refused");
                            assert!(filter.remove(&short_lived(w, churn)), "own key gone");
                        } else if done > 0 && rng.bool() {
                            if !filter.contains(&durable(w, rng.u64(0..done))) {
                                false_negatives.fetch_add(1, Ordering::Relaxed);
                            }
                        } else {
                            std::hint::black_box(filter.contains(&never_inserted(w, rng.u64(..))));
                        }
                        let nanos = began.elapsed().as_nanos() as u64;
                        if snapshot_running.load(Ordering::Relaxed) {
                            own.during_snapshot
                                .push(nanos.min(u64::from(u32::MAX)) as u32);
                        } else {
                            own.otherwise_max = own.otherwise_max.max(nanos);
                        }
                    }
                    requests.fetch_add(256, Ordering::Relaxed);
                }
                *latencies.lock().unwrap() = own;
            });
        }

        // The snapshot thread (this one).
        let stall = Duration::from_millis(args.stall_write_ms);
        let every = Duration::from_millis(args.snapshot_every_ms);
        let mut next = Instant::now() + every;
        let (mut last_requests, mut last_time) = (0u64, Instant::now());
        let mut subs = filter.doublings();
        let mut snapshots = 0u64;
        while Instant::now() < deadline {
            thread::sleep(Duration::from_millis(50).min(every));
            let now = Instant::now();
            let served = requests.load(Ordering::Relaxed);
            let rate = (served - last_requests) as f64 / (now - last_time).as_secs_f64();
            (last_requests, last_time) = (served, now);
            if filter.doublings() != subs {
                subs = filter.doublings();
                progress.println(format!("grew to {subs} doublings ({} keys)", filter.len()));
            }
            progress.set_message(format!(
                "{:.2} M requests/s, {} keys, {subs} doublings, {snapshots} snapshots",
                rate / 1e6,
                filter.len()
            ));
            if now < next {
                continue;
            }
            next = now + every;
            // What the snapshot will vouch for: everything acknowledged before it began.
            let vouched: Vec<u64> = acknowledged
                .iter()
                .map(|n| n.load(Ordering::Acquire))
                .collect();
            println!("SNAPSHOT START {snapshots}");
            io::stdout().flush().ok();
            snapshot_running.store(true, Ordering::Relaxed);
            let began = Instant::now();
            let written = snapshot(&args.file, &vouched, &filter, stall);
            let took = began.elapsed();
            snapshot_running.store(false, Ordering::Relaxed);
            written.expect("writing the snapshot");
            println!(
                "SNAPSHOT DONE {snapshots} ms={:.1} keys={}",
                took.as_secs_f64() * 1e3,
                vouched.iter().sum::<u64>()
            );
            io::stdout().flush().ok();
            progress.println(format!(
                "snapshot {snapshots}: {:.1} ms, {} keys, {} doublings",
                took.as_secs_f64() * 1e3,
                filter.len(),
                filter.doublings()
            ));
            snapshots += 1;
        }
        stop.store(true, Ordering::Relaxed);
    });
    progress.finish_and_clear();

    let mut during = Vec::new();
    let mut otherwise_max = 0;
    for slot in &latencies {
        let own = std::mem::take(&mut *slot.lock().unwrap());
        during.extend(own.during_snapshot);
        otherwise_max = otherwise_max.max(own.otherwise_max);
    }
    let (median, max) = median_and_max(during);
    let served = requests.load(Ordering::Relaxed);
    let missed = false_negatives.load(Ordering::Relaxed);
    println!(
        "SUMMARY requests={served} seconds={} keys={} doublings={} false_negatives={missed} \
         during_snapshot_median_ns={median} during_snapshot_max_ns={max} otherwise_max_ns={otherwise_max}",
        args.seconds,
        filter.len(),
        filter.doublings()
    );
    if missed > 0 {
        std::process::exit(1);
    }
    Ok(())
}
