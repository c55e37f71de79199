//! The cuckoo filter paper's reference benchmark (efficient/cuckoofilter's
//! `bulk-insert-and-query`): fill each filter from empty to the target load, then look up
//! keys of which 0, 25, 50, 75 and 100% are present. The fill is timed in segments, with a
//! lookup batch after each, which also gives throughput against load factor.

use std::collections::HashSet;
use std::time::Instant;

use indicatif::ProgressBar;
use serde::Serialize;

use crate::keys::{self, KeySpace, Probe, Region};
use crate::peers::{Filter, PeerDef, Sizing, Tally};
use crate::report::median;

/// The paper's positive rates.
pub const RATES: [f64; 5] = [0.0, 0.25, 0.5, 0.75, 1.0];

/// Lookups per untimed correctness batch: big enough to stay in the monomorphized loop,
/// small enough that the probe buffer is no memory burden at 64 M items.
const CHUNK: usize = 1 << 20;

pub struct Config {
    pub items: usize,
    pub lookups: usize,
    pub samples: usize,
    pub fpr_keys: usize,
    pub segments: usize,
    pub curve_lookups: usize,
    pub seed: u64,
}

/// One line of the reference report.
#[derive(Serialize, Debug)]
pub struct Row {
    pub peer: &'static str,
    /// Inserts per second over the whole fill (`None`: the filter cannot insert).
    pub adds_per_sec: Option<f64>,
    /// For a static filter: keys per second of its one-shot build, in place of adds.
    pub build_per_sec: Option<f64>,
    /// Lookups per second at each of [`RATES`] (median over samples).
    pub finds_per_sec: [f64; 5],
    /// Measured false-positive rate on `fpr_keys` never-inserted keys.
    pub fpr: f64,
    pub bits_per_item: f64,
    pub insert_failed: usize,
    /// Keys inserted without error and later reported absent (must be 0).
    pub false_negatives: usize,
}

impl Row {
    /// log2(1/ε): the bits per item an ideal filter with this ε would need.
    pub fn optimal_bits(&self) -> f64 {
        (1.0 / self.fpr).log2()
    }

    /// How much more space than the ideal, in percent.
    pub fn wasted_percent(&self) -> f64 {
        100.0 * (self.bits_per_item / self.optimal_bits() - 1.0)
    }
}

/// One point of throughput against load factor.
#[derive(Serialize, Debug, Clone)]
pub struct CurvePoint {
    pub peer: &'static str,
    /// Items held ÷ our filter's slots at this point (the same item count for every peer).
    pub load: f64,
    /// Inserts per second over the segment that ended here.
    pub inserts_per_sec: f64,
    /// Lookups per second (half present, half absent) at this point.
    pub lookups_per_sec: f64,
}

struct Subject {
    def: &'static PeerDef,
    filter: Box<dyn Filter>,
    fill_secs: f64,
    build_secs: Option<f64>,
    finds: [Vec<f64>; 5],
    tally: Tally,
}

pub fn run(
    cfg: &Config,
    sizing: &Sizing,
    peers: &[&'static PeerDef],
    bar: &ProgressBar,
) -> (Vec<Row>, Vec<CurvePoint>) {
    let space = KeySpace::new(cfg.seed);
    let mut rng = fastrand::Rng::with_seed(cfg.seed);
    let keys = space.keys(Region::Inserted(0), cfg.items);
    let mut next_absent = 0;

    // Everything the timed loops read is generated here, before the first timer starts.
    let bounds: Vec<usize> = (0..=cfg.segments)
        .map(|k| cfg.items * k / cfg.segments)
        .collect();
    let curve_probes: Vec<Vec<Probe>> = bounds[1..]
        .iter()
        .map(|&end| {
            let n = cfg.curve_lookups;
            keys::probes(&space, &mut rng, &keys[..end], 0.5, n, &mut next_absent)
        })
        .collect();
    let rate_probes: Vec<Vec<Probe>> = RATES
        .iter()
        .map(|&r| keys::probes(&space, &mut rng, &keys, r, cfg.lookups, &mut next_absent))
        .collect();

    let mut subjects: Vec<Subject> = peers
        .iter()
        .map(|def| Subject {
            def,
            filter: (def.build)(sizing),
            fill_secs: 0.0,
            build_secs: None,
            finds: Default::default(),
            tally: Tally::default(),
        })
        .collect();

    // Fill, segment by segment; peers take turns so slow drift in the machine hits all alike.
    let mut curve = Vec::new();
    for (k, seg) in bounds.windows(2).enumerate() {
        let load = sizing.load * seg[1] as f64 / cfg.items as f64;
        let mut insert_secs = vec![f64::NAN; subjects.len()];
        for (s, secs) in subjects.iter_mut().zip(&mut insert_secs) {
            if s.filter.caps().insert {
                let t = Instant::now();
                s.filter.insert_all(&keys[seg[0]..seg[1]], &mut s.tally);
                *secs = t.elapsed().as_secs_f64();
                s.fill_secs += *secs;
            }
            bar.inc(1);
        }
        for (s, &ins) in subjects.iter_mut().zip(&insert_secs) {
            if s.filter.caps().insert {
                let t = Instant::now();
                s.filter.probe_all(&curve_probes[k], &mut s.tally);
                let secs = t.elapsed().as_secs_f64();
                curve.push(CurvePoint {
                    peer: s.def.name,
                    load,
                    inserts_per_sec: (seg[1] - seg[0]) as f64 / ins,
                    lookups_per_sec: curve_probes[k].len() as f64 / secs,
                });
            }
            bar.inc(1);
        }
    }
    // Static filters are built once from every key: that is their "fill".
    for s in subjects.iter_mut().filter(|s| !s.filter.caps().insert) {
        let t = Instant::now();
        let ok = s.filter.build(&keys);
        s.build_secs = Some(t.elapsed().as_secs_f64());
        if !ok {
            s.tally.insert_failed.extend_from_slice(&keys);
        }
    }

    // Lookups at the five positive rates, `samples` times, peers taking turns.
    for sample in 0..cfg.samples {
        for (r, probes) in rate_probes.iter().enumerate() {
            for s in subjects.iter_mut() {
                // Counts come from the first sample; later samples repeat the same lookups.
                let mut scratch = Tally::default();
                let tally = if sample == 0 { &mut s.tally } else { &mut scratch };
                let t = Instant::now();
                s.filter.probe_all(probes, tally);
                s.finds[r].push(probes.len() as f64 / t.elapsed().as_secs_f64());
                bar.inc(1);
            }
        }
    }

    // Untimed correctness passes: every inserted key must still be found, and ε is measured
    // on a large set of keys no filter has seen.
    let rows = subjects
        .into_iter()
        .map(|mut s| {
            for chunk in keys.chunks(CHUNK) {
                let probes: Vec<Probe> = chunk
                    .iter()
                    .map(|&key| Probe { key, present: true })
                    .collect();
                s.filter.probe_all(&probes, &mut s.tally);
            }
            let mut fpr = Tally::default();
            for start in (0..cfg.fpr_keys).step_by(CHUNK) {
                let probes: Vec<Probe> = (start..(start + CHUNK).min(cfg.fpr_keys))
                    .map(|i| Probe {
                        key: space.key(Region::FprProbe, i as u64),
                        present: false,
                    })
                    .collect();
                s.filter.probe_all(&probes, &mut fpr);
            }
            bar.inc(1);
            let failed: HashSet<u64> = s.tally.insert_failed.iter().copied().collect();
            let lost: HashSet<u64> = s
                .tally
                .missed
                .iter()
                .copied()
                .filter(|k| !failed.contains(k))
                .collect();
            let held = cfg.items - failed.len();
            Row {
                peer: s.def.name,
                adds_per_sec: s
                    .build_secs
                    .is_none()
                    .then(|| cfg.items as f64 / s.fill_secs),
                build_per_sec: s.build_secs.map(|t| cfg.items as f64 / t),
                finds_per_sec: std::array::from_fn(|r| median(&s.finds[r])),
                fpr: fpr.false_pos as f64 / fpr.negatives.max(1) as f64,
                bits_per_item: 8.0 * s.filter.memory_bytes() as f64 / held.max(1) as f64,
                insert_failed: failed.len(),
                false_negatives: lost.len(),
            }
        })
        .collect();
    (rows, curve)
}

/// Progress units [`run`] reports, for sizing the bar.
pub fn work_units(cfg: &Config, peers: usize) -> u64 {
    (peers * (2 * cfg.segments + cfg.samples * RATES.len() + 1)) as u64
}
