//! Throughput of `concurrent-cuckoo-filter` against the filters people would otherwise pick.
//!
//! ```text
//! cargo run --release --example throughput                 # the headline comparison
//! cargo run --release --example throughput -- --peers all  # and the growable filters
//! cargo run --release --example throughput -- --help       # every option
//! cargo run --release --example throughput -- --reference --items 64M --peers ours,cuckoofilter
//! cargo run --release --example throughput -- --mixed --threads 1,2 --json out.jsonl --plot out.svg
//! cargo run --release --example throughput -- --plot-from out.jsonl --plot out.svg  # no run
//! ```
//!
//! Layout:
//! - `cli`: the options; `keys`: keys and operation sequences, all generated before timing;
//! - `peers/`: one adapter file per filter, behind two small traits;
//! - `reference`: the cuckoo filter paper's bulk insert-and-query report (single thread);
//! - `mixed`: the multi-threaded mixed workload;
//! - `tables`, `report`, `plot`: what is printed, the table/Markdown/JSON plumbing, the SVG;
//! - `replot`: the SVG drawn again from a JSON-lines file, nothing re-run;
//! - `system`: CPU, build flags, crate versions and pinning, stated by every report.

mod cli;
mod count;
mod keys;
mod mixed;
mod peers;
mod plot;
mod reference;
mod replot;
mod report;
mod system;
mod tables;

use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};

use crate::peers::{BEYOND_HEADLINE, CATALOG, NAMED_ONLY, PeerDef, Sizing};
use crate::report::{Doc, JsonSink, percent};
use crate::tables::{print_headline, print_mixed, print_reference, thousands};

fn main() -> ExitCode {
    let args = cli::Args::parse();
    if let Err(e) = args.validate() {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    if let (Some(from), Some(to)) = (&args.plot_from, &args.plot) {
        return match replot::draw(from, to) {
            Ok(()) => {
                println!("Plot of {} written to {}", from.display(), to.display());
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("error: {}: {e}", from.display());
                ExitCode::FAILURE
            }
        };
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
    // Read the machine before pinning: pinning narrows what this thread may see. It is
    // pinned only if there are cores to pin to.
    let cores = core_affinity::get_core_ids().unwrap_or_default();
    let sys = system::System::probe(args.pin && !cores.is_empty());
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
            segments: args.curve_points as usize,
            curve_lookups: args.curve_lookups,
            seed: args.seed,
        };
        let bar = progress(reference::work_units(&cfg, peers.len()), "reference");
        (ref_rows, curve) = reference::run(&cfg, &sizing, peers, &bar);
        bar.finish_and_clear();
        eprintln!("reference done in {:.1} s", bar.elapsed().as_secs_f64());
        print_reference(&mut doc, &cfg, &ref_rows, sizing.target_fpr);
        ok &= ref_rows
            .iter()
            .filter(|r| peers::is_ours(r.peer))
            .all(|r| r.false_negatives == 0);
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
            eprintln!(
                "mixed {} done in {:.1} s",
                mix.label(),
                bar.elapsed().as_secs_f64()
            );
            print_mixed(&mut doc, &cfg, &mix, &rows);
            ok &= rows
                .iter()
                .filter(|r| peers::is_ours(r.peer))
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
        let points: Vec<(String, Vec<plot::ThreadPoint>)> = mixed_runs
            .iter()
            .map(|(label, rows)| {
                let points = rows
                    .iter()
                    .map(|r| plot::ThreadPoint {
                        peer: r.peer,
                        threads: r.threads,
                        ops_per_sec: r.ops_per_sec,
                    })
                    .collect();
                (label.clone(), points)
            })
            .collect();
        let input = plot::Input {
            peers: &names,
            curve: &curve,
            mixed: &points,
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
    let mut s = sys.describe(args.run_reference(), mixed_threads);
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

/// The plot's notes for this run.
fn plot_notes(args: &cli::Args, sys: &system::System) -> Vec<String> {
    let features: Vec<String> = sys.target_features.iter().map(|f| f.to_string()).collect();
    plot::notes(&plot::Context {
        cpu: &sys.cpu,
        cores: sys.cores,
        pinned: sys.pinned,
        rustflags: &sys.rustflags,
        target_features: &features,
        items: args.items,
        fingerprint_bits: args.fingerprint,
        slots: args.slots,
        load: args.load,
        samples: Some(args.samples),
    })
}

/// `ours` first (ratios are against it), then the requested peers in catalog order.
fn select_peers(names: &[String]) -> Result<Vec<&'static PeerDef>, String> {
    let all = names.iter().any(|n| n == "all");
    let headline = names.iter().any(|n| n == "headline");
    let known = || CATALOG.iter().chain(NAMED_ONLY);
    for n in names {
        if n != "all" && n != "headline" && !known().any(|p| p.name == n) {
            let known: Vec<&str> = known().map(|p| p.name).collect();
            return Err(format!(
                "unknown peer {n:?}; known: headline, all, {}",
                known.join(", ")
            ));
        }
    }
    let named = |p: &PeerDef| names.iter().any(|n| n == p.name);
    let in_headline = |p: &PeerDef| headline && !BEYOND_HEADLINE.contains(&p.name);
    Ok(CATALOG
        .iter()
        .enumerate()
        .filter(|(i, p)| *i == 0 || all || in_headline(p) || named(p))
        .map(|(_, p)| p)
        .chain(NAMED_ONLY.iter().filter(|p| named(p)))
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
    // No steady tick: its thread would wake on benchmark thread 0's core (it inherits the
    // pinning) during the timed runs. Each step redraws the bar between them instead.
    bar
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
