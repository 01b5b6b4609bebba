//! The op catalogue: every op a policy may attach rules to and the kernels may run, with its
//! arity and how its result dtype is found. The policy parser (`[ops]` keys), the kernels'
//! `Op`/`UnaryOp`, and the conformance runner read this one list, in this order.

/// How many operands an op takes, and of what sort.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arity {
    /// One array.
    Unary,
    /// Two operands (arrays or Python scalars), broadcast.
    Binary,
    /// One array and a destination dtype.
    Cast,
    /// One array reduced along an axis (or all of them).
    Reduction,
}

/// How an op's result dtype is found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// The join of the operands' dtypes.
    Join,
    /// The operands are promoted to their join and compared: the result is bool.
    Compare,
    /// The join, with integer and bool results mapped by the policy's `[ops.true_divide]`
    /// `integer_result_of`.
    TrueDivide,
    /// The operand's own dtype.
    Same,
    /// The destination dtype named by the call.
    Target,
    /// The policy's `[ops.sum]` accumulator (`lowest`), joined with the operand.
    Accumulate,
}

/// One op of the catalogue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpInfo {
    pub name: &'static str,
    pub arity: Arity,
    pub rule: Rule,
    /// Whether the reference kernels run it (`matmul` is only a policy rule).
    pub kernel: bool,
}

const fn op(name: &'static str, arity: Arity, rule: Rule) -> OpInfo {
    OpInfo {
        name,
        arity,
        rule,
        kernel: true,
    }
}

use Arity::*;
use Rule::*;

/// Every op, binary ops first in the kernels' order.
pub const CATALOGUE: &[OpInfo] = &[
    op("add", Binary, Join),
    op("subtract", Binary, Join),
    op("multiply", Binary, Join),
    op("true_divide", Binary, TrueDivide),
    op("floor_divide", Binary, Join),
    op("power", Binary, Join),
    op("maximum", Binary, Join),
    op("minimum", Binary, Join),
    op("equal", Binary, Compare),
    op("not_equal", Binary, Compare),
    op("less", Binary, Compare),
    op("less_equal", Binary, Compare),
    op("greater", Binary, Compare),
    op("greater_equal", Binary, Compare),
    op("bitwise_and", Binary, Join),
    op("bitwise_or", Binary, Join),
    op("bitwise_xor", Binary, Join),
    op("negative", Unary, Same),
    op("absolute", Unary, Same),
    op("sum", Reduction, Accumulate),
    op("astype", Cast, Target),
    OpInfo {
        name: "matmul",
        arity: Binary,
        rule: Join,
        kernel: false,
    },
];

/// The op of a name.
pub fn info(name: &str) -> Option<&'static OpInfo> {
    CATALOGUE.iter().find(|o| o.name == name)
}

/// Every op's name, in catalogue order.
pub fn names() -> impl Iterator<Item = &'static str> {
    CATALOGUE.iter().map(|o| o.name)
}
