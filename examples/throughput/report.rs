//! Plain-text tables, number formatting and the JSON-lines sink.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use serde::Serialize;

/// A table printed with aligned columns: text left-aligned, everything else right-aligned.
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new<S: Into<String>>(header: impl IntoIterator<Item = S>) -> Self {
        Self {
            header: header.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
        }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// GitHub Markdown: first column left-aligned, the rest right-aligned.
    pub fn render_markdown(&self) -> String {
        let line = |cells: &[String]| format!("| {} |\n", cells.join(" | "));
        let mut out = line(&self.header);
        let rule: Vec<String> = (0..self.header.len())
            .map(|i| if i == 0 { ":--".into() } else { "--:".into() })
            .collect();
        out.push_str(&line(&rule));
        for r in &self.rows {
            out.push_str(&line(r));
        }
        out
    }

    pub fn render(&self) -> String {
        let cols = self.header.len();
        let mut width = vec![0; cols];
        for r in std::iter::once(&self.header).chain(&self.rows) {
            for (w, c) in width.iter_mut().zip(r) {
                *w = (*w).max(c.chars().count());
            }
        }
        let line = |cells: &[String]| {
            let mut s = String::new();
            for (i, (c, w)) in cells.iter().zip(&width).enumerate() {
                let pad = w - c.chars().count();
                if i == 0 {
                    s.push_str(c);
                    s.push_str(&" ".repeat(pad));
                } else {
                    s.push_str("  ");
                    s.push_str(&" ".repeat(pad));
                    s.push_str(c);
                }
            }
            s.trim_end().to_string() + "\n"
        };
        let mut out = line(&self.header);
        out.push_str(&"-".repeat(width.iter().sum::<usize>() + 2 * (cols - 1)));
        out.push('\n');
        for r in &self.rows {
            out.push_str(&line(r));
        }
        out
    }
}

/// The report: printed to stdout as it is produced, and kept as Markdown for `--markdown`
/// (the README's tables are pasted from that file, never typed by hand).
#[derive(Default)]
pub struct Doc {
    markdown: String,
}

impl Doc {
    /// A section title.
    pub fn heading(&mut self, title: &str) {
        println!("== {title} ==");
        self.markdown.push_str(&format!("#### {title}\n\n"));
    }

    /// Lines whose layout matters (the machine description): verbatim in both.
    pub fn preformatted(&mut self, text: &str) {
        print!("{text}");
        self.markdown.push_str(&format!("```text\n{text}```\n\n"));
    }

    pub fn table(&mut self, table: &Table) {
        print!("{}", table.render());
        self.markdown.push_str(&table.render_markdown());
        self.markdown.push('\n');
    }

    /// A paragraph under a table (definitions, caveats).
    pub fn note(&mut self, text: &str) {
        println!("{text}\n");
        self.markdown.push_str(&format!("{text}\n\n"));
    }

    pub fn markdown(&self) -> &str {
        &self.markdown
    }
}

/// Millions of operations per second, 3 significant digits.
pub fn mops(ops_per_sec: f64) -> String {
    sig3(ops_per_sec / 1e6)
}

/// Three significant digits without scientific notation for the usual ranges.
pub fn sig3(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let a = v.abs();
    if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// A rate such as an FPR: percent with enough digits for 1e-5.
pub fn percent(rate: f64) -> String {
    if rate == 0.0 {
        "0%".into()
    } else if rate >= 0.01 {
        format!("{:.2}%", rate * 100.0)
    } else {
        format!("{:.4}%", rate * 100.0)
    }
}

/// The not-applicable cell, with the reason in a few words.
pub fn na(reason: &str) -> String {
    format!("n/a ({reason})")
}

/// Median of the samples (mean of the middle two for an even count).
pub fn median(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

/// Writes one JSON object per line; a no-op when no path was given.
pub struct JsonSink(Option<BufWriter<File>>);

impl JsonSink {
    pub fn open(path: Option<&Path>) -> std::io::Result<Self> {
        Ok(Self(match path {
            Some(p) => Some(BufWriter::new(File::create(p)?)),
            None => None,
        }))
    }

    /// Writes `{"record": kind, ...value}`.
    pub fn write(&mut self, kind: &str, value: &impl Serialize) -> std::io::Result<()> {
        let Some(w) = &mut self.0 else {
            return Ok(());
        };
        let mut obj = serde_json::to_value(value).map_err(std::io::Error::other)?;
        if let serde_json::Value::Object(map) = &mut obj {
            map.insert("record".into(), kind.into());
        }
        serde_json::to_writer(&mut *w, &obj).map_err(std::io::Error::other)?;
        w.write_all(b"\n")
    }

    pub fn finish(&mut self) -> std::io::Result<()> {
        match &mut self.0 {
            Some(w) => w.flush(),
            None => Ok(()),
        }
    }
}
