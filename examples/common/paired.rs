//! What the programs that time one piece of work two ways share (`call_paths`:
//! inlined against through `dyn`; `exclusive`: shared against exclusive access): their
//! keys, a row of both ways' samples, and the table of medians. A program that
//! includes it also includes `common/spread.rs` as `spread`.

use crate::spread::Spread;

/// splitmix64's outputs from `seed`: distinct, well-mixed keys.
pub fn keys(n: usize, seed: u64) -> Vec<u64> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        })
        .collect()
}

/// One row: the same work timed both ways, in turns, ns per operation.
pub struct Row {
    pub size: usize,
    pub op: &'static str,
    pub first: Vec<f64>,
    pub second: Vec<f64>,
}

impl Row {
    pub fn new(size: usize, op: &'static str) -> Self {
        Self {
            size,
            op,
            first: Vec::new(),
            second: Vec::new(),
        }
    }

    /// Adds one sample to the first way's (`second` false) or the second's.
    pub fn push(&mut self, second: bool, ns: f64) {
        if second {
            self.second.push(ns);
        } else {
            self.first.push(ns);
        }
    }
}

/// Prints the rows as a Markdown table: each way's median with its lowest and highest,
/// under `names`, and the ratio `ratio` (its title and the medians it divides).
pub fn print_table(
    rows: &[Row],
    names: [&str; 2],
    (ratio_title, ratio): (&str, fn(f64, f64) -> f64),
) {
    println!(
        "| items | operation | {}, ns (min–max) | {}, ns (min–max) | {ratio_title} |",
        names[0], names[1]
    );
    println!("|--:|---|--:|--:|--:|");
    for row in rows {
        let (a, b) = (Spread::of(&row.first), Spread::of(&row.second));
        println!(
            "| {} | {} | {:.2} ({:.2}–{:.2}) | {:.2} ({:.2}–{:.2}) | {:.2}× |",
            row.size,
            row.op,
            a.median,
            a.low,
            a.high,
            b.median,
            b.low,
            b.high,
            ratio(a.median, b.median)
        );
    }
}
