//! Throughput of `concurrent-cuckoo-filter` against the filters people would otherwise pick.
//!
//! ```text
//! cargo run --release --example throughput                 # the default comparison, ~1 min
//! cargo run --release --example throughput -- --help       # every option
//! cargo run --release --example throughput -- --reference --items 64M --peers ours,cuckoofilter
//! cargo run --release --example throughput -- --mixed --threads 1,2 --json out.jsonl --plot out.svg
//! ```
//!
//! Layout: `cli` (options), `keys` (keys and operation sequences, generated before timing),
//! `peers/` (one adapter per filter), `reference` (the paper's bulk insert-and-query report),
//! `mixed` (multi-threaded mixed workload), `report` (tables, JSON), `plot` (SVG), `system`
//! (CPU, build flags and crate versions stated by every report).

mod cli;
mod keys;
mod mixed;
mod peers;
mod plot;
mod reference;
mod report;
mod system;

use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};

use crate::peers::{CATALOG, PeerDef, Sizing};
use crate::report::{Doc, JsonSink, Table, mops, na, percent, sig3};

fn main() -> ExitCode {
    let args = cli::Args::parse();
    if let Err(e) = args.validate() {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    let peers = match select_peers(&args.peers) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    match run(&args, &peers) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Returns `Ok(false)` if our filter showed a false negative: the run then fails loudly.
fn run(args: &cli::Args, peers: &[&'static PeerDef]) -> Result<bool, Box<dyn std::error::Error>> {
    let started = Instant::now();
    // Read the machine before pinning: pinning narrows what this thread may see.
    let sys = system::System::probe(args.pin);
    let cores = core_affinity::get_core_ids().unwrap_or_default();
    if args.pin
        && let Some(&core) = cores.first()
    {
        // Single-threaded phases run here; keep them off the scheduler's merry-go-round.
        core_affinity::set_for_current(core);
    }
    let sizing = peers::sizing(
        args.items,
        args.load,
        args.fingerprint,
        args.slots,
        args.seed,
    );
    let mut json = JsonSink::open(args.json.as_deref())?;
    json.write("system", &sys)?;
    json.write("sizing", &SizingRecord::from(&sizing))?;

    let mut doc = Doc::default();
    println!("concurrent-cuckoo-filter throughput benchmark\n");
    doc.preformatted(&header(args, &sys, &sizing, peers));
    println!();

    let mut ok = true;
    let (mut ref_rows, mut curve) = (Vec::new(), Vec::new());
    if args.run_reference() {
        let cfg = reference::Config {
            items: args.items,
            lookups: args.lookups(),
            samples: args.samples as usize,
            fpr_keys: args.fpr_keys,
            segments: args.curve_points as usize + 1,
            curve_lookups: args.curve_lookups,
            seed: args.seed,
        };
        let bar = progress(reference::work_units(&cfg, peers.len()), "reference");
        (ref_rows, curve) = reference::run(&cfg, &sizing, peers, &bar);
        bar.finish_and_clear();
        print_reference(&mut doc, &cfg, &ref_rows);
        ok &= ref_rows[0].false_negatives == 0;
        for r in &ref_rows {
            json.write("reference", r)?;
        }
        for c in &curve {
            json.write("curve", c)?;
        }
    }

    let mut mixed_runs = Vec::new();
    if args.run_mixed() {
        let cfg = mixed::Config {
            items: args.items,
            prefill_percent: args.prefill,
            ops: args.ops,
            samples: args.samples as usize,
            threads: args.threads.clone(),
            cores: if args.pin { cores } else { Vec::new() },
            seed: args.seed,
        };
        for mix in args.mixes() {
            let bar = progress(mixed::work_units(&cfg, peers.len()), &mix.label());
            let rows = mixed::run(&cfg, mix, &sizing, peers, &bar);
            bar.finish_and_clear();
            print_mixed(&mut doc, &cfg, &mix, &rows);
            ok &= rows
                .iter()
                .filter(|r| r.peer == peers[0].name)
                .all(|r| r.false_negatives == 0);
            for r in &rows {
                json.write("mixed", r)?;
            }
            mixed_runs.push((mix.label(), rows));
        }
    }

    print_headline(&mut doc, peers, &ref_rows, &mixed_runs);
    json.finish()?;
    if let Some(path) = &args.json {
        println!("JSON lines written to {}", path.display());
    }
    if let Some(path) = &args.markdown {
        std::fs::write(path, doc.markdown())?;
        println!("Markdown written to {}", path.display());
    }
    if let Some(path) = &args.plot {
        let names: Vec<&'static str> = peers.iter().map(|p| p.name).collect();
        let input = plot::Input {
            peers: &names,
            curve: &curve,
            mixed: &mixed_runs,
            notes: &plot_notes(args, &sys),
        };
        plot::draw(path, &input)?;
        println!("Plot written to {}", path.display());
    }
    if !ok {
        println!("FAILED: our filter reported a false negative (see the FN columns).");
    }
    println!("Total time: {:.1} s", started.elapsed().as_secs_f64());
    Ok(ok)
}

/// What was measured on what: machine, build, sizes, and how each peer was configured.
fn header(
    args: &cli::Args,
    sys: &system::System,
    sizing: &Sizing,
    peers: &[&'static PeerDef],
) -> String {
    let mixed_threads = args.run_mixed().then_some(&args.threads[..]);
    let mut s = sys.describe(mixed_threads);
    s.push_str(&format!(
        "Sizing:   {} items; ours {}-bit × {} slots sized to load {} \
         (FPR bound {}, {:.2} bits/item)\n",
        thousands(args.items),
        args.fingerprint,
        args.slots,
        args.load,
        percent(sizing.target_fpr),
        sizing.bits_per_item,
    ));
    s.push_str("Peers:\n");
    for p in peers {
        s.push_str(&format!("  {:<20} {}\n", p.name, p.about));
    }
    s
}

/// The context printed beside the plot's legend, so a picture shared alone still says what
/// it measured.
fn plot_notes(args: &cli::Args, sys: &system::System) -> Vec<String> {
    let flags = if sys.rustflags.is_empty() {
        "(none)"
    } else {
        &sys.rustflags
    };
    vec![
        format!("CPU: {} ({} cores)", sys.cpu, sys.cores),
        format!(
            "{} items; ours {}-bit × {} slots at load {}; pinned: {}",
            thousands(args.items),
            args.fingerprint,
            args.slots,
            args.load,
            if args.pin { "yes" } else { "no" }
        ),
        format!("RUSTFLAGS={flags}; {}", sys.target_features.join(" ")),
        format!("median of {} samples", args.samples),
        "A peer missing from a panel cannot run that workload (n/a in the tables).".into(),
    ]
}

/// `ours` first (ratios are against it), then the requested peers in catalog order.
fn select_peers(names: &[String]) -> Result<Vec<&'static PeerDef>, String> {
    let all = names.iter().any(|n| n == "all");
    for n in names {
        if n != "all" && !CATALOG.iter().any(|p| p.name == n) {
            let known: Vec<&str> = CATALOG.iter().map(|p| p.name).collect();
            return Err(format!(
                "unknown peer {n:?}; known: all, {}",
                known.join(", ")
            ));
        }
    }
    Ok(CATALOG
        .iter()
        .enumerate()
        .filter(|(i, p)| *i == 0 || all || names.iter().any(|n| n == p.name))
        .map(|(_, p)| p)
        .collect())
}

fn progress(units: u64, what: &str) -> ProgressBar {
    let bar = ProgressBar::new(units);
    bar.set_style(
        ProgressStyle::with_template("{msg:>12} [{bar:40}] {pos}/{len} steps, {elapsed}")
            .expect("the template is valid")
            .progress_chars("=> "),
    );
    bar.set_message(what.to_string());
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

fn print_reference(doc: &mut Doc, cfg: &reference::Config, rows: &[reference::Row]) {
    doc.heading(&format!(
        "Reference (the cuckoo filter paper's bulk-insert-and-query): insert {} keys into an \
         empty filter, then {} lookups per positive rate; single thread; median of {} rounds",
        thousands(cfg.items),
        thousands(cfg.lookups),
        cfg.samples
    ));
    let mut t = Table::new([
        "peer",
        "adds Mops/s",
        "finds Mops/s 0%",
        "25%",
        "50%",
        "75%",
        "100%",
        "ε",
        "bits/item",
        "optimal",
        "wasted",
        "insert fails",
        "FN",
    ]);
    for r in rows {
        let adds = match (r.adds_per_sec, r.build_per_sec) {
            (Some(a), _) => mops(a),
            (None, Some(b)) => format!("{} (bulk build)", mops(b)),
            (None, None) => na("cannot insert"),
        };
        let mut cells = vec![r.peer.to_string(), adds];
        cells.extend(r.finds_per_sec.iter().map(|&f| mops(f)));
        let optimal = r.optimal_bits();
        cells.extend([
            percent(r.fpr),
            sig3(r.bits_per_item),
            if optimal.is_finite() {
                sig3(optimal)
            } else {
                "-".into()
            },
            if optimal.is_finite() {
                format!("{:.1}%", r.wasted_percent())
            } else {
                "-".into()
            },
            thousands(r.insert_failed),
            thousands(r.false_negatives),
        ]);
        t.row(cells);
    }
    doc.table(&t);
    doc.note(&format!(
        "ε: measured on {} never-inserted keys. optimal = log2(1/ε), the bits/item of an ideal \
         filter with that ε; wasted = bits/item ÷ optimal − 1. FN: keys inserted without error \
         that a lookup later missed.",
        thousands(cfg.fpr_keys)
    ));
}

fn print_mixed(doc: &mut Doc, cfg: &mixed::Config, mix: &keys::Mix, rows: &[mixed::Row]) {
    doc.heading(&format!(
        "Mixed workload {} (% reads/inserts/removes), {}% of reads present, prefill {}% of items, \
         {} ops per sample over all threads; median of {}",
        mix.label(),
        mix.read_hits,
        cfg.prefill_percent,
        thousands(cfg.ops),
        cfg.samples
    ));
    let threads = &cfg.threads;
    let mut header: Vec<String> = threads.iter().map(|t| format!("{t}T Mops/s")).collect();
    header.insert(0, "peer".into());
    let (lo, hi) = (threads[0], threads[threads.len() - 1]);
    if threads.len() > 1 {
        header.push(format!("{hi}T/{lo}T"));
    }
    header.extend(["FN", "FPR", "insert fails"].map(String::from));
    let mut t = Table::new(header);
    let mut names: Vec<&str> = Vec::new();
    for r in rows {
        if !names.contains(&r.peer) {
            names.push(r.peer);
        }
    }
    for name in names {
        let mine: Vec<&mixed::Row> = rows.iter().filter(|r| r.peer == name).collect();
        let at = |n: usize| mine.iter().find(|r| r.threads == n);
        let mut cells = vec![name.to_string()];
        cells.extend(threads.iter().map(|&n| match at(n) {
            Some(mixed::Row {
                ops_per_sec: Some(v),
                ..
            }) => mops(*v),
            Some(r) => na(r.not_applicable.unwrap_or("?")),
            None => "-".into(),
        }));
        if threads.len() > 1 {
            let ratio = match (
                at(lo).and_then(|r| r.ops_per_sec),
                at(hi).and_then(|r| r.ops_per_sec),
            ) {
                (Some(a), Some(b)) => format!("{:.2}", b / a),
                _ => "n/a".into(),
            };
            cells.push(ratio);
        }
        let ran: Vec<&&mixed::Row> = mine.iter().filter(|r| r.ops_per_sec.is_some()).collect();
        if ran.is_empty() {
            cells.extend(["n/a", "n/a", "n/a"].map(String::from));
        } else {
            let fneg: usize = ran.iter().map(|r| r.false_negatives).sum();
            let fpos: u64 = ran.iter().map(|r| r.false_positives).sum();
            let neg: u64 = ran.iter().map(|r| r.negative_lookups).sum();
            let fails: usize = ran.iter().map(|r| r.insert_failed).sum();
            cells.extend([
                thousands(fneg),
                percent(fpos as f64 / neg.max(1) as f64),
                thousands(fails),
            ]);
        }
        t.row(cells);
    }
    doc.table(&t);
    doc.note(
        "Aggregate throughput: all threads' operations ÷ (last finish − first start). FN and FPR \
         are summed over all thread counts and samples.",
    );
}

/// Ours ÷ peer for the figures people quote: > 1 means ours is faster.
fn print_headline(
    doc: &mut Doc,
    peers: &[&'static PeerDef],
    reference: &[reference::Row],
    mixed: &[(String, Vec<mixed::Row>)],
) {
    if peers.len() < 2 {
        return;
    }
    let ours = peers[0].name;
    let mut header = vec!["peer".to_string()];
    if !reference.is_empty() {
        header.extend(["adds".into(), "finds 0%".into(), "finds 100%".into()]);
    }
    // Per mix, the lowest and highest thread count.
    let mut columns = Vec::new();
    for (label, rows) in mixed {
        let mut counts: Vec<usize> = rows.iter().map(|r| r.threads).collect();
        counts.sort_unstable();
        counts.dedup();
        let (lo, hi) = (counts[0], counts[counts.len() - 1]);
        for t in if lo == hi { vec![lo] } else { vec![lo, hi] } {
            header.push(format!("{label} {t}T"));
            columns.push((rows, t));
        }
    }
    doc.heading("Headline: ours ÷ peer (> 1: ours is faster; medians from the tables above)");
    let mut t = Table::new(header);
    let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.2}×", a / b),
        _ => "n/a".into(),
    };
    let ref_of = |name: &str| reference.iter().find(|r| r.peer == name);
    for p in &peers[1..] {
        let mut cells = vec![p.name.to_string()];
        if !reference.is_empty() {
            let (o, r) = (ref_of(ours), ref_of(p.name));
            let adds = |x: Option<&reference::Row>| x.and_then(|x| x.adds_per_sec);
            let find = |x: Option<&reference::Row>, i: usize| x.map(|x| x.finds_per_sec[i]);
            cells.push(ratio(adds(o), adds(r)));
            cells.push(ratio(find(o, 0), find(r, 0)));
            cells.push(ratio(find(o, 4), find(r, 4)));
        }
        for (rows, threads) in &columns {
            let get = |name: &str| {
                rows.iter()
                    .find(|r| r.peer == name && r.threads == *threads)
                    .and_then(|r| r.ops_per_sec)
            };
            cells.push(ratio(get(ours), get(p.name)));
        }
        t.row(cells);
    }
    doc.table(&t);
    println!();
}

/// `1234567` → `1,234,567`.
fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The sizing as recorded in the JSON output.
#[derive(serde::Serialize)]
struct SizingRecord {
    items: usize,
    load: f64,
    fingerprint_bits: u32,
    slots: usize,
    fpr_bound: f64,
    bits_per_item: f64,
    seed: u64,
}

impl From<&Sizing> for SizingRecord {
    fn from(s: &Sizing) -> Self {
        Self {
            items: s.items,
            load: s.load,
            fingerprint_bits: s.fp_bits,
            slots: s.slots,
            fpr_bound: s.target_fpr,
            bits_per_item: s.bits_per_item,
            seed: s.seed,
        }
    }
}
