//! `--plot-from`: the picture drawn again from a JSON-lines file that `--json` wrote, with
//! nothing re-run, so that a committed result and the SVG drawn from it stay in step.

use std::path::Path;

use serde::Deserialize;

use crate::keys::Mix;
use crate::peers::{CATALOG, NAMED_ONLY};
use crate::plot::{self, ThreadPoint};
use crate::reference::CurvePoint;

/// The records the picture needs; the fields each record has beyond these are skipped.
#[derive(Deserialize)]
#[serde(tag = "record", rename_all = "lowercase")]
enum Record {
    System {
        cpu: String,
        cores: usize,
        pinned: bool,
        rustflags: String,
        target_features: Vec<String>,
    },
    Sizing {
        items: usize,
        load: f64,
        fingerprint_bits: u32,
        slots: usize,
    },
    Reference {
        peer: String,
    },
    Curve {
        peer: String,
        load: f64,
        inserts_per_sec: f64,
        lookups_per_sec: f64,
    },
    Mixed {
        mix: Mix,
        peer: String,
        threads: usize,
        ops_per_sec: Option<f64>,
        samples: Vec<f64>,
    },
}

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// The catalog's name for `name`: the plot's inputs hold `&'static str`, as a run's do.
fn peer(name: &str) -> Res<&'static str> {
    CATALOG
        .iter()
        .chain(NAMED_ONLY)
        .map(|p| p.name)
        .find(|known| *known == name)
        .ok_or_else(|| format!("unknown peer {name:?}").into())
}

/// Reads `from` (one JSON record a line) and draws the SVG `to`.
pub fn draw(from: &Path, to: &Path) -> Res<()> {
    let text = std::fs::read_to_string(from)?;
    let (mut system, mut sizing) = (None, None);
    let mut peers: Vec<&'static str> = Vec::new();
    let mut curve = Vec::new();
    let mut mixed: Vec<(String, Vec<ThreadPoint>)> = Vec::new();
    let mut samples = None;
    for (n, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let record: Record =
            serde_json::from_str(line).map_err(|e| format!("line {}: {e}", n + 1))?;
        let name = match &record {
            Record::Reference { peer }
            | Record::Curve { peer, .. }
            | Record::Mixed { peer, .. } => Some(self::peer(peer)?),
            _ => None,
        };
        if let Some(name) = name
            && !peers.contains(&name)
        {
            peers.push(name);
        }
        match record {
            Record::System { .. } => system = Some(record),
            Record::Sizing { .. } => sizing = Some(record),
            Record::Reference { .. } => {}
            Record::Curve {
                load,
                inserts_per_sec,
                lookups_per_sec,
                ..
            } => curve.push(CurvePoint {
                peer: name.expect("a curve record names its peer"),
                load,
                inserts_per_sec,
                lookups_per_sec,
            }),
            Record::Mixed {
                mix,
                threads,
                ops_per_sec,
                samples: taken,
                ..
            } => {
                if !taken.is_empty() {
                    samples = Some(taken.len() as u64);
                }
                let point = ThreadPoint {
                    peer: name.expect("a mixed record names its peer"),
                    threads,
                    ops_per_sec,
                };
                match mixed.iter_mut().find(|(label, _)| *label == mix.label()) {
                    Some((_, points)) => points.push(point),
                    None => mixed.push((mix.label(), vec![point])),
                }
            }
        }
    }
    let (
        Some(Record::System {
            cpu,
            cores,
            pinned,
            rustflags,
            target_features,
        }),
        Some(Record::Sizing {
            items,
            load,
            fingerprint_bits,
            slots,
        }),
    ) = (system, sizing)
    else {
        return Err("no system or sizing record: not a file --json wrote".into());
    };
    let notes = plot::notes(&plot::Context {
        cpu: &cpu,
        cores,
        pinned,
        rustflags: &rustflags,
        target_features: &target_features,
        items,
        fingerprint_bits,
        slots,
        load,
        samples,
    });
    plot::draw(
        to,
        &plot::Input {
            peers: &peers,
            curve: &curve,
            mixed: &mixed,
            notes: &notes,
        },
    )
}
