//! The dashboard's chart, drawn on the server as SVG with plotters: the
//! site's queue depth (left axis) and the median sync latency (right axis)
//! per 5-minute bucket. No script runs to draw it and nothing is fetched
//! from elsewhere.

use plotters::prelude::*;

use stockhop::time::UnixMs;

use super::history::{Series, Trend};
use crate::site_clock::SiteZone;

/// The chart's size in SVG units; the page scales it to its column.
pub const WIDTH: u32 = 960;
pub const HEIGHT: u32 = 320;

const HOUR_MS: i64 = 60 * 60 * 1000;

const DEPTH_COLOUR: RGBColor = RGBColor(0x1f, 0x5f, 0xbf);
/// The trend's bands behind the lines: light enough to read the lines
/// over, apart enough to tell without colour names (and named in the
/// legend).
const DRAINING_BAND: RGBColor = RGBColor(0xe6, 0xf4, 0xea);
const GROWING_BAND: RGBColor = RGBColor(0xff, 0xe8, 0xc2);
const ESCALATED_BAND: RGBColor = RGBColor(0xfb, 0xcf, 0xd4);

/// The legend's words for the trend's states in English, as the page says
/// them (the English catalogue's `trend-*`; [`Words`] reads every locale's).
pub const TREND_WORDS: [(Trend, &str); 3] = [
    (Trend::Draining, "Draining normally"),
    (Trend::Growing, "Growing"),
    (Trend::Escalated, "Escalated"),
];

fn band(trend: Trend) -> RGBColor {
    match trend {
        Trend::Draining => DRAINING_BAND,
        Trend::Growing => GROWING_BAND,
        Trend::Escalated => ESCALATED_BAND,
    }
}
const LATENCY_COLOUR: RGBColor = RGBColor(0xc0, 0x4a, 0x00);

/// The chart's words in one of the view's languages.
pub struct Words {
    trends: [(Trend, String); 3],
    queue_depth: String,
    sync_latency: String,
    sync_latency_axis: String,
    site_time: String,
}

impl Words {
    /// The words of `locale` (one the view speaks), from its catalogue;
    /// the times are on `zone`'s clock.
    pub fn of(locale: &str, zone: &SiteZone) -> Words {
        use super::page::{tr, tr_args};
        let mut args = fluent_bundle::FluentArgs::new();
        args.set("zone", zone.name().to_owned());
        Words {
            trends: [
                (Trend::Draining, tr("trend-draining", locale)),
                (Trend::Growing, tr("trend-growing", locale)),
                (Trend::Escalated, tr("trend-escalated", locale)),
            ],
            queue_depth: tr("chart-queue-depth", locale),
            sync_latency: tr("chart-sync-latency", locale),
            sync_latency_axis: tr("chart-sync-latency-axis", locale),
            site_time: tr_args("chart-site-time", locale, Some(&args)),
        }
    }
}

/// The chart of `series` as an SVG document, its times on `zone`'s clock,
/// in English.
pub fn svg(series: &Series, zone: &SiteZone) -> Result<String, String> {
    svg_in(series, zone, &Words::of("en", zone))
}

/// The chart of `series` in `words`' language.
pub fn svg_in(series: &Series, zone: &SiteZone, words: &Words) -> Result<String, String> {
    let mut out = String::new();
    draw(series, zone, words, &mut out).map_err(|err| format!("drawing the chart: {err}"))?;
    Ok(out)
}

fn draw<'a>(
    series: &Series,
    zone: &SiteZone,
    words: &Words,
    out: &'a mut String,
) -> Result<(), Box<dyn std::error::Error + 'a>> {
    let first = series.buckets.first().map_or(0, |b| b.at.0);
    let last = series.buckets.last().map_or(0, |b| b.at.0) + series.bucket_ms;
    let max_depth = series
        .buckets
        .iter()
        .map(|b| b.queue_depth)
        .max()
        .unwrap_or(0)
        .max(10);
    let max_latency_s = series
        .buckets
        .iter()
        .filter_map(|b| b.median_sync_latency_ms)
        .max()
        .unwrap_or(0)
        .max(1000) as f64
        / 1000.0;

    // Ticks on whole hours of the site's clock, about six of them.
    let step = (i64::from(series.hours) / 6).max(1) * HOUR_MS;
    let offset_ms = i64::from(zone.offset_minutes(UnixMs(last))) * 60_000;
    let ticks: Vec<i64> = ((first + offset_ms).div_euclid(step) + 1
        ..=(last + offset_ms).div_euclid(step))
        .map(|n| n * step - offset_ms)
        .collect();

    let root = SVGBackend::with_string(out, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .margin(12)
        .x_label_area_size(60)
        .y_label_area_size(56)
        .right_y_label_area_size(64)
        .build_cartesian_2d(
            (first..last).with_key_points(ticks),
            0..max_depth + max_depth / 10,
        )?
        .set_secondary_coord(first..last, 0.0..max_latency_s * 1.1);
    chart
        .configure_mesh()
        .light_line_style(TRANSPARENT)
        .bold_line_style(RGBColor(0xe3, 0xe6, 0xea))
        .y_labels(6)
        .x_label_formatter(&|t| zone.clock(UnixMs(*t)))
        .y_desc(words.queue_depth.as_str())
        .x_desc(words.site_time.as_str())
        .label_style(("sans-serif", 18))
        .draw()?;
    chart
        .configure_secondary_axes()
        .y_desc(words.sync_latency_axis.as_str())
        .y_label_formatter(&|seconds| latency_label(*seconds, max_latency_s))
        .label_style(("sans-serif", 18))
        .draw()?;
    // The trend at each bucket's end, as a band over the bucket.
    let top = max_depth + max_depth / 10;
    for (trend, trend_words) in &words.trends {
        let trend = *trend;
        let colour = band(trend);
        chart
            .draw_series(series.buckets.iter().filter(|b| b.trend == trend).map(|b| {
                Rectangle::new(
                    [(b.at.0, 0), (b.at.0 + series.bucket_ms, top)],
                    colour.filled(),
                )
            }))?
            .label(trend_words.as_str())
            .legend(move |(x, y)| Rectangle::new([(x, y - 7), (x + 18, y + 7)], colour.filled()));
    }
    let half = series.bucket_ms / 2;
    chart
        .draw_series(LineSeries::new(
            series
                .buckets
                .iter()
                .map(|b| (b.at.0 + half, b.queue_depth)),
            DEPTH_COLOUR.stroke_width(3),
        ))?
        .label(words.queue_depth.as_str())
        .legend(|(x, y)| PathElement::new([(x, y), (x + 18, y)], DEPTH_COLOUR.stroke_width(3)));
    // Latency only where a bucket recorded hops: a gap, not a zero.
    let mut runs: Vec<Vec<(i64, f64)>> = vec![Vec::new()];
    for bucket in &series.buckets {
        match bucket.median_sync_latency_ms {
            Some(ms) => runs
                .last_mut()
                .expect("runs starts non-empty")
                .push((bucket.at.0 + half, ms as f64 / 1000.0)),
            None => runs.push(Vec::new()),
        }
    }
    let mut labelled = false;
    for run in runs.into_iter().filter(|run| !run.is_empty()) {
        let drawn = chart.draw_secondary_series(PointSeries::of_element(
            run.clone(),
            3,
            LATENCY_COLOUR.filled(),
            &|coord, size, style| EmptyElement::at(coord) + Circle::new((0, 0), size, style),
        ))?;
        if !labelled {
            drawn.label(words.sync_latency.as_str()).legend(|(x, y)| {
                PathElement::new([(x, y), (x + 18, y)], LATENCY_COLOUR.stroke_width(3))
            });
            labelled = true;
        }
        chart.draw_secondary_series(LineSeries::new(run, LATENCY_COLOUR.stroke_width(2)))?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(0xcc, 0xcc, 0xcc))
        .position(SeriesLabelPosition::UpperLeft)
        .label_font(("sans-serif", 18))
        .draw()?;
    root.present()?;
    Ok(())
}

/// A latency tick in seconds, with as many decimals as the axis's range
/// needs for its ticks to differ: a site syncing in under a second has
/// ticks of 0.2 s, not a row of zeros and ones.
fn latency_label(seconds: f64, max_s: f64) -> String {
    if max_s < 2.0 {
        format!("{seconds:.1}")
    } else if max_s < 20.0 {
        let whole = format!("{seconds:.1}");
        whole.strip_suffix(".0").map(str::to_owned).unwrap_or(whole)
    } else {
        format!("{seconds:.0}")
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::history::Bucket;

    #[test]
    fn latency_ticks_keep_the_decimals_their_range_needs() {
        let ticks = |max: f64| -> Vec<String> {
            (0..=5)
                .map(|i| latency_label(max * 1.1 * f64::from(i) / 5.0, max))
                .collect()
        };
        assert_eq!(ticks(1.0), ["0.0", "0.2", "0.4", "0.7", "0.9", "1.1"]);
        assert_eq!(ticks(5.0), ["0", "1.1", "2.2", "3.3", "4.4", "5.5"]);
        assert_eq!(ticks(100.0), ["0", "22", "44", "66", "88", "110"]);
    }

    #[test]
    fn the_chart_is_an_svg_with_both_lines_and_clock_labels() {
        let buckets = (0..144)
            .map(|i| Bucket {
                at: UnixMs(i * 300_000),
                queue_depth: i,
                median_sync_latency_ms: (i % 3 != 0).then_some(1500),
                trend: [Trend::Draining, Trend::Growing, Trend::Escalated][i as usize / 48],
            })
            .collect();
        let series = Series {
            hours: 12,
            bucket_ms: 300_000,
            buckets,
        };
        let drawn = svg(&series, &SiteZone::utc()).unwrap();
        assert!(drawn.starts_with("<svg"), "{}", &drawn[..80]);
        assert!(drawn.contains("queue depth"));
        assert!(drawn.contains("median sync latency"));
        for (_, words) in TREND_WORDS {
            assert!(drawn.contains(words), "the legend names {words}");
        }
        assert!(
            drawn.contains(">\n02:00\n") || drawn.contains(">02:00<"),
            "labels on whole hours: {drawn}"
        );
        // On a site in Kolkata (UTC+05:30) the same hours read 05:30 later,
        // still on whole hours of its clock.
        let kolkata = svg(&series, &SiteZone::named("Asia/Kolkata").unwrap()).unwrap();
        assert!(
            kolkata.contains(">\n08:00\n") || kolkata.contains(">08:00<"),
            "labels on the site's whole hours: {kolkata}"
        );
    }
}
