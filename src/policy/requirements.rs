//! Requirements files (`typejoin synth`, docs/repair.md): the dtypes of a lattice to be
//! synthesised and what it must satisfy, each requirement located by its line so an
//! unsatisfiable set can be named. Data only: the search is `design::synthesis`.

use std::ops::Range;

use serde::Deserialize;
use toml::Spanned;

use crate::numeric::dtype::{self, Kind};
use crate::policy::diag::{Diagnostic, LoadError, Source, did_you_mean};

/// A requirements file, validated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Requirements {
    pub path: String,
    pub name: String,
    pub summary: Option<String>,
    pub source: Option<String>,
    pub dtypes: Vec<String>,
    /// A pair may have no join (exactly when it has no common upper bound).
    pub partial: bool,
    pub items: Vec<Requirement>,
}

/// One requirement, as written, with its 1-based line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Requirement {
    pub line: usize,
    pub text: String,
    pub rule: Rule,
}

/// What a requirement says (dtypes by index into [`Requirements::dtypes`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rule {
    /// `a ∨ b = c`, or `a ∨ b = none` (no join).
    Join {
        a: usize,
        b: usize,
        c: Option<usize>,
    },
    /// `a < b`: `a` promotes to `b` (directly or through others).
    Below { a: usize, b: usize },
    /// `a ≮ b`: `a` never promotes to `b`.
    NotBelow { a: usize, b: usize },
    /// No promotion from a dtype of kind `from` to one of kind `to` has any of `classes`.
    Forbid {
        from: KindSet,
        to: KindSet,
        classes: Vec<String>,
    },
    /// The join of two dtypes of at most `operands` bits has at most `result` bits.
    Bound { operands: u32, result: u32 },
}

/// The kinds a `[[forbid]]` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KindSet {
    Bool,
    Unsigned,
    Signed,
    Integer,
    Float,
    Complex,
    Any,
}

impl KindSet {
    pub const NAMES: [&'static str; 7] = [
        "bool", "unsigned", "signed", "integer", "float", "complex", "any",
    ];

    fn named(s: &str) -> Option<KindSet> {
        Some(match s {
            "bool" => KindSet::Bool,
            "unsigned" => KindSet::Unsigned,
            "signed" => KindSet::Signed,
            "integer" => KindSet::Integer,
            "float" => KindSet::Float,
            "complex" => KindSet::Complex,
            "any" => KindSet::Any,
            _ => return None,
        })
    }

    /// Whether a dtype (a catalogue name) is of this kind; weak and opaque types are of none.
    pub fn contains(self, name: &str) -> bool {
        let k = dtype::kind(name);
        match self {
            KindSet::Bool => k == Kind::Bool,
            KindSet::Unsigned => k == Kind::Unsigned,
            KindSet::Signed => k == Kind::Signed,
            KindSet::Integer => matches!(k, Kind::Unsigned | Kind::Signed),
            KindSet::Float => matches!(k, Kind::Float | Kind::SmallFloat),
            KindSet::Complex => k == Kind::Complex,
            KindSet::Any => !matches!(k, Kind::Weak | Kind::Opaque | Kind::Other),
        }
    }
}

/// The classes a `[[forbid]]` may name (what `typejoin safety` reports).
pub const CLASSES: [&str; 4] = ["precision-loss", "overflow", "sign-loss", "drops-component"];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    name: Spanned<String>,
    summary: Option<String>,
    source: Option<String>,
    dtypes: Spanned<Vec<Spanned<String>>>,
    partial: Option<bool>,
    #[serde(default)]
    require: RawRequire,
    #[serde(default)]
    forbid: Vec<Spanned<RawForbid>>,
    #[serde(default)]
    bound: Vec<Spanned<RawBound>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawRequire {
    #[serde(default)]
    joins: Vec<Spanned<String>>,
    #[serde(default)]
    below: Vec<Spanned<String>>,
    #[serde(default)]
    not_below: Vec<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawForbid {
    from: Spanned<String>,
    to: Spanned<String>,
    classes: Option<Vec<Spanned<String>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBound {
    operands: Spanned<i64>,
    result: Spanned<i64>,
}

/// Parses and validates a requirements file; every error is located.
pub fn parse_requirements(path: &str, text: &str) -> Result<Requirements, LoadError> {
    let src = Source::new(path, text);
    let raw: Raw = toml::from_str(text)
        .map_err(|e| LoadError::one(crate::policy::spec::toml_error(&src, &e)))?;
    let mut errors = Vec::new();
    let mut dtypes: Vec<String> = Vec::new();
    for d in raw.dtypes.get_ref() {
        let name = dtype::canonical_node(d.get_ref()).unwrap_or_else(|| d.get_ref().clone());
        if dtypes.contains(&name) {
            errors.push(
                src.error(d.span(), format!("`{name}` is listed twice"))
                    .with_help("list each dtype once"),
            );
        } else if dtype::info(&name).is_none() {
            let help = match did_you_mean(&name, dtype::CATALOGUE.iter().map(|c| c.name)) {
                Some(s) => format!("did you mean `{s}`?"),
                None => "name a dtype of the catalogue (docs/numeric-formats.md)".into(),
            };
            errors.push(
                src.error(d.span(), format!("`{name}` is not a dtype typejoin knows"))
                    .with_help(help),
            );
        } else {
            dtypes.push(name);
        }
    }
    if dtypes.is_empty() && errors.is_empty() {
        errors.push(
            src.error(raw.dtypes.span(), "no dtypes")
                .with_help("list the lattice's dtypes: dtypes = [\"int8\", \"uint8\", ...]"),
        );
    }
    let line = |span: Range<usize>| src.line_col(span.start).0;
    let index = |name: &str, span: Range<usize>, errors: &mut Vec<Diagnostic>| {
        let canon = dtype::canonical_node(name).unwrap_or_else(|| name.to_string());
        let found = dtypes.iter().position(|d| *d == canon);
        if found.is_none() {
            let help = match did_you_mean(name, dtypes.iter().map(String::as_str)) {
                Some(s) => format!("did you mean `{s}`? (a requirement names the file's dtypes)"),
                None => "add it to `dtypes`, or name one of them".into(),
            };
            errors.push(
                src.error(span, format!("`{name}` is not one of this file's dtypes"))
                    .with_help(help),
            );
        }
        found
    };
    let mut items = Vec::new();
    for j in &raw.require.joins {
        let s = j.get_ref();
        let parsed = s.split_once('=').and_then(|(l, r)| {
            let (a, b) = l.split_once('∨').or_else(|| l.split_once('|'))?;
            Some((a.trim(), b.trim(), r.trim()))
        });
        let Some((a, b, c)) = parsed else {
            errors.push(
                src.error(j.span(), format!("`{s}` is not a join"))
                    .with_help("write `A ∨ B = C` (or `A | B = C`; `= none` for no join)"),
            );
            continue;
        };
        let (ia, ib) = (
            index(a, j.span(), &mut errors),
            index(b, j.span(), &mut errors),
        );
        let ic = if c == "none" {
            Some(None)
        } else {
            index(c, j.span(), &mut errors).map(Some)
        };
        if c == "none" && !raw.partial.unwrap_or(false) {
            errors.push(
                src.error(
                    j.span(),
                    format!("`{s}`: a pair without a join needs a partial lattice"),
                )
                .with_help("add `partial = true`"),
            );
        }
        if let (Some(a), Some(b), Some(c)) = (ia, ib, ic) {
            items.push(Requirement {
                line: line(j.span()),
                text: s.clone(),
                rule: Rule::Join { a, b, c },
            });
        }
    }
    for (list, below) in [(&raw.require.below, true), (&raw.require.not_below, false)] {
        for x in list {
            let s = x.get_ref();
            let Some((a, b)) = s.split_once('<') else {
                errors.push(
                    src.error(x.span(), format!("`{s}` is not an order"))
                        .with_help("write `A < B`: A promotes to B"),
                );
                continue;
            };
            let (a, b) = (a.trim(), b.trim().trim_start_matches('='));
            let (ia, ib) = (
                index(a.trim(), x.span(), &mut errors),
                index(b.trim(), x.span(), &mut errors),
            );
            if let (Some(a), Some(b)) = (ia, ib) {
                items.push(Requirement {
                    line: line(x.span()),
                    text: s.clone(),
                    rule: if below {
                        Rule::Below { a, b }
                    } else {
                        Rule::NotBelow { a, b }
                    },
                });
            }
        }
    }
    for f in &raw.forbid {
        let r = f.get_ref();
        let kind = |k: &Spanned<String>, errors: &mut Vec<Diagnostic>| {
            let got = KindSet::named(k.get_ref());
            if got.is_none() {
                errors.push(
                    src.error(k.span(), format!("`{}` is not a kind", k.get_ref()))
                        .with_help(format!("one of {}", KindSet::NAMES.join(", "))),
                );
            }
            got
        };
        let (from, to) = (kind(&r.from, &mut errors), kind(&r.to, &mut errors));
        let mut classes = Vec::new();
        match &r.classes {
            None => classes.extend(CLASSES.iter().map(|c| c.to_string())),
            Some(list) => {
                for c in list {
                    if CLASSES.contains(&c.get_ref().as_str()) {
                        classes.push(c.get_ref().clone());
                    } else {
                        errors.push(
                            src.error(c.span(), format!("`{}` is not a safety class", c.get_ref()))
                                .with_help(format!("one of {}", CLASSES.join(", "))),
                        );
                    }
                }
            }
        }
        if let (Some(from), Some(to)) = (from, to) {
            items.push(Requirement {
                line: line(f.span()),
                text: format!(
                    "no {} from {} to {}",
                    classes.join(" or "),
                    r.from.get_ref(),
                    r.to.get_ref()
                ),
                rule: Rule::Forbid { from, to, classes },
            });
        }
    }
    for b in &raw.bound {
        let r = b.get_ref();
        let bits = |v: &Spanned<i64>, errors: &mut Vec<Diagnostic>| {
            let ok = (1..=1024).contains(v.get_ref());
            if !ok {
                errors.push(
                    src.error(v.span(), format!("{} is not a width in bits", v.get_ref()))
                        .with_help("a width from 1 to 1024"),
                );
            }
            ok.then_some(*v.get_ref() as u32)
        };
        if let (Some(operands), Some(result)) =
            (bits(&r.operands, &mut errors), bits(&r.result, &mut errors))
        {
            items.push(Requirement {
                line: line(b.span()),
                text: format!(
                    "the join of dtypes of at most {operands} bits has at most {result} bits"
                ),
                rule: Rule::Bound { operands, result },
            });
        }
    }
    if !errors.is_empty() {
        return Err(LoadError {
            diagnostics: errors,
        });
    }
    items.sort_by_key(|r| r.line);
    Ok(Requirements {
        path: path.to_string(),
        name: raw.name.into_inner(),
        summary: raw.summary,
        source: raw.source,
        dtypes,
        partial: raw.partial.unwrap_or(false),
        items,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_requirement_parses_with_its_line() {
        let text = "name = \"t\"\ndtypes = [\"i8\", \"uint8\", \"int16\", \"float16\"]\npartial = true\n\
            [require]\njoins = [\"int8 ∨ uint8 = int16\", \"int16 | float16 = none\"]\n\
            below = [\"uint8 < float16\"]\nnot_below = [\"int16 < float16\"]\n\
            [[forbid]]\nfrom = \"integer\"\nto = \"float\"\nclasses = [\"precision-loss\"]\n\
            [[bound]]\noperands = 8\nresult = 16\n";
        let r = parse_requirements("t.toml", text).unwrap();
        assert_eq!(r.dtypes, ["int8", "uint8", "int16", "float16"]);
        let got: Vec<(usize, &Rule)> = r.items.iter().map(|i| (i.line, &i.rule)).collect();
        assert_eq!(
            got,
            [
                (
                    5,
                    &Rule::Join {
                        a: 0,
                        b: 1,
                        c: Some(2)
                    }
                ),
                (
                    5,
                    &Rule::Join {
                        a: 2,
                        b: 3,
                        c: None
                    }
                ),
                (6, &Rule::Below { a: 1, b: 3 }),
                (7, &Rule::NotBelow { a: 2, b: 3 }),
                (
                    8,
                    &Rule::Forbid {
                        from: KindSet::Integer,
                        to: KindSet::Float,
                        classes: vec!["precision-loss".into()]
                    }
                ),
                (
                    12,
                    &Rule::Bound {
                        operands: 8,
                        result: 16
                    }
                ),
            ]
        );
    }

    #[test]
    fn a_bad_requirement_is_located_with_what_to_write() {
        let text = "name = \"t\"\ndtypes = [\"int8\", \"uint8\"]\n[require]\njoins = [\"int8 ∨ uint8 = int61\"]\n";
        let e = parse_requirements("t.toml", text).unwrap_err();
        let d = &e.diagnostics[0];
        assert_eq!((d.line, d.col), (4, 10));
        assert_eq!(d.message, "`int61` is not one of this file's dtypes");
        let text =
            "name = \"t\"\ndtypes = [\"int8\"]\n[[forbid]]\nfrom = \"ints\"\nto = \"float\"\n";
        let e = parse_requirements("t.toml", text).unwrap_err();
        assert_eq!(e.diagnostics[0].line, 4);
        assert!(
            e.diagnostics[0]
                .help
                .as_deref()
                .unwrap()
                .contains("integer")
        );
    }
}
