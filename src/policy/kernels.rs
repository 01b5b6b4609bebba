//! What a measured table says its library computes (`"kernels"`, docs/policy-kinds.md): the
//! kernel conventions, the dtype each op's loop computes a pair in where that is not the
//! pair's promoted dtype, and the dtype `sum` accumulates in. With it a library's table runs
//! in the reference kernels like a lattice policy (`typejoin codegen`, `typejoin run`). Data
//! only; `output::codegen` writes it into a `promote::Generated`.

use serde_json::Value;

use crate::numeric::conventions::{CONVENTIONS, Semantics};
use crate::numeric::op::{Arity, OpId};
use crate::policy::diag::{Diagnostic, Source};

/// The loop an op computes a pair of operands in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Loop {
    /// The library has no loop for the pair: it raises.
    Refused,
    /// Both operands are converted to this dtype (by index) and computed in it.
    In(usize),
    /// A mixed loop whose two inputs keep their dtypes (NumPy 2 compares int64 with uint64
    /// exactly).
    Mixed(usize, usize),
    /// The policy's own rules (a cell of a lattice that a measured table extends).
    Rule,
}

/// One op's measured cells whose loop is not the pair's result: `((a, b), loop)`.
pub type OpLoops = (OpId, Vec<((usize, usize), Loop)>);

/// One op's measured dtypes whose loop is not the dtype itself (`negative`, `absolute`, `clip`
/// by its computation dtype): `(a, loop)`.
pub type DTypeLoops = (OpId, Vec<(usize, Loop)>);

/// A measured table's `"kernels"`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kernels {
    /// The policy the table runs as (`"policy": "tensorflow-safe"`, `--policy
    /// tensorflow-safe`); `None`: the table's library (`numpy`).
    pub policy: Option<String>,
    pub conventions: Semantics,
    /// What a weak node computes as where it is the result (`"weak": {"i*": "int32"}`: a
    /// TensorFlow Python int is a weak int32): `(node, dtype)` by index. Unlisted weak nodes
    /// only stand for a Python scalar beside an array.
    pub weak: Vec<(usize, usize)>,
    /// The lattice policy this table extends (`"extends": "torch"`): its nodes and rules stay,
    /// and the table adds `dtypes` with their measured pairs and loops (PyTorch's catalogue
    /// beyond its lattice). `None`: the table is a policy of its own (NumPy).
    pub extends: Option<String>,
    /// With `extends`, the table's dtypes it adds (by index).
    pub dtypes: Vec<usize>,
    /// Each listed binary op's cells whose loop is not the pair's result: `((a, b), loop)`.
    pub loops: Vec<OpLoops>,
    /// Each listed unary, clip or where op's dtypes whose loop is not the dtype's own.
    pub dtype_loops: Vec<DTypeLoops>,
    /// The loop `sum` accumulates each operand in (by index; `None`: not measured;
    /// `Loop::Refused`: no kernel).
    pub sum: Vec<Option<Loop>>,
    /// NumPy's legacy loop search (`"search"`), where the table's library runs one.
    pub search: Option<LoopSearch>,
}

/// NumPy's legacy loop search (`linear_search_type_resolver`), which `np.clip` runs where an
/// operand's DType is user-defined (ml_dtypes'): the first of the op's loops that every
/// operand casts to safely. `np.clip(bfloat16, bfloat16, bfloat16)` computes in float32.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoopSearch {
    /// Each op's loops in the library's order (`ufunc.types`), by index.
    pub ops: Vec<(OpId, Vec<usize>)>,
    /// The loops each operand casts to safely, by index (`safe[a]`).
    pub safe: Vec<Vec<usize>>,
}

impl Kernels {
    /// The dtype the weak node `i` computes in where it is a result (`"weak"`), if declared.
    pub fn weak_dtype(&self, i: usize) -> Option<usize> {
        self.weak.iter().find(|&&(w, _)| w == i).map(|&(_, t)| t)
    }
}

/// Parses `"kernels"` for a table of `names` (`at` locates a key path). Errors name the key.
pub(crate) fn parse(
    value: &Value,
    names: &[String],
    src: &Source,
    at: &dyn Fn(&[&str]) -> std::ops::Range<usize>,
    errors: &mut Vec<Diagnostic>,
) -> Option<Kernels> {
    let before = errors.len();
    let Some(obj) = value.as_object() else {
        errors.push(
            src.error(at(&["kernels"]), "`kernels` must be an object")
                .with_help("write \"kernels\": {\"conventions\": {…}, \"loops\": {…}, \"sum\": {…}} (docs/file-formats.md)"),
        );
        return None;
    };
    for key in obj.keys() {
        if ![
            "policy",
            "conventions",
            "weak",
            "extends",
            "dtypes",
            "loops",
            "sum",
            "search",
        ]
        .contains(&key.as_str())
        {
            errors.push(
                src.error(
                    at(&["kernels", key]),
                    format!("unknown `kernels` key `{key}`"),
                )
                .with_help("the keys of `kernels` are policy, conventions, weak, extends, dtypes, loops, sum and search"),
            );
        }
    }
    let index = |n: &str| names.iter().position(|x| x == n);
    let mut conventions = Semantics::default();
    if let Some(c) = obj.get("conventions") {
        match c.as_object() {
            Some(c) => {
                for (key, v) in c {
                    let span = at(&["kernels", "conventions", key]);
                    let Some(convention) = CONVENTIONS.iter().find(|x| x.key == key) else {
                        let keys: Vec<&str> = CONVENTIONS.iter().map(|x| x.key).collect();
                        errors.push(
                            src.error(span, format!("unknown convention `{key}`"))
                                .with_help(format!("the conventions are {}", keys.join(", "))),
                        );
                        continue;
                    };
                    let value = v.as_str().unwrap_or_default();
                    if !conventions.set(key, value) {
                        let values: Vec<&str> = convention.names().collect();
                        errors.push(
                            src.error(span, format!("`{key}` cannot be {v}"))
                                .with_help(format!("its values are {}", values.join(", "))),
                        );
                    }
                }
            }
            None => errors.push(
                src.error(
                    at(&["kernels", "conventions"]),
                    "`conventions` must be an object",
                )
                .with_help("write \"conventions\": {\"zero_ties\": \"operand\"}"),
            ),
        }
    }
    let (mut loops, mut dtype_loops) = (Vec::new(), Vec::new());
    match obj.get("loops").map(Value::as_object) {
        None => {}
        Some(None) => errors.push(
            src.error(at(&["kernels", "loops"]), "`loops` must be an object")
                .with_help("write \"loops\": {\"add\": {\"a\": {\"b\": \"dtype\"}}}"),
        ),
        Some(Some(ops)) => {
            for (op, rows) in ops {
                let span = at(&["kernels", "loops", op]);
                let id = OpId::named(op).filter(|o| o.info().kernel);
                let Some(id) = id else {
                    errors.push(
                        src.error(span, format!("`{op}` is not an op of the kernels"))
                            .with_help("loops are measured for the ops of docs/lattices/ops.md"),
                    );
                    continue;
                };
                let named = |v: &Value| v.as_str().and_then(index);
                // `astype` is by pair, as binary ops: `{"uint4": {"int4": null}}`.
                if !matches!(id.info().arity, Arity::Binary | Arity::Cast) {
                    // By dtype: `{"uint16": null}`.
                    let mut cells = Vec::new();
                    for (a, cell) in rows.as_object().into_iter().flatten() {
                        let span = at(&["kernels", "loops", op, a]);
                        match (index(a), cell) {
                            (Some(i), Value::Null) => cells.push((i, Loop::Refused)),
                            (Some(i), v) if named(v).is_some() => {
                                cells.push((i, Loop::In(named(v).unwrap_or(i))))
                            }
                            _ => errors.push(
                                src.error(span, format!("loop of {op}({a}): `{a}` and its loop ({cell}) must be dtypes of `dtypes` (or the loop null)"))
                                    .with_help("write \"negative\": {\"uint16\": null}: the dtype each dtype computes in, or null where the op raises"),
                            ),
                        }
                    }
                    cells.sort_by_key(|&(c, _)| c);
                    dtype_loops.push((id, cells));
                    continue;
                }
                let mut cells = Vec::new();
                for (a, row) in rows.as_object().into_iter().flatten() {
                    let Some(i) = index(a) else {
                        errors.push(
                            src.error(
                                at(&["kernels", "loops", op, a]),
                                format!("`{a}` is not one of `dtypes`"),
                            )
                            .with_help("a loop's operands are the table's dtypes"),
                        );
                        continue;
                    };
                    for (b, cell) in row.as_object().into_iter().flatten() {
                        let span = at(&["kernels", "loops", op, a, b]);
                        let Some(j) = index(b) else {
                            errors.push(
                                src.error(span, format!("`{b}` is not one of `dtypes`"))
                                    .with_help("a loop's operands are the table's dtypes"),
                            );
                            continue;
                        };
                        let l = match cell {
                            Value::Null => Some(Loop::Refused),
                            Value::Array(two) if two.len() == 2 => named(&two[0])
                                .zip(named(&two[1]))
                                .map(|(x, y)| Loop::Mixed(x, y)),
                            v => named(v).map(Loop::In),
                        };
                        match l {
                            Some(l) => cells.push(((i, j), l)),
                            None => errors.push(
                                src.error(span, format!("loop of {op}({a}, {b}) must be a dtype of `dtypes`, two of them or null, not {cell}"))
                                    .with_help("write the dtype the op computes the pair in, [in1, in2] for a mixed loop, or null where it raises"),
                            ),
                        }
                    }
                }
                cells.sort_by_key(|&(c, _)| c);
                loops.push((id, cells));
            }
        }
    }
    let mut sum = vec![None; names.len()];
    if let Some(s) = obj.get("sum") {
        for (a, acc) in s.as_object().into_iter().flatten() {
            let span = at(&["kernels", "sum", a]);
            match (index(a), acc.as_str().and_then(index)) {
                (Some(i), Some(t)) => sum[i] = Some(Loop::In(t)),
                (Some(i), None) if acc.is_null() => sum[i] = Some(Loop::Refused),
                _ => errors.push(
                    src.error(span, format!("sum of `{a}`: both it and its accumulator ({acc}) must be one of `dtypes`"))
                        .with_help("write \"sum\": {\"int8\": \"int64\", …}: the dtype the library sums each dtype in (null: it has no kernel)"),
                ),
            }
        }
    }
    let extends = match obj.get("extends") {
        None => None,
        Some(Value::String(p)) => Some(p.clone()),
        Some(v) => {
            errors.push(
                src.error(
                    at(&["kernels", "extends"]),
                    format!("`extends` must be a policy's name, not {v}"),
                )
                .with_help(
                    "write \"extends\": \"torch\": the lattice policy this table adds dtypes to",
                ),
            );
            None
        }
    };
    let mut weak = Vec::new();
    if let Some(w) = obj.get("weak") {
        match w.as_object() {
            Some(w) => {
                for (node, d) in w {
                    match (index(node), d.as_str().and_then(index)) {
                        (Some(i), Some(t)) => weak.push((i, t)),
                        _ => errors.push(
                            src.error(
                                at(&["kernels", "weak", node]),
                                format!("weak node `{node}` and its dtype ({d}) must be dtypes of `dtypes`"),
                            )
                            .with_help("write \"weak\": {\"i*\": \"int32\"}: the dtype the library computes a weak result in"),
                        ),
                    }
                }
            }
            None => errors.push(
                src.error(at(&["kernels", "weak"]), "`weak` must be an object")
                    .with_help("write \"weak\": {\"i*\": \"int32\"}"),
            ),
        }
    }
    let policy = match obj.get("policy") {
        None => None,
        Some(Value::String(p)) if is_policy_name(p) => Some(p.clone()),
        Some(v) => {
            errors.push(
                src.error(
                    at(&["kernels", "policy"]),
                    format!("`policy` must be a policy name (lowercase letters, digits and `-`), not {v}"),
                )
                .with_help("write \"policy\": \"tensorflow-safe\": the name `run --policy` takes"),
            );
            None
        }
    };
    let mut dtypes = Vec::new();
    for v in obj
        .get("dtypes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        match v.as_str().and_then(index) {
            Some(i) => dtypes.push(i),
            None => errors.push(
                src.error(
                    at(&["kernels", "dtypes"]),
                    format!("`kernels.dtypes` names {v}, which is not one of `dtypes`"),
                )
                .with_help("list the table's dtypes the extension adds to its lattice"),
            ),
        }
    }
    if extends.is_some() != obj.contains_key("dtypes") {
        errors.push(
            src.error(
                at(&["kernels"]),
                "`extends` and `dtypes` go together",
            )
            .with_help("a table that extends a lattice policy lists the dtypes it adds (\"dtypes\": [\"uint16\", …]); a table of its own has neither"),
        );
    }
    let search = obj
        .get("search")
        .and_then(|v| parse_search(v, names, src, at, errors));
    loops.sort_by_key(|(op, _)| *op);
    dtype_loops.sort_by_key(|(op, _)| *op);
    (errors.len() == before).then_some(Kernels {
        policy,
        conventions,
        weak,
        extends,
        dtypes,
        loops,
        dtype_loops,
        sum,
        search,
    })
}

/// Parses `"search": {"ops": {"clip": [loop, …]}, "safe": {a: [loop, …], …}}`.
fn parse_search(
    value: &Value,
    names: &[String],
    src: &Source,
    at: &dyn Fn(&[&str]) -> std::ops::Range<usize>,
    errors: &mut Vec<Diagnostic>,
) -> Option<LoopSearch> {
    let before = errors.len();
    let help = "write \"search\": {\"ops\": {\"clip\": [\"bool\", \"int8\", …]}, \"safe\": \
                {\"int8\": [\"int8\", \"int16\", …], …}}: each op's loops in the library's order, \
                and the loops each dtype casts to safely (docs/file-formats.md)";
    let Some(obj) = value.as_object() else {
        errors.push(
            src.error(at(&["kernels", "search"]), "`search` must be an object")
                .with_help(help),
        );
        return None;
    };
    for key in obj
        .keys()
        .filter(|k| !["ops", "safe"].contains(&k.as_str()))
    {
        errors.push(
            src.error(
                at(&["kernels", "search", key]),
                format!("unknown `search` key `{key}`"),
            )
            .with_help(help),
        );
    }
    // A list of the table's dtypes, by index.
    let dtypes = |path: &[&str], v: &Value| -> Result<Vec<usize>, Diagnostic> {
        let list = v.as_array().and_then(|l| {
            l.iter()
                .map(|x| x.as_str().and_then(|n| names.iter().position(|d| d == n)))
                .collect::<Option<Vec<_>>>()
        });
        list.ok_or_else(|| {
            src.error(
                at(path),
                format!(
                    "`{}` must be a list of the table's dtypes, not {v}",
                    path.join(".")
                ),
            )
            .with_help(help)
        })
    };
    let mut ops = Vec::new();
    for (op, loops) in obj
        .get("ops")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let path = ["kernels", "search", "ops", op];
        match OpId::named(op).filter(|o| o.info().kernel && o.info().arity == Arity::Ternary) {
            Some(id) => match dtypes(&path, loops) {
                Ok(l) => ops.push((id, l)),
                Err(e) => errors.push(e),
            },
            None => errors.push(
                src.error(
                    at(&path),
                    format!("`{op}` is not a ternary op of the kernels"),
                )
                .with_help("the loop search is measured for `clip` (docs/lattices/ops.md)"),
            ),
        }
    }
    let mut safe = vec![Vec::new(); names.len()];
    for (a, loops) in obj
        .get("safe")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let path = ["kernels", "search", "safe", a];
        match (names.iter().position(|d| d == a), dtypes(&path, loops)) {
            (Some(i), Ok(l)) => safe[i] = l,
            (Some(_), Err(e)) => errors.push(e),
            (None, _) => errors.push(
                src.error(at(&path), format!("`{a}` is not one of `dtypes`"))
                    .with_help(help),
            ),
        }
    }
    if !obj.get("ops").is_some_and(Value::is_object)
        || !obj.get("safe").is_some_and(Value::is_object)
    {
        errors.push(
            src.error(
                at(&["kernels", "search"]),
                "`search` needs both `ops` and `safe`, each an object",
            )
            .with_help(help),
        );
    }
    ops.sort_by_key(|(op, _)| *op);
    (errors.len() == before).then_some(LoopSearch { ops, safe })
}

/// A name `--policy` can take and a Rust module can be named after: lowercase ASCII letters,
/// digits and `-`, starting with a letter.
fn is_policy_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}
