//! Measuring one configuration: its throughput samples, fill figures and in-process cost.

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use concurrent_cuckoo_filter::{GrowableCuckooFilter, GrowableFingerprint};
use redis::{Connection, ConnectionLike, Value};

use crate::client::{
    cf_info, describe, drive, field, info_fields, module_version, query, reserve, usec_per_call,
};
use crate::config::{Config, Fill, Growth, Measured, Sample};
use crate::options::Options;
use crate::report::grouped;
use crate::server::Server;
use crate::workload::{Plan, Workload, plan};
use crate::{KEY, Result};

/// The key filled to find the first growth.
const GROWTH_KEY: &str = "g";
/// Keys per `CF.MEXISTS`, and commands per pipeline, for the FPR count.
const FPR_BATCH: usize = 1_000;
const FPR_PIPELINE: usize = 4;
/// Items per pipeline while looking for the first growth.
const GROWTH_CHUNK: usize = 1_000;

pub(crate) fn measure(
    config: Config,
    module: &Path,
    options: &Options,
    workload: &Workload,
) -> Result<Measured> {
    let name = config.name();
    let mut samples = Vec::new();
    let mut fill = None;
    for sample in 1..=options.samples {
        let server = Server::start(&options.server, module)?;
        let mut con = server.connect()?;
        config.prepare(&mut con)?;
        reserve(&mut con, KEY, config.reserved(options.items))?;
        config.check_key(&mut con)?;
        let speed = throughput(&server, &mut con, workload)?;
        eprintln!(
            "[{name}] sample {sample}/{}: ADD {}/s, EXISTS {}/s, MEXISTS {} items/s",
            options.samples,
            grouped(speed.add),
            grouped(speed.exists),
            grouped(speed.mexists_items)
        );
        samples.push(speed);
        if sample == options.samples {
            // After the throughput phases, so that commandstats counted only them.
            fill = Some(fill_figures(&server, &mut con, options)?);
        }
    }
    let in_process = match config.fingerprint_bits() {
        Some(bits) => Some(in_process(bits, workload, options.samples)?),
        None => None,
    };
    Ok(Measured {
        speed: median_sample(samples),
        in_process,
        fill: fill.ok_or("no samples")?,
    })
}

/// The three throughput phases on a freshly reserved key, then the server's
/// `usec_per_call` for them.
fn throughput(server: &Server, con: &mut Connection, workload: &Workload) -> Result<Sample> {
    let n = workload.items.len() as f64;
    let (add_time, add_tally) = drive(server, &workload.add)?;
    let (exists_time, exists_tally) = drive(server, &workload.exists)?;
    let (mexists_time, mexists_tally) = drive(server, &workload.mexists)?;
    for (phase, tally) in [("CF.EXISTS", &exists_tally), ("CF.MEXISTS", &mexists_tally)] {
        if tally.errors > 0 {
            return Err(format!(
                "{phase}: {} errors, the first: {}",
                tally.errors,
                tally.first_error.as_deref().unwrap_or("?")
            ));
        }
        if tally.ones < workload.present as u64 {
            eprintln!(
                "warning: {phase} found {} of {} lookups, fewer than the {} added ones",
                tally.ones,
                workload.lookups.len(),
                workload.present
            );
        }
    }
    let stats = usec_per_call(con)?;
    let usec = |command: &str| stats.get(command).copied();
    Ok(Sample {
        add: n / add_time.as_secs_f64(),
        exists: n / exists_time.as_secs_f64(),
        mexists_commands: workload.mexists_commands as f64 / mexists_time.as_secs_f64(),
        mexists_items: n / mexists_time.as_secs_f64(),
        usec_per_call: [usec("cf.add"), usec("cf.exists"), usec("cf.mexists")],
        add_tally,
    })
}

/// Memory, `CF.INFO` and the false-positive rate of the filled key, and the first
/// growth of another.
fn fill_figures(server: &Server, con: &mut Connection, options: &Options) -> Result<Fill> {
    let memory: i64 = query(con, redis::cmd("MEMORY").arg("USAGE").arg(KEY))?;
    let info = cf_info(con, KEY)?;
    let (_, tally) = drive(server, &fpr_plan(options))?;
    if tally.errors > 0 {
        return Err(format!(
            "FPR count: {}",
            tally.first_error.unwrap_or_default()
        ));
    }
    Ok(Fill {
        bytes_per_item: memory as f64 / options.items as f64,
        size: info.get("Size").copied(),
        filters: info.get("Number of filters").copied(),
        false_positive_rate: tally.ones as f64 / options.fpr_keys as f64,
        growth: first_growth(con, options.growth_capacity),
        module_version: module_version(con),
    })
}

/// Fills a key reserved for `capacity` items one item at a time, each `CF.ADD` followed
/// by a `CF.INFO` in the same pipeline, until "Number of filters" reaches 2.
fn first_growth(con: &mut Connection, capacity: usize) -> Result<Growth> {
    reserve(con, GROWTH_KEY, capacity)?;
    let info = cf_info(con, GROWTH_KEY)?;
    // Ours reports the bucket size asked for and the one it serves; RedisBloom the one.
    let bucket = field(&info, "Served bucket size").or_else(|_| field(&info, "Bucket size"))?;
    let slots = field(&info, "Number of buckets")? * bucket;
    let limit = 4 * capacity.max(usize::try_from(slots).unwrap_or(0));
    for first in (0..limit).step_by(GROWTH_CHUNK) {
        let last = (first + GROWTH_CHUNK).min(limit);
        let mut pipe = redis::pipe();
        for i in first..last {
            pipe.cmd("CF.ADD").arg(GROWTH_KEY).arg(format!("grow:{i}"));
            pipe.cmd("CF.INFO").arg(GROWTH_KEY);
        }
        let replies = con
            .req_packed_commands(&pipe.get_packed_pipeline(), 0, 2 * (last - first))
            .map_err(|e| format!("growth pipeline: {e}"))?;
        for (i, pair) in (first..).zip(replies.chunks_exact(2)) {
            if let Value::ServerError(e) = &pair[0] {
                return Err(format!(
                    "CF.ADD of item {i}: {}",
                    describe(&e.clone().into())
                ));
            }
            if field(&info_fields(&pair[1])?, "Number of filters")? > 1 {
                return Ok(Growth { items: i, slots });
            }
        }
    }
    Err(format!("still one filter after {limit} items"))
}

/// The FPR count's `CF.MEXISTS` commands on the filled key.
fn fpr_plan(options: &Options) -> Plan {
    let m = options.fpr_keys;
    plan(
        m.div_ceil(FPR_BATCH),
        options.connections,
        FPR_PIPELINE,
        |c| {
            let mut cmd = redis::cmd("CF.MEXISTS");
            cmd.arg(KEY);
            for i in c * FPR_BATCH..((c + 1) * FPR_BATCH).min(m) {
                cmd.arg(format!("other:{i}"));
            }
            cmd
        },
    )
}

/// Median ns per insert and per lookup of the library's growable filter over `samples`
/// runs, each on a new filter.
fn in_process(bits: u32, workload: &Workload, samples: usize) -> Result<[f64; 2]> {
    let capacity = workload.items.len();
    let runs = (0..samples)
        .map(|_| match bits {
            8 => time_filter(
                GrowableCuckooFilter::builder()
                    .fingerprint::<u8>()
                    .capacity(capacity)
                    .build(),
                workload,
            ),
            _ => time_filter(
                GrowableCuckooFilter::builder().capacity(capacity).build(),
                workload,
            ),
        })
        .collect::<Result<Vec<_>>>()?;
    Ok([
        median(runs.iter().map(|run| run[0]).collect()),
        median(runs.iter().map(|run| run[1]).collect()),
    ])
}

/// ns per insert of every item and per lookup of every lookup, on one thread.
fn time_filter<F: GrowableFingerprint>(
    filter: std::result::Result<GrowableCuckooFilter<F>, concurrent_cuckoo_filter::BuildError>,
    workload: &Workload,
) -> Result<[f64; 2]> {
    let filter = filter.map_err(|e| format!("in-process filter: {e}"))?;
    let start = Instant::now();
    for item in &workload.items {
        filter
            .insert(item.as_bytes())
            .map_err(|e| format!("in-process insert: {e}"))?;
    }
    let inserts = start.elapsed();
    let start = Instant::now();
    let hits = workload
        .lookups
        .iter()
        .filter(|key| filter.contains(key.as_bytes()))
        .count();
    let lookups = start.elapsed();
    black_box(hits);
    let ns = |time: Duration, ops: usize| time.as_secs_f64() * 1e9 / ops as f64;
    Ok([
        ns(inserts, workload.items.len()),
        ns(lookups, workload.lookups.len()),
    ])
}

/// The median of each figure over the samples.
fn median_sample(mut samples: Vec<Sample>) -> Sample {
    let of = |figure: fn(&Sample) -> f64| median(samples.iter().map(figure).collect());
    let usec = |command: usize| {
        let values: Vec<f64> = samples
            .iter()
            .filter_map(|s| s.usec_per_call[command])
            .collect();
        (!values.is_empty()).then(|| median(values))
    };
    let (add, exists) = (of(|s| s.add), of(|s| s.exists));
    let (mexists_commands, mexists_items) = (of(|s| s.mexists_commands), of(|s| s.mexists_items));
    let usec_per_call = [usec(0), usec(1), usec(2)];
    let add_tally = samples.pop().map(|s| s.add_tally).unwrap_or_default();
    Sample {
        add,
        exists,
        mexists_commands,
        mexists_items,
        usec_per_call,
        add_tally,
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => f64::NAN,
        n if !n.is_multiple_of(2) => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}
