//! Counts on the command line, with the suffixes a benchmark's sizes are written with;
//! shared with `examples/write_sharing.rs`.

/// Parses counts such as `1000000`, `1_000_000`, `500K`, `64M`, `1G`, `1e6`.
pub fn parse_count(s: &str) -> Result<usize, String> {
    let t = s.trim().replace('_', "");
    let (num, mult) = match t.chars().last() {
        Some('k' | 'K') => (&t[..t.len() - 1], 1e3),
        Some('m' | 'M') => (&t[..t.len() - 1], 1e6),
        Some('g' | 'G') => (&t[..t.len() - 1], 1e9),
        _ => (&t[..], 1.0),
    };
    let v: f64 = num.parse().map_err(|_| format!("not a count: {s:?}"))?;
    if !(v >= 0.0 && v.is_finite()) {
        return Err(format!("not a count: {s:?}"));
    }
    Ok((v * mult).round() as usize)
}
