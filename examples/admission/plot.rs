//! Hit ratio against cache size, one panel per trace, one line per policy (SVG).

use std::path::Path;

use plotters::prelude::*;

use crate::Result;
use crate::trace::Trace;

const COLOURS: [RGBColor; 7] = [
    RGBColor(127, 127, 127),
    RGBColor(255, 127, 14),
    RGBColor(31, 119, 180),
    RGBColor(0, 0, 0),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
];

pub fn draw(
    path: &Path,
    traces: &[Trace],
    policies: &[&'static str],
    results: &[Result],
) -> std::result::Result<(), Box<dyn std::error::Error>> {
    let columns = traces.len().clamp(1, 2);
    let rows = traces.len().div_ceil(columns);
    let root = SVGBackend::new(path, (650 * columns as u32, 420 * rows as u32)).into_drawing_area();
    root.fill(&WHITE)?;
    let panels = root.split_evenly((rows, columns));
    for (trace, area) in traces.iter().zip(panels.iter()) {
        let mine: Vec<&Result> = results.iter().filter(|r| r.trace == trace.name).collect();
        let x = |r: &Result| 100.0 * r.cache_size as f64 / trace.distinct as f64;
        let x_max = mine.iter().map(|r| x(r)).fold(0.0, f64::max) * 1.05;
        let y_max = (mine.iter().map(|r| 100.0 * r.hit_ratio).fold(0.0, f64::max) * 1.1).max(1.0);
        let mut chart = ChartBuilder::on(area)
            .caption(&trace.name, ("sans-serif", 20))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(50)
            .build_cartesian_2d(0.0..x_max.max(1.0), 0.0..y_max)?;
        chart
            .configure_mesh()
            .x_desc("cache size, % of distinct keys")
            .y_desc("hit ratio, %")
            .draw()?;
        for (index, policy) in policies.iter().enumerate() {
            let points: Vec<(f64, f64)> = mine
                .iter()
                .filter(|r| r.policy == *policy)
                .map(|r| (x(r), 100.0 * r.hit_ratio))
                .collect();
            let colour = COLOURS[index % COLOURS.len()];
            let width = if *policy == "s3fifo+recent" { 3 } else { 1 };
            chart
                .draw_series(LineSeries::new(points.clone(), colour.stroke_width(width)))?
                .label(*policy)
                .legend(move |(x, y)| {
                    PathElement::new([(x, y), (x + 20, y)], colour.stroke_width(2))
                });
            chart.draw_series(
                points
                    .into_iter()
                    .map(|p| Circle::new(p, 3, colour.filled())),
            )?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()?;
    }
    root.present()?;
    Ok(())
}
