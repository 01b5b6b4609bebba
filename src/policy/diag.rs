//! Diagnostics for input that could not be read: file, line, column, what is wrong, how to fix.
//!
//! Library functions return them as values; only the CLI prints them.

use std::fmt;
use std::ops::Range;

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
    /// The source line the span starts on, for the snippet.
    pub source_line: String,
}

/// A file's text with its path, to turn byte spans into diagnostics.
#[derive(Clone, Copy)]
pub struct Source<'a> {
    pub path: &'a str,
    pub text: &'a str,
}

impl<'a> Source<'a> {
    pub fn new(path: &'a str, text: &'a str) -> Source<'a> {
        Source { path, text }
    }

    /// 1-based (line, column) of a byte offset; offsets past the end clamp to the end.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = floor_char_boundary(self.text, offset.min(self.text.len()));
        let before = &self.text[..offset];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let col = self.text[line_start..offset].chars().count() + 1;
        (line, col)
    }

    pub fn error(&self, span: Range<usize>, message: impl Into<String>) -> Diagnostic {
        let start = floor_char_boundary(self.text, span.start.min(self.text.len()));
        let (line, col) = self.line_col(start);
        let line_start = self.text[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = self.text[start..]
            .find('\n')
            .map_or(self.text.len(), |i| start + i);
        let end = floor_char_boundary(self.text, span.end.clamp(start, line_end));
        let width = self.text[start..end].chars().count().max(1);
        Diagnostic {
            path: self.path.to_string(),
            line,
            col,
            width,
            message: message.into(),
            help: None,
            source_line: self.text[line_start..line_end]
                .trim_end_matches('\r')
                .to_string(),
        }
    }
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
            source_line: String::new(),
        }
    }

    /// Renders with ANSI styles when `color` is set (the CLI decides), plain otherwise.
    pub fn render(&self, color: bool) -> String {
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
            let num = self.line.to_string();
            let pad = " ".repeat(num.len());
            let caret_pad = " ".repeat(self.col.saturating_sub(1));
            out += &format!("{blue}{pad} |{reset}\n");
            out += &format!("{blue}{num} |{reset} {}\n", self.source_line);
            out += &format!(
                "{blue}{pad} |{reset} {caret_pad}{red}{}{reset}\n",
                "^".repeat(self.width)
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

    pub fn render(&self, color: bool) -> String {
        self.diagnostics
            .iter()
            .map(|d| d.render(color))
            .collect::<Vec<_>>()
            .join("\n")
    }
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
    let limit = (name.chars().count() / 3).max(1);
    candidates
        .iter()
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
