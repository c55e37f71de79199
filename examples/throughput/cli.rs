//! Command-line options.

use std::path::PathBuf;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{ArgAction, Parser};

use crate::count::parse_count;
use crate::keys::Mix;

/// Throughput of concurrent-cuckoo-filter against its peers, on this machine.
///
/// With no options it runs the cuckoo filter paper's reference benchmark (fill to --load,
/// then lookups at 0/25/50/75/100% positive) and a 1- and 2-thread mixed workload, for our
/// filter and the filters a user would pick instead (`--peers headline`), in about a minute
/// on 2 cores. `--peers all` adds exclusive access and the growable filters.
#[derive(Parser, Debug)]
#[command(name = "throughput", version, about, long_about)]
pub struct Args {
    /// Items every filter is sized to hold; the reference run inserts exactly this many.
    /// Accepts suffixes: 500K, 1M, 64M.
    #[arg(long, default_value = "1M", value_parser = parse_count)]
    pub items: usize,

    /// Load factor (items / slots) of our filter once it holds --items.
    #[arg(long, default_value_t = 0.95, value_parser = parse_load)]
    pub load: f64,

    /// Fingerprint bits of our filter.
    #[arg(long, default_value_t = 16, value_parser = PossibleValuesParser::new(["8", "16", "32"]).map(|s| s.parse::<u32>().unwrap()))]
    pub fingerprint: u32,

    /// Slots per bucket of our filter.
    #[arg(long, default_value_t = 4, value_parser = PossibleValuesParser::new(["4", "8"]).map(|s| s.parse::<usize>().unwrap()))]
    pub slots: usize,

    /// Run only the paper-style reference report (default: reference and mixed).
    #[arg(long, conflicts_with = "mixed")]
    pub reference: bool,

    /// Run only the mixed workload (default: reference and mixed).
    #[arg(long)]
    pub mixed: bool,

    /// Mixed workload: percent of operations that are lookups.
    #[arg(long, default_value_t = 90)]
    pub reads: u32,

    /// Mixed workload: percent of operations that insert a new key.
    #[arg(long, default_value_t = 5)]
    pub inserts: u32,

    /// Mixed workload: percent of operations that remove a present key.
    #[arg(long, default_value_t = 5)]
    pub removes: u32,

    /// Mixed workload: percent of lookups that ask for a present key.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(0..=100))]
    pub read_hits: u32,

    /// Mixed workload: percent of --items inserted before timing starts.
    #[arg(long, default_value_t = 80, value_parser = clap::value_parser!(u32).range(0..=100))]
    pub prefill: u32,

    /// Mixed workload: operations per sample, summed over all threads.
    #[arg(long, default_value = "500K", value_parser = parse_count)]
    pub ops: usize,

    /// When --removes > 0, skip the second mixed run with removes turned into reads (the one
    /// filters without delete, such as Bloom filters, can take part in).
    #[arg(long)]
    pub no_remove_free_mix: bool,

    /// Thread counts for the mixed workload (more than the cores measures the scheduler).
    #[arg(long, value_delimiter = ',', default_value = "1,2")]
    pub threads: Vec<usize>,

    /// Pin thread i to core i mod cores (core_affinity). `--pin false` to let the OS choose.
    #[arg(long, default_value_t = true, action = ArgAction::Set)]
    pub pin: bool,

    /// Seed for keys, operation sequences and seeded hashers.
    #[arg(long, default_value_t = 0x5eed)]
    pub seed: u64,

    /// Peers to run, comma-separated: "headline" (the filters a user would pick instead of
    /// ours), "all" (also `ours-owned`, `ours-growable` and `scalable-grown`; every peer but
    /// `ours-owned-fold`, which runs only when named), or names. `ours` always runs: ratios
    /// are against it.
    #[arg(long, value_delimiter = ',', default_value = "headline")]
    pub peers: Vec<String>,

    /// Samples per measurement (median reported); peers alternate within each sample.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..))]
    pub samples: u64,

    /// Reference run: lookups per positive rate (default: min(--items, 10M)).
    #[arg(long, value_parser = parse_count)]
    pub lookups: Option<usize>,

    /// Never-inserted keys used to measure each filter's false-positive rate.
    #[arg(long, default_value = "10M", value_parser = parse_count)]
    pub fpr_keys: usize,

    /// Reference fill: equal segments timed separately, each followed by a lookup batch;
    /// one throughput-vs-load point each.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..=100))]
    pub curve_points: u64,

    /// Lookups measured at each curve point (half present, half absent).
    #[arg(long, default_value = "50K", value_parser = parse_count)]
    pub curve_lookups: usize,

    /// Also write every result as JSON lines to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,

    /// Also write the report's tables as GitHub Markdown to this file (for the README).
    #[arg(long)]
    pub markdown: Option<PathBuf>,

    /// Also draw throughput vs load factor and vs threads to this SVG file.
    #[arg(long)]
    pub plot: Option<PathBuf>,

    /// Run nothing: draw --plot from this JSON-lines file, as --json wrote it.
    #[arg(long, value_name = "JSONL", requires = "plot")]
    pub plot_from: Option<PathBuf>,
}

impl Args {
    pub fn run_reference(&self) -> bool {
        self.reference || !self.mixed
    }

    pub fn run_mixed(&self) -> bool {
        self.mixed || !self.reference
    }

    pub fn lookups(&self) -> usize {
        self.lookups.unwrap_or(self.items.min(10_000_000))
    }

    /// The mixes to run: the one asked for and, if it removes, the same without removes.
    pub fn mixes(&self) -> Vec<Mix> {
        let main = Mix {
            reads: self.reads,
            inserts: self.inserts,
            removes: self.removes,
            read_hits: self.read_hits,
        };
        let mut mixes = vec![main];
        if self.removes > 0 && !self.no_remove_free_mix {
            mixes.push(Mix {
                reads: self.reads + self.removes,
                removes: 0,
                ..main
            });
        }
        mixes
    }

    /// Checks what clap cannot express.
    pub fn validate(&self) -> Result<(), String> {
        if self.reads + self.inserts + self.removes != 100 {
            return Err(format!(
                "--reads + --inserts + --removes must be 100, got {}",
                self.reads + self.inserts + self.removes
            ));
        }
        if self.items == 0 || self.ops == 0 {
            return Err("--items and --ops must be positive".into());
        }
        if self.threads.is_empty() || self.threads.contains(&0) {
            return Err("--threads needs positive thread counts".into());
        }
        if let Some(p) = &self.plot
            && p.extension().is_some_and(|e| e != "svg")
        {
            return Err(format!(
                "--plot writes SVG only ({}); convert with e.g. `rsvg-convert -o out.png plot.svg`",
                p.display()
            ));
        }
        // A mix with more inserts than removes grows the filter every sample; beyond
        // --items it would overfill every filter and measure failures, not speed.
        let room = self.items as f64 * (1.0 - f64::from(self.prefill) / 100.0);
        for mix in self.mixes().iter().filter(|_| self.run_mixed()) {
            let net_inserts = mix.inserts.saturating_sub(mix.removes);
            let growth = self.samples as f64 * self.ops as f64 * f64::from(net_inserts) / 100.0;
            if growth > room {
                return Err(format!(
                    "mix {} would add {growth:.0} keys but only {room:.0} fit beside the \
                     prefill; lower --ops, --samples, --inserts or --prefill",
                    mix.label()
                ));
            }
        }
        Ok(())
    }
}

fn parse_load(s: &str) -> Result<f64, String> {
    let v: f64 = s.parse().map_err(|_| format!("not a number: {s:?}"))?;
    if v > 0.0 && v <= 1.0 {
        Ok(v)
    } else {
        Err("load must be in (0, 1]".into())
    }
}
