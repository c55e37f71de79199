//! Median, lowest and highest: how the measuring programs summarise their rounds.

/// Median, lowest and highest of some samples.
#[derive(Clone, Copy)]
pub struct Spread {
    pub median: f64,
    pub low: f64,
    pub high: f64,
}

impl Spread {
    pub fn of(samples: &[f64]) -> Self {
        let mut s = samples.to_vec();
        s.sort_by(f64::total_cmp);
        let mid = s.len() / 2;
        let median = if s.len() % 2 == 1 {
            s[mid]
        } else {
            (s[mid - 1] + s[mid]) / 2.0
        };
        Self {
            median,
            low: s[0],
            high: s[s.len() - 1],
        }
    }
}
