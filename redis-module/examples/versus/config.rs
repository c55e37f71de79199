//! The configurations measured (the rows) and the figures each one yields.

use redis::Connection;

use crate::client::{Tally, cf_info, describe};
use crate::{KEY, Result};

/// Our module's config for the fingerprint width of new keys.
const FINGERPRINT_BITS: &str = "cuckoofilter.fingerprint-bits";

#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Config {
    RedisBloom,
    Ours16,
    Ours8,
    Ours8Roomy,
}

impl Config {
    pub(crate) const ALL: [Self; 4] = [
        Self::RedisBloom,
        Self::Ours16,
        Self::Ours8,
        Self::Ours8Roomy,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::RedisBloom => "redisbloom",
            Self::Ours16 => "ours-16",
            Self::Ours8 => "ours-8",
            Self::Ours8Roomy => "ours-8-roomy",
        }
    }

    /// The fingerprint width of this module's rows (`None` for RedisBloom).
    pub(crate) fn fingerprint_bits(self) -> Option<u32> {
        match self {
            Self::RedisBloom => None,
            Self::Ours16 => Some(16),
            Self::Ours8 | Self::Ours8Roomy => Some(8),
        }
    }

    /// The capacity `CF.RESERVE` gives the measured key that takes `items` items.
    pub(crate) fn reserved(self, items: usize) -> usize {
        match self {
            Self::Ours8Roomy => items.div_ceil(85) * 95,
            _ => items,
        }
    }

    /// What precedes `CF.RESERVE` on a fresh server.
    pub(crate) fn prepare(self, con: &mut Connection) -> Result<()> {
        if self.fingerprint_bits() != Some(8) {
            return Ok(());
        }
        redis::cmd("CONFIG")
            .arg("SET")
            .arg(FINGERPRINT_BITS)
            .arg(8)
            .query::<()>(con)
            .map_err(|e| {
                format!(
                    "no {FINGERPRINT_BITS} config in the module ({})",
                    describe(&e)
                )
            })?;
        let reply: Vec<String> = redis::cmd("CONFIG")
            .arg("GET")
            .arg(FINGERPRINT_BITS)
            .query(con)
            .map_err(|e| format!("CONFIG GET {FINGERPRINT_BITS}: {}", describe(&e)))?;
        match reply.get(1).map(String::as_str) {
            Some("8") => Ok(()),
            other => Err(format!("{FINGERPRINT_BITS} reads back as {other:?}, not 8")),
        }
    }

    /// Refuses a key of another fingerprint width than the row's, where `CF.INFO` says.
    pub(crate) fn check_key(self, con: &mut Connection) -> Result<()> {
        let info = cf_info(con, KEY)?;
        match (self.fingerprint_bits(), info.get("Fingerprint bits")) {
            (Some(bits), Some(&got)) if i64::from(bits) != got => Err(format!(
                "CF.RESERVE made a key of {got}-bit fingerprints, not {bits}"
            )),
            _ => Ok(()),
        }
    }
}

pub(crate) struct Row {
    pub(crate) config: Config,
    pub(crate) outcome: Result<Measured>,
}

/// One configuration's figures.
pub(crate) struct Measured {
    /// Throughput and server times: medians over the samples (the `CF.ADD` tally is the
    /// last sample's).
    pub(crate) speed: Sample,
    /// In-process ns per insert and per lookup (this module's rows).
    pub(crate) in_process: Option<[f64; 2]>,
    /// From the last sample's server.
    pub(crate) fill: Fill,
}

/// One sample's throughput and server-side times.
pub(crate) struct Sample {
    pub(crate) add: f64,
    pub(crate) exists: f64,
    pub(crate) mexists_commands: f64,
    pub(crate) mexists_items: f64,
    /// `usec_per_call` of cf.add, cf.exists, cf.mexists.
    pub(crate) usec_per_call: [Option<f64>; 3],
    /// The fill's replies: every `CF.ADD` should reply 1.
    pub(crate) add_tally: Tally,
}

/// What the filled key looks like: memory, `CF.INFO`, false positives, and where a
/// second key first grew.
pub(crate) struct Fill {
    pub(crate) bytes_per_item: f64,
    pub(crate) size: Option<i64>,
    pub(crate) filters: Option<i64>,
    pub(crate) false_positive_rate: f64,
    pub(crate) growth: Result<Growth>,
    /// `MODULE LIST`'s version of the loaded module.
    pub(crate) module_version: Option<i64>,
}

/// The first growth: items the key held when an add made its second sub-filter, and
/// the first sub-filter's slots.
pub(crate) struct Growth {
    pub(crate) items: usize,
    pub(crate) slots: i64,
}
