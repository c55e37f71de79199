//! The sizes a bench run covers.

/// Parses `CUCKOO_BENCH_SIZES` (e.g. `128K,1M,8M,64M`; K and M are powers of two), or
/// `default` when it is unset.
pub fn sizes(default: &str) -> Vec<(String, usize)> {
    let list = std::env::var("CUCKOO_BENCH_SIZES").unwrap_or_else(|_| default.into());
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            let (digits, unit) = if let Some(digits) = s.strip_suffix(['K', 'k']) {
                (digits, 1 << 10)
            } else if let Some(digits) = s.strip_suffix(['M', 'm']) {
                (digits, 1 << 20)
            } else {
                (s, 1)
            };
            let n: usize = digits
                .parse()
                .unwrap_or_else(|_| panic!("CUCKOO_BENCH_SIZES: bad size {s:?}"));
            assert!(
                n * unit >= 1024,
                "CUCKOO_BENCH_SIZES: {s:?} is under 1K items"
            );
            (s.to_uppercase(), n * unit)
        })
        .collect()
}
