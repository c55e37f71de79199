//! Lookups on the table that doubles in place (the engine behind the hidden
//! `DoublingTable`, until the growable filter uses it): grown from a small first
//! capacity, against the same table pre-sized, and against a `CuckooFilter`, each
//! through a method that is not inlined; plus fill times, memory and the FPR.
//!
//! ```text
//! cargo run --release --example doubling_lookups -- [items, 8000000] [first capacity, 1000]
//! ```
//!
//! One pinned thread, 2·10^6 probes per kind, median of 7 rounds. Once the engine is
//! behind `GrowableCuckooFilter`, `examples/growth.rs` measures all of this and more.

use concurrent_cuckoo_filter::{CuckooFilter, DoublingTable};

use std::hint::black_box;
use std::time::Instant;

fn spread(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

trait Probe {
    fn has(&self, h: u64) -> bool;
}
impl Probe for DoublingTable {
    #[inline(never)]
    fn has(&self, h: u64) -> bool {
        self.contains_hash(h)
    }
}
impl Probe for CuckooFilter {
    #[inline(never)]
    fn has(&self, h: u64) -> bool {
        self.contains_hash(h)
    }
}

fn time(p: &dyn Probe, keys: &[u64]) -> f64 {
    let t = Instant::now();
    let mut hits = 0;
    for &k in keys {
        hits += p.has(black_box(k)) as usize;
    }
    black_box(hits);
    t.elapsed().as_nanos() as f64 / keys.len() as f64
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .map_or(8_000_000, |s| s.parse().unwrap());
    let start: usize = std::env::args().nth(2).map_or(1000, |s| s.parse().unwrap());
    core_affinity::set_for_current(core_affinity::CoreId { id: 1 });
    let t = Instant::now();
    let grown = DoublingTable::<u16, 4>::with_capacity(start);
    let mut inserted = 0;
    for i in 0..n as u64 {
        if grown.insert_hash(spread(i)).is_err() {
            break;
        }
        inserted += 1;
    }
    let fill_grown = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let pre = DoublingTable::<u16, 4>::with_capacity(n);
    for i in 0..n as u64 {
        pre.insert_hash(spread(i)).unwrap();
    }
    let fill_pre = t.elapsed().as_secs_f64();
    let core = CuckooFilter::with_capacity(n);
    for i in 0..n as u64 {
        core.insert_hash(spread(i)).unwrap();
    }
    println!(
        "grown: inserted {inserted}/{n}, era {}, load {:.3}, mem {} B; presized era {} mem {} B; core mem {} B",
        grown.era(),
        grown.len() as f64 / grown.capacity() as f64,
        grown.memory_usage(),
        pre.era(),
        pre.memory_usage(),
        core.memory_usage()
    );
    println!(
        "fill: grown {fill_grown:.2}s presized {fill_pre:.2}s ratio {:.2}",
        fill_grown / fill_pre
    );
    let mut rng = fastrand::Rng::with_seed(3);
    let m = 2_000_000;
    let pos: Vec<u64> = (0..m)
        .map(|_| spread(rng.u64(0..inserted as u64)))
        .collect();
    let neg: Vec<u64> = (0..m)
        .map(|_| spread(rng.u64(n as u64 * 4..n as u64 * 8)))
        .collect();
    let mut rows = vec![vec![]; 6];
    for _ in 0..7 {
        rows[0].push(time(&grown, &pos));
        rows[1].push(time(&pre, &pos));
        rows[2].push(time(&core, &pos));
        rows[3].push(time(&grown, &neg));
        rows[4].push(time(&pre, &neg));
        rows[5].push(time(&core, &neg));
    }
    let med = |v: &mut Vec<f64>| {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        v[v.len() / 2]
    };
    let m: Vec<f64> = rows.iter_mut().map(med).collect();
    println!(
        "positive ns: grown {:.1} presized {:.1} core {:.1} | grown/pre {:.2} grown/core {:.2} pre/core {:.2}",
        m[0],
        m[1],
        m[2],
        m[0] / m[1],
        m[0] / m[2],
        m[1] / m[2]
    );
    println!(
        "negative ns: grown {:.1} presized {:.1} core {:.1} | grown/pre {:.2} grown/core {:.2} pre/core {:.2}",
        m[3],
        m[4],
        m[5],
        m[3] / m[4],
        m[3] / m[5],
        m[4] / m[5]
    );
    let fp = neg.iter().filter(|&&h| grown.contains_hash(h)).count();
    println!(
        "grown FPR {:.4}% bound {:.4}%",
        fp as f64 / neg.len() as f64 * 100.0,
        grown.false_positive_bound() * 100.0
    );
}
