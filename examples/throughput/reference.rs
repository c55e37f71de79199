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

/// The keys of `probes`, in order: what the timed loop looks up.
fn keys_of(probes: &[Probe]) -> Vec<u64> {
    probes.iter().map(|probe| probe.key).collect()
}

/// Lookups per second over `keys` (the keys of `probes`), timed as the reference times
/// them: a loop that only counts the keys found. Each answer is then booked (false
/// positives, misses) in an untimed pass over `probes`, and the two passes must agree on
/// how many keys were found. Booking inside the timed loop cost our lookups a fifth of
/// their rate at 1 M items, which the reference's loop does not pay.
fn timed_lookups(
    f: &dyn Filter,
    peer: &str,
    probes: &[Probe],
    keys: &[u64],
    tally: &mut Tally,
) -> f64 {
    debug_assert_eq!(keys.len(), probes.len());
    let t = Instant::now();
    let found = f.count_found(keys);
    let rate = keys.len() as f64 / t.elapsed().as_secs_f64();
    let (false_pos, missed) = (tally.false_pos, tally.missed.keys().len());
    f.probe_all(probes, tally);
    let present = probes.iter().filter(|probe| probe.present).count();
    let booked = present - (tally.missed.keys().len() - missed)
        + usize::try_from(tally.false_pos - false_pos).expect("counts fit in usize");
    assert_eq!(
        found, booked,
        "{peer}: the timed lookups found {found} keys, the booked ones {booked}"
    );
    rate
}

/// One line of the reference report.
#[derive(Serialize, Debug)]
pub struct Row {
    pub peer: &'static str,
    /// Inserts per second over the whole fill (`None`: the filter cannot insert).
    pub adds_per_sec: Option<f64>,
    /// For a static filter: keys per second of its one-shot build, in place of adds.
    pub build_per_sec: Option<f64>,
    /// Lookups per second at each of [`RATES`] (median over rounds).
    pub finds_per_sec: [f64; 5],
    /// Measured false-positive rate on `fpr_keys` never-inserted keys.
    pub fpr: f64,
    pub bits_per_item: f64,
    /// Inserts refused (the most in any round).
    pub insert_failed: usize,
    /// Keys inserted without error and later reported absent, in the worst round (must be 0).
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

/// A peer's measurements, kept across rounds.
struct Subject {
    def: &'static PeerDef,
    adds: Vec<f64>,
    builds: Vec<f64>,
    finds: [Vec<f64>; 5],
    /// Per curve point: (inserts/s, lookups/s) of each round.
    curve: Vec<Vec<(f64, f64)>>,
    insert_failed: usize,
    false_negatives: usize,
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

    // Every key the timed loops read is generated here, before the first timer starts
    // (each lookup batch's plain key list is copied out of its probes before its timer).
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
            adds: Vec::new(),
            builds: Vec::new(),
            finds: Default::default(),
            curve: vec![Vec::new(); cfg.segments],
            insert_failed: 0,
            false_negatives: 0,
        })
        .collect();

    // Each round fills fresh filters (a fill cannot be repeated on a full filter). Within a
    // round the peers take turns segment by segment, so slow drift of a shared machine hits
    // them all alike; the medians over rounds drop the outliers.
    let mut filters = Vec::new();
    for _round in 0..cfg.samples {
        // Free the last round's filters first: at 64 M items two sets would double the RSS.
        filters.clear();
        filters = peers.iter().map(|def| (def.build)(sizing)).collect();
        let mut tallies: Vec<Tally> = peers.iter().map(|_| Tally::default()).collect();
        let mut fill_secs = vec![0.0; peers.len()];
        for (k, seg) in bounds.windows(2).enumerate() {
            let mut insert_secs = vec![f64::NAN; peers.len()];
            for (i, f) in filters.iter_mut().enumerate() {
                if f.caps().insert {
                    let t = Instant::now();
                    f.insert_all(&keys[seg[0]..seg[1]], &mut tallies[i]);
                    insert_secs[i] = t.elapsed().as_secs_f64();
                    fill_secs[i] += insert_secs[i];
                }
                bar.inc(1);
            }
            let curve_keys = keys_of(&curve_probes[k]);
            for (i, f) in filters.iter().enumerate() {
                if f.caps().insert {
                    let rate = timed_lookups(
                        f.as_ref(),
                        peers[i].name,
                        &curve_probes[k],
                        &curve_keys,
                        &mut tallies[i],
                    );
                    subjects[i].curve[k].push(((seg[1] - seg[0]) as f64 / insert_secs[i], rate));
                }
                bar.inc(1);
            }
        }
        for (i, f) in filters.iter_mut().enumerate() {
            if f.caps().insert {
                subjects[i].adds.push(cfg.items as f64 / fill_secs[i]);
            } else {
                // A static filter is built once from every key: that is its "fill".
                let t = Instant::now();
                let ok = f.build(&keys);
                subjects[i]
                    .builds
                    .push(cfg.items as f64 / t.elapsed().as_secs_f64());
                if !ok {
                    tallies[i].insert_failed.extend_from_slice(&keys);
                }
            }
        }
        // Lookups at the five positive rates, peers taking turns.
        for (r, probes) in rate_probes.iter().enumerate() {
            let rate_keys = keys_of(probes);
            for (i, f) in filters.iter().enumerate() {
                let rate = timed_lookups(
                    f.as_ref(),
                    peers[i].name,
                    probes,
                    &rate_keys,
                    &mut tallies[i],
                );
                subjects[i].finds[r].push(rate);
                bar.inc(1);
            }
        }
        // Untimed: every key inserted without error must still be found.
        for (i, f) in filters.iter().enumerate() {
            for chunk in keys.chunks(CHUNK) {
                let probes: Vec<Probe> = chunk
                    .iter()
                    .map(|&key| Probe { key, present: true })
                    .collect();
                f.probe_all(&probes, &mut tallies[i]);
            }
        }
        for (s, tally) in subjects.iter_mut().zip(&tallies) {
            let (failed, lost) = failures(tally);
            s.insert_failed = s.insert_failed.max(failed);
            s.false_negatives = s.false_negatives.max(lost);
        }
    }

    let mut curve = Vec::new();
    let rows = subjects
        .into_iter()
        .zip(&filters)
        .map(|(s, f)| {
            for (k, points) in s.curve.iter().enumerate() {
                if points.is_empty() {
                    continue;
                }
                let ins: Vec<f64> = points.iter().map(|p| p.0).collect();
                let look: Vec<f64> = points.iter().map(|p| p.1).collect();
                curve.push(CurvePoint {
                    peer: s.def.name,
                    load: sizing.load * bounds[k + 1] as f64 / cfg.items as f64,
                    inserts_per_sec: median(&ins),
                    lookups_per_sec: median(&look),
                });
            }
            // ε on a large set of keys no filter has seen (last round's filters).
            let mut fpr = Tally::default();
            for start in (0..cfg.fpr_keys).step_by(CHUNK) {
                let probes: Vec<Probe> = (start..(start + CHUNK).min(cfg.fpr_keys))
                    .map(|i| Probe {
                        key: space.key(Region::FprProbe, i as u64),
                        present: false,
                    })
                    .collect();
                f.probe_all(&probes, &mut fpr);
            }
            bar.inc(1);
            let held = cfg.items - s.insert_failed;
            Row {
                peer: s.def.name,
                adds_per_sec: (!s.adds.is_empty()).then(|| median(&s.adds)),
                build_per_sec: (!s.builds.is_empty()).then(|| median(&s.builds)),
                finds_per_sec: std::array::from_fn(|r| median(&s.finds[r])),
                fpr: fpr.false_pos as f64 / fpr.negatives.max(1) as f64,
                bits_per_item: 8.0 * f.memory_bytes() as f64 / held.max(1) as f64,
                insert_failed: s.insert_failed,
                false_negatives: s.false_negatives,
            }
        })
        .collect();
    (rows, curve)
}

/// (keys whose insert failed, distinct keys inserted without error that a lookup missed).
pub fn failures(tally: &Tally) -> (usize, usize) {
    let failed: HashSet<u64> = tally.insert_failed.iter().copied().collect();
    let lost: HashSet<u64> = tally
        .missed
        .keys()
        .iter()
        .copied()
        .filter(|k| !failed.contains(k))
        .collect();
    (failed.len(), lost.len())
}

/// Progress units [`run`] reports, for sizing the bar.
pub fn work_units(cfg: &Config, peers: usize) -> u64 {
    (peers * (cfg.samples * (2 * cfg.segments + RATES.len()) + 1)) as u64
}
