//! Policy files (`lattices/*.toml`): a serde mirror with spans, then validation into [`Policy`].
//!
//! Every problem is a [`Diagnostic`] with the file, line and column, and all problems of a file
//! are reported together. Nothing here panics on any input (see the proptest in `tests/it`).

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;

use serde::Deserialize;
use toml::Spanned;

use crate::numeric::dtype;
use crate::numeric::format::NanEncoding;
use crate::policy::diag::{Diagnostic, LoadError, Source, did_you_mean};

/// A validated policy: dtypes in declaration order and Hasse edges between their indices.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    pub(crate) path: String,
    pub(crate) name: String,
    pub(crate) summary: Option<String>,
    pub(crate) source: Option<String>,
    pub(crate) dtypes: Vec<String>,
    /// Byte span of each dtype's declaration in the file.
    pub(crate) dtype_spans: Vec<Range<usize>>,
    /// Edges in file order.
    pub(crate) edges: Vec<Edge>,
    pub(crate) partial: bool,
    pub(crate) weak: Vec<WeakRule>,
    /// `[canonical]`: (dtype, the dtype an array of it becomes before it is promoted), as JAX
    /// without x64 turns every 64-bit input into its 32-bit type. Sorted by dtype name (the
    /// table is read as a map).
    pub(crate) canonical: Vec<(usize, usize)>,
    pub(crate) ops: Vec<OpRule>,
    pub(crate) formats: Vec<FormatDecl>,
    /// Declared integer and complex formats (`[formats.X] kind = "int" | "complex"`).
    pub(crate) other_formats: Vec<OtherFormat>,
    /// Lint levels by safety class (`precision-loss`, `overflow`, `sign-loss`,
    /// `drops-component`); a class not listed is `warn`.
    pub(crate) lints: Vec<(String, Level)>,
    /// Operand categories (`[categories]`): the rule that combines them, and (once derived by
    /// `order::categories`) the nodes that turned out equal to another.
    pub(crate) categories: Option<Categories>,
    /// The kernels' conventions (`[kernels]`): Python ints, integer division by zero, scalars
    /// with 16-bit floats; NumPy 2's where not declared.
    pub(crate) kernels: crate::numeric::op::Semantics,
}

/// Read access: the fields are the crate's, so that every `Policy` is one the loader made
/// or a checked edit of one ([`Policy::with_dtype`], [`Policy::without_dtype`]).
impl Policy {
    /// The file the policy was read from.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The policy's `name`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its one-line `summary`, if any.
    pub fn summary(&self) -> Option<&str> {
        self.summary.as_deref()
    }

    /// Where its rules come from (`source`), if given.
    pub fn source(&self) -> Option<&str> {
        self.source.as_deref()
    }

    /// Its nodes, in declaration order (then the derived category nodes): a dtype's index is its place here.
    pub fn dtypes(&self) -> &[String] {
        &self.dtypes
    }

    /// Byte span of each dtype's declaration in the file (empty for a derived or added one).
    pub fn dtype_spans(&self) -> &[Range<usize>] {
        &self.dtype_spans
    }

    /// Its edges, in file order.
    pub fn edges(&self) -> &[Edge] {
        &self.edges
    }

    /// Whether some pairs are declared to have no join (`partial = true`).
    pub fn partial(&self) -> bool {
        self.partial
    }

    /// Its `[weak]` rules.
    pub fn weak(&self) -> &[WeakRule] {
        &self.weak
    }

    /// `[canonical]`: (dtype, the dtype an array of it becomes first), sorted by dtype name.
    pub fn canonical_rules(&self) -> &[(usize, usize)] {
        &self.canonical
    }

    /// Its `[ops]` rules.
    pub fn ops(&self) -> &[OpRule] {
        &self.ops
    }

    /// The float formats it declares (`[formats.X]`).
    pub fn formats(&self) -> &[FormatDecl] {
        &self.formats
    }

    /// The integer and complex formats it declares.
    pub fn other_formats(&self) -> &[OtherFormat] {
        &self.other_formats
    }

    /// Lint levels by safety class, as written.
    pub fn lints(&self) -> &[(String, Level)] {
        &self.lints
    }

    /// Its operand categories, if it has `[categories]`.
    pub fn categories(&self) -> Option<&Categories> {
        self.categories.as_ref()
    }

    /// The kernels' conventions (`[kernels]`).
    pub fn kernels(&self) -> &crate::numeric::op::Semantics {
        &self.kernels
    }
}

/// A policy's operand categories (docs/categories.md). Nodes `dtype@category` are a dtype in
/// a category below the plain (dimensioned) one; the weak scalar nodes are the lowest.
#[derive(Debug, Clone, PartialEq)]
pub struct Categories {
    pub rule: CategoryRule,
    /// The categories between the plain dtypes and the scalars, highest first (`["0d"]`).
    pub lower: Vec<String>,
    /// Each scalar node (`i*`) and the dtype index it is wrapped as (`int64`).
    pub scalars: Vec<(String, usize)>,
    /// The nodes the rule makes equal to an earlier node (`bool@0d` is `bool`), with it.
    pub aliases: Vec<(String, usize)>,
    /// Whether the nodes and edges are derived from the rule (no category node declared).
    pub derived: bool,
    /// The policy as written, before its nodes were derived (`None` until then, and for a
    /// policy that declares its nodes): `suggest` places a new dtype in it and re-derives.
    pub base: Option<Box<Policy>>,
    /// Span of the `[categories]` table.
    pub span: Range<usize>,
}

/// The most nodes a `[categories]` rule may derive: deciding `a ≤ b` over every context costs
/// the fourth power of the node count (96 nodes: about a second; PyTorch's 32: 10 ms).
pub const MAX_DERIVED_NODES: usize = 96;

/// How a policy combines its categories.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CategoryRule {
    /// PyTorch's (`at::native::result_type`): promote within each category; a lower category
    /// counts only when its kind (bool < integer < float < complex) is higher, and a complex
    /// lower category over a float gives the complex of the float's precision.
    ByKind,
}

impl CategoryRule {
    pub const NAMES: &'static [&'static str] = &["by-kind"];

    pub fn name(self) -> &'static str {
        match self {
            CategoryRule::ByKind => "by-kind",
        }
    }
}

/// What `check` does when a promotion loses values of a class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Allow,
    Warn,
    Deny,
}

/// Why a checked edit of a policy ([`Policy::with_dtype`], [`Policy::without_dtype`]) was
/// refused; the policy is left as it was.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    /// A rule names the dtype: removing it would leave the rule pointing nowhere.
    #[error("`{dtype}` appears in {by}; it cannot be re-placed")]
    Pinned { dtype: String, by: &'static str },
    /// The name is already a dtype (or a category alias) of the policy.
    #[error("`{0}` is already a dtype of the policy")]
    Exists(String),
    /// An index past the policy's dtypes.
    #[error("dtype index {index} is out of range (the policy has {len} dtypes)")]
    NoSuchDtype { index: usize, len: usize },
    /// The new dtype would sit below `above` and above `below`, where `above` is already at
    /// or below `below`: a cycle.
    #[error(
        "placing it above `{below}` and below `{above}` makes a cycle: `{above}` already promotes to `{below}`"
    )]
    Cycle { below: String, above: String },
}

/// The safety classes a policy can set lint levels for.
pub const LINT_CLASSES: &[&str] = &["precision-loss", "overflow", "sign-loss", "drops-component"];

impl Policy {
    /// The node a dtype name denotes: a declared dtype, or a name the category rule made equal
    /// to one (`bool@0d` is `bool` in PyTorch's policy).
    pub fn node(&self, name: &str) -> Option<usize> {
        self.dtypes.iter().position(|d| d == name).or_else(|| {
            let c = self.categories.as_ref()?;
            c.aliases.iter().find(|(a, _)| a == name).map(|&(_, i)| i)
        })
    }

    /// The dtype node `i` materialises as: itself, a category node's dtype (`int8@0d` is
    /// `int8`), or a weak type's `[weak]` rule; `None` for a weak type without one.
    pub fn materialise(&self, i: usize) -> Option<usize> {
        let name = &self.dtypes[i];
        if dtype::is_weak(name) {
            return self
                .weak
                .iter()
                .find(|w| w.weak == i)
                .map(|w| w.materialises);
        }
        match dtype::split_category(name) {
            (base, Some(_)) => self.dtypes.iter().position(|d| d == base),
            (_, None) => Some(i),
        }
    }

    /// The dtype node an array of node `i` is promoted as: its `[canonical]` dtype, else itself.
    pub fn canonical(&self, i: usize) -> usize {
        self.canonical
            .iter()
            .find(|&&(f, _)| f == i)
            .map_or(i, |&(_, t)| t)
    }

    /// This policy with the dtype `name` added (the last index) with an edge from each of
    /// `below` and one to each of `above`, and `format` (its `dtype` replaced by the new index)
    /// when given: checked, so the result is a policy the loader could have made (the name new,
    /// every index in range, the edges acyclic). Nothing is borrowed from a file: new spans are
    /// empty.
    pub fn with_dtype(
        &self,
        name: &str,
        format: Option<&FormatDecl>,
        below: &[usize],
        above: &[usize],
    ) -> Result<Policy, EditError> {
        if self.node(name).is_some() {
            return Err(EditError::Exists(name.to_string()));
        }
        let n = self.dtypes.len();
        if let Some(&index) = below.iter().chain(above).find(|&&i| i >= n) {
            return Err(EditError::NoSuchDtype { index, len: n });
        }
        // A cycle through the new node: some `a` above it reaches some `b` below it.
        let mut succ = vec![Vec::new(); n];
        for e in &self.edges {
            succ[e.from].push(e.to);
        }
        for &a in above {
            let mut seen = vec![false; n];
            let mut stack = vec![a];
            while let Some(v) = stack.pop() {
                if std::mem::replace(&mut seen[v], true) {
                    continue;
                }
                if let Some(&b) = below.iter().find(|&&b| b == v) {
                    return Err(EditError::Cycle {
                        below: self.dtypes[b].clone(),
                        above: self.dtypes[a].clone(),
                    });
                }
                stack.extend(&succ[v]);
            }
        }
        let mut out = self.clone();
        out.dtypes.push(name.to_string());
        out.dtype_spans.push(0..0);
        let edge = |from, to| Edge {
            from,
            to,
            span: 0..0,
        };
        out.edges.extend(below.iter().map(|&p| edge(p, n)));
        out.edges.extend(above.iter().map(|&s| edge(n, s)));
        if let Some(f) = format {
            out.formats.push(FormatDecl {
                dtype: n,
                ..f.clone()
            });
        }
        Ok(out)
    }

    /// This policy without dtype `x`: its edges bridged (p → s for each p → x → s), so the
    /// order among the others is unchanged, and every index above `x` moved down by one.
    /// Refused when a rule (`[weak]`, `[canonical]`, `[ops]`) names `x`.
    pub fn without_dtype(&self, x: usize) -> Result<Policy, EditError> {
        let Some(name) = self.dtypes.get(x) else {
            return Err(EditError::NoSuchDtype {
                index: x,
                len: self.dtypes.len(),
            });
        };
        let pinned = |by| {
            Err(EditError::Pinned {
                dtype: name.clone(),
                by,
            })
        };
        if self.weak.iter().any(|w| w.weak == x || w.materialises == x) {
            return pinned("[weak]");
        }
        if self.canonical.iter().any(|&(a, b)| a == x || b == x) {
            return pinned("[canonical]");
        }
        let named_by_op = self.ops.iter().any(|r| {
            r.integer_result == Some(x)
                || r.lowest == Some(x)
                || r.lowest_unsigned == Some(x)
                || r.bool_result == Some(x)
                || r.integer_result_of.iter().any(|&(a, b)| a == x || b == x)
        });
        if named_by_op {
            return pinned("an [ops] rule");
        }
        let re = |i: usize| if i > x { i - 1 } else { i };
        let mut edges: Vec<Edge> = self
            .edges
            .iter()
            .filter(|e| e.from != x && e.to != x)
            .map(|e| Edge {
                from: re(e.from),
                to: re(e.to),
                span: e.span.clone(),
            })
            .collect();
        let preds = self.edges.iter().filter(|e| e.to == x).map(|e| e.from);
        let succs: Vec<usize> = self
            .edges
            .iter()
            .filter(|e| e.from == x)
            .map(|e| e.to)
            .collect();
        // Bridge p → x → s by p → s (an edge the order already implies changes nothing).
        for p in preds {
            for &s in &succs {
                edges.push(Edge {
                    from: re(p),
                    to: re(s),
                    span: 0..0,
                });
            }
        }
        let mut out = self.clone();
        out.dtypes.remove(x);
        out.dtype_spans.remove(x);
        out.edges = edges;
        for (a, b) in &mut out.canonical {
            *a = re(*a);
            *b = re(*b);
        }
        for w in &mut out.weak {
            w.weak = re(w.weak);
            w.materialises = re(w.materialises);
        }
        for r in &mut out.ops {
            r.integer_result = r.integer_result.map(re);
            r.lowest = r.lowest.map(re);
            r.lowest_unsigned = r.lowest_unsigned.map(re);
            r.bool_result = r.bool_result.map(re);
            for (a, b) in &mut r.integer_result_of {
                *a = re(*a);
                *b = re(*b);
            }
        }
        out.formats.retain(|f| f.dtype != x);
        for f in &mut out.formats {
            f.dtype = re(f.dtype);
        }
        out.other_formats.retain(|f| f.dtype != x);
        for f in &mut out.other_formats {
            f.dtype = re(f.dtype);
        }
        Ok(out)
    }

    /// The lint level of a safety class (`warn` unless the policy says otherwise).
    pub fn lint_level(&self, class: &str) -> Level {
        self.lints
            .iter()
            .find(|(c, _)| c == class)
            .map_or(Level::Warn, |(_, l)| *l)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edge {
    pub from: usize,
    pub to: usize,
    /// Span of the target name inside the `promotes` list.
    pub span: Range<usize>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WeakRule {
    pub weak: usize,
    pub materialises: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpRule {
    pub op: String,
    /// `true_divide`-style: integer/bool results become this dtype.
    pub integer_result: Option<usize>,
    /// Per-dtype exceptions to `integer_result`: (join, result), in file order.
    pub integer_result_of: Vec<(usize, usize)>,
    /// `sum`-style: inputs below this dtype accumulate in it.
    pub lowest: Option<usize>,
    /// What a bool join computes and returns as (`bool_result`): JAX floors, takes the
    /// remainder of and raises bools as int32, NumPy as int8.
    pub bool_result: Option<usize>,
    /// `sum`-style, for unsigned inputs: below this dtype they accumulate in it (JAX and NumPy
    /// sum uint8 in uint64, not in the default signed integer).
    pub lowest_unsigned: Option<usize>,
    /// No promotion: operands must already agree.
    pub same_dtype: bool,
    /// The kinds of computation dtype the op accepts in this policy's library (`kinds`), in
    /// place of the op catalogue's.
    pub kinds: Option<crate::numeric::op::Kinds>,
    /// The kinds the op accepts of every operand (`operand_kinds`), whatever the computation
    /// dtype: PyTorch's `subtract` refuses a bool operand even where the result is int8.
    pub operand_kinds: Option<crate::numeric::op::Kinds>,
    /// The dtypes beside whose array a Python bool operand is refused
    /// (`python_bool_refused_with`): TensorFlow's `tf.add(int8, True)` raises, since
    /// `tf.constant(True, tf.int8)` does, where `tf.add(int32, True)` computes.
    pub python_bool_refused_with: Vec<usize>,
    /// The kinds the operands' join may have before the op's rule replaces it (`join_kinds`):
    /// TensorFlow's `truediv` refuses bool / bool, whose join is bool, though bool / int8
    /// (join int8) computes in float32.
    pub join_kinds: Option<crate::numeric::op::Kinds>,
    /// The dtype the op computes in when the operands' join is the Python-int node `i*`
    /// (`python_int_as`): TensorFlow's `bitwise_and(True, 3)` is int64 where `add` is int32.
    pub python_int_as: Option<usize>,
}

/// A user-declared integer or complex format (`[formats.NAME]` with `kind = "int"` or
/// `"complex"`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OtherFormat {
    pub dtype: usize,
    pub kind: OtherKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OtherKind {
    /// An integer of `bits` bits (1 to 64), signed or unsigned.
    Int { bits: u32, signed: bool },
    /// A complex number whose components are the float format `of` (a catalogue float such
    /// as `float16`, or one of the policy's declared float formats).
    Complex { of: String },
}

/// A user-declared floating-point format (`[formats.NAME]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatDecl {
    pub dtype: usize,
    pub exponent_bits: u32,
    pub mantissa_bits: u32,
    pub bias: i32,
    pub infinities: bool,
    pub nan: NanEncoding,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPolicy {
    name: Spanned<String>,
    summary: Option<Spanned<String>>,
    source: Option<Spanned<String>>,
    dtypes: Spanned<Vec<Spanned<String>>>,
    partial: Option<Spanned<bool>>,
    #[serde(default)]
    promotes: BTreeMap<Spanned<String>, Spanned<Vec<Spanned<String>>>>,
    #[serde(default)]
    weak: BTreeMap<Spanned<String>, Spanned<String>>,
    #[serde(default)]
    canonical: BTreeMap<Spanned<String>, Spanned<String>>,
    #[serde(default)]
    ops: BTreeMap<Spanned<String>, Spanned<RawOp>>,
    #[serde(default)]
    formats: BTreeMap<Spanned<String>, Spanned<RawFormat>>,
    #[serde(default)]
    lints: BTreeMap<Spanned<String>, Spanned<String>>,
    categories: Option<Spanned<RawCategories>>,
    #[serde(default)]
    kernels: BTreeMap<Spanned<String>, Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCategories {
    rule: Spanned<String>,
    #[serde(default)]
    lower: Vec<Spanned<String>>,
    #[serde(default)]
    scalars: BTreeMap<Spanned<String>, Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOp {
    integer_result: Option<Spanned<String>>,
    integer_result_of: Option<BTreeMap<Spanned<String>, Spanned<String>>>,
    lowest: Option<Spanned<String>>,
    lowest_unsigned: Option<Spanned<String>>,
    bool_result: Option<Spanned<String>>,
    same_dtype: Option<Spanned<bool>>,
    kinds: Option<Spanned<Vec<Spanned<String>>>>,
    operand_kinds: Option<Spanned<Vec<Spanned<String>>>>,
    python_bool_refused_with: Option<Vec<Spanned<String>>>,
    join_kinds: Option<Spanned<Vec<Spanned<String>>>>,
    python_int_as: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFormat {
    kind: Spanned<String>,
    exponent_bits: Option<Spanned<i64>>,
    mantissa_bits: Option<Spanned<i64>>,
    bits: Option<Spanned<i64>>,
    signed: Option<Spanned<bool>>,
    of: Option<Spanned<String>>,
    bias: Option<Spanned<i64>>,
    infinities: Option<Spanned<bool>>,
    nan: Option<Spanned<String>>,
}

impl RawFormat {
    /// The keys a format of `kind` takes besides `kind`.
    fn keys_of(kind: &str) -> &'static [&'static str] {
        match kind {
            "int" => &["bits", "signed"],
            "complex" => &["of"],
            _ => &[
                "exponent_bits",
                "mantissa_bits",
                "bias",
                "infinities",
                "nan",
            ],
        }
    }

    /// The keys given, besides `kind`.
    fn present(&self) -> Vec<&'static str> {
        [
            ("exponent_bits", self.exponent_bits.is_some()),
            ("mantissa_bits", self.mantissa_bits.is_some()),
            ("bias", self.bias.is_some()),
            ("infinities", self.infinities.is_some()),
            ("nan", self.nan.is_some()),
            ("bits", self.bits.is_some()),
            ("signed", self.signed.is_some()),
            ("of", self.of.is_some()),
        ]
        .into_iter()
        .filter_map(|(k, present)| present.then_some(k))
        .collect()
    }
}

const TOP_LEVEL_KEYS: &[&str] = &[
    "name",
    "summary",
    "source",
    "dtypes",
    "partial",
    "promotes",
    "weak",
    "canonical",
    "ops",
    "formats",
    "lints",
    "categories",
    "kernels",
];

/// Parses and validates a policy file. `path` is only used in diagnostics.
pub fn parse_policy(path: &str, text: &str) -> Result<Policy, LoadError> {
    let src = Source::new(path, text);
    if text.trim().is_empty() {
        return Err(LoadError::one(
            src.error(0..0, "the policy file is empty").with_help(
                "a policy needs at least `name`, `dtypes` and `[promotes]`; see docs/file-formats.md",
            ),
        ));
    }
    let raw: RawPolicy = toml::from_str(text).map_err(|e| LoadError::one(toml_error(&src, &e)))?;
    Validator::new(src).run(raw)
}

/// Turns a toml/serde error into a diagnostic with a fix where we can name one.
pub(crate) fn toml_error(src: &Source, e: &toml::de::Error) -> Diagnostic {
    let span = e.span().unwrap_or(0..0);
    let message = e.message().trim().to_string();
    let mut d = src.error(span.clone(), &message);
    if let Some(field) = message
        .strip_prefix("unknown field `")
        .and_then(|rest| rest.split('`').next())
    {
        let known: &[&str] = if message.contains("`integer_result`") {
            &[
                "integer_result",
                "integer_result_of",
                "lowest",
                "lowest_unsigned",
                "bool_result",
                "same_dtype",
                "kinds",
                "operand_kinds",
                "python_bool_refused_with",
                "join_kinds",
                "python_int_as",
            ]
        } else if message.contains("`lower`") {
            &["rule", "lower", "scalars"]
        } else if message.contains("`exponent_bits`") {
            &[
                "kind",
                "exponent_bits",
                "mantissa_bits",
                "bias",
                "infinities",
                "nan",
                "bits",
                "signed",
                "of",
            ]
        } else {
            TOP_LEVEL_KEYS
        };
        d = d.with_help(match did_you_mean(field, known.iter().copied()) {
            Some(s) => format!("did you mean `{s}`?"),
            None => format!(
                "remove `{field}`; the keys allowed here are {}",
                known.join(", ")
            ),
        });
    } else if message.starts_with("missing field") {
        d = d.with_help("see docs/file-formats.md for the required keys");
    } else if message.contains("expected a sequence")
        && d.source_line.trim_start().starts_with("partial")
    {
        d = d.with_help(
            "`partial` is a top-level key: move it above the first `[table]` header (here it was read as an edge list of `[promotes]`)",
        );
    } else if message.contains("expected a boolean") {
        d = d.with_help("write `true` or `false`, without quotes");
    } else if message.contains("expected a string") {
        d = d.with_help("write the dtype name in quotes, e.g. \"int8\"");
    } else if message.contains("expected a sequence") {
        d = d.with_help("write the successors as a list, e.g. `int8 = [\"int16\"]`");
    }
    d
}

struct Validator<'a> {
    src: Source<'a>,
    errors: Vec<Diagnostic>,
}

impl<'a> Validator<'a> {
    fn new(src: Source<'a>) -> Self {
        Validator {
            src,
            errors: Vec::new(),
        }
    }

    fn error(&mut self, span: Range<usize>, msg: impl Into<String>, help: Option<String>) {
        let mut d = self.src.error(span, msg);
        d.help = help;
        self.errors.push(d);
    }

    fn run(mut self, raw: RawPolicy) -> Result<Policy, LoadError> {
        // dtypes: unique, known (catalogue or declared format).
        let mut index: HashMap<String, usize> = HashMap::new();
        let mut dtypes = Vec::new();
        let mut dtype_spans: Vec<Range<usize>> = Vec::new();
        let declared_formats: Vec<&str> =
            raw.formats.keys().map(|k| k.get_ref().as_str()).collect();
        if let Some(past) = raw.dtypes.get_ref().get(crate::policy::table::MAX_DTYPES) {
            let max = crate::policy::table::MAX_DTYPES;
            return Err(LoadError::one(
                self.src
                    .error(
                        past.span(),
                        format!(
                            "{} dtypes: typejoin reads policies of at most {max}",
                            raw.dtypes.get_ref().len()
                        ),
                    )
                    .with_help("split the policy, or check a part of it"),
            ));
        }
        if raw.dtypes.get_ref().is_empty() {
            self.error(
                raw.dtypes.span(),
                "`dtypes` is empty",
                Some(
                    "list the policy's dtypes, e.g. dtypes = [\"bool\", \"int8\", \"float32\"]"
                        .into(),
                ),
            );
        }
        for d in raw.dtypes.get_ref() {
            let name = d.get_ref().as_str();
            if let Some(&first) = index.get(name) {
                let (l, c) = self.src.line_col(dtype_spans[first].start);
                self.error(
                    d.span(),
                    format!("duplicate dtype `{name}`"),
                    Some(format!(
                        "it is already declared at line {l}, column {c}; remove one"
                    )),
                );
                continue;
            }
            let (base, category) = dtype::split_category(name);
            if category.is_some_and(|c| {
                c.is_empty() || !c.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
            }) {
                self.error(
                    d.span(),
                    format!("`{name}` has an invalid category"),
                    Some("write a category node as `dtype@category`, the category in letters, digits and `_` (e.g. \"int8@0d\")".into()),
                );
            } else if category.is_some()
                && (dtype::is_weak(base) || dtype::kind(base) == dtype::Kind::Opaque)
            {
                self.error(
                    d.span(),
                    format!("`{base}` cannot have a category"),
                    Some("only dtypes with values have category variants; weak and opaque types are their own nodes".into()),
                );
            } else if dtype::info(name).is_none() && !declared_formats.contains(&base) {
                let help = match did_you_mean(name, dtype::CATALOGUE.iter().map(|d| d.name)) {
                    Some(s) => {
                        format!("did you mean `{s}`? A new dtype needs a `[formats.{name}]` table")
                    }
                    None => format!(
                        "declare its format in a `[formats.{name}]` table, or use a catalogue name (docs/file-formats.md)"
                    ),
                };
                self.error(d.span(), format!("unknown dtype `{name}`"), Some(help));
            }
            index.insert(name.to_string(), dtypes.len());
            dtypes.push(name.to_string());
            dtype_spans.push(d.span());
        }

        let edges = self.edges(&raw, &index, &dtypes);
        let weak = self.weak(&raw, &index, &dtypes);
        let canonical = self.canonical(&raw, &index, &dtypes);
        let ops = self.ops(&raw, &index, &dtypes);
        let (formats, other_formats) = self.formats(&raw, &index);
        let lints = self.lints(&raw);
        let categories = self.categories(&raw, &index, &dtypes, &dtype_spans);
        let kernels = self.kernels(&raw);

        if self.errors.is_empty()
            && let Some(cycle) = find_cycle(dtypes.len(), &edges)
        {
            let path: Vec<&str> = cycle
                .iter()
                .map(|&e| dtypes[edges[e].from].as_str())
                .collect();
            let closing = &edges[*cycle.last().expect("a cycle has edges")];
            self.error(
                closing.span.clone(),
                format!(
                    "cycle in the promotion graph: {} → {}",
                    path.join(" → "),
                    path[0]
                ),
                Some(format!(
                    "promotion must be acyclic; remove one of these edges (this one is `{}` → `{}`)",
                    dtypes[closing.from], dtypes[closing.to]
                )),
            );
        }

        if !self.errors.is_empty() {
            self.errors.sort_by_key(|d| (d.line, d.col));
            return Err(LoadError {
                diagnostics: self.errors,
            });
        }
        Ok(Policy {
            path: self.src.path.to_string(),
            name: raw.name.into_inner(),
            summary: raw.summary.map(Spanned::into_inner),
            source: raw.source.map(Spanned::into_inner),
            dtypes,
            dtype_spans,
            edges,
            partial: raw.partial.is_some_and(|p| *p.get_ref()),
            weak,
            canonical,
            ops,
            formats,
            other_formats,
            lints,
            categories,
            kernels,
        })
    }

    /// `[kernels]`: each key one of [`CONVENTIONS`](crate::numeric::conventions::CONVENTIONS),
    /// with one of its values.
    fn kernels(&mut self, raw: &RawPolicy) -> crate::numeric::op::Semantics {
        use crate::numeric::conventions::{CONVENTIONS, Semantics};
        let mut out = Semantics::default();
        for (key, value) in &raw.kernels {
            let Some(convention) = CONVENTIONS.iter().find(|c| c.key == key.get_ref()) else {
                let keys = CONVENTIONS.iter().map(|c| c.key);
                let help = match did_you_mean(key.get_ref(), keys.clone()) {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => format!(
                        "the keys of [kernels] are {}",
                        keys.collect::<Vec<_>>().join(", ")
                    ),
                };
                self.error(
                    key.span(),
                    format!("unknown [kernels] key `{}`", key.get_ref()),
                    Some(help),
                );
                continue;
            };
            if !out.set(key.get_ref(), value.get_ref()) {
                self.error(
                    value.span(),
                    format!(
                        "unknown value `{}` for `{}`",
                        value.get_ref(),
                        key.get_ref()
                    ),
                    Some(format!(
                        "use {}",
                        convention
                            .names()
                            .map(|v| format!("\"{v}\""))
                            .collect::<Vec<_>>()
                            .join(" or ")
                    )),
                );
            }
        }
        out
    }

    /// `[categories]`, and every category node's dtype declared (it materialises as it).
    fn categories(
        &mut self,
        raw: &RawPolicy,
        index: &HashMap<String, usize>,
        dtypes: &[String],
        spans: &[Range<usize>],
    ) -> Option<Categories> {
        let mut lower_declared: Vec<String> = Vec::new();
        if let Some(c) = &raw.categories {
            for l in &c.get_ref().lower {
                lower_declared.push(l.get_ref().clone());
            }
        }
        let mut has_nodes = false;
        for (i, name) in dtypes.iter().enumerate() {
            let (base, Some(cat)) = dtype::split_category(name) else {
                has_nodes |= dtype::is_weak(name);
                continue;
            };
            has_nodes = true;
            if !index.contains_key(base) {
                self.error(
                    spans[i].clone(),
                    format!(
                        "`{name}` is a category node of `{base}`, which is not declared in `dtypes`"
                    ),
                    Some(format!(
                        "add \"{base}\" to `dtypes`: a category node materialises as its dtype"
                    )),
                );
            }
            if raw.categories.is_some() && !lower_declared.iter().any(|l| l == cat) {
                self.error(
                    spans[i].clone(),
                    format!("category `{cat}` is not listed in `[categories] lower`"),
                    Some(format!("add \"{cat}\" to `lower`, in its priority order")),
                );
            }
        }
        let raw_c = raw.categories.as_ref()?;
        let c = raw_c.get_ref();
        let rule = match c.rule.get_ref().as_str() {
            "by-kind" => CategoryRule::ByKind,
            other => {
                let help = match did_you_mean(other, CategoryRule::NAMES.iter().copied()) {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => format!("the rules are: {}", CategoryRule::NAMES.join(", ")),
                };
                self.error(
                    c.rule.span(),
                    format!("unknown category rule `{other}`"),
                    Some(help),
                );
                return None;
            }
        };
        let mut lower: Vec<String> = Vec::new();
        let mut listed = std::collections::HashSet::new();
        for l in &c.lower {
            let n = l.get_ref();
            if n.is_empty() || !n.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '_') {
                self.error(
                    l.span(),
                    format!("invalid category name `{n}`"),
                    Some("use letters, digits and `_`, e.g. \"0d\"".into()),
                );
            } else if !listed.insert(n) {
                self.error(
                    l.span(),
                    format!("duplicate category `{n}`"),
                    Some("list each category once".into()),
                );
            } else {
                lower.push(n.clone());
            }
        }
        let mut scalars = Vec::new();
        for (w, target) in &c.scalars {
            let name = w.get_ref();
            if !dtype::is_weak(name) {
                self.error(
                    w.span(),
                    format!("`{name}` is not a scalar type"),
                    Some("the scalar nodes are `b*`, `i*`, `f*` and `c*`".into()),
                );
                continue;
            }
            let t = target.get_ref();
            match index.get(t) {
                Some(&ti) if dtype::split_category(t).1.is_none() && !dtype::is_weak(t) => {
                    scalars.push((name.clone(), ti));
                }
                _ => self.error(
                    target.span(),
                    format!("scalar `{name}` is wrapped as `{t}`, which is not a declared dtype"),
                    Some(format!(
                        "add \"{t}\" to `dtypes`, or name a declared plain dtype"
                    )),
                ),
            }
        }
        if has_nodes {
            // Declared by hand: each scalar node also needs its `[weak]` materialisation.
            for (w, ti) in &scalars {
                if let Some(&wi) = index.get(w.as_str())
                    && !raw
                        .weak
                        .iter()
                        .any(|(k, v)| k.get_ref() == w && index.get(v.get_ref()) == Some(ti))
                {
                    self.error(
                        spans[wi].clone(),
                        format!("scalar `{w}` is wrapped as `{}` in `[categories]` but `[weak]` does not say so", dtypes[*ti]),
                        Some(format!("add `\"{w}\" = \"{}\"` to `[weak]`", dtypes[*ti])),
                    );
                }
            }
        }
        // Checking hand-declared nodes against the rule compares every multiset of up to four
        // of them: the same cost, and the same cap, as deriving them.
        if has_nodes && dtypes.len() > MAX_DERIVED_NODES {
            self.error(
                raw_c.span(),
                format!(
                    "the categories' rule would be checked on {} nodes, more than the {MAX_DERIVED_NODES} typejoin checks (every multiset of up to four nodes: the fourth power of the node count)",
                    dtypes.len()
                ),
                Some("declare fewer nodes, or drop `[categories]`: the nodes and edges declared by hand stand on their own".into()),
            );
            return None;
        }
        if !has_nodes {
            let plain = dtypes
                .iter()
                .filter(|d| dtype::kind(d) != dtype::Kind::Opaque)
                .count();
            let nodes = plain * (1 + lower.len()) + scalars.len();
            if nodes > MAX_DERIVED_NODES {
                self.error(
                    raw_c.span(),
                    format!(
                        "the categories would derive {nodes} nodes, more than the {MAX_DERIVED_NODES} typejoin derives (deciding the order costs the fourth power of the node count)"
                    ),
                    Some("declare fewer dtypes or categories, or declare the category nodes and their edges by hand".into()),
                );
                return None;
            }
        }
        Some(Categories {
            rule,
            lower,
            scalars,
            aliases: Vec::new(),
            derived: !has_nodes,
            base: None,
            span: raw_c.span(),
        })
    }

    fn lints(&mut self, raw: &RawPolicy) -> Vec<(String, Level)> {
        let mut out = Vec::new();
        for (class, level) in &raw.lints {
            let c = class.get_ref().as_str();
            if !LINT_CLASSES.contains(&c) {
                let help = match did_you_mean(c, LINT_CLASSES.iter().copied()) {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => format!("lintable classes: {}", LINT_CLASSES.join(", ")),
                };
                self.error(
                    class.span(),
                    format!("unknown safety class `{c}`"),
                    Some(help),
                );
                continue;
            }
            let l = match level.get_ref().as_str() {
                "allow" => Level::Allow,
                "warn" => Level::Warn,
                "deny" => Level::Deny,
                other => {
                    self.error(
                        level.span(),
                        format!("unknown lint level `{other}`"),
                        Some("use \"allow\", \"warn\" or \"deny\"".into()),
                    );
                    continue;
                }
            };
            out.push((c.to_string(), l));
        }
        out
    }

    fn lookup(
        &mut self,
        name: &Spanned<String>,
        index: &HashMap<String, usize>,
        dtypes: &[String],
        role: &str,
    ) -> Option<usize> {
        let n = name.get_ref();
        if let Some(&i) = index.get(n) {
            return Some(i);
        }
        let help = match did_you_mean(n, dtypes.iter().map(String::as_str)) {
            Some(s) => format!("did you mean `{s}`?"),
            None => format!("add `{n}` to `dtypes` first"),
        };
        self.error(
            name.span(),
            format!("{role} `{n}` is not declared in `dtypes`"),
            Some(help),
        );
        None
    }

    /// [`Self::lookup`] of a dtype that must be of one of `kinds` (`what` names them); `None`
    /// after reporting it.
    fn lookup_of_kind(
        &mut self,
        name: &Spanned<String>,
        index: &HashMap<String, usize>,
        dtypes: &[String],
        (role, kinds, what): (&str, &[dtype::Kind], &str),
        help: impl FnOnce() -> String,
    ) -> Option<usize> {
        let i = self.lookup(name, index, dtypes, role)?;
        if kinds.contains(&dtype::kind(&dtypes[i])) {
            return Some(i);
        }
        self.error(
            name.span(),
            format!("`{}` is not {what} dtype", dtypes[i]),
            Some(help()),
        );
        None
    }

    fn edges(
        &mut self,
        raw: &RawPolicy,
        index: &HashMap<String, usize>,
        dtypes: &[String],
    ) -> Vec<Edge> {
        let mut edges = Vec::new();
        for (from, targets) in &raw.promotes {
            let f = self.lookup(from, index, dtypes, "dtype");
            let mut seen: std::collections::HashSet<&str> = std::collections::HashSet::new();
            for t in targets.get_ref() {
                let name = t.get_ref().as_str();
                if seen.contains(name) {
                    self.error(
                        t.span(),
                        format!("duplicate edge `{}` → `{name}`", from.get_ref()),
                        Some("list each successor once".into()),
                    );
                    continue;
                }
                seen.insert(name);
                let to = self.lookup(t, index, dtypes, "edge target");
                if let (Some(f), Some(to)) = (f, to) {
                    if f == to {
                        self.error(
                            t.span(),
                            format!("self-loop: `{name}` promotes to itself"),
                            Some("every dtype is already its own join; remove this edge".into()),
                        );
                        continue;
                    }
                    edges.push(Edge {
                        from: f,
                        to,
                        span: t.span(),
                    });
                }
            }
        }
        edges.sort_by_key(|e| e.span.start);
        edges
    }

    fn weak(
        &mut self,
        raw: &RawPolicy,
        index: &HashMap<String, usize>,
        dtypes: &[String],
    ) -> Vec<WeakRule> {
        let mut rules = Vec::new();
        for (w, target) in &raw.weak {
            if !dtype::is_weak(w.get_ref()) {
                self.error(
                    w.span(),
                    format!("`{}` is not a weak type", w.get_ref()),
                    Some("only `i*`, `f*` and `c*` materialise; remove this entry".into()),
                );
                continue;
            }
            let wi = self.lookup(w, index, dtypes, "weak type");
            let ti = index.get(target.get_ref()).copied();
            if ti.is_none() {
                self.error(
                    target.span(),
                    format!(
                        "`{}` materialises as `{}`, which is not declared in `dtypes`",
                        w.get_ref(),
                        target.get_ref()
                    ),
                    Some(format!(
                        "add \"{}\" to `dtypes`, or name a declared dtype",
                        target.get_ref()
                    )),
                );
            }
            if let (Some(wi), Some(ti)) = (wi, ti) {
                if dtype::is_weak(&dtypes[ti]) {
                    self.error(
                        target.span(),
                        format!(
                            "a weak type must materialise as a concrete dtype, not `{}`",
                            dtypes[ti]
                        ),
                        Some("name the default dtype, e.g. \"int64\" for `i*`".into()),
                    );
                    continue;
                }
                rules.push(WeakRule {
                    weak: wi,
                    materialises: ti,
                });
            }
        }
        rules
    }

    /// `[canonical]`: each entry maps a concrete dtype to another concrete dtype that is not
    /// itself mapped (one step, so an operand's canonical dtype never depends on order).
    fn canonical(
        &mut self,
        raw: &RawPolicy,
        index: &HashMap<String, usize>,
        dtypes: &[String],
    ) -> Vec<(usize, usize)> {
        let concrete =
            |name: &str| !dtype::is_weak(name) && dtype::split_category(name).1.is_none();
        let mut pairs = Vec::new();
        for (from, to) in &raw.canonical {
            let f = self.lookup(from, index, dtypes, "canonicalised dtype");
            let t = self.lookup(to, index, dtypes, "canonical dtype");
            let (Some(f), Some(t)) = (f, t) else { continue };
            let bad = if !concrete(&dtypes[f]) {
                Some((from, format!("`{}` is not an array dtype", dtypes[f])))
            } else if !concrete(&dtypes[t]) {
                Some((to, format!("`{}` is not an array dtype", dtypes[t])))
            } else if f == t {
                Some((to, format!("`{}` is canonicalised as itself", dtypes[f])))
            } else if raw.canonical.keys().any(|k| k.get_ref() == &dtypes[t]) {
                Some((
                    to,
                    format!(
                        "`{}` is itself canonicalised; name its canonical dtype",
                        dtypes[t]
                    ),
                ))
            } else {
                None
            };
            if let Some((at, message)) = bad {
                self.error(
                    at.span(),
                    message,
                    Some(
                        "`[canonical]` maps an array dtype to the dtype the library converts \
                         it to before promoting (JAX without x64: int64 = \"int32\")"
                            .into(),
                    ),
                );
                continue;
            }
            pairs.push((f, t));
        }
        pairs
    }

    fn ops(
        &mut self,
        raw: &RawPolicy,
        index: &HashMap<String, usize>,
        dtypes: &[String],
    ) -> Vec<OpRule> {
        let mut rules = Vec::new();
        for (op, rule) in &raw.ops {
            let name = op.get_ref();
            if crate::numeric::op::info(name).is_none() {
                let help = match did_you_mean(name, crate::numeric::op::names()) {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => format!(
                        "known ops: {}",
                        crate::numeric::op::names().collect::<Vec<_>>().join(", ")
                    ),
                };
                self.error(op.span(), format!("unknown op `{name}`"), Some(help));
                continue;
            }
            let r = rule.get_ref();
            let integer_result = r
                .integer_result
                .as_ref()
                .and_then(|d| self.lookup(d, index, dtypes, "op result"));
            let lowest = r
                .lowest
                .as_ref()
                .and_then(|d| self.lookup(d, index, dtypes, "op accumulator"));
            use crate::numeric::dtype::Kind::{Signed, Unsigned};
            let lowest_unsigned = r.lowest_unsigned.as_ref().and_then(|d| {
                let want = ("op accumulator", &[Unsigned][..], "an unsigned integer");
                self.lookup_of_kind(d, index, dtypes, want, || {
                    "`lowest_unsigned` is where unsigned inputs accumulate".into()
                })
            });
            let bool_result = r.bool_result.as_ref().and_then(|d| {
                let want = ("op result", &[Signed, Unsigned][..], "an integer");
                self.lookup_of_kind(d, index, dtypes, want, || {
                    "`bool_result` is the integer dtype bools compute in".into()
                })
            });
            let mut integer_result_of = Vec::new();
            for (from, to) in r.integer_result_of.iter().flatten() {
                let f = self.lookup(from, index, dtypes, "op operand");
                let t = self.lookup(to, index, dtypes, "op result");
                if let (Some(f), Some(t)) = (f, t) {
                    if !matches!(
                        crate::numeric::dtype::kind(&dtypes[f]),
                        crate::numeric::dtype::Kind::Bool
                            | crate::numeric::dtype::Kind::Signed
                            | crate::numeric::dtype::Kind::Unsigned
                    ) && dtypes[f] != "i*"
                    {
                        self.error(
                            from.span(),
                            format!("`{}` is not an integer or bool dtype", dtypes[f]),
                            Some("`integer_result_of` maps integer and bool joins".into()),
                        );
                    }
                    integer_result_of.push((f, t));
                }
            }
            if r.integer_result_of.is_some() && r.integer_result.is_none() {
                self.error(
                    rule.span(),
                    format!("op rule `{name}` has `integer_result_of` without `integer_result`"),
                    Some("set `integer_result`, the result of every other integer join".into()),
                );
            }
            let same_dtype = r.same_dtype.as_ref().is_some_and(|s| *s.get_ref());
            let kinds = r.kinds.as_ref().and_then(|k| self.kinds(k));
            let operand_kinds = r.operand_kinds.as_ref().and_then(|k| self.kinds(k));
            let python_bool_refused_with = r
                .python_bool_refused_with
                .iter()
                .flatten()
                .filter_map(|d| self.lookup(d, index, dtypes, "array beside a Python bool"))
                .collect();
            let join_kinds = r.join_kinds.as_ref().and_then(|k| self.kinds(k));
            let python_int_as = r.python_int_as.as_ref().and_then(|d| {
                let want = ("op result", &[Signed, Unsigned][..], "an integer");
                self.lookup_of_kind(d, index, dtypes, want, || {
                    "`python_int_as` is the integer dtype a Python-int join computes in".into()
                })
            });
            let set = [
                r.integer_result.is_some(),
                r.lowest.is_some(),
                r.lowest_unsigned.is_some(),
                r.bool_result.is_some(),
                r.same_dtype.is_some(),
                r.kinds.is_some(),
                r.operand_kinds.is_some(),
                r.python_bool_refused_with.is_some(),
                r.join_kinds.is_some(),
                r.python_int_as.is_some(),
            ];
            if !set.contains(&true) {
                self.error(
                    rule.span(),
                    format!("op rule `{name}` sets nothing"),
                    Some(
                        "set `integer_result`, `lowest`, `lowest_unsigned`, `bool_result`, \
                         `same_dtype`, `kinds`, `operand_kinds`, `python_bool_refused_with`, \
                         `join_kinds` or `python_int_as`"
                            .into(),
                    ),
                );
            }
            rules.push(OpRule {
                op: name.clone(),
                integer_result,
                integer_result_of,
                lowest,
                lowest_unsigned,
                bool_result,
                same_dtype,
                kinds,
                operand_kinds,
                python_bool_refused_with,
                join_kinds,
                python_int_as,
            });
        }
        rules
    }

    /// A list of kind names (`kinds`, `operand_kinds`, `join_kinds`); `None` after reporting an unknown one.
    fn kinds(&mut self, k: &Spanned<Vec<Spanned<String>>>) -> Option<crate::numeric::op::Kinds> {
        let parsed =
            crate::numeric::op::Kinds::parse(k.get_ref().iter().map(|n| n.get_ref().as_str()));
        match parsed {
            Ok(kinds) => Some(kinds),
            Err(bad) => {
                let at = k
                    .get_ref()
                    .iter()
                    .find(|n| n.get_ref() == bad)
                    .map_or(k.span(), |n| n.span());
                let names = crate::numeric::op::Kinds::NAMES;
                let help = match did_you_mean(bad, names.iter().copied()) {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => format!("the kinds are {}", names.join(", ")),
                };
                self.error(at, format!("unknown kind `{bad}`"), Some(help));
                None
            }
        }
    }

    fn formats(
        &mut self,
        raw: &RawPolicy,
        index: &HashMap<String, usize>,
    ) -> (Vec<FormatDecl>, Vec<OtherFormat>) {
        let mut out = Vec::new();
        let mut other = Vec::new();
        let floats: Vec<&str> = raw
            .formats
            .iter()
            .filter(|(_, f)| f.get_ref().kind.get_ref() == "float")
            .map(|(n, _)| n.get_ref().as_str())
            .collect();
        for (name, fmt) in &raw.formats {
            let n = name.get_ref();
            if dtype::info(n).is_some() {
                self.error(
                    name.span(),
                    format!("`{n}` is a built-in dtype; its format cannot be redeclared"),
                    Some("give the new format a new name".into()),
                );
                continue;
            }
            let Some(&di) = index.get(n) else {
                self.error(
                    name.span(),
                    format!("format `{n}` is not declared in `dtypes`"),
                    Some(format!("add \"{n}\" to `dtypes`")),
                );
                continue;
            };
            let f = fmt.get_ref();
            // The first key given that this kind of format does not take.
            let misplaced = |kind: &str| -> Option<String> {
                f.present()
                    .into_iter()
                    .find(|k| !RawFormat::keys_of(kind).contains(k))
                    .map(|k| format!("`{k}` does not apply to kind = \"{kind}\""))
            };
            match f.kind.get_ref().as_str() {
                "float" => {}
                "int" => {
                    if let Some(m) = misplaced("int") {
                        self.error(
                            fmt.span(),
                            m,
                            Some("an integer format has `bits` and `signed`".into()),
                        );
                        continue;
                    }
                    let Some(bits) = &f.bits else {
                        self.error(
                            fmt.span(),
                            format!("integer format `{n}` needs `bits`"),
                            Some("add e.g. `bits = 12`".into()),
                        );
                        continue;
                    };
                    let b = *bits.get_ref();
                    if !(1..=64).contains(&b) {
                        self.error(
                            bits.span(),
                            format!("bits = {b} is out of range"),
                            Some("use 1 to 64".into()),
                        );
                        continue;
                    }
                    other.push(OtherFormat {
                        dtype: di,
                        kind: OtherKind::Int {
                            bits: b as u32,
                            signed: f.signed.as_ref().is_none_or(|s| *s.get_ref()),
                        },
                    });
                    continue;
                }
                "complex" => {
                    if let Some(m) = misplaced("complex") {
                        self.error(
                            fmt.span(),
                            m,
                            Some("a complex format names its component float with `of`".into()),
                        );
                        continue;
                    }
                    let Some(of) = &f.of else {
                        self.error(
                            fmt.span(),
                            format!("complex format `{n}` needs `of`"),
                            Some("name its component float, e.g. `of = \"float16\"`".into()),
                        );
                        continue;
                    };
                    let c = of.get_ref();
                    let known = crate::numeric::dtype::float_format(c).is_some()
                        || floats.contains(&c.as_str());
                    if !known {
                        let help = match did_you_mean(c, crate::numeric::dtype::SMALL_FLOATS.iter().copied().chain(["float32", "float64"]).chain(floats.iter().copied())) {
                            Some(s) => format!("did you mean `{s}`?"),
                            None => "name a catalogue float (`float16`, `bfloat16`, …) or a `kind = \"float\"` format of this policy".into(),
                        };
                        self.error(
                            of.span(),
                            format!("`{c}` is not a float format"),
                            Some(help),
                        );
                        continue;
                    }
                    other.push(OtherFormat {
                        dtype: di,
                        kind: OtherKind::Complex { of: c.clone() },
                    });
                    continue;
                }
                k => {
                    self.error(
                        f.kind.span(),
                        format!("unsupported format kind `{k}`"),
                        Some("use kind = \"float\", \"int\" or \"complex\"".into()),
                    );
                    continue;
                }
            }
            if let Some(m) = misplaced("float") {
                self.error(
                    fmt.span(),
                    m,
                    Some(
                        "a float format has exponent_bits, mantissa_bits, bias, infinities, nan"
                            .into(),
                    ),
                );
                continue;
            }
            let (Some(exponent_bits), Some(mantissa_bits)) = (&f.exponent_bits, &f.mantissa_bits)
            else {
                self.error(
                    fmt.span(),
                    format!("float format `{n}` needs `exponent_bits` and `mantissa_bits`"),
                    Some("add e.g. `exponent_bits = 4` and `mantissa_bits = 3`".into()),
                );
                continue;
            };
            let e = *exponent_bits.get_ref();
            let m = *mantissa_bits.get_ref();
            if !(1..=15).contains(&e) {
                self.error(
                    exponent_bits.span(),
                    format!("exponent_bits = {e} is out of range"),
                    Some("use 1 to 15".into()),
                );
                continue;
            }
            if !(0..=52).contains(&m) || 1 + e + m > 64 {
                self.error(
                    mantissa_bits.span(),
                    format!("mantissa_bits = {m} is out of range"),
                    Some("use 0 to 52, with 1 + exponent_bits + mantissa_bits ≤ 64".into()),
                );
                continue;
            }
            let nan = match f.nan.as_ref().map(|s| s.get_ref().as_str()) {
                None | Some("ieee") => NanEncoding::Ieee,
                Some("all-ones") => NanEncoding::AllOnes,
                Some("negative-zero") => NanEncoding::NegativeZero,
                Some("none") => NanEncoding::None,
                Some(other) => {
                    let span = f.nan.as_ref().map_or(fmt.span(), |s| s.span());
                    self.error(
                        span,
                        format!("unknown NaN encoding `{other}`"),
                        Some("use \"ieee\", \"all-ones\" (…fn), \"negative-zero\" (…fnuz) or \"none\"".into()),
                    );
                    continue;
                }
            };
            let infinities = f
                .infinities
                .as_ref()
                .map_or(nan == NanEncoding::Ieee, |s| *s.get_ref());
            if infinities && nan != NanEncoding::Ieee {
                let span = f.infinities.as_ref().map_or(fmt.span(), |s| s.span());
                self.error(
                    span,
                    "infinities need the IEEE NaN encoding (the all-ones exponent holds both)",
                    Some("set nan = \"ieee\", or infinities = false".into()),
                );
                continue;
            }
            // Highest biased exponent code of a finite normal number.
            let top = (1i64 << e) - 1;
            let emax_code = if nan == NanEncoding::Ieee {
                top - 1
            } else {
                top
            };
            let bias = f
                .bias
                .as_ref()
                .map_or((1i64 << (e - 1)) - 1, |b| *b.get_ref());
            if emax_code < 1 {
                self.error(
                    exponent_bits.span(),
                    format!("exponent_bits = {e} with IEEE specials leaves no normal numbers"),
                    Some("use more exponent bits, or nan = \"all-ones\" / \"none\"".into()),
                );
                continue;
            }
            if !(1..=emax_code).contains(&bias) {
                let span = f.bias.as_ref().map_or(fmt.span(), |b| b.span());
                self.error(
                    span,
                    format!("bias = {bias} leaves 1.0 outside the normal range (biased exponents 1..={emax_code})"),
                    Some(format!("use a bias from 1 to {emax_code}; the IEEE choice is {}", (1i64 << (e - 1)) - 1)),
                );
                continue;
            }
            out.push(FormatDecl {
                dtype: di,
                exponent_bits: e as u32,
                mantissa_bits: m as u32,
                bias: bias as i32,
                infinities,
                nan,
            });
        }
        (out, other)
    }
}

/// A cycle as a list of edge indices (each edge's `to` is the next edge's `from`), if any.
pub fn find_cycle(n: usize, edges: &[Edge]) -> Option<Vec<usize>> {
    use petgraph::algo::kosaraju_scc;
    use petgraph::graph::{DiGraph, NodeIndex};
    let mut g: DiGraph<(), usize> = DiGraph::with_capacity(n, edges.len());
    for _ in 0..n {
        g.add_node(());
    }
    for (i, e) in edges.iter().enumerate() {
        g.add_edge(NodeIndex::new(e.from), NodeIndex::new(e.to), i);
    }
    // The smallest non-trivial strongly connected component holds a cycle; find the
    // shortest one through its lowest-numbered node by breadth-first search.
    let mut sccs: Vec<Vec<NodeIndex>> = kosaraju_scc(&g)
        .into_iter()
        .filter(|c| c.len() > 1)
        .collect();
    sccs.sort_by_key(|c| c.iter().map(|n| n.index()).min());
    let scc = sccs.first()?;
    let start = *scc.iter().min()?;
    let mut prev: HashMap<NodeIndex, usize> = HashMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(u) = queue.pop_front() {
        for e in g.edges(u) {
            use petgraph::visit::EdgeRef;
            let v = e.target();
            if !scc.contains(&v) {
                continue;
            }
            if v == start {
                let mut path = vec![*e.weight()];
                let mut cur = u;
                while cur != start {
                    let ei = prev[&cur];
                    path.push(ei);
                    cur = NodeIndex::new(edges[ei].from);
                }
                path.reverse();
                return Some(path);
            }
            if let std::collections::hash_map::Entry::Vacant(slot) = prev.entry(v) {
                slot.insert(*e.weight());
                queue.push_back(v);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        parse_policy("t.toml", text).unwrap_err().to_string()
    }

    #[test]
    fn minimal_policy_parses() {
        let p = parse_policy(
            "t.toml",
            "name = \"py\"\ndtypes = [\"bool\", \"i*\", \"f*\"]\n[promotes]\nbool = [\"i*\"]\n\"i*\" = [\"f*\"]\n",
        )
        .unwrap();
        assert_eq!(p.dtypes, vec!["bool", "i*", "f*"]);
        assert_eq!(
            p.edges.iter().map(|e| (e.from, e.to)).collect::<Vec<_>>(),
            vec![(0, 1), (1, 2)]
        );
        assert!(!p.partial);
    }

    /// The checked edits refuse what the loader would refuse, say why, and a dtype added then
    /// removed gives back the policy as it was.
    #[test]
    fn checked_edits_refuse_what_the_loader_would() {
        let p = parse_policy(
            "t.toml",
            "name = \"x\"\ndtypes = [\"bool\", \"int8\", \"int16\", \"i*\"]\n[promotes]\nbool = [\"i*\"]\n\"i*\" = [\"int8\"]\nint8 = [\"int16\"]\n[weak]\n\"i*\" = \"int8\"\n",
        )
        .unwrap();
        assert_eq!(
            p.with_dtype("int8", None, &[], &[]).unwrap_err(),
            EditError::Exists("int8".into())
        );
        assert_eq!(
            p.with_dtype("int4", None, &[7], &[]).unwrap_err(),
            EditError::NoSuchDtype { index: 7, len: 4 }
        );
        // Above int16 and below bool: bool ≤ i* ≤ int8 ≤ int16 already.
        let cycle = p.with_dtype("int4", None, &[2], &[0]).unwrap_err();
        assert_eq!(
            cycle.to_string(),
            "placing it above `int16` and below `bool` makes a cycle: `bool` already promotes to `int16`"
        );
        assert_eq!(
            p.without_dtype(1).unwrap_err().to_string(),
            "`int8` appears in [weak]; it cannot be re-placed"
        );
        let added = p.with_dtype("int4", None, &[0], &[3]).unwrap();
        assert_eq!(added.dtypes(), ["bool", "int8", "int16", "i*", "int4"]);
        assert_eq!(
            added.edges()[3..]
                .iter()
                .map(|e| (e.from, e.to))
                .collect::<Vec<_>>(),
            [(0, 4), (4, 3)]
        );
        let back = added.without_dtype(4).unwrap();
        assert_eq!(back.dtypes(), p.dtypes());
        // bool → int4 → i* is bridged by bool → i*, an edge the policy already had.
        assert_eq!(back.edges()[..3], p.edges()[..]);
        assert_eq!(back.edges()[3].from, 0);
        assert_eq!(back.edges()[3].to, 3);
    }

    /// `python_bool_refused_with` names the policy's dtypes: parsed into the op rule, a typo
    /// located and corrected.
    #[test]
    fn python_bool_refused_with_names_declared_dtypes() {
        let head = "name = \"x\"\ndtypes = [\"bool\", \"int8\", \"int32\"]\n[promotes]\nbool = [\"int8\"]\nint8 = [\"int32\"]\n[ops.add]\n";
        let p = parse_policy(
            "t.toml",
            &format!("{head}python_bool_refused_with = [\"int8\"]\n"),
        )
        .unwrap();
        assert_eq!(p.ops[0].python_bool_refused_with, [1]);
        let e = err(&format!(
            "{head}python_bool_refused_with = [\"int8\", \"int23\"]\n"
        ));
        assert!(e.contains("t.toml:7:37"), "{e}");
        assert!(e.contains("did you mean `int32`?"), "{e}");
    }

    #[test]
    fn typo_in_edge_suggests() {
        let e = err(
            "name = \"x\"\ndtypes = [\"int8\", \"float16\"]\n[promotes]\nint8 = [\"flaot16\"]\n",
        );
        assert!(e.contains("t.toml:4:9"), "{e}");
        assert!(e.contains("edge target `flaot16` is not declared"), "{e}");
        assert!(e.contains("did you mean `float16`?"), "{e}");
    }

    #[test]
    fn cycle_prints_path() {
        let e = err(
            "name = \"x\"\ndtypes = [\"int8\", \"int16\", \"int32\"]\n[promotes]\nint8 = [\"int16\"]\nint16 = [\"int32\"]\nint32 = [\"int8\"]\n",
        );
        assert!(
            e.contains("cycle in the promotion graph: int8 → int16 → int32 → int8"),
            "{e}"
        );
        assert!(e.contains("t.toml:6:10"), "{e}");
    }
}
