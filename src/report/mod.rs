//! Every renderer: the UnixBench text report and CSV, the test list, compare's formats (and
//! the rounds of a paired comparison, `campaign_rounds`), the
//! HTML report (`html`), the will-it-scale tables and plot, AIM7's table, the models' tables, an
//! `exec` run's table,
//! the store's listings, the builds (`build`), a bisection (`bisect`), `calibrate`'s rates, and the terminal: standard output (closed-pipe safe), the terminal
//! reporter sink and colour (`color`). (The progress line, which the harnesses draw, is
//! `crate::progress`.)

pub mod aim7;
pub mod bisect;
pub mod build;
pub mod calibrate;
pub mod campaign;
pub mod campaign_rounds;
pub mod check;
pub mod color;
pub mod compare;
pub mod exec;
pub mod html;
pub mod in_window;
pub mod list;
pub mod model;
pub mod scale;
pub mod scale_svg;
pub mod store;
pub mod svg;
pub mod terminal;
pub mod unixbench_csv;
pub mod unixbench_text;

/// `compare`'s output in any format: the HTML page from [`html`], every other format from
/// [`compare`] (which so never calls the HTML renderer, and the HTML renderer may use its
/// pieces).
pub fn comparison(
    c: &crate::compare::Comparison,
    format: compare::Format,
    color: bool,
) -> anyhow::Result<String> {
    match format {
        compare::Format::Html => Ok(html::comparison(c)),
        _ => compare::render_text(c, format, color),
    }
}

pub use terminal::print;
