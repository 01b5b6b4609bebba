//! Observed promotion tables (`observed/*.json`): what a library actually returns.
//!
//! The format is docs/file-formats.md's: `name`, `library`, `version`, `dtypes`, `result[a][b]` (`null`
//! where the library raises). `unsupported_dtypes` (the design notes' tables mark dtypes the
//! library did not have) are dropped, and a result naming one counts as undefined.

use std::collections::HashMap;
use std::ops::Range;

use serde_json::Value;

use crate::policy::diag::{Diagnostic, LoadError, Source, did_you_mean};
use crate::policy::kernels::{self, Kernels};
use crate::policy::nary::{self, NaryRule};
use crate::policy::table::Table;

#[derive(Debug, Clone, PartialEq)]
pub struct Observed {
    pub path: String,
    pub name: String,
    pub library: Option<String>,
    pub version: Option<String>,
    pub table: Table,
    /// Dtypes listed as unsupported by the library, dropped from the table.
    pub removed: Vec<String>,
    /// Byte span of each cell's key (`result[a][b]`), row-major, for annotations.
    pub cell_spans: Vec<Range<usize>>,
    /// Whether the file records the dtype the library returns (`"materialised": true`) for
    /// operands in categories: the cells are then lifted to nodes (`lift`) and
    /// `materialised[i]` is the dtype node `i` is returned as (`None` where `i ∨ i` raised).
    pub materialised: Option<Vec<Option<usize>>>,
    /// The n-ary results of three operands (`"triples"`), as the library returns them.
    pub triples: Vec<Triple>,
    /// The library's own n-ary rule (`"nary"`), where it is not a left fold of the pairs.
    pub nary: Option<NaryRule>,
    /// What the library computes each op in (`"kernels"`): a table with it runs in the
    /// reference kernels (`typejoin codegen`).
    pub kernels: Option<Kernels>,
}

/// One measured n-ary result: three operands and the dtype the library returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Triple {
    pub operands: [usize; 3],
    /// Index of the returned dtype (`None`: the library raised).
    pub result: Option<usize>,
    pub span: Range<usize>,
}

/// The category rank of an operand name: 0 plain, 1 `dtype@category`, 2 a scalar (`i*`).
fn category_rank(name: &str) -> u8 {
    if crate::numeric::dtype::is_weak(name) {
        2
    } else if name.contains('@') {
        1
    } else {
        0
    }
}

/// Lifts a table of returned dtypes to one of nodes (docs/categories.md). The result of
/// `a ∨ b`, returned as dtype `d`, is one of the nodes returned as `d`: the first, in this
/// order, that agrees with every measured triple `(a, b, c)` (the node `x` with
/// `x ∨ c` returned as the triple's dtype for every `c`): the operand of `a`, `b` returned as
/// `d` in the highest category, then the nodes returned as `d` in `a`'s or `b`'s categories,
/// highest first, then any other; else `d` itself. `mat[i]` is what node `i` is returned as,
/// `i ∨ i`.
pub fn lift(table: &Table, triples: &[Triple]) -> (Table, Vec<Option<usize>>) {
    let n = table.n();
    let mat: Vec<Option<usize>> = (0..n).map(|i| table.get(i, i)).collect();
    let rank: Vec<u8> = table.names.iter().map(|x| category_rank(x)).collect();
    // (a, b) -> every measured (c, result of a, b, c).
    type Contexts = HashMap<(usize, usize), Vec<(usize, Option<usize>)>>;
    let mut contexts: Contexts = HashMap::new();
    for t in triples {
        let [a, b, c] = t.operands;
        contexts.entry((a, b)).or_default().push((c, t.result));
    }
    let mut out = Table::new(table.names.clone());
    for a in 0..n {
        for b in 0..n {
            let Some(d) = table.get(a, b) else { continue };
            let mut candidates: Vec<usize> = Vec::new();
            let mut own: Vec<usize> = [a, b].into_iter().filter(|&x| mat[x] == Some(d)).collect();
            own.sort_by_key(|&x| rank[x]);
            candidates.extend(own);
            let mut same: Vec<usize> = (0..n)
                .filter(|&x| mat[x] == Some(d) && (rank[x] == rank[a] || rank[x] == rank[b]))
                .collect();
            same.sort_by_key(|&x| (rank[x], x));
            candidates.extend(same);
            candidates.extend((0..n).filter(|&x| mat[x] == Some(d)));
            let agrees = |x: usize| {
                contexts
                    .get(&(a, b))
                    .is_none_or(|cs| cs.iter().all(|&(c, r)| table.get(x, c) == r))
            };
            let node = candidates
                .iter()
                .copied()
                .find(|&x| agrees(x))
                .or(candidates.first().copied());
            out.set(a, b, Some(node.unwrap_or(d)));
        }
    }
    (out, mat)
}

impl Observed {
    /// The name the table runs under (`run --policy`): its `kernels.policy`, else its library,
    /// else its `name` (`observed/numpy_result_type.json` runs as `numpy`).
    pub fn policy_name(&self) -> &str {
        self.kernels
            .as_ref()
            .and_then(|k| k.policy.as_deref())
            .or(self.library.as_deref())
            .unwrap_or(&self.name)
    }

    pub fn cell_span(&self, a: usize, b: usize) -> Range<usize> {
        self.cell_spans[a * self.table.n() + b].clone()
    }
}

/// Parses and validates an observed table. `path` is only used in diagnostics.
/// The errors of a table that get a "did you mean" (each costs a pass over the dtypes).
const SUGGESTED: usize = 1_000;

pub fn parse_table(path: &str, text: &str) -> Result<Observed, LoadError> {
    let src = Source::new(path, text);
    if text.trim().is_empty() {
        return Err(LoadError::one(
            src.error(0..0, "the table file is empty").with_help(
                "an observed table needs `dtypes` and `result`; see docs/file-formats.md",
            ),
        ));
    }
    let value: Value = serde_json::from_str(text).map_err(|e| {
        let offset = offset_of(text, e.line(), e.column());
        LoadError::one(
            src.error(offset..offset + 1, format!("invalid JSON: {e}"))
                .with_help(
                    "fix the syntax; an observed table is one JSON object (docs/file-formats.md)",
                ),
        )
    })?;
    let keys = KeyIndex::new(text);
    let mut errors: Vec<Diagnostic> = Vec::new();
    let at = |path: &[&str]| keys.span(path);

    let Some(obj) = value.as_object() else {
        return Err(LoadError::one(
            src.error(0..1, "an observed table must be a JSON object")
                .with_help("see docs/file-formats.md for the format"),
        ));
    };
    let string_list = |key: &str, errors: &mut Vec<Diagnostic>| -> Vec<String> {
        match obj.get(key) {
            None => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .filter_map(|(i, v)| match v {
                    Value::String(s) => Some(s.clone()),
                    _ => {
                        errors.push(src.error(
                            at(&[key, &format!("#{i}")]),
                            format!("`{key}` entries must be strings"),
                        ));
                        None
                    }
                })
                .collect(),
            Some(_) => {
                errors
                    .push(src.error(at(&[key]), format!("`{key}` must be a list of dtype names")));
                Vec::new()
            }
        }
    };
    let listed = string_list("dtypes", &mut errors);
    let removed = string_list("unsupported_dtypes", &mut errors);
    if !obj.contains_key("dtypes") {
        errors
            .push(src.error(0..1, "missing `dtypes`").with_help(
                "list the table's dtypes in order: \"dtypes\": [\"bool\", \"int8\", …]",
            ));
    }
    if listed.len() > crate::policy::table::MAX_DTYPES {
        let max = crate::policy::table::MAX_DTYPES;
        return Err(LoadError::one(
            src.error(
                at(&["dtypes", &format!("#{max}")]),
                format!(
                    "{} dtypes: typejoin reads tables of at most {max}",
                    listed.len()
                ),
            )
            .with_help("measure a part of the library's dtypes, or split the table"),
        ));
    }
    let dropped: std::collections::HashSet<&String> = removed.iter().collect();
    let mut seen = std::collections::HashSet::new();
    let mut dtypes: Vec<String> = Vec::new();
    for (i, d) in listed.iter().enumerate() {
        if !seen.insert(d) {
            errors.push(
                src.error(
                    at(&["dtypes", &format!("#{i}")]),
                    format!("duplicate dtype `{d}`"),
                )
                .with_help("list each dtype once"),
            );
        } else if !dropped.contains(d) {
            dtypes.push(d.clone());
        }
    }
    let index: HashMap<&str, usize> = dtypes
        .iter()
        .enumerate()
        .map(|(i, d)| (d.as_str(), i))
        .collect();
    let mut table = Table::new(dtypes.clone());
    let n = dtypes.len();
    let mut cell_spans = vec![0..0; n * n];

    match obj.get("result") {
        None => errors.push(
            src.error(0..1, "missing `result`")
                .with_help("add \"result\": {row: {column: result-or-null}}"),
        ),
        Some(Value::Object(rows)) => {
            for (row, cols) in rows {
                if dropped.contains(row) {
                    continue;
                }
                let Some(&a) = index.get(row.as_str()) else {
                    let help = did_you_mean(row, dtypes.iter().map(String::as_str))
                        .map_or("add it to `dtypes` or remove the row".into(), |s| {
                            format!("did you mean `{s}`?")
                        });
                    errors.push(
                        src.error(
                            at(&["result", row]),
                            format!("row `{row}` is not in `dtypes`"),
                        )
                        .with_help(help),
                    );
                    continue;
                };
                let Some(cols) = cols.as_object() else {
                    errors.push(src.error(
                        at(&["result", row]),
                        format!("row `{row}` must be an object"),
                    ));
                    continue;
                };
                for (col, cell) in cols {
                    if dropped.contains(col) {
                        continue;
                    }
                    let span = at(&["result", row, col]);
                    let Some(&b) = index.get(col.as_str()) else {
                        let help = did_you_mean(col, dtypes.iter().map(String::as_str))
                            .map_or("remove it, or add it to `dtypes`".into(), |s| {
                                format!("did you mean `{s}`?")
                            });
                        errors.push(
                            src.error(
                                span,
                                format!("column `{col}` of row `{row}` is not in `dtypes`"),
                            )
                            .with_help(help),
                        );
                        continue;
                    };
                    cell_spans[a * n + b] = span.clone();
                    match cell {
                        Value::Null => {}
                        Value::String(r) if dropped.contains(r) => {}
                        Value::String(r) => match index.get(r.as_str()) {
                            Some(&j) => table.set(a, b, Some(j)),
                            None => {
                                // A "did you mean" costs a pass over `dtypes`: the first
                                // `SUGGESTED` errors get one (more are never all shown).
                                let guess = (errors.len() < SUGGESTED)
                                    .then(|| did_you_mean(r, dtypes.iter().map(String::as_str)))
                                    .flatten();
                                let help = guess.map_or(
                                    "a result must be one of `dtypes` (or null where the library raises)".into(),
                                    |s| format!("did you mean `{s}`?"),
                                );
                                errors.push(
                                    src.error(span, format!("unknown result `{r}` for `{row}` ∨ `{col}`"))
                                        .with_help(help),
                                );
                            }
                        },
                        _ => errors.push(
                            src.error(span, format!("result for `{row}` ∨ `{col}` must be a dtype name or null"))
                                .with_help("write the result dtype as a string, or null where the library raises"),
                        ),
                    }
                }
                for col in &dtypes {
                    if !cols.contains_key(col) {
                        errors.push(
                            src.error(at(&["result", row]), format!("row `{row}` has no entry for `{col}`"))
                                .with_help("the table must be square: give every row every column (null where the library raises)"),
                        );
                    }
                }
            }
            for d in &dtypes {
                if !rows.contains_key(d) {
                    errors.push(
                        src.error(at(&["result"]), format!("`result` has no row for `{d}`"))
                            .with_help("the table must be square: add a row for every dtype"),
                    );
                }
            }
        }
        Some(_) => errors.push(src.error(at(&["result"]), "`result` must be an object of rows")),
    }

    if !errors.is_empty() {
        errors.sort_by_key(|d| (d.line, d.col));
        return Err(LoadError {
            diagnostics: errors,
        });
    }
    let mut triples = Vec::new();
    match obj.get("triples") {
        None => {}
        Some(Value::Object(cells)) => {
            for (key, cell) in cells {
                let span = at(&["triples", key]);
                let parts: Vec<&str> = key.split('|').collect();
                let idx: Vec<Option<usize>> = parts.iter().map(|p| index.get(p).copied()).collect();
                let result = match cell {
                    Value::Null => Ok(None),
                    Value::String(r) => index.get(r.as_str()).copied().map(Some).ok_or(r.as_str()),
                    _ => Err(""),
                };
                match (idx.as_slice(), result) {
                    ([Some(a), Some(b), Some(c)], Ok(result)) => triples.push(Triple {
                        operands: [*a, *b, *c],
                        result,
                        span,
                    }),
                    ([_, _, _], Ok(_)) => errors.push(
                        src.error(span, format!("triple `{key}` names a dtype not in `dtypes`"))
                            .with_help("write the three operands as `a|b|c`, each one of `dtypes`"),
                    ),
                    (_, Ok(_)) => errors.push(
                        src.error(span, format!("`{key}` is not three operands"))
                            .with_help("write a triple's key as `a|b|c`"),
                    ),
                    (_, Err(r)) => errors.push(
                        src.error(span, format!("result of triple `{key}` must be one of `dtypes` or null, not `{r}`"))
                            .with_help("write the dtype the library returned, or null where it raised"),
                    ),
                }
            }
        }
        Some(_) => errors.push(
            src.error(at(&["triples"]), "`triples` must be an object")
                .with_help("write \"triples\": {\"a|b|c\": result-or-null}"),
        ),
    }
    let nary = obj
        .get("nary")
        .and_then(|v| nary::parse(v, &dtypes, &src, &at, &mut errors));
    let kernels = obj
        .get("kernels")
        .and_then(|v| kernels::parse(v, &dtypes, &src, &at, &mut errors));
    if kernels.as_ref().is_some_and(|k| k.search.is_some())
        && !matches!(nary, Some(NaryRule::Numpy(_)))
    {
        errors.push(
            src.error(at(&["kernels", "search"]), "`search` needs NumPy's n-ary rule")
                .with_help("the loop search runs where an operand's DType is user-defined: declare \"nary\": {\"rule\": \"numpy\", \"classes\": {…}} (docs/file-formats.md)"),
        );
    }
    if !errors.is_empty() {
        errors.sort_by_key(|d| (d.line, d.col));
        return Err(LoadError {
            diagnostics: errors,
        });
    }
    let materialised = match obj.get("materialised") {
        Some(Value::Bool(true)) => {
            let (lifted, mat) = lift(&table, &triples);
            table = lifted;
            Some(mat)
        }
        _ => None,
    };
    let text_field = |k: &str| obj.get(k).and_then(Value::as_str).map(str::to_string);
    let stem = std::path::Path::new(path)
        .file_stem()
        .map_or_else(|| path.to_string(), |s| s.to_string_lossy().into_owned());
    Ok(Observed {
        path: path.to_string(),
        name: text_field("name").unwrap_or(stem),
        library: text_field("library"),
        version: text_field("version"),
        table,
        removed,
        cell_spans,
        materialised,
        triples,
        nary,
        kernels,
    })
}

fn offset_of(text: &str, line: usize, col: usize) -> usize {
    let start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    (start + col.saturating_sub(1)).min(text.len())
}

/// Byte spans of object keys and array elements in a JSON text, by path (`#i` for element i).
/// The text must already be valid JSON.
struct KeyIndex {
    spans: HashMap<Vec<String>, Range<usize>>,
}

enum Frame {
    Object {
        key: Option<String>,
        expect_key: bool,
    },
    Array {
        index: usize,
    },
}

impl KeyIndex {
    fn new(text: &str) -> KeyIndex {
        let bytes = text.as_bytes();
        let mut spans = HashMap::new();
        let mut stack: Vec<Frame> = Vec::new();
        let path_of = |stack: &[Frame]| -> Vec<String> {
            stack
                .iter()
                .map(|f| match f {
                    Frame::Object { key, .. } => key.clone().unwrap_or_default(),
                    Frame::Array { index } => format!("#{index}"),
                })
                .collect()
        };
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'{' => stack.push(Frame::Object {
                    key: None,
                    expect_key: true,
                }),
                b'[' => {
                    stack.push(Frame::Array { index: 0 });
                    let j = skip_ws(bytes, i + 1);
                    if j < bytes.len() && bytes[j] != b']' {
                        spans.insert(path_of(&stack), j..j + 1);
                    }
                }
                b'}' | b']' => {
                    stack.pop();
                }
                b',' => match stack.last_mut() {
                    Some(Frame::Object { expect_key, .. }) => *expect_key = true,
                    Some(Frame::Array { index }) => {
                        *index += 1;
                        let j = skip_ws(bytes, i + 1);
                        spans.insert(path_of(&stack), j..j + 1);
                    }
                    None => {}
                },
                b':' => {
                    if let Some(Frame::Object { expect_key, .. }) = stack.last_mut() {
                        *expect_key = false;
                    }
                }
                b'"' => {
                    let start = i;
                    i += 1;
                    while i < bytes.len() && bytes[i] != b'"' {
                        if bytes[i] == b'\\' {
                            i += 1;
                        }
                        i += 1;
                    }
                    let raw = &text[start..(i + 1).min(text.len())];
                    if let Some(Frame::Object {
                        key,
                        expect_key: true,
                    }) = stack.last_mut()
                    {
                        *key = serde_json::from_str::<String>(raw).ok();
                        let path = path_of(&stack);
                        spans.insert(path, start..i + 1);
                    } else if let Some(Frame::Array { .. }) = stack.last() {
                        spans.insert(path_of(&stack), start..i + 1);
                    }
                }
                _ => {}
            }
            i += 1;
        }
        KeyIndex { spans }
    }

    /// The span at `path`, or of its longest known prefix, or the start of the file.
    fn span(&self, path: &[&str]) -> Range<usize> {
        let mut p: Vec<String> = path.iter().map(|s| s.to_string()).collect();
        while !p.is_empty() {
            if let Some(s) = self.spans.get(&p) {
                return s.clone();
            }
            p.pop();
        }
        0..1
    }
}

fn skip_ws(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() && bytes[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: &str = r#"{"name": "t", "dtypes": ["int8", "uint8"],
 "result": {"int8": {"int8": "int8", "uint8": "int16"},
            "uint8": {"int8": null, "uint8": "uint8"}}}"#;

    #[test]
    fn unknown_result_is_located() {
        let e = parse_table("t.json", T).unwrap_err().to_string();
        assert!(
            e.contains("unknown result `int16` for `int8` ∨ `uint8`"),
            "{e}"
        );
        assert!(e.contains("t.json:2:38"), "{e}");
    }

    #[test]
    fn parses_and_drops_unsupported() {
        let text = T
            .replace("\"int16\"", "\"uint8\"")
            .replace("\"name\": \"t\",", "\"unsupported_dtypes\": [\"uint8\"],");
        let o = parse_table("x/t.json", &text).unwrap();
        assert_eq!(o.name, "t");
        assert_eq!(o.table.names, vec!["int8"]);
        assert_eq!(o.table.get(0, 0), Some(0));
    }

    #[test]
    fn missing_column_is_an_error() {
        let text = T.replace(r#""int8": null, "#, "");
        let e = parse_table("t.json", &text).unwrap_err().to_string();
        assert!(e.contains("row `uint8` has no entry for `int8`"), "{e}");
    }
}
