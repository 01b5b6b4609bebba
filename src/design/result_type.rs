//! `typejoin result-type FILE OPERAND...`: the n-ary result of any operands under a policy
//! (the join of their nodes) or a measured table (its declared n-ary rule, else its left
//! fold), as the node and the dtype the library returns.

use serde::Serialize;

use crate::Input;
use crate::order::dtype_sequence::Arg;
use crate::order::lattice::Join;

/// Why an operand could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownOperand {
    pub operand: String,
    /// The closest name the input has, if any.
    pub suggestion: Option<String>,
}

/// The n-ary result of some operands.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ResultType {
    /// The operands as the input names them (`i8@0d` is `int8@0d`; an alias is kept).
    pub operands: Vec<String>,
    /// The node each operand is promoted as: itself, or its `[canonical]` dtype (JAX without
    /// x64 reads an int64 array as int32).
    pub promoted_as: Vec<String>,
    /// The node of the result (`f*`, `int8@0d`); `None` when there is none.
    pub node: Option<String>,
    /// The dtype the library returns for it (`float32` for PyTorch's `f*`).
    pub dtype: Option<String>,
    /// Why there is no result: no common upper bound (the library raises), or several
    /// minimal ones (the policy is not a lattice there).
    pub error: Option<String>,
}

/// The result of `operands` (names or short codes) under `input`. Under a table's declared
/// n-ary rule a dtype name is a dtype argument and a Python scalar (`i*`) a value
/// (`np.result_type(np.int8, 0)`); `result_type_with` says which operands are values.
pub fn result_type(input: &Input, operands: &[String]) -> Result<ResultType, UnknownOperand> {
    result_type_with(input, operands, &[])
}

/// As [`result_type`], with `values[i]` true where operand `i` was passed as a value (an array
/// or a scalar, kept in place by `np.result_type`) rather than a dtype (moved before the
/// values); an operand past the end of `values` is read by its name.
pub fn result_type_with(
    input: &Input,
    operands: &[String],
    values: &[bool],
) -> Result<ResultType, UnknownOperand> {
    let mut idx = Vec::with_capacity(operands.len());
    let mut names = Vec::with_capacity(operands.len());
    for o in operands {
        let Some(i) = input.resolve(o) else {
            let t = input.table();
            return Err(UnknownOperand {
                operand: o.clone(),
                suggestion: crate::policy::diag::did_you_mean(
                    o,
                    t.names.iter().map(String::as_str),
                ),
            });
        };
        idx.push(i);
        names.push(
            crate::numeric::dtype::canonical_node(o)
                .filter(|c| input.resolve(c) == Some(i))
                .unwrap_or_else(|| input.table().name(i).to_string()),
        );
    }
    // An array operand is promoted as its canonical dtype (`[canonical]`).
    let promoted_as = idx
        .iter()
        .zip(&names)
        .map(|(&i, name)| match input.canonical(i) {
            c if c == i => name.clone(),
            c => input.table().name(c).to_string(),
        })
        .collect();
    let idx: Vec<usize> = idx.iter().map(|&i| input.canonical(i)).collect();
    let (node, error) = match input {
        Input::Policy { lattice, .. } => match lattice.result_type(&idx) {
            Some(Join::Unique(j)) => (Some(j), None),
            Some(Join::Ambiguous(c)) => (
                None,
                Some(format!(
                    "no least upper bound: {} are all minimal",
                    c.iter()
                        .map(|&i| input.table().name(i))
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            ),
            Some(Join::NoUpperBound) | None => (
                None,
                Some("no common upper bound: the library raises".to_string()),
            ),
        },
        Input::Observed(o) if o.nary.is_some() => {
            let args: Vec<Arg> = idx
                .iter()
                .enumerate()
                .map(|(k, &i)| match values.get(k) {
                    Some(true) => Arg::Value(i),
                    _ => Arg::of(input.table(), i),
                })
                .collect();
            match input.nary_rule(&args) {
                Some(Ok(j)) => (Some(j), None),
                Some(Err(r)) => (
                    None,
                    Some(format!(
                        "the library raises: its `{}` n-ary rule finds no common dtype of {} and {}",
                        o.nary.as_ref().map_or("", |n| n.name()),
                        input.table().name(r.by),
                        input.table().name(r.dtype)
                    )),
                ),
                None => (None, Some("no operands".into())),
            }
        }
        Input::Observed(_) => match input.result_type(&idx) {
            Some(j) => (Some(j), None),
            None => (
                None,
                Some("the table has no result for these operands (the library raised)".into()),
            ),
        },
    };
    Ok(ResultType {
        operands: names,
        promoted_as,
        node: node.map(|j| input.table().name(j).to_string()),
        dtype: node.map(|j| input.materialise(j).to_string()),
        error,
    })
}
