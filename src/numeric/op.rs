//! The op catalogue: every op a policy may attach rules to and the kernels may run, with its
//! arity, the kinds of computation dtype it accepts, and how its result dtype is found. The
//! policy parser (`[ops]` keys), the kernels' `Op`/`UnaryOp` and their kind checks, the
//! conformance runner, `bench`, and the op table of docs/kernels.md read this one list, in this
//! order: adding an op starts here.

use crate::numeric::dtype::Kind;

// The kernel conventions, declared in their own module; `op::Semantics` and its enums are named
// here by generated code.
pub use crate::numeric::conventions::*;

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
    /// Three operands (arrays or Python scalars), broadcast; the result is their n-ary join.
    Ternary,
    /// A condition and two values (arrays or Python scalars), broadcast; the result is the
    /// join of the two values (`where(cond, x, y)`).
    Select,
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

/// The kinds of computation dtype an op is defined on (after promotion), as the kernels run it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kinds {
    pub bool: bool,
    /// Signed integers.
    pub signed: bool,
    /// Unsigned integers (TensorFlow has no `negative`, `absolute` or `power` of them).
    pub unsigned: bool,
    /// Real floats, small formats included.
    pub float: bool,
    pub complex: bool,
}

impl Kinds {
    const fn of(bool: bool, integer: bool, float: bool, complex: bool) -> Kinds {
        Kinds {
            bool,
            signed: integer,
            unsigned: integer,
            float,
            complex,
        }
    }

    /// Whether a computation dtype of `kind` is accepted (weak and unknown kinds never are:
    /// a computation dtype is concrete).
    pub fn accepts(self, kind: Kind) -> bool {
        match kind {
            Kind::Bool => self.bool,
            Kind::Signed => self.signed,
            Kind::Unsigned => self.unsigned,
            Kind::Float | Kind::SmallFloat => self.float,
            Kind::Complex => self.complex,
            Kind::Weak | Kind::Opaque | Kind::Other => false,
        }
    }

    /// `bool, integer, float, complex`, the accepted ones (`signed integer` or `unsigned
    /// integer` where only one of them is).
    pub fn describe(self) -> String {
        [
            (self.bool, "bool"),
            (self.signed && self.unsigned, "integer"),
            (self.signed && !self.unsigned, "signed integer"),
            (self.unsigned && !self.signed, "unsigned integer"),
            (self.float, "float"),
            (self.complex, "complex"),
        ]
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, k)| *k)
        .collect::<Vec<_>>()
        .join(", ")
    }
}

/// Every kind.
const ANY: Kinds = Kinds::of(true, true, true, true);
/// Numbers: not bool (NumPy refuses `subtract`, `negative`, … on bool).
const NUMBERS: Kinds = Kinds::of(false, true, true, true);
/// Integers and bool.
const BITS: Kinds = Kinds::of(true, true, false, false);
/// Inexact results only: integer operands reach it promoted by `[ops.true_divide]`.
const INEXACT: Kinds = Kinds::of(false, false, true, true);
/// Real numbers, not bool: the kernels have no complex floor division or remainder.
const REAL_NUMBERS: Kinds = Kinds::of(false, true, true, false);

/// One op of the catalogue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpInfo {
    pub name: &'static str,
    pub arity: Arity,
    pub rule: Rule,
    /// The kinds of computation dtype the kernels accept.
    pub kinds: Kinds,
    /// Whether the reference kernels run it (`matmul` is only a policy rule).
    pub kernel: bool,
}

const fn op(name: &'static str, arity: Arity, rule: Rule, kinds: Kinds) -> OpInfo {
    OpInfo {
        name,
        arity,
        rule,
        kinds,
        kernel: true,
    }
}

use Arity::*;
use Rule::*;

/// Every op, binary ops first in the kernels' order.
pub const CATALOGUE: &[OpInfo] = &[
    op("add", Binary, Join, ANY),
    op("subtract", Binary, Join, NUMBERS),
    op("multiply", Binary, Join, ANY),
    op("true_divide", Binary, TrueDivide, INEXACT),
    op("floor_divide", Binary, Join, REAL_NUMBERS),
    op("remainder", Binary, Join, REAL_NUMBERS),
    op("power", Binary, Join, NUMBERS),
    op("maximum", Binary, Join, ANY),
    op("minimum", Binary, Join, ANY),
    op("equal", Binary, Compare, ANY),
    op("not_equal", Binary, Compare, ANY),
    op("less", Binary, Compare, ANY),
    op("less_equal", Binary, Compare, ANY),
    op("greater", Binary, Compare, ANY),
    op("greater_equal", Binary, Compare, ANY),
    op("bitwise_and", Binary, Join, BITS),
    op("bitwise_or", Binary, Join, BITS),
    op("bitwise_xor", Binary, Join, BITS),
    op("negative", Unary, Same, NUMBERS),
    op("absolute", Unary, Same, ANY),
    op("clip", Ternary, Join, ANY),
    op("where", Select, Join, ANY),
    op("sum", Reduction, Accumulate, ANY),
    op("astype", Cast, Target, ANY),
    OpInfo {
        name: "matmul",
        arity: Binary,
        rule: Join,
        kinds: ANY,
        kernel: false,
    },
];

/// The op of a name.
pub fn info(name: &str) -> Option<&'static OpInfo> {
    CATALOGUE.iter().find(|o| o.name == name)
}

/// An op of the catalogue, by its place in [`CATALOGUE`]: the typed identity the kernels and
/// the generated tables use below the edge, where a name was parsed once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OpId(u8);

impl OpId {
    /// The op of a name, or `None`.
    pub fn named(name: &str) -> Option<OpId> {
        CATALOGUE
            .iter()
            .position(|o| o.name == name)
            .map(|i| OpId(i as u8))
    }

    /// The op of a name known when compiling (generated tables, the kernels' own ops): a name
    /// outside the catalogue fails to compile.
    pub const fn of(name: &str) -> OpId {
        let mut i = 0;
        while i < CATALOGUE.len() {
            if eq(CATALOGUE[i].name.as_bytes(), name.as_bytes()) {
                return OpId(i as u8);
            }
            i += 1;
        }
        panic!("not an op of the catalogue")
    }

    /// The op at place `i` of the catalogue (the kernels' `Op` variants are its first places).
    pub const fn at(i: usize) -> OpId {
        assert!(i < CATALOGUE.len());
        OpId(i as u8)
    }

    pub fn info(self) -> &'static OpInfo {
        &CATALOGUE[self.0 as usize]
    }

    /// The op's place in [`CATALOGUE`].
    pub fn index(self) -> usize {
        self.0 as usize
    }

    pub fn name(self) -> &'static str {
        self.info().name
    }

    pub const SUM: OpId = OpId::of("sum");
    pub const CLIP: OpId = OpId::of("clip");
    pub const WHERE: OpId = OpId::of("where");
    pub const ASTYPE: OpId = OpId::of("astype");
}

const fn eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Every op's name, in catalogue order.
pub fn names() -> impl Iterator<Item = &'static str> {
    CATALOGUE.iter().map(|o| o.name)
}

impl Kinds {
    /// The kinds of their names (`bool`, `integer` (both of `signed` and `unsigned`), `float`,
    /// `complex`); `Err` with the first unknown name.
    pub fn parse<'a>(names: impl IntoIterator<Item = &'a str>) -> Result<Kinds, &'a str> {
        let mut k = Kinds::of(false, false, false, false);
        for n in names {
            match n {
                "bool" => k.bool = true,
                "integer" => (k.signed, k.unsigned) = (true, true),
                "signed" => k.signed = true,
                "unsigned" => k.unsigned = true,
                "float" => k.float = true,
                "complex" => k.complex = true,
                other => return Err(other),
            }
        }
        Ok(k)
    }

    /// The names [`Kinds::parse`] reads.
    pub const NAMES: [&'static str; 6] =
        ["bool", "integer", "signed", "unsigned", "float", "complex"];

    /// The Rust expression of these kinds (codegen; `op` is this module).
    pub fn to_rust(self) -> String {
        format!(
            "op::Kinds {{ bool: {}, signed: {}, unsigned: {}, float: {}, complex: {} }}",
            self.bool, self.signed, self.unsigned, self.float, self.complex
        )
    }
}
