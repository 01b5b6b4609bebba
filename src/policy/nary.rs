//! A library's own n-ary promotion rule, declared by a measured table (`"nary"`,
//! docs/policy-kinds.md): what the library does with more than two operands when that is not a
//! fold of its pairs. The declaration is data; `order::dtype_sequence` (`numpy`) and
//! `order::result_type_state` (`torch`) evaluate it.
//!
//! Two rules: `numpy`, NumPy's `PyArray_PromoteDTypeSequence` (`np.result_type`, the ufuncs'
//! promotion), which needs each operand's DType class as NumPy sees it; `torch`, PyTorch's
//! `at::native::result_type` by operand category, which needs the dtypes c10 calls floating
//! and complex.

use serde_json::Value;

use crate::policy::diag::{Diagnostic, Source};

/// A declared n-ary rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NaryRule {
    /// NumPy's DType-sequence promotion; the class of each operand of the table, by index.
    Numpy(Vec<NumpyClass>),
    /// PyTorch's `at::native::result_type`: each operand category (dimensioned `int8`,
    /// zero-dim `int8@0d`, wrapped Python number `i*`) folded with `promoteTypes`, then the
    /// categories combined; the kind of each of the table's operands, by index.
    Torch(Vec<TorchKind>),
}

impl NaryRule {
    /// The rule's name as declared (`"rule": "numpy"`).
    pub fn name(&self) -> &'static str {
        match self {
            NaryRule::Numpy(_) => "numpy",
            NaryRule::Torch(_) => "torch",
        }
    }
}

/// What c10 says of a dtype in `combine_categories`: `isComplexType`, `isFloatingType`
/// (float8 and the packed float4 included), `Bool`, or none of those.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TorchKind {
    Bool,
    Floating,
    Complex,
    Other,
}

/// The category NumPy's promotion functions test a DType for (`PyTypeNum_ISINTEGER`, …), and
/// the kind of a Python scalar's abstract DType.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum NumpyKind {
    Bool,
    Integer,
    Float,
    Complex,
}

/// An operand's DType class as NumPy's n-ary promotion sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NumpyClass {
    /// A builtin legacy DType (`np.dtype(x).num` below 256) and its kind.
    Builtin { num: u16, kind: NumpyKind },
    /// A user DType registered through the legacy API (ml_dtypes): `num` from 256, in
    /// registration order. Its common-DType slot answers from safe casts.
    User { num: u16 },
    /// The abstract DType of a Python `int`, `float` or `complex` (NEP 50's weak scalars).
    Python(NumpyKind),
}

/// Parses `"nary"` for a table of `names` (`at` locates a key path). Errors name the key.
pub(crate) fn parse(
    value: &Value,
    names: &[String],
    src: &Source,
    at: &dyn Fn(&[&str]) -> std::ops::Range<usize>,
    errors: &mut Vec<Diagnostic>,
) -> Option<NaryRule> {
    let rule = value.get("rule").and_then(Value::as_str);
    match rule {
        Some("numpy") => {}
        Some("torch") => return torch(value, names, src, at, errors),
        Some(other) => {
            errors.push(
                src.error(at(&["nary", "rule"]), format!("unknown n-ary rule `{other}`"))
                    .with_help("the rules typejoin evaluates: \"numpy\" (np.result_type's DType-sequence promotion), \"torch\" (at::native::result_type by operand category); omit `nary` for a left fold of the pairs"),
            );
            return None;
        }
        None => {
            errors.push(
                src.error(at(&["nary"]), "`nary` needs a `rule`")
                    .with_help("write \"nary\": {\"rule\": \"numpy\", \"classes\": {…}}"),
            );
            return None;
        }
    }
    let Some(classes) = value.get("classes").and_then(Value::as_object) else {
        errors.push(
            src.error(at(&["nary"]), "the `numpy` rule needs `classes`: each operand's DType class")
                .with_help("write \"classes\": {\"int8\": {\"builtin\": 1, \"kind\": \"i\"}, \"bfloat16\": {\"user\": 256}, \"i*\": {\"python\": \"int\"}, …} (scripts/dump_table.py numpy-result-type measures them)"),
        );
        return None;
    };
    let mut out = Vec::with_capacity(names.len());
    let before = errors.len();
    for name in names {
        let Some(c) = classes.get(name) else {
            errors.push(
                src.error(at(&["nary", "classes"]), format!("no class for `{name}`"))
                    .with_help("give every dtype of `dtypes` its DType class"),
            );
            continue;
        };
        match class(c) {
            Ok(c) => out.push(c),
            Err(why) => errors.push(
                src.error(at(&["nary", "classes", name]), format!("`{name}`: {why}"))
                    .with_help("a class is {\"builtin\": NUM, \"kind\": \"b\"|\"i\"|\"u\"|\"f\"|\"c\"}, {\"user\": NUM} (NUM from 256) or {\"python\": \"int\"|\"float\"|\"complex\"}"),
            ),
        }
    }
    for key in classes.keys() {
        if !names.iter().any(|n| n == key) {
            errors.push(
                src.error(
                    at(&["nary", "classes", key]),
                    format!("class for `{key}`, which is not one of `dtypes`"),
                )
                .with_help("remove it, or add the dtype to `dtypes`"),
            );
        }
    }
    (errors.len() == before).then_some(NaryRule::Numpy(out))
}

fn class(v: &Value) -> Result<NumpyClass, String> {
    let num = |k: &str| -> Result<Option<u16>, String> {
        match v.get(k) {
            None => Ok(None),
            Some(n) => n
                .as_u64()
                .and_then(|n| u16::try_from(n).ok())
                .map(Some)
                .ok_or_else(|| format!("`{k}` must be a type number, not {n}")),
        }
    };
    if let Some(num) = num("builtin")? {
        if num >= 256 {
            return Err(format!(
                "builtin type number {num} is a user one (from 256)"
            ));
        }
        let kind = match v.get("kind").and_then(Value::as_str) {
            Some("b") => NumpyKind::Bool,
            Some("i" | "u") => NumpyKind::Integer,
            Some("f") => NumpyKind::Float,
            Some("c") => NumpyKind::Complex,
            Some(k) => return Err(format!("kind `{k}` is not a numeric kind")),
            None => return Err("a builtin class needs its `kind`".into()),
        };
        return Ok(NumpyClass::Builtin { num, kind });
    }
    if let Some(num) = num("user")? {
        if num < 256 {
            return Err(format!("user type number {num} is below 256"));
        }
        return Ok(NumpyClass::User { num });
    }
    match v.get("python").and_then(Value::as_str) {
        Some("int") => Ok(NumpyClass::Python(NumpyKind::Integer)),
        Some("float") => Ok(NumpyClass::Python(NumpyKind::Float)),
        Some("complex") => Ok(NumpyClass::Python(NumpyKind::Complex)),
        Some(k) => Err(format!("`python` must be int, float or complex, not `{k}`")),
        None => Err("not a class".into()),
    }
}

/// The `torch` rule's `"floating"` and `"complex"` lists (dtype names): every other operand's
/// kind follows from its dtype (`bool`) or is none of them.
fn torch(
    value: &Value,
    names: &[String],
    src: &Source,
    at: &dyn Fn(&[&str]) -> std::ops::Range<usize>,
    errors: &mut Vec<Diagnostic>,
) -> Option<NaryRule> {
    let before = errors.len();
    let mut list = |key: &str| -> Vec<String> {
        let Some(items) = value.get(key).and_then(Value::as_array) else {
            errors.push(
                src.error(at(&["nary"]), format!("the `torch` rule needs `{key}`: a list of dtype names"))
                    .with_help("write \"floating\": [\"float16\", …], \"complex\": [\"complex64\", …] (torch.dtype's is_floating_point and is_complex; scripts/dump_table.py torch-categories measures them)"),
            );
            return Vec::new();
        };
        items
            .iter()
            .enumerate()
            .filter_map(|(i, v)| {
                let name = v.as_str().filter(|n| names.iter().any(|x| x == n));
                if name.is_none() {
                    errors.push(
                        src.error(
                            at(&["nary", key, &format!("#{i}")]),
                            format!("`{key}` entry {v} is not one of `dtypes`"),
                        )
                        .with_help("list dtype names of the table"),
                    );
                }
                name.map(str::to_string)
            })
            .collect()
    };
    let (floating, complex) = (list("floating"), list("complex"));
    if errors.len() > before {
        return None;
    }
    let kinds = names
        .iter()
        .map(|n| {
            let base = crate::numeric::dtype::split_category(n).0;
            let base = match base {
                "b*" => "bool",
                b => b,
            };
            if complex.iter().any(|c| c == base) {
                TorchKind::Complex
            } else if floating.iter().any(|f| f == base) {
                TorchKind::Floating
            } else if base == "bool" {
                TorchKind::Bool
            } else {
                TorchKind::Other
            }
        })
        .collect();
    Some(NaryRule::Torch(kinds))
}
