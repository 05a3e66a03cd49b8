//! How a string that came from data or from another process (a host name, a kernel or CPU
//! string, a test name, a label, a posted table's header, another process's `comm`, a line of
//! a campaign step's console, a value quoted in an error) is shown on a terminal or in a text
//! format: the one sanitising layer of every output. JSON files keep the exact string; HTML
//! escapes for itself.
//!
//! - [`field`]: one string inside a line: every control character shown escaped (`\e`,
//!   `\x07`, `\n`, `\t`; DEL, C1 controls, bidirectional overrides and line separators as
//!   `\u202e`), cut to [`FIELD_CHARS`] characters with an ellipsis.
//! - [`line`]: a whole one-line message (an error, a warning): the same, cut to
//!   [`LINE_CHARS`].
//! - [`text`]: the net under a whole document on its way to a terminal (standard output,
//!   progress lines): newlines and tabs kept, every other control character escaped, and our
//!   own colour sequences (`ESC [ digits m`) kept only when colour is on. Its `\u…` escapes are
//!   JSON's, so JSON passes through it unchanged in meaning.
//! - [`csv_cell`]: a CSV cell: escaped as [`escape`] does, and a cell that a spreadsheet would
//!   read as a formula (starting with `=`, `+`, `-`, `@`, a tab or a carriage return, and not
//!   a plain number) prefixed with a single quote, as OWASP recommends against CSV injection.
//! - [`markdown_cell`]: a cell of a Markdown table: a [`field`] with `|` escaped.
//! - [`eprint_line`]: the one way the library writes a line to standard error.
//!
//! Bottom layer: it depends on nothing else of patchbench, so every layer (the progress line,
//! the noise monitor, the campaign driver) can use it.

use std::borrow::Cow;
use std::io::Write;

/// The most characters of one data string shown inside a line.
pub const FIELD_CHARS: usize = 160;
/// The most characters of one message line (an error or a warning).
pub const LINE_CHARS: usize = 4000;
/// What marks a cut string.
pub const ELLIPSIS: char = '…';

/// The escape of `c` when it must not reach a terminal raw, or None.
fn escape_of(c: char) -> Option<String> {
    Some(match c {
        '\x1b' => "\\e".to_string(),
        '\n' => "\\n".to_string(),
        '\r' => "\\r".to_string(),
        '\t' => "\\t".to_string(),
        '\0'..='\x1f' => format!("\\x{:02x}", c as u32),
        // DEL, the C1 controls (U+009B is an 8-bit CSI to some terminals), the bidirectional
        // embeddings, overrides and isolates (text that reads in another order than it is),
        // and the Unicode line and paragraph separators: JSON's escape form.
        '\x7f'..='\u{9f}'
        | '\u{200e}'
        | '\u{200f}'
        | '\u{2028}'..='\u{202e}'
        | '\u{2066}'..='\u{2069}' => format!("\\u{:04x}", c as u32),
        _ => return None,
    })
}

/// True when `c` is shown escaped by [`escape`].
pub fn is_unsafe(c: char) -> bool {
    escape_of(c).is_some()
}

/// `s` with every control character (newlines and tabs too) shown escaped; not cut.
pub fn escape(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_unsafe) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match escape_of(c) {
            Some(e) => out.push_str(&e),
            None => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// `s` cut to at most `max` characters, the last of them an ellipsis when it was longer.
pub fn cut(s: &str, max: usize) -> Cow<'_, str> {
    match s.char_indices().nth(max) {
        None => Cow::Borrowed(s),
        Some(_) => {
            let keep = max.saturating_sub(1);
            let end = s.char_indices().nth(keep).map_or(s.len(), |(i, _)| i);
            Cow::Owned(format!("{}{ELLIPSIS}", &s[..end]))
        }
    }
}

/// A data string inside a line: escaped, then cut to [`FIELD_CHARS`].
pub fn field(s: &str) -> String {
    field_cut(s, FIELD_CHARS)
}

/// Like [`field`], cut to `max` characters.
pub fn field_cut(s: &str, max: usize) -> String {
    // Cut before escaping too, so a 100 KB string is not escaped whole first.
    let head = cut(s, max.saturating_add(1));
    cut(&escape(&head), max).into_owned()
}

/// A one-line message (an error, a warning): escaped (newlines too), cut to [`LINE_CHARS`].
pub fn line(s: &str) -> String {
    field_cut(s, LINE_CHARS)
}

/// True when `rest` starts with a colour sequence of ours: `ESC [`, digits and `;`, `m`.
fn sgr_len(rest: &str) -> Option<usize> {
    let body = rest.strip_prefix("\x1b[")?;
    let end = body.find(|c: char| !(c.is_ascii_digit() || c == ';'))?;
    (body[end..].starts_with('m')).then_some(2 + end + 1)
}

/// The net under a document on its way to a terminal: newlines and tabs kept, every other
/// control character escaped; with `keep_colour`, the colour sequences (`ESC [ … m`) that
/// patchbench's own colouring writes are kept.
pub fn text(s: &str, keep_colour: bool) -> Cow<'_, str> {
    let needs = s.chars().any(|c| c != '\n' && c != '\t' && is_unsafe(c));
    if !needs {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    let mut i = 0;
    while let Some(c) = s[i..].chars().next() {
        if keep_colour && c == '\x1b' {
            if let Some(n) = sgr_len(&s[i..]) {
                out.push_str(&s[i..i + n]);
                i += n;
                continue;
            }
        }
        match escape_of(c) {
            Some(_) if c == '\n' || c == '\t' => out.push(c),
            Some(e) => out.push_str(&e),
            None => out.push(c),
        }
        i += c.len_utf8();
    }
    Cow::Owned(out)
}

/// True for a cell that is a plain number (`-3`, `+1.5e3`, `-9.8%`): a spreadsheet reads it
/// as a number, never as a formula.
fn is_plain_number(s: &str) -> bool {
    let t = s.strip_suffix('%').unwrap_or(s);
    !t.is_empty()
        && t.bytes()
            .all(|b| b.is_ascii_digit() || b".+-eE".contains(&b))
        && t.parse::<f64>().is_ok_and(f64::is_finite)
}

/// A CSV cell: control characters escaped, and a cell a spreadsheet would take for a formula
/// (it starts with `=`, `+`, `-`, `@`, a tab or a carriage return and is not a plain number)
/// prefixed with `'` (OWASP, "CSV Injection").
pub fn csv_cell(s: &str) -> Cow<'_, str> {
    let formula = s.starts_with(['=', '+', '-', '@', '\t', '\r']) && !is_plain_number(s);
    match (formula, escape(s)) {
        (true, e) => Cow::Owned(format!("'{e}")),
        (false, e) => e,
    }
}

/// A cell of a Markdown table: a [`field`] with `|` escaped, so it cannot end the cell.
pub fn markdown_cell(s: &str) -> String {
    field(s).replace('|', "\\|")
}

/// Writes one message line to standard error, sanitised by [`line`]; a failing stderr is
/// ignored (there is nowhere left to say so).
pub fn eprint_line(message: &str) {
    let mut out = line(message);
    out.push('\n');
    let _ = std::io::stderr().lock().write_all(out.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_shown_escaped() {
        assert_eq!(escape("plain host-1 ü"), "plain host-1 ü");
        assert_eq!(escape("\x1b[2J"), "\\e[2J");
        assert_eq!(escape("\x1b]0;title\x07"), "\\e]0;title\\x07");
        assert_eq!(escape("base\nverdict"), "base\\nverdict");
        assert_eq!(escape("a\tb\rc\0"), "a\\tb\\rc\\x00");
        assert_eq!(escape("\x7f\u{9b}\u{202e}x"), "\\u007f\\u009b\\u202ex");
        assert!(matches!(escape("nothing"), Cow::Borrowed(_)));
    }

    #[test]
    fn long_strings_are_cut_with_an_ellipsis() {
        let long = "h".repeat(100_000);
        let f = field(&long);
        assert_eq!(f.chars().count(), FIELD_CHARS);
        assert!(f.ends_with(ELLIPSIS));
        assert_eq!(field("short"), "short");
        let exact = "x".repeat(FIELD_CHARS);
        assert_eq!(field(&exact), exact, "a string of the limit is not cut");
        // Escapes count in the width: a string of ESCs is cut after escaping.
        let escs = "\x1b".repeat(FIELD_CHARS);
        let f = field(&escs);
        assert_eq!(f.chars().count(), FIELD_CHARS);
        assert!(!f.contains('\x1b'));
        assert_eq!(cut("ééé", 2), "é…");
        assert_eq!(
            line(&"y".repeat(10 * LINE_CHARS)).chars().count(),
            LINE_CHARS
        );
    }

    #[test]
    fn the_net_keeps_lines_and_our_colours_only() {
        let doc = "a\tb\nc \x1b[31mregressed\x1b[0m \x1b[2J \x1b]0;t\x07\r";
        assert_eq!(
            text(doc, true),
            "a\tb\nc \x1b[31mregressed\x1b[0m \\e[2J \\e]0;t\\x07\\r"
        );
        assert_eq!(
            text(doc, false),
            "a\tb\nc \\e[31mregressed\\e[0m \\e[2J \\e]0;t\\x07\\r"
        );
        assert!(matches!(text("fine\n", false), Cow::Borrowed(_)));
    }

    #[test]
    fn the_net_leaves_json_valid_and_equal() {
        let value = serde_json::json!({"host": "a\u{7f}b\u{9b}c\u{202e}d\x1b", "n": -1});
        let pretty = serde_json::to_string_pretty(&value).unwrap();
        let shown = text(&pretty, false);
        let back: serde_json::Value = serde_json::from_str(&shown).unwrap();
        assert_eq!(back, value);
    }

    #[test]
    fn csv_cells_that_look_like_formulas_are_neutralised() {
        for bad in [
            "=HYPERLINK(\"http://x\",\"y\")",
            "+1+2",
            "-2+3",
            "@SUM(A1)",
            "\tx",
            "\rx",
            "-",
        ] {
            let cell = csv_cell(bad);
            assert!(cell.starts_with('\''), "{bad:?} -> {cell:?}");
            assert!(!cell.contains(['\t', '\r']), "{bad:?} -> {cell:?}");
        }
        for fine in ["-9.8", "+1.5e3", "-12%", "pipe", "1", "", "a=b"] {
            assert_eq!(csv_cell(fine), fine);
        }
    }

    #[test]
    fn markdown_cells_cannot_end_the_cell() {
        assert_eq!(markdown_cell("a|b\nc"), "a\\|b\\nc");
    }
}
