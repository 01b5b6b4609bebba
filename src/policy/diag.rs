//! Diagnostics for input that could not be read: file, line, column, what is wrong, how to fix.
//!
//! Library functions return them as values; only the CLI prints them.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::fmt;
use std::ops::Range;
use std::sync::Arc;

/// One problem in one input file, located at a byte span.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub path: String,
    /// 1-based line and column (columns count characters, not bytes).
    pub line: usize,
    pub col: usize,
    /// Length of the underlined region, in characters (at least 1).
    pub width: usize,
    pub message: String,
    pub help: Option<String>,
    /// The whole source line the span starts on (no line break), empty without a position.
    /// The diagnostics of one line share it, so a megabyte-long line with fifty thousand errors
    /// is held once; rendering quotes a window of it ([`Style::snippet_width`]).
    pub source_line: Arc<str>,
    /// Byte offset of the span's start within `source_line`.
    pub source_at: usize,
}

/// The widest source line a diagnostic quotes by default, in characters.
pub const SNIPPET_CHARS: usize = 120;

/// Diagnostics the CLI shows per file by default (`--max-errors`).
pub const MAX_ERRORS: usize = 50;

/// How diagnostics are shown: the CLI's `--color`, `--max-errors` and `--snippet-width`, passed
/// to the renderer as a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Style {
    /// ANSI styles (the CLI decides from the terminal and `NO_COLOR`).
    pub color: bool,
    /// Diagnostics shown per error; the rest are counted in one line.
    pub max_errors: usize,
    /// The widest part of a source line quoted, in characters (at least 8; `…` marks a cut).
    pub snippet_width: usize,
}

impl Default for Style {
    /// Plain, every diagnostic, [`SNIPPET_CHARS`] wide.
    fn default() -> Style {
        Style {
            color: false,
            max_errors: usize::MAX,
            snippet_width: SNIPPET_CHARS,
        }
    }
}

/// A file's text with its path, to turn byte spans into diagnostics. Line starts are indexed
/// once, and the column of the last span is remembered, so the diagnostics of a file cost
/// time linear in its size even when thousands sit on one long line.
#[derive(Clone)]
pub struct Source<'a> {
    pub path: &'a str,
    pub text: &'a str,
    /// Byte offset of every line's start.
    line_starts: Vec<usize>,
    /// (byte offset, its 1-based column) of the last position located.
    last: Cell<(usize, usize)>,
    /// The lines diagnostics have quoted, by 0-based line index: each held once.
    quoted: RefCell<HashMap<usize, Arc<str>>>,
}

impl<'a> Source<'a> {
    pub fn new(path: &'a str, text: &'a str) -> Source<'a> {
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Source {
            path,
            text,
            line_starts,
            last: Cell::new((0, 1)),
            quoted: RefCell::default(),
        }
    }

    /// 1-based (line, column) of a byte offset; offsets past the end clamp to the end.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = floor_char_boundary(self.text, offset.min(self.text.len()));
        let line = self.line_starts.partition_point(|&s| s <= offset);
        let line_start = self.line_starts[line - 1];
        let (last, last_col) = self.last.get();
        let col = if last >= line_start && last <= offset {
            last_col + self.text[last..offset].chars().count()
        } else {
            self.text[line_start..offset].chars().count() + 1
        };
        self.last.set((offset, col));
        (line, col)
    }

    pub fn error(&self, span: Range<usize>, message: impl Into<String>) -> Diagnostic {
        let start = floor_char_boundary(self.text, span.start.min(self.text.len()));
        let (line, col) = self.line_col(start);
        let line_start = self.line_starts[line - 1];
        let line_end = self
            .line_starts
            .get(line)
            .map_or(self.text.len(), |&s| s - 1);
        let end = floor_char_boundary(self.text, span.end.clamp(start, line_end));
        let width = self.text[start..end].chars().count().max(1);
        let source_line = self
            .quoted
            .borrow_mut()
            .entry(line - 1)
            .or_insert_with(|| {
                self.text[line_start..line_end]
                    .trim_end_matches('\r')
                    .into()
            })
            .clone();
        Diagnostic {
            path: self.path.to_string(),
            line,
            col,
            width,
            message: message.into(),
            help: None,
            source_at: (start - line_start).min(source_line.len()),
            source_line,
        }
    }
}

/// The quoted part of `line` for a span at byte `at` (column `col`, `width` characters): the
/// whole line when it is short, else a window of `chars` characters that starts a little
/// before the span, with `…` where it was cut. Returns the text, the span's column in it, and
/// the width clipped to the window.
fn snippet(
    line: &str,
    at: usize,
    col: usize,
    width: usize,
    chars: usize,
) -> (String, usize, usize) {
    let at = floor_char_boundary(line, at.min(line.len()));
    let chars = chars.max(8);
    // Short lines (measured in bytes first: cheap, and an upper bound on characters).
    if line.len() <= chars || line.chars().nth(chars).is_none() {
        return (line.to_string(), col, width);
    }
    // A quarter of the window before the span (30 characters at the default width).
    let before_span = (chars / 4).max(1);
    let begin = line[..at]
        .char_indices()
        .rev()
        .nth(before_span - 1)
        .map_or(0, |(i, _)| i);
    let mut out = String::new();
    let before = line[begin..at].chars().count();
    let mut span_col = before + 1;
    if begin > 0 {
        out.push('…');
        span_col += 1;
    }
    // `chars` of the line's own text; the `…` marks come on top.
    let room = chars.saturating_sub(before).max(1);
    let tail: String = line[at..].chars().take(room).collect();
    out += &line[begin..at];
    out += &tail;
    if at + tail.len() < line.len() {
        out.push('…');
    }
    let width = width.min(tail.chars().count().max(1));
    (out, span_col, width)
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

impl Diagnostic {
    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    /// A diagnostic about a whole file or a command (no position: line and column are 0), e.g.
    /// the file could not be opened.
    pub fn file(path: &str, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            path: path.to_string(),
            line: 0,
            col: 0,
            width: 1,
            message: message.into(),
            help: None,
            source_line: Arc::from(""),
            source_at: 0,
        }
    }

    /// Renders with ANSI styles when `color` is set (the CLI decides), plain otherwise, the
    /// source line quoted at most [`SNIPPET_CHARS`] wide.
    pub fn render(&self, color: bool) -> String {
        self.render_with(color, SNIPPET_CHARS)
    }

    /// [`Diagnostic::render`] with the source line quoted at most `snippet_width` characters
    /// wide (at least 8).
    pub fn render_with(&self, color: bool, snippet_width: usize) -> String {
        let (red, blue, bold, reset) = if color {
            ("\x1b[1;31m", "\x1b[1;34m", "\x1b[1m", "\x1b[0m")
        } else {
            ("", "", "", "")
        };
        let location = if self.line == 0 {
            self.path.clone()
        } else {
            format!("{}:{}:{}", self.path, self.line, self.col)
        };
        let mut out = format!(
            "{red}error{reset}{bold}: {}{reset}\n {blue}-->{reset} {location}\n",
            self.message
        );
        if !self.source_line.is_empty() {
            let (quoted, source_col, width) = snippet(
                &self.source_line,
                self.source_at,
                self.col,
                self.width,
                snippet_width,
            );
            let num = self.line.to_string();
            let pad = " ".repeat(num.len());
            let caret_pad = " ".repeat(source_col.saturating_sub(1));
            out += &format!("{blue}{pad} |{reset}\n");
            out += &format!("{blue}{num} |{reset} {quoted}\n");
            out += &format!(
                "{blue}{pad} |{reset} {caret_pad}{red}{}{reset}\n",
                "^".repeat(width)
            );
        }
        if let Some(help) = &self.help {
            out += &format!(" {blue}={reset} {bold}help{reset}: {help}\n");
        }
        out
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(false))
    }
}

/// Input that could not be read: every problem found, in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError {
    pub diagnostics: Vec<Diagnostic>,
}

impl LoadError {
    pub fn one(d: Diagnostic) -> LoadError {
        LoadError {
            diagnostics: vec![d],
        }
    }

    /// Every diagnostic, rendered in the default [`Style`] (with ANSI styles when `color`).
    pub fn render(&self, color: bool) -> String {
        self.render_with(Style {
            color,
            ..Style::default()
        })
    }

    /// The first `style.max_errors` diagnostics, then one line saying how many more there are
    /// (the CLI's `--max-errors`): a file with fifty thousand mistakes reports in kilobytes.
    pub fn render_with(&self, style: Style) -> String {
        let max = style.max_errors;
        let mut out = self
            .diagnostics
            .iter()
            .take(max)
            .map(|d| d.render_with(style.color, style.snippet_width))
            .collect::<Vec<_>>()
            .join("\n");
        let more = self.diagnostics.len().saturating_sub(max);
        if more > 0 {
            let path = self.diagnostics.first().map_or("", |d| d.path.as_str());
            out += &format!(
                "\n… and {more} more error{} in {path} (fix these first, or raise --max-errors)\n",
                if more == 1 { "" } else { "s" }
            );
        }
        out
    }
}

/// The text of a file's bytes, or a diagnostic at the first byte that is not UTF-8 (its line
/// and column counted in the valid text before it).
pub fn decode(path: &str, bytes: Vec<u8>) -> Result<String, LoadError> {
    String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        let at = e.utf8_error().valid_up_to();
        let valid = std::str::from_utf8(&bytes[..at]).unwrap_or_default();
        let (line, col) = Source::new(path, valid).line_col(at);
        LoadError::one(Diagnostic {
            line,
            col,
            ..Diagnostic::file(
                path,
                format!(
                    "not UTF-8: byte {:#04x} at line {line}, column {col}",
                    bytes[at]
                ),
            )
            .with_help("policies and tables are UTF-8 text: re-save the file as UTF-8")
        })
    })
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(false))
    }
}

impl std::error::Error for LoadError {}

/// "did you mean" for a misspelt name: the closest candidate within a small edit distance,
/// or the canonical name when the input is a catalogue short code.
pub fn did_you_mean<'c>(
    name: &str,
    candidates: impl IntoIterator<Item = &'c str>,
) -> Option<String> {
    let candidates: Vec<&str> = candidates.into_iter().collect();
    if let Some(canon) = crate::numeric::dtype::canonical(name)
        && candidates.contains(&canon)
    {
        return Some(canon.to_string());
    }
    let lower = name.to_ascii_lowercase();
    let length = name.chars().count();
    let limit = (length / 3).max(1);
    candidates
        .iter()
        // An edit distance is at least the difference of the lengths: most candidates are
        // ruled out without computing it.
        .filter(|c| c.chars().count().abs_diff(length) <= limit)
        .map(|c| {
            (
                strsim::damerau_levenshtein(&lower, &c.to_ascii_lowercase()),
                *c,
            )
        })
        .filter(|(d, _)| *d <= limit)
        .min()
        .map(|(_, c)| c.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The indexed, memoised `line_col` equals counting from the start, in any order of
    /// offsets (forwards, backwards, across lines, inside multi-byte characters).
    #[test]
    fn line_col_matches_counting_in_any_order() {
        let text = "αβ = 1\r\nname = \"x\"\n\ndtypes = [\"é\", \"int8\"]\nlast";
        let naive = |o: usize| {
            let mut o = o.min(text.len());
            while !text.is_char_boundary(o) {
                o -= 1;
            }
            let before = &text[..o];
            let line = before.matches('\n').count() + 1;
            let start = before.rfind('\n').map_or(0, |i| i + 1);
            (line, text[start..o].chars().count() + 1)
        };
        let src = Source::new("t", text);
        let mut order: Vec<usize> = (0..=text.len() + 2).collect();
        order.extend((0..=text.len()).rev());
        order.extend(
            (0..=text.len())
                .step_by(7)
                .chain((0..=text.len()).step_by(3)),
        );
        for o in order {
            assert_eq!(src.line_col(o), naive(o), "offset {o}");
        }
    }

    /// A long line is quoted as a window around the span, `…` where cut, the caret under the
    /// span, as wide as the style asks; a CR before the newline is not quoted. The diagnostics
    /// of one line share its text.
    #[test]
    fn long_lines_are_quoted_as_a_window() {
        let line = format!(
            "x = [{}\"bad\"{}]\r\n",
            "1, ".repeat(100),
            ", 2".repeat(100)
        );
        let src = Source::new("t", &line);
        let at = line.find("\"bad\"").unwrap();
        let d = src.error(at..at + 5, "bad");
        assert_eq!((d.line, d.col, d.width), (1, at + 1, 5));
        let quoted = |d: &Diagnostic, chars| {
            let shown = d.render_with(false, chars);
            let lines: Vec<String> = shown.lines().map(String::from).collect();
            (lines[3].clone(), lines[4].clone())
        };
        let (text, carets) = quoted(&d, SNIPPET_CHARS);
        let text = text.strip_prefix("1 | ").unwrap();
        assert_eq!(text.chars().count(), SNIPPET_CHARS + 2);
        assert!(text.starts_with('…') && text.ends_with('…'));
        let col = carets.find('^').unwrap() - 4;
        assert_eq!(&carets[col + 4..], "^^^^^");
        let under: String = text.chars().skip(col).take(5).collect();
        assert_eq!(under, "\"bad\"");
        let (narrow, _) = quoted(&d, 40);
        assert_eq!(narrow.strip_prefix("1 | ").unwrap().chars().count(), 42);
        let (whole, _) = quoted(&d, 10_000);
        assert_eq!(whole, format!("1 | {}", line.trim_end()));
        let again = src.error(at + 1..at + 2, "again");
        assert!(Arc::ptr_eq(&d.source_line, &again.source_line));
        let short = Source::new("t", "a = 1\r\n");
        let d = short.error(4..5, "x");
        assert_eq!((&*d.source_line, d.source_at), ("a = 1", 4));
        assert_eq!(
            quoted(&d, SNIPPET_CHARS),
            ("1 | a = 1".into(), "  |     ^".into())
        );
    }

    #[test]
    fn line_col_and_render() {
        let src = Source::new("x.toml", "a = 1\nbb = \"flaot16\"\n");
        let d = src
            .error(11..20, "unknown dtype `flaot16`")
            .with_help("did you mean `float16`?");
        assert_eq!((d.line, d.col, d.width), (2, 6, 9));
        assert_eq!(
            d.render(false),
            "error: unknown dtype `flaot16`\n --> x.toml:2:6\n  |\n2 | bb = \"flaot16\"\n  |      ^^^^^^^^^\n = help: did you mean `float16`?\n"
        );
    }

    #[test]
    fn suggestions() {
        let names = ["int8", "uint8", "float16", "float32"];
        assert_eq!(did_you_mean("flaot16", names).as_deref(), Some("float16"));
        assert_eq!(did_you_mean("i8", names).as_deref(), Some("int8"));
        assert_eq!(did_you_mean("complex64", names), None);
    }
}
