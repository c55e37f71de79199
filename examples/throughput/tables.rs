//! The tables of a run: the reference report, one per mixed workload, and the headline
//! ratios. Each goes to stdout and, through [`Doc`], to the Markdown file.

use crate::peers::PeerDef;
use crate::report::{Doc, Table, mops, na, percent, sig3};
use crate::{keys, mixed, reference};

/// `fpr_bound`: our filter's ε bound at the target load, printed beside the measured ε.
pub fn print_reference(
    doc: &mut Doc,
    cfg: &reference::Config,
    rows: &[reference::Row],
    fpr_bound: f64,
) {
    doc.heading(&format!(
        "Reference (the cuckoo filter paper's bulk-insert-and-query): insert {} keys into an \
         empty filter, then {} lookups per positive rate; single thread; median of {} rounds",
        thousands(cfg.items),
        thousands(cfg.lookups),
        cfg.samples
    ));
    let mut t = Table::new([
        "peer",
        "adds Mops/s",
        "finds Mops/s 0%",
        "25%",
        "50%",
        "75%",
        "100%",
        "ε",
        "bits/item",
        "optimal",
        "wasted",
        "insert fails",
        "FN",
    ]);
    for r in rows {
        let adds = match (r.adds_per_sec, r.build_per_sec) {
            (Some(a), _) => mops(a),
            (None, Some(b)) => format!("{} (bulk build)", mops(b)),
            (None, None) => na("cannot insert"),
        };
        let mut cells = vec![r.peer.to_string(), adds];
        cells.extend(r.finds_per_sec.iter().map(|&f| mops(f)));
        let optimal = r.optimal_bits();
        cells.extend([
            percent(r.fpr),
            sig3(r.bits_per_item),
            if optimal.is_finite() {
                sig3(optimal)
            } else {
                "-".into()
            },
            if optimal.is_finite() {
                format!("{:.1}%", r.wasted_percent())
            } else {
                "-".into()
            },
            thousands(r.insert_failed),
            thousands(r.false_negatives),
        ]);
        t.row(cells);
    }
    doc.table(&t);
    doc.note(&format!(
        "ε: measured on {} never-inserted keys (bound for ours: 2·b·α/2^f = {}). optimal = log2(1/ε), the bits/item of an ideal \
         filter with that ε; wasted = bits/item ÷ optimal − 1. FN: keys inserted without error \
         that a lookup later missed.",
        thousands(cfg.fpr_keys),
        percent(fpr_bound),
    ));
}

pub fn print_mixed(doc: &mut Doc, cfg: &mixed::Config, mix: &keys::Mix, rows: &[mixed::Row]) {
    doc.heading(&format!(
        "Mixed workload {} (% reads/inserts/removes), {}% of reads present, prefill {}% of items, \
         {} ops per sample over all threads; median of {}",
        mix.label(),
        mix.read_hits,
        cfg.prefill_percent,
        thousands(cfg.ops),
        cfg.samples
    ));
    let threads = &cfg.threads;
    let mut header: Vec<String> = threads.iter().map(|t| format!("{t}T Mops/s")).collect();
    header.insert(0, "peer".into());
    let (lo, hi) = (threads[0], threads[threads.len() - 1]);
    if threads.len() > 1 {
        header.push(format!("{hi}T/{lo}T"));
        header.push(format!("CPU ns/op {lo}T → {hi}T"));
    }
    header.extend(["FN", "FPR", "insert fails"].map(String::from));
    let mut t = Table::new(header);
    let mut names: Vec<&str> = Vec::new();
    for r in rows {
        if !names.contains(&r.peer) {
            names.push(r.peer);
        }
    }
    for name in names {
        let mine: Vec<&mixed::Row> = rows.iter().filter(|r| r.peer == name).collect();
        let at = |n: usize| mine.iter().find(|r| r.threads == n);
        let mut cells = vec![name.to_string()];
        cells.extend(threads.iter().map(|&n| match at(n) {
            Some(mixed::Row {
                ops_per_sec: Some(v),
                ..
            }) => mops(*v),
            Some(r) => na(r.not_applicable.unwrap_or("?")),
            None => "-".into(),
        }));
        if threads.len() > 1 {
            let ratio = match (
                at(lo).and_then(|r| r.ops_per_sec),
                at(hi).and_then(|r| r.ops_per_sec),
            ) {
                (Some(a), Some(b)) => format!("{:.2}", b / a),
                _ => "n/a".into(),
            };
            cells.push(ratio);
            // Readers that never slow each other down keep this ratio near 1.
            let cpu = match (
                at(lo).and_then(|r| r.cpu_ns_per_op),
                at(hi).and_then(|r| r.cpu_ns_per_op),
            ) {
                (Some(a), Some(b)) if a > 0.0 => format!("{a:.1} → {b:.1} ({:.2}×)", b / a),
                _ => "n/a".into(),
            };
            cells.push(cpu);
        }
        let ran: Vec<&&mixed::Row> = mine.iter().filter(|r| r.ops_per_sec.is_some()).collect();
        if ran.is_empty() {
            cells.extend(["n/a", "n/a", "n/a"].map(String::from));
        } else {
            let fneg: usize = ran.iter().map(|r| r.false_negatives).sum();
            let fpos: u64 = ran.iter().map(|r| r.false_positives).sum();
            let neg: u64 = ran.iter().map(|r| r.negative_lookups).sum();
            let fails: usize = ran.iter().map(|r| r.insert_failed).sum();
            cells.extend([
                thousands(fneg),
                percent(fpos as f64 / neg.max(1) as f64),
                thousands(fails),
            ]);
        }
        t.row(cells);
    }
    doc.table(&t);
    doc.note(
        "Aggregate throughput: all threads' operations ÷ (last finish − first start). FN and FPR \
         are summed over all thread counts and samples.",
    );
}

/// Ours ÷ peer for the figures people quote: > 1 means ours is faster.
pub fn print_headline(
    doc: &mut Doc,
    peers: &[&'static PeerDef],
    reference: &[reference::Row],
    mixed: &[(String, Vec<mixed::Row>)],
) {
    if peers.len() < 2 {
        return;
    }
    let ours = peers[0].name;
    let mut header = vec!["peer".to_string()];
    if !reference.is_empty() {
        header.extend(["adds".into(), "finds 0%".into(), "finds 100%".into()]);
    }
    // Per mix, the lowest and highest thread count.
    let mut columns = Vec::new();
    for (label, rows) in mixed {
        let mut counts: Vec<usize> = rows.iter().map(|r| r.threads).collect();
        counts.sort_unstable();
        counts.dedup();
        let (lo, hi) = (counts[0], counts[counts.len() - 1]);
        for t in if lo == hi { vec![lo] } else { vec![lo, hi] } {
            header.push(format!("{label} {t}T"));
            columns.push((rows, t));
        }
    }
    doc.heading("Headline: ours ÷ peer (> 1: ours is faster; medians from the tables above)");
    let mut t = Table::new(header);
    let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.2}×", a / b),
        _ => "n/a".into(),
    };
    let ref_of = |name: &str| reference.iter().find(|r| r.peer == name);
    for p in &peers[1..] {
        let mut cells = vec![p.name.to_string()];
        if !reference.is_empty() {
            let (o, r) = (ref_of(ours), ref_of(p.name));
            let adds = |x: Option<&reference::Row>| x.and_then(|x| x.adds_per_sec);
            let find = |x: Option<&reference::Row>, i: usize| x.map(|x| x.finds_per_sec[i]);
            cells.push(ratio(adds(o), adds(r)));
            cells.push(ratio(find(o, 0), find(r, 0)));
            cells.push(ratio(find(o, 4), find(r, 4)));
        }
        for (rows, threads) in &columns {
            let get = |name: &str| {
                rows.iter()
                    .find(|r| r.peer == name && r.threads == *threads)
                    .and_then(|r| r.ops_per_sec)
            };
            cells.push(ratio(get(ours), get(p.name)));
        }
        t.row(cells);
    }
    doc.table(&t);
    println!();
}

/// `1234567` → `1,234,567`.
pub fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
