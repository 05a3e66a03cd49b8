//! The pieces every chart is drawn with, by hand: escaping of text from records, a linear
//! scale, "nice" axis ticks, short tick labels, axes, and an `<svg>` element with the `chart`
//! class the browser test counts. The HTML report's charts and `scale --svg` use them.
//!
//! Why by hand and not with plotters: the report's charts need what plotters' SVG backend
//! does not give, a tooltip (`<title>`) on every dot naming its run, CSS classes the page's
//! light and dark themes colour, and accessible names; one stack draws both the report and the
//! plot.

use std::fmt::Write;

/// Text made safe for HTML and SVG, as element content and inside quoted attributes.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A linear map from data values `d0..d1` to pixels `r0..r1`.
#[derive(Debug, Clone, Copy)]
pub struct Scale {
    pub d0: f64,
    pub d1: f64,
    pub r0: f64,
    pub r1: f64,
}

impl Scale {
    /// A scale over `lo..hi`; an empty range is widened around its value.
    pub fn new(lo: f64, hi: f64, r0: f64, r1: f64) -> Scale {
        let (lo, hi) = if hi > lo {
            (lo, hi)
        } else {
            let pad = if lo == 0.0 { 1.0 } else { lo.abs() * 0.05 };
            (lo - pad, hi + pad)
        };
        Scale {
            d0: lo,
            d1: hi,
            r0,
            r1,
        }
    }

    /// The pixel of `v`, clamped to the range.
    pub fn at(&self, v: f64) -> f64 {
        let t = ((v - self.d0) / (self.d1 - self.d0)).clamp(0.0, 1.0);
        self.r0 + t * (self.r1 - self.r0)
    }
}

/// About `count` round tick values covering `lo..hi` (steps of 1, 2 or 5 × 10^k).
pub fn ticks(lo: f64, hi: f64, count: usize) -> Vec<f64> {
    if hi <= lo || !lo.is_finite() || !hi.is_finite() {
        return vec![lo];
    }
    let raw = (hi - lo) / count.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    // The round step nearest the raw one (a little smaller rather than much larger).
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw * 0.7)
        .unwrap_or(10.0 * mag);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    // Multiples of the step, so no sum drifts (0.30000000000000004); +0.0 turns -0 into 0.
    (first..=last).map(|i| i as f64 * step + 0.0).collect()
}

/// A tick label: `0`, `2.5`, `40`, `1.2k`, `3.4M`, `1.1G`.
pub fn short(v: f64) -> String {
    let a = v.abs();
    let (x, suffix) = if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e3 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let text = if x == x.round() || x.abs() >= 10.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    };
    format!("{text}{suffix}")
}

/// The opening tag of a chart: `kind` goes into the class (`chart chart-forest`), `label` into
/// the accessible name.
pub fn open(kind: &str, width: f64, height: f64, label: &str) -> String {
    format!(
        "<svg class=\"chart chart-{kind}\" width=\"{width:.0}\" \
         height=\"{height:.0}\" viewBox=\"0 0 {width:.0} {height:.0}\" role=\"img\" \
         aria-label=\"{}\">",
        esc(label)
    )
}

/// A horizontal axis at `y` with ticks and labels (`unit` appended to each label).
pub fn x_axis(out: &mut String, scale: &Scale, y: f64, values: &[f64], unit: &str) {
    let _ = write!(
        out,
        "<line class=\"axis\" x1=\"{:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\"/>",
        scale.r0, scale.r1
    );
    for v in values {
        let x = scale.at(*v);
        let _ = write!(
            out,
            "<line class=\"tick\" x1=\"{x:.1}\" y1=\"{y:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\"/>\
             <text class=\"tick-label\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}{}</text>",
            y + 4.0,
            y + 16.0,
            short(*v),
            esc(unit)
        );
    }
}

/// A vertical axis at `x` with ticks and labels.
pub fn y_axis(out: &mut String, scale: &Scale, x: f64, values: &[f64]) {
    let _ = write!(
        out,
        "<line class=\"axis\" x1=\"{x:.1}\" y1=\"{:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\"/>",
        scale.r0, scale.r1
    );
    for v in values {
        let y = scale.at(*v);
        let _ = write!(
            out,
            "<line class=\"tick\" x1=\"{:.1}\" y1=\"{y:.1}\" x2=\"{x:.1}\" y2=\"{y:.1}\"/>\
             <text class=\"tick-label\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            x - 4.0,
            x - 6.0,
            y + 4.0,
            short(*v)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_covers_the_five_characters() {
        assert_eq!(
            esc("<script>alert('x') & \"y\"</script>"),
            "&lt;script&gt;alert(&#39;x&#39;) &amp; &quot;y&quot;&lt;/script&gt;"
        );
    }

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        assert_eq!(ticks(-4.3, 6.9, 5), vec![-4.0, -2.0, 0.0, 2.0, 4.0, 6.0]);
        assert_eq!(
            ticks(0.0, 1_000_000.0, 4),
            vec![0.0, 200_000.0, 400_000.0, 600_000.0, 800_000.0, 1_000_000.0]
        );
        assert_eq!(ticks(3.0, 3.0, 4), vec![3.0]);
    }

    #[test]
    fn scales_map_and_clamp() {
        let s = Scale::new(0.0, 10.0, 100.0, 200.0);
        assert_eq!(s.at(5.0), 150.0);
        assert_eq!(s.at(20.0), 200.0);
        let flat = Scale::new(5.0, 5.0, 0.0, 10.0);
        assert_eq!(flat.at(5.0), 5.0);
    }

    #[test]
    fn short_labels() {
        assert_eq!(short(0.0), "0");
        assert_eq!(short(2.5), "2.5");
        assert_eq!(short(1500.0), "1.5k");
        assert_eq!(short(3_400_000.0), "3.4M");
        assert_eq!(short(-2.0), "-2");
        assert_eq!(short(25_000.0), "25k");
    }
}
