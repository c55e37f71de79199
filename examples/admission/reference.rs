//! The reference hit ratios that come with the shared traces: the table in the README
//! beside them, computed with exact data structures. A simulator here should match its
//! LRU and exact-ghost S3-FIFO columns within 0.5 pp.

use std::path::Path;

/// One row of the reference table: a trace at one cache size, hit ratios in percent.
#[derive(Clone, Debug)]
pub struct Row {
    pub trace: String,
    pub cache_size: usize,
    pub lru: f64,
    pub doorkeeper: f64,
    pub w_tinylfu: f64,
    pub s3fifo_promote_1: f64,
    pub s3fifo_promote_2: f64,
}

impl Row {
    pub fn s3fifo(&self, promote_after: u8) -> f64 {
        if promote_after == 1 {
            self.s3fifo_promote_1
        } else {
            self.s3fifo_promote_2
        }
    }
}

/// The rows of `README.md` in `directory`, if it has such a table; rows that do not
/// parse are skipped (an empty list when there is no table).
pub fn load(directory: &Path) -> Vec<Row> {
    let Ok(text) = std::fs::read_to_string(directory.join("README.md")) else {
        return Vec::new();
    };
    text.lines().filter_map(parse_row).collect()
}

/// `| lirs_multi2 | 113 (2%) | 7.8 | 30.0 | 30.7 | 27.6 | 27.9 |`
fn parse_row(line: &str) -> Option<Row> {
    let cells: Vec<&str> = line
        .trim()
        .strip_prefix('|')?
        .strip_suffix('|')?
        .split('|')
        .map(str::trim)
        .collect();
    let [trace, size, lru, doorkeeper, w_tinylfu, s3fifo_1, s3fifo_2] = cells[..] else {
        return None;
    };
    let number = |cell: &str| cell.parse::<f64>().ok();
    Some(Row {
        trace: trace.to_string(),
        cache_size: size.split_whitespace().next()?.parse().ok()?,
        lru: number(lru)?,
        doorkeeper: number(doorkeeper)?,
        w_tinylfu: number(w_tinylfu)?,
        s3fifo_promote_1: number(s3fifo_1)?,
        s3fifo_promote_2: number(s3fifo_2)?,
    })
}
