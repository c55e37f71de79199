//! Keys and operation sequences, all generated before any timing starts.
//!
//! A key is `mix(seed + index)` with a bijective mixer, so distinct indices give distinct
//! keys: every "never inserted" key really is absent, and every false positive counted is a
//! real one. Index ranges are disjoint per role and per thread (see [`Region`]).

use crate::peers::mix64;

/// A lookup whose right answer is known.
#[derive(Clone, Copy, Debug)]
pub struct Probe {
    pub key: u64,
    /// `true`: the key was inserted and not removed, so "absent" would be a false negative.
    /// `false`: the key was never inserted, so "present" is a false positive.
    pub present: bool,
}

/// One operation of a mixed workload.
#[derive(Clone, Copy, Debug)]
pub enum Op {
    Insert(u64),
    /// Always of a key this thread inserted and has not removed yet.
    Remove(u64),
    Read(Probe),
}

/// Where a key's index comes from. Each thread of a mixed run owns one `Inserted` and one
/// `Absent` range, so its own model of what is present stays exact while others write.
#[derive(Clone, Copy, Debug)]
pub enum Region {
    /// Keys that get inserted (by thread `t`; the reference run is thread 0).
    Inserted(u64),
    /// Keys never inserted anywhere, used as negative lookups (by thread `t`).
    Absent(u64),
    /// Keys never inserted, reserved for the dedicated false-positive measurement.
    FprProbe,
}

/// 2^40 indices per range: far more keys than any run can use.
const RANGE_BITS: u32 = 40;

/// Generates distinct keys for one run seed.
#[derive(Clone, Copy, Debug)]
pub struct KeySpace {
    seed: u64,
}

impl KeySpace {
    pub fn new(seed: u64) -> Self {
        Self { seed }
    }

    /// The `i`-th key of `region`.
    #[inline]
    pub fn key(&self, region: Region, i: u64) -> u64 {
        let base = match region {
            Region::Inserted(t) => t << RANGE_BITS,
            Region::Absent(t) => (1 << 63) | (t << RANGE_BITS),
            Region::FprProbe => 1 << 62,
        };
        // Adding the seed and mixing are both bijections on u64: distinct in, distinct out.
        mix64((base + i).wrapping_add(self.seed.wrapping_mul(0x9e37_79b9_7f4a_7c15)))
    }

    /// Keys `0..n` of `region`.
    pub fn keys(&self, region: Region, n: usize) -> Vec<u64> {
        (0..n as u64).map(|i| self.key(region, i)).collect()
    }
}

/// `n` lookups, a fraction `positive` of them of keys drawn (with repetition) from
/// `inserted`, the rest fresh absent keys starting at index `*next_absent`; shuffled.
pub fn probes(
    space: &KeySpace,
    rng: &mut fastrand::Rng,
    inserted: &[u64],
    positive: f64,
    n: usize,
    next_absent: &mut u64,
) -> Vec<Probe> {
    let hits = if inserted.is_empty() {
        0
    } else {
        (positive * n as f64).round() as usize
    };
    let mut out = Vec::with_capacity(n);
    out.extend((0..hits).map(|_| Probe {
        key: inserted[rng.usize(..inserted.len())],
        present: true,
    }));
    out.extend((hits..n).map(|_| {
        let key = space.key(Region::Absent(0), *next_absent);
        *next_absent += 1;
        Probe {
            key,
            present: false,
        }
    }));
    rng.shuffle(&mut out);
    out
}

/// A mixed workload: percentages of reads, inserts and removes (summing to 100) and the
/// percentage of reads that ask for a present key.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub struct Mix {
    pub reads: u32,
    pub inserts: u32,
    pub removes: u32,
    pub read_hits: u32,
}

impl Mix {
    pub fn label(&self) -> String {
        format!("{}/{}/{}", self.reads, self.inserts, self.removes)
    }
}

/// One thread's share of a mixed run: the keys it prefills and its operations, one `Vec` per
/// sample. The samples continue one sequence, so sample `s + 1` starts from the state that
/// sample `s` left behind.
pub struct ThreadPlan {
    pub prefill: Vec<u64>,
    pub samples: Vec<Vec<Op>>,
}

/// Generates thread `t`'s plan by running a model of its own key set: inserts take fresh
/// keys, removes take a random present key, positive reads a random present key, negative
/// reads a fresh absent key.
pub fn thread_plan(
    space: &KeySpace,
    t: u64,
    mix: Mix,
    prefill: usize,
    ops_per_sample: usize,
    samples: usize,
    seed: u64,
) -> ThreadPlan {
    let mut rng = fastrand::Rng::with_seed(seed ^ mix64(t + 1));
    let prefill_keys = space.keys(Region::Inserted(t), prefill);
    let mut present = prefill_keys.clone();
    let mut next_insert = prefill as u64;
    let mut next_absent = 0u64;
    let absent = |n: &mut u64| {
        let key = space.key(Region::Absent(t), *n);
        *n += 1;
        Op::Read(Probe {
            key,
            present: false,
        })
    };
    let samples = (0..samples)
        .map(|_| {
            (0..ops_per_sample)
                .map(|_| {
                    let roll = rng.u32(0..100);
                    if roll < mix.inserts {
                        let key = space.key(Region::Inserted(t), next_insert);
                        next_insert += 1;
                        present.push(key);
                        Op::Insert(key)
                    } else if roll < mix.inserts + mix.removes && !present.is_empty() {
                        Op::Remove(present.swap_remove(rng.usize(..present.len())))
                    } else if rng.u32(0..100) < mix.read_hits && !present.is_empty() {
                        let key = present[rng.usize(..present.len())];
                        Op::Read(Probe { key, present: true })
                    } else {
                        absent(&mut next_absent)
                    }
                })
                .collect()
        })
        .collect();
    ThreadPlan {
        prefill: prefill_keys,
        samples,
    }
}
