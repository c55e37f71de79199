//! What every report states about the machine and the build, so numbers can be compared.

use std::fmt::Write as _;

use serde::Serialize;

/// The crates whose versions a report names (ours first).
const CRATES: &[&str] = &[
    "concurrent-cuckoo-filter",
    "cuckoofilter",
    "atomic-cuckoo-filter",
    "scalable_cuckoo_filter",
    "qfilter",
    "fastbloom",
    "sbbf-rs-safe",
    "xorf",
    "parking_lot",
];

#[derive(Serialize, Debug)]
pub struct System {
    pub cpu: String,
    pub cores: usize,
    pub pinned: bool,
    /// `RUSTFLAGS` as seen by the compiler of this binary (flags set only in a cargo config
    /// file do not show here; the target features below always do).
    pub rustflags: String,
    pub target_features: Vec<&'static str>,
    pub debug_build: bool,
    pub transparent_hugepages: String,
    /// The 1-minute load average when the run started: above the core count, other work
    /// shares the cores and every figure is suspect.
    pub load_average: String,
    /// `name version` pairs from Cargo.lock, read when the report runs.
    pub crate_versions: Vec<String>,
}

impl System {
    pub fn probe(pinned: bool) -> Self {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu = cpuinfo
            .lines()
            .find_map(|l| l.strip_prefix("model name"))
            .and_then(|l| l.split_once(':'))
            .map_or_else(
                || std::env::consts::ARCH.to_string(),
                |(_, m)| m.trim().to_string(),
            );
        let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
            .map_or_else(|_| "unknown".into(), |s| s.trim().to_string());
        Self {
            cpu,
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            pinned,
            rustflags: option_env!("RUSTFLAGS").unwrap_or("").to_string(),
            target_features: target_features(),
            debug_build: cfg!(debug_assertions),
            transparent_hugepages: thp,
            load_average: std::fs::read_to_string("/proc/loadavg").map_or_else(
                |_| "unknown".into(),
                |s| s.split_whitespace().next().unwrap_or("unknown").to_string(),
            ),
            crate_versions: crate_versions(),
        }
    }

    /// The header printed above every report.
    /// `reference`: whether the single-threaded reference runs; `mixed_threads`: the thread
    /// counts of the mixed runs, if they run.
    pub fn describe(&self, reference: bool, mixed_threads: Option<&[usize]>) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "CPU:      {} ({} cores available)", self.cpu, self.cores);
        let mut runs = Vec::new();
        if reference {
            runs.push("reference runs on 1".to_string());
        }
        if let Some(t) = mixed_threads {
            let t: Vec<String> = t.iter().map(ToString::to_string).collect();
            runs.push(format!("mixed runs on {}", t.join(", ")));
        }
        let _ = writeln!(
            s,
            "Threads:  {}; pinned to cores: {}",
            runs.join("; "),
            if self.pinned { "yes" } else { "no" }
        );
        let flags = if self.rustflags.is_empty() {
            "(none)"
        } else {
            &self.rustflags
        };
        let _ = writeln!(
            s,
            "Build:    RUSTFLAGS={flags}; target features: {}{}",
            self.target_features.join(" "),
            if self.debug_build {
                "; DEBUG BUILD: numbers are meaningless, use --release"
            } else {
                ""
            }
        );
        let _ = writeln!(s, "THP:      {}", self.transparent_hugepages);
        let busy = self
            .load_average
            .parse::<f64>()
            .is_ok_and(|l| l > self.cores as f64 * 0.5);
        let _ = writeln!(
            s,
            "Load:     {} (1-minute average at start){}",
            self.load_average,
            if busy {
                "; the machine is busy: expect noisy figures"
            } else {
                ""
            }
        );
        let _ = writeln!(s, "Crates:   {}", self.crate_versions.join(", "));
        s
    }
}

/// The SIMD-relevant target features this binary was compiled with. `wide` and the peers
/// pick their code paths at compile time, so these change what is measured.
fn target_features() -> Vec<&'static str> {
    let all = [
        ("sse2", cfg!(target_feature = "sse2")),
        ("sse4.2", cfg!(target_feature = "sse4.2")),
        ("popcnt", cfg!(target_feature = "popcnt")),
        ("avx", cfg!(target_feature = "avx")),
        ("avx2", cfg!(target_feature = "avx2")),
        ("bmi2", cfg!(target_feature = "bmi2")),
        ("avx512f", cfg!(target_feature = "avx512f")),
        ("avx512bw", cfg!(target_feature = "avx512bw")),
        ("neon", cfg!(target_feature = "neon")),
    ];
    all.into_iter()
        .filter(|(_, on)| *on)
        .map(|(n, _)| n)
        .collect()
}

/// Reads the versions the build resolved from Cargo.lock next to Cargo.toml (not hard-coded,
/// so they cannot go stale). If the file is gone (a copied binary), says so.
fn crate_versions() -> Vec<String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.lock");
    let Ok(lock) = std::fs::read_to_string(path) else {
        return vec![format!("unknown ({path} not found)")];
    };
    let mut found = Vec::new();
    let mut name = None;
    for line in lock.lines() {
        if let Some(n) = line.strip_prefix("name = ") {
            name = Some(n.trim_matches('"'));
        } else if let (Some(v), Some(n)) = (line.strip_prefix("version = "), name.take())
            && CRATES.contains(&n)
        {
            found.push((n, v.trim_matches('"')));
        }
    }
    // Cargo.lock is sorted by name; report in CRATES order (and every version if a crate
    // appears twice).
    CRATES
        .iter()
        .flat_map(|c| found.iter().filter(move |(n, _)| n == c))
        .map(|(n, v)| format!("{n} {v}"))
        .collect()
}

/// CPU time the calling thread has run, in nanoseconds (`CLOCK_THREAD_CPUTIME_ID`);
/// `None` where the platform cannot say. Unlike wall time it does not grow while the
/// thread waits for a core, so per-operation CPU time shows whether threads slow each
/// other down even on a busy machine.
pub fn thread_cpu_ns() -> Option<u64> {
    let now = cpu_time::ThreadTime::try_now().ok()?;
    u64::try_from(now.as_duration().as_nanos()).ok()
}
