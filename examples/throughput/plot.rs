//! The picture: throughput against load factor (lookups and inserts, from the reference
//! fill) and against thread count (each mixed workload), one line per peer, log-scale y.

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::reference::CurvePoint;
use crate::tables::thousands;

/// Tableau-like colours, distinct on screen and in print; `ours` is drawn black and thicker.
const COLOURS: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

fn style(peer_index: usize) -> ShapeStyle {
    if peer_index == 0 {
        BLACK.stroke_width(3)
    } else {
        COLOURS[(peer_index - 1) % COLOURS.len()].stroke_width(2)
    }
}

/// What the notes beside the legend say: the machine, the sizes and the build.
pub struct Context<'a> {
    pub cpu: &'a str,
    pub cores: usize,
    pub pinned: bool,
    pub rustflags: &'a str,
    pub target_features: &'a [String],
    pub items: usize,
    pub fingerprint_bits: u32,
    pub slots: usize,
    pub load: f64,
    /// Samples per measurement, where known.
    pub samples: Option<u64>,
}

/// The context printed beside the legend, so a picture shared alone still says what it
/// measured.
pub fn notes(c: &Context) -> Vec<String> {
    let flags = if c.rustflags.is_empty() {
        "(none)"
    } else {
        c.rustflags
    };
    let mut notes = vec![
        format!("CPU: {} ({} cores)", c.cpu, c.cores),
        format!(
            "{} items; ours {}-bit × {} slots at load {}; pinned: {}",
            thousands(c.items),
            c.fingerprint_bits,
            c.slots,
            c.load,
            if c.pinned { "yes" } else { "no" }
        ),
        format!("RUSTFLAGS={flags}; {}", c.target_features.join(" ")),
    ];
    if let Some(samples) = c.samples {
        notes.push(format!("median of {samples} samples"));
    }
    notes.push("A peer missing from a panel cannot run that workload (n/a in the tables).".into());
    notes
}

/// One line of one panel.
struct Series {
    peer: usize,
    points: Vec<(f64, f64)>,
}

/// One peer's throughput at one thread count in one mixed workload.
pub struct ThreadPoint {
    pub peer: &'static str,
    pub threads: usize,
    /// `None` where the peer cannot run the workload.
    pub ops_per_sec: Option<f64>,
}

pub struct Input<'a> {
    pub peers: &'a [&'static str],
    pub curve: &'a [CurvePoint],
    /// One entry per mix: its label and points.
    pub mixed: &'a [(String, Vec<ThreadPoint>)],
    /// Lines of context printed under the legend (CPU, sizes, build).
    pub notes: &'a [String],
}

type Res = Result<(), Box<dyn std::error::Error>>;

pub fn draw(path: &Path, input: &Input) -> Res {
    let root = SVGBackend::new(path, (1500, 1000)).into_drawing_area();
    root.fill(&WHITE)?;
    let (charts, side) = root.split_horizontally(1150);
    let panels = charts.split_evenly((2, 2));
    let index = |name: &str| input.peers.iter().position(|p| *p == name).unwrap_or(0);

    let by_peer = |f: &dyn Fn(&CurvePoint) -> f64| -> Vec<Series> {
        (0..input.peers.len())
            .map(|peer| Series {
                peer,
                points: input
                    .curve
                    .iter()
                    .filter(|c| index(c.peer) == peer)
                    .map(|c| (100.0 * c.load, f(c) / 1e6))
                    .collect(),
            })
            .filter(|s| !s.points.is_empty())
            .collect()
    };
    let x_load = "items held / slots of ours (load factor, %)";
    panel(
        &panels[0],
        "Lookups during fill (50% present)",
        x_load,
        &by_peer(&|c| c.lookups_per_sec),
        false,
    )?;
    panel(
        &panels[1],
        "Inserts during fill (per segment ending here)",
        x_load,
        &by_peer(&|c| c.inserts_per_sec),
        false,
    )?;
    for (area, (label, rows)) in panels[2..].iter().zip(input.mixed) {
        let series: Vec<Series> = (0..input.peers.len())
            .map(|peer| Series {
                peer,
                points: rows
                    .iter()
                    .filter(|r| index(r.peer) == peer)
                    .filter_map(|r| Some((r.threads as f64, r.ops_per_sec? / 1e6)))
                    .collect(),
            })
            .filter(|s| !s.points.is_empty())
            .collect();
        let title = format!("Mixed {label} (reads/inserts/removes %)");
        panel(area, &title, "threads", &series, true)?;
    }
    legend(&side, input)?;
    root.present()?;
    Ok(())
}

fn panel(
    area: &DrawingArea<SVGBackend, Shift>,
    title: &str,
    x_desc: &str,
    series: &[Series],
    integer_x: bool,
) -> Res {
    let all = series.iter().flat_map(|s| &s.points);
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in all {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    if x0 > x1 {
        // Nothing measured for this panel (e.g. --mixed skips the fill): say so, not blank.
        area.titled(title, ("sans-serif", 20))?.draw(&Text::new(
            "not measured in this run",
            (40, 60),
            ("sans-serif", 15),
        ))?;
        return Ok(());
    }
    let (x0, x1) = if integer_x {
        (x0 - 0.25, x1 + 0.25)
    } else {
        (0.0, x1 * 1.02)
    };
    // Log scale: the peers span more than a decade, and equal ratios should look equal.
    let (y0, y1) = (y0 / 1.5, y1 * 1.5);
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d(x0..x1, (y0..y1).log_scale().base(2.0))?;
    // Thread counts are whole: leave in-between ticks unlabelled.
    let x_fmt = |x: &f64| {
        if !integer_x || (x - x.round()).abs() < 1e-6 {
            format!("{x:.0}")
        } else {
            String::new()
        }
    };
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(x_desc)
        .y_desc("throughput (million ops/s, log scale)")
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&|y| {
            if *y >= 10.0 {
                format!("{y:.0}")
            } else {
                format!("{y}")
            }
        })
        .y_labels(12)
        .axis_desc_style(("sans-serif", 15))
        .label_style(("sans-serif", 13));
    if integer_x {
        mesh.x_labels((x1 - x0).round() as usize + 1);
    }
    mesh.draw()?;
    for s in series {
        let st = style(s.peer);
        chart.draw_series(LineSeries::new(s.points.iter().copied(), st))?;
        chart.draw_series(
            s.points
                .iter()
                .map(|&p| Circle::new(p, if s.peer == 0 { 4 } else { 3 }, st.filled())),
        )?;
    }
    Ok(())
}

fn legend(area: &DrawingArea<SVGBackend, Shift>, input: &Input) -> Res {
    let text = ("sans-serif", 16).into_font();
    let small = ("sans-serif", 12).into_font();
    area.draw(&Text::new(
        "Peers",
        (10, 30),
        ("sans-serif", 20).into_font(),
    ))?;
    for (i, name) in input.peers.iter().enumerate() {
        let y = 60 + 26 * i as i32;
        area.draw(&PathElement::new(vec![(10, y), (50, y)], style(i)))?;
        area.draw(&Circle::new((30, y), 4, style(i).filled()))?;
        area.draw(&Text::new(name.to_string(), (60, y - 8), text.clone()))?;
    }
    let mut y = 60 + 26 * input.peers.len() as i32 + 20;
    for note in input.notes {
        // Long notes wrap at a word boundary to fit the 350-px column.
        for line in wrap(note, 52) {
            area.draw(&Text::new(line, (10, y), small.clone()))?;
            y += 16;
        }
        y += 4;
    }
    Ok(())
}

fn wrap(s: &str, width: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    for word in s.split_whitespace() {
        let last = lines.last_mut().expect("starts with one line");
        if !last.is_empty() && last.len() + 1 + word.len() > width {
            lines.push(word.to_string());
        } else {
            if !last.is_empty() {
                last.push(' ');
            }
            last.push_str(word);
        }
    }
    lines
}
