//! The report: the Markdown tables on stdout, and the machine and server they came from.

use std::fs;
use std::process::Command;

use crate::config::{Config, Measured, Row};
use crate::options::Options;

pub(crate) fn print_report(options: &Options, rows: &[Row]) {
    let redisbloom = rows
        .iter()
        .find(|row| row.config == Config::RedisBloom)
        .and_then(|row| row.outcome.as_ref().ok());
    let redisbloom_version = redisbloom
        .and_then(|m| m.fill.module_version)
        .map_or("?".to_string(), |v| {
            format!("{}.{}.{}", v / 10_000, v / 100 % 100, v % 100)
        });
    println!(
        "Machine: {}; N = {}, C = {}, P = {}, MEXISTS batch = {}, FPR keys = {}, \
         growth key capacity = {}, samples = {} (medians); {}; RedisBloom {}",
        machine(),
        grouped(options.items as f64),
        options.connections,
        options.pipeline,
        options.mexists_batch,
        grouped(options.fpr_keys as f64),
        grouped(options.growth_capacity as f64),
        options.samples,
        server_version(&options.server),
        redisbloom_version
    );
    println!();
    println!(
        "| configuration | ADD ops/s | EXISTS ops/s | MEXISTS cmds/s | MEXISTS items/s \
         | bytes/item | Size | filters | FPR % | first growth: load % (items) \
         | usec_per_call add / exists / mexists | client us/op add / exists / mexists \
         | in-process ns add / exists |"
    );
    println!("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
    for row in rows {
        match &row.outcome {
            Ok(measured) => println!("| {} | {} |", row.config.name(), cells(measured)),
            Err(error) => println!(
                "| {} | unavailable: {} |{}",
                row.config.name(),
                error.replace('|', "/"),
                " – |".repeat(11)
            ),
        }
    }
    for row in rows {
        if let Ok(m) = &row.outcome
            && m.speed.add_tally.errors > 0
        {
            println!(
                "\n{}: {} CF.ADD errors in the fill, the first: {}",
                row.config.name(),
                m.speed.add_tally.errors,
                m.speed.add_tally.first_error.as_deref().unwrap_or("?")
            );
        }
    }
    if let Some(peer) = redisbloom {
        print_ratios(peer, rows);
    }
}

/// A measured row's cells after the name.
fn cells(m: &Measured) -> String {
    let s = &m.speed;
    let usec = s
        .usec_per_call
        .map(|u| u.map_or("?".to_string(), |u| format!("{u:.2}")))
        .join(" / ");
    let client = [s.add, s.exists, s.mexists_commands]
        .map(|ops| format!("{:.2}", 1e6 / ops))
        .join(" / ");
    let in_process = m.in_process.map_or("–".to_string(), |[add, exists]| {
        format!("{add:.0} / {exists:.0}")
    });
    let growth = match &m.fill.growth {
        Ok(g) => format!(
            "{:.1} ({})",
            100.0 * g.items as f64 / g.slots as f64,
            grouped(g.items as f64)
        ),
        Err(error) => format!("? ({})", error.replace('|', "/")),
    };
    let optional = |v: Option<i64>| v.map_or("?".to_string(), |v| grouped(v as f64));
    [
        grouped(s.add),
        grouped(s.exists),
        grouped(s.mexists_commands),
        grouped(s.mexists_items),
        format!("{:.2}", m.fill.bytes_per_item),
        optional(m.fill.size),
        optional(m.fill.filters),
        format!("{:.3}", 100.0 * m.fill.false_positive_rate),
        growth,
        usec,
        client,
        in_process,
    ]
    .join(" | ")
}

/// This module's figures over RedisBloom's.
fn print_ratios(peer: &Measured, rows: &[Row]) {
    println!();
    println!("| ours / redisbloom | ADD | EXISTS | MEXISTS items | bytes/item |");
    println!("|---|--:|--:|--:|--:|");
    for row in rows.iter().filter(|row| row.config != Config::RedisBloom) {
        let Ok(m) = &row.outcome else { continue };
        println!(
            "| {} | {:.2} | {:.2} | {:.2} | {:.2} |",
            row.config.name(),
            m.speed.add / peer.speed.add,
            m.speed.exists / peer.speed.exists,
            m.speed.mexists_items / peer.speed.mexists_items,
            m.fill.bytes_per_item / peer.fill.bytes_per_item
        );
    }
}

/// `1234567.8` as `1,234,568`.
pub(crate) fn grouped(value: f64) -> String {
    if !value.is_finite() {
        return "?".to_string();
    }
    let digits = (value.round() as u64).to_string();
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// The CPU model and core count, from `/proc/cpuinfo`.
fn machine() -> String {
    let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|line| line.strip_prefix("model name")?.split_once(':'))
        .map_or("unknown CPU", |(_, model)| model.trim());
    let cores = match cpuinfo
        .lines()
        .filter(|l| l.starts_with("processor"))
        .count()
    {
        0 => std::thread::available_parallelism().map_or(0, |n| n.get()),
        n => n,
    };
    format!("{model}, {cores} cores")
}

/// `redis-server 7.0.15`, from `--version`.
fn server_version(binary: &str) -> String {
    let output = Command::new(binary).arg("--version").output();
    let text = output.map(|o| String::from_utf8_lossy(&o.stdout).into_owned());
    let version = text.ok().and_then(|text| {
        text.split_whitespace()
            .find_map(|word| word.strip_prefix("v=").map(str::to_string))
    });
    format!("{binary} {}", version.as_deref().unwrap_or("?"))
}
