//! The statistics a comparison row is judged on ([`Estimate`]: the interval of the relative
//! change, p, the table's q and Holm values) and how they were made ([`Method`]); made by
//! `super::verdict`, shown beside the paired design's own figures by `super::paired`.

use serde::Serialize;

/// How an estimate was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Welch's t on ln(run value) of the two sides (unpaired).
    Welch,
    /// Unpaired, within boxes: the sides compared inside each box, spread pooled.
    Blocked,
    /// Paired: the per-round log ratio, t over the pairs (boxes as blocks).
    #[serde(rename = "paired-t")]
    Paired,
    /// Monitor rows: Welch's t on the raw run values, variance floored at the resolution.
    Counts,
    /// Every run of each side identical: no width; p from the exact rank-sum (or sign) test.
    Exact,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Welch => "welch",
            Method::Blocked => "blocked",
            Method::Paired => "paired-t",
            Method::Counts => "counts",
            Method::Exact => "exact",
        }
    }
}

/// The statistics of one row: interval of the relative change (in %), p, and the table's
/// adjusted values.
#[derive(Debug, Clone, Serialize)]
pub struct Estimate {
    /// What the interval and p come from.
    pub method: Method,
    pub lower_pct: f64,
    pub point_pct: f64,
    pub upper_pct: f64,
    /// Level of the interval (the settings' confidence).
    pub confidence: f64,
    /// Two-sided p of "no change" (by `method`).
    pub p: f64,
    /// Benjamini–Hochberg q over the comparison's rows.
    pub q: f64,
    /// Holm-adjusted p over the same rows (what the gate uses).
    pub holm: f64,
    /// Degrees of freedom: Welch–Satterthwaite's, pairs − boxes for a paired estimate
    /// (infinite when exact).
    pub df: f64,
    /// True when every run of each side is identical: the interval has no width, p is an
    /// exact test's (never below what the runs allow).
    pub exact: bool,
    /// Sides whose spread came from a noise profile.
    pub borrowed: Vec<String>,
}

impl Estimate {
    fn log_bounds(&self) -> (f64, f64) {
        (
            (self.lower_pct / 100.0).ln_1p(),
            (self.upper_pct / 100.0).ln_1p(),
        )
    }

    /// Where the interval lies relative to ±band (log scale): 1 above, −1 below, 0 inside,
    /// None straddling a boundary.
    pub(super) fn side_of(&self, band: f64) -> Option<i8> {
        let (lo, hi) = self.log_bounds();
        if lo > band {
            Some(1)
        } else if hi < -band {
            Some(-1)
        } else if lo > -band && hi < band {
            Some(0)
        } else {
            None
        }
    }
}
