//! Request traces: the shared gzip text format (one decimal key a line), or a synthetic
//! Zipf trace with one-hit wonders when none is given.

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::path::Path;

use flate2::read::GzDecoder;

pub struct Trace {
    pub name: String,
    pub keys: Vec<u64>,
    pub distinct: usize,
}

impl Trace {
    fn new(name: String, keys: Vec<u64>) -> Self {
        let distinct = keys.iter().collect::<HashSet<_>>().len();
        Self {
            name,
            keys,
            distinct,
        }
    }

    /// Reads `path`: gzip text (`.gz`) or plain text, one signed 64-bit decimal key a
    /// line (blank lines skipped).
    pub fn load(path: &Path) -> Result<Self, String> {
        let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let reader: Box<dyn BufRead> = if path.extension().is_some_and(|e| e == "gz") {
            Box::new(BufReader::new(GzDecoder::new(file)))
        } else {
            Box::new(BufReader::new(file))
        };
        let mut keys = Vec::new();
        for (number, line) in reader.lines().enumerate() {
            let line = line.map_err(|e| format!("{}: {e}", path.display()))?;
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let key: i64 = line.parse().map_err(|e| {
                format!(
                    "{}:{}: {line:?} is not a 64-bit key: {e}",
                    path.display(),
                    number + 1
                )
            })?;
            keys.push(key as u64);
        }
        if keys.is_empty() {
            return Err(format!("{}: no requests", path.display()));
        }
        let file_name = path.file_name().unwrap_or_default().to_string_lossy();
        let name = file_name
            .trim_end_matches(".gz")
            .trim_end_matches(".txt")
            .to_string();
        Ok(Self::new(name, keys))
    }

    /// `requests` requests: 80% drawn from 50,000 keys by a Zipf law (exponent 0.9),
    /// 20% one-hit wonders (keys never requested again), seeded so every run replays the
    /// same trace.
    pub fn synthetic(requests: usize) -> Self {
        const KEYS: usize = 50_000;
        const EXPONENT: f64 = 0.9;
        let mut cdf = Vec::with_capacity(KEYS);
        let mut total = 0.0;
        for rank in 1..=KEYS {
            total += 1.0 / (rank as f64).powf(EXPONENT);
            cdf.push(total);
        }
        let mut rng = fastrand::Rng::with_seed(0x5EED);
        let mut wonder = 1u64 << 40;
        let keys = (0..requests)
            .map(|_| {
                if rng.f64() < 0.2 {
                    wonder += 1;
                    wonder
                } else {
                    let u = rng.f64() * total;
                    cdf.partition_point(|&c| c < u) as u64
                }
            })
            .collect();
        Self::new("synthetic-zipf".into(), keys)
    }
}
