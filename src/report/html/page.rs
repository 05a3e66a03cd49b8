//! The page around the sections: doctype, title, the inline style sheet (system fonts only,
//! nothing fetched), a header, the sections in order, and a footer naming the build. No
//! script: the page draws as it is.

use crate::report::svg::esc;

/// The style sheet: colours of the verdicts, tables, and the charts' parts.
const STYLE: &str = "
:root { --regressed: #c62828; --improved: #2e7d32; --dim: #6b6b6b; --warn: #b26a00;
  --base: #3b6ea5; --patched: #d9730d; --band: #e8eef5; --line: #c8c8c8; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, 'Segoe UI', Roboto, 'DejaVu Sans', sans-serif;
  color: #1d1d1d; background: #fff; margin: 0 auto; padding: 16px 24px 40px; max-width: 1600px; }
h1 { font-size: 22px; margin: 8px 0 4px; }
h2 { font-size: 17px; margin: 28px 0 8px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
h3 { font-size: 15px; margin: 16px 0 6px; }
p.sub, p.note, footer { color: var(--dim); margin: 2px 0; }
ul.warnings { margin: 6px 0; padding-left: 20px; }
ul.warnings li { color: var(--warn); }
table { border-collapse: collapse; margin: 6px 0; }
th, td { padding: 3px 8px; border-bottom: 1px solid #ececec; vertical-align: middle; }
th { text-align: left; font-weight: 600; background: #f6f6f6; position: sticky; top: 0; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.metric { min-width: 17em; max-width: 30em; }
th { overflow-wrap: anywhere; }
.scroll { overflow-x: auto; max-width: 100%; }
tr.primary td.metric { font-weight: 700; }
td.verdict { font-weight: 600; white-space: nowrap; }
.v-regressed { color: var(--regressed); }
.v-improved { color: var(--improved); }
.v-inconclusive, .v-no-verdict, .v-not-flagged { color: var(--dim); }
.v-bimodal, .v-drifting { color: var(--warn); }
.v-no-change { color: #1d1d1d; }
tr.differs td { background: #fff1e0; }
tr.differs td.name::after { content: ' \\2260'; color: var(--warn); }
tr.expected td { background: #f3f6fb; }
.fingerprint td { max-width: 520px; overflow-wrap: anywhere; font-size: 13px; }
svg.chart { display: block; overflow: visible; }
svg.chart-runs { display: inline-block; vertical-align: middle; }
svg text { font: 11px system-ui, -apple-system, 'DejaVu Sans', sans-serif; fill: #333; }
svg .label { font-size: 12px; }
svg .title { font-size: 13px; font-weight: 600; }
svg .axis { stroke: #888; stroke-width: 1; }
svg .tick { stroke: #888; stroke-width: 1; }
svg .grid { stroke: #eee; stroke-width: 1; }
svg .zero { stroke: #555; stroke-width: 1; stroke-dasharray: 3 3; }
svg .band { fill: var(--band); }
svg .band-edge { stroke: #b7c7da; stroke-width: 1; }
svg .ci { stroke-width: 2.5; stroke-linecap: round; }
svg .side-base { fill: var(--base); stroke: var(--base); }
svg .side-patched { fill: var(--patched); stroke: var(--patched); }
svg .mean { stroke-width: 2; }
svg .curve { fill: none; stroke-width: 2; }
svg .run { fill-opacity: 0.75; stroke: none; }
svg .hollow { fill: #fff; stroke-width: 1.5; }
svg .s-regressed { stroke: var(--regressed); fill: var(--regressed); }
svg .s-improved { stroke: var(--improved); fill: var(--improved); }
svg .s-no-change { stroke: #1d1d1d; fill: #1d1d1d; }
svg .s-inconclusive, svg .s-no-verdict, svg .s-not-flagged { stroke: #8a8a8a; fill: #8a8a8a; }
svg .s-bimodal, svg .s-drifting { stroke: var(--warn); fill: var(--warn); }
svg .t-regressed { fill: var(--regressed); font-weight: 600; }
svg .t-improved { fill: var(--improved); font-weight: 600; }
svg .t-no-change { fill: #1d1d1d; font-weight: 600; }
svg .t-inconclusive, svg .t-no-verdict, svg .t-not-flagged { fill: var(--dim); }
svg .t-bimodal, svg .t-drifting { fill: var(--warn); font-weight: 600; }
.legend span { display: inline-block; margin-right: 14px; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 5px; margin-right: 4px; vertical-align: -1px; }
.swatch.base { background: var(--base); } .swatch.patched { background: var(--patched); }
.curves { display: flex; flex-wrap: wrap; gap: 18px; }
@media print { th { position: static; } }
";

/// A page being built: sections are appended in order.
pub struct Page {
    title: String,
    header: String,
    body: String,
}

impl Page {
    /// A page titled `title` (text), with `subtitle` lines under the heading (HTML).
    pub fn new(title: &str, subtitle: &[String]) -> Page {
        let mut header = format!("<header><h1>{}</h1>", esc(title));
        for s in subtitle {
            header += &format!("<p class=\"sub\">{s}</p>");
        }
        header += "</header>";
        Page {
            title: title.to_string(),
            header,
            body: String::new(),
        }
    }

    /// Appends a section with a heading (text) and its content (HTML); empty content is
    /// left out.
    pub fn section(&mut self, id: &str, heading: &str, content: &str) {
        if content.is_empty() {
            return;
        }
        self.body += &format!(
            "<section id=\"{id}\"><h2>{}</h2>\n{content}\n</section>\n",
            esc(heading)
        );
    }

    /// The whole document.
    pub fn finish(self) -> String {
        format!(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <meta name=\"generator\" content=\"patchbench {version}\">\n\
             <title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{header}\n\
             {body}<footer>Written by patchbench {version}. Self-contained: no script, no \
             fetched fonts or files.</footer>\n</body>\n</html>\n",
            version = esc(env!("CARGO_PKG_VERSION")),
            title = esc(&self.title),
            header = self.header,
            body = self.body,
        )
    }
}

/// A list of warnings (text), or nothing when there are none.
pub fn warning_list(lines: &[String]) -> String {
    if lines.is_empty() {
        return String::new();
    }
    let items: String = lines
        .iter()
        .map(|l| format!("<li>{}</li>", esc(l)))
        .collect();
    format!("<ul class=\"warnings\">{items}</ul>")
}

/// A paragraph of text.
pub fn note(text: &str) -> String {
    format!("<p class=\"note\">{}</p>", esc(text))
}
