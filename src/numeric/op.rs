//! The op catalogue: every op a policy may attach rules to and the kernels may run, with its
//! arity, the kinds of computation dtype it accepts, and how its result dtype is found. The
//! policy parser (`[ops]` keys), the kernels' `Op`/`UnaryOp` and their kind checks, the
//! conformance runner, `bench`, and the op table of docs/kernels.md read this one list, in this
//! order: adding an op starts here.

use crate::numeric::dtype::Kind;

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
/// Real numbers, not bool: the kernels have no complex floor division or power.
const REAL_NUMBERS: Kinds = Kinds::of(false, true, true, false);
/// bool, integers and floats: what has an order (clip).
const ORDERED: Kinds = Kinds::of(true, true, true, false);

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
    op("power", Binary, Join, REAL_NUMBERS),
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
    op("clip", Ternary, Join, ORDERED),
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

/// Every op's name, in catalogue order.
pub fn names() -> impl Iterator<Item = &'static str> {
    CATALOGUE.iter().map(|o| o.name)
}

/// How a policy's kernels treat what promotion leaves open: the library's conventions for
/// Python ints, integer division by zero and Python scalars with 16-bit floats
/// (`[kernels]` in a policy file; docs/format.md). The default is NumPy 2's (and JAX's).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Semantics {
    pub python_int: PythonInt,
    pub integer_division_by_zero: DivisionByZero,
    pub reduced_float_scalars: ScalarPrecision,
    pub remainder_zero_sign: ZeroSign,
    pub complex_negative: ComplexNegative,
    pub complex_add: ComplexAdd,
    pub clip_bounds: ClipBounds,
    pub float_floor_divide: FloatFloorDivide,
    pub scalar_over_array: ScalarOverArray,
    pub clip_composition: ClipComposition,
    pub where_scalars: WhereScalars,
    pub clip_mixed_bounds: ClipMixedBounds,
}

/// Whether `clip` takes one bound as a Python number and the other as an array.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ClipMixedBounds {
    /// Any mix (NumPy, JAX, TensorFlow).
    #[default]
    Allowed,
    /// `unsupported` when one bound is a Python number and the other an array of one or more
    /// dimensions: PyTorch's `clamp` takes both as numbers or both as tensors (`clamp(t, 0, u)`
    /// is a TypeError; a zero-dim tensor passes as a number).
    Unsupported,
}

/// What `where` does with a Python float (or a part of a Python complex) past the finite range
/// of the result dtype.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum WhereScalars {
    /// It rounds to ±inf like any operand (NumPy, JAX, TensorFlow).
    #[default]
    Round,
    /// An `overflow` error where the result has 32 bits or more per part, float32 or complex64
    /// (PyTorch converts it checked: "value cannot be converted to type float without
    /// overflow", from any value greater than the largest finite float32, even one that would
    /// round down to it); a float16 or bfloat16 result still rounds it (to ±inf), as PyTorch's.
    Checked,
}

/// How `clip(x, lo, hi)` is composed of `maximum` and `minimum`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ClipComposition {
    /// The three operands converted once to their n-ary join, then
    /// `minimum(maximum(x, lo), hi)`: a lower bound above the upper gives the upper (NumPy,
    /// JAX, PyTorch's `clamp`).
    #[default]
    Joined,
    /// `maximum(minimum(x, hi), lo)`, two binary ops each promoting its own pair (a Python int
    /// converts into the first pair's join: `clip(uint32, 0.5, -3)` bounds by 2³² − 3), and
    /// the result must keep `x`'s shape: a lower bound above the upper gives the lower
    /// (TensorFlow's `clip_by_value`).
    Pairwise,
}

/// What `true_divide` computes when a Python number is divided by an array.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ScalarOverArray {
    /// The quotient, rounded once (NumPy, JAX, TensorFlow).
    #[default]
    Divide,
    /// The array's reciprocal times the number, `t.reciprocal() * s`, as PyTorch's `s / t`
    /// computes it (two roundings: `3.0 / float32 7.0` is 0.42857146, the quotient
    /// 0.42857143).
    ReciprocalTimes,
}

/// What `floor_divide` computes in a float dtype.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum FloatFloorDivide {
    /// The floor of the exact quotient, by NumPy's `npy_divmod` (Python's `//`; NumPy, JAX,
    /// PyTorch): `1.0 // 0.1` is 9.0, 0.1 being a little above one tenth.
    #[default]
    Divmod,
    /// The floor of the quotient rounded to the dtype, `floor(a / b)` (TensorFlow's
    /// `floordiv`): `1.0 // 0.1` is 10.0, the quotient 9.99… having rounded to 10.
    FloorOfQuotient,
}

/// What `clip` does with a Python-number bound past the result dtype's finite range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ClipBounds {
    /// It rounds to ±inf like any operand (NumPy, JAX).
    #[default]
    Round,
    /// An `overflow` error when the bound is greater in magnitude than the result dtype's
    /// largest finite value, even where it would round down to it (PyTorch's `clamp` checks
    /// the conversion: "value cannot be converted to type c10::Half without overflow" for
    /// 65505.0); zero-dim array bounds are not checked.
    Checked,
}

/// How `add` and `subtract` compute in a complex dtype.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ComplexAdd {
    /// Part by part (NumPy, JAX).
    #[default]
    Parts,
    /// `a + α·b` with α = ±1 + 0i and a complex product: an infinite or NaN part of `b` makes
    /// the other part NaN (`0 · inf`), as PyTorch's `add(a, b, alpha)` does.
    Alpha,
}

/// How `negative` treats the zero parts of a complex number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ComplexNegative {
    /// Each part's sign flips: −(+0) is −0 (NumPy, JAX).
    #[default]
    Flip,
    /// `0 − z`: a zero part becomes +0 (PyTorch's CPU kernel).
    ZeroMinus,
}

/// The sign of a zero float `remainder`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ZeroSign {
    /// The divisor's (NumPy: `remainder(0.0, -inf)` is −0.0).
    #[default]
    Divisor,
    /// The dividend's, as C's `fmod` leaves it (PyTorch: `remainder(0.0, -inf)` is 0.0).
    Dividend,
}

/// What a Python int operand may hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PythonInt {
    /// It must fit the policy's Python-int type (`i*`'s materialisation) and the result dtype,
    /// else `overflow` (NumPy 2, JAX).
    #[default]
    Fit,
    /// Any value in [−2⁶³, 2⁶⁴) wraps into an integer result (2⁶³ … 2⁶⁴ − 1 are taken as
    /// uint64) and is rounded into a float one; only values beyond raise (PyTorch).
    Wrap,
    /// It must fit the policy's Python-int type (`overflow` otherwise), then is cast to the
    /// operands' join: it wraps into an integer one (also where an op rule then makes the
    /// result a float: `uint8 / -129` divides by 127) and is rounded into a float one
    /// (TensorFlow: a Python int is an int32 and `int8 + 300` adds 44).
    Cast,
}

/// What integer `floor_divide` and `remainder` do with a zero divisor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum DivisionByZero {
    /// The result is 0 (NumPy, with a warning; JAX).
    #[default]
    Zero,
    /// A `zero-division` error (PyTorch raises ZeroDivisionError).
    Raise,
}

/// At what precision a scalar operand (a Python number or a zero-dim array) enters
/// `multiply`, `true_divide` and `floor_divide` when the result is float16 or bfloat16.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ScalarPrecision {
    /// Rounded to the result dtype first, like every operand (NumPy, JAX).
    #[default]
    Result,
    /// Rounded to float32 from its own value, the op computed in float32 and rounded to the
    /// result dtype, when the scalar is the second operand (PyTorch's CPU kernels read it as
    /// `opmath_t`; `add` and `subtract` round it to the result dtype first).
    Float32,
    /// Rounded to the result dtype through float32 (twice: TensorFlow converts a Python number
    /// to a float32 tensor, then casts it), then the op as on any operand.
    ViaFloat32,
}

impl Semantics {
    /// The `[kernels]` keys and their values, for the parser and its messages.
    pub const KEYS: [(&'static str, &'static [&'static str]); 12] = [
        ("python_int", &["fit", "wrap", "cast"]),
        ("integer_division_by_zero", &["zero", "raise"]),
        (
            "reduced_float_scalars",
            &["result", "float32", "via-float32"],
        ),
        ("remainder_zero_sign", &["divisor", "dividend"]),
        ("complex_negative", &["flip", "zero-minus"]),
        ("complex_add", &["parts", "alpha"]),
        ("clip_bounds", &["round", "checked"]),
        ("float_floor_divide", &["divmod", "floor-of-quotient"]),
        ("scalar_over_array", &["divide", "reciprocal-times"]),
        ("clip_composition", &["joined", "pairwise"]),
        ("where_scalars", &["round", "checked"]),
        ("clip_mixed_bounds", &["allowed", "unsupported"]),
    ];

    /// Sets `key` to `value` (names of [`Semantics::KEYS`]); `false` when either is unknown.
    pub fn set(&mut self, key: &str, value: &str) -> bool {
        match (key, value) {
            ("python_int", "fit") => self.python_int = PythonInt::Fit,
            ("python_int", "wrap") => self.python_int = PythonInt::Wrap,
            ("python_int", "cast") => self.python_int = PythonInt::Cast,
            ("integer_division_by_zero", "zero") => {
                self.integer_division_by_zero = DivisionByZero::Zero
            }
            ("integer_division_by_zero", "raise") => {
                self.integer_division_by_zero = DivisionByZero::Raise
            }
            ("reduced_float_scalars", "result") => {
                self.reduced_float_scalars = ScalarPrecision::Result
            }
            ("reduced_float_scalars", "float32") => {
                self.reduced_float_scalars = ScalarPrecision::Float32
            }
            ("reduced_float_scalars", "via-float32") => {
                self.reduced_float_scalars = ScalarPrecision::ViaFloat32
            }
            ("remainder_zero_sign", "divisor") => self.remainder_zero_sign = ZeroSign::Divisor,
            ("remainder_zero_sign", "dividend") => self.remainder_zero_sign = ZeroSign::Dividend,
            ("complex_negative", "flip") => self.complex_negative = ComplexNegative::Flip,
            ("complex_negative", "zero-minus") => {
                self.complex_negative = ComplexNegative::ZeroMinus
            }
            ("complex_add", "parts") => self.complex_add = ComplexAdd::Parts,
            ("complex_add", "alpha") => self.complex_add = ComplexAdd::Alpha,
            ("clip_bounds", "round") => self.clip_bounds = ClipBounds::Round,
            ("clip_bounds", "checked") => self.clip_bounds = ClipBounds::Checked,
            ("float_floor_divide", "divmod") => self.float_floor_divide = FloatFloorDivide::Divmod,
            ("float_floor_divide", "floor-of-quotient") => {
                self.float_floor_divide = FloatFloorDivide::FloorOfQuotient
            }
            ("scalar_over_array", "divide") => self.scalar_over_array = ScalarOverArray::Divide,
            ("scalar_over_array", "reciprocal-times") => {
                self.scalar_over_array = ScalarOverArray::ReciprocalTimes
            }
            ("clip_composition", "joined") => self.clip_composition = ClipComposition::Joined,
            ("clip_composition", "pairwise") => self.clip_composition = ClipComposition::Pairwise,
            ("where_scalars", "round") => self.where_scalars = WhereScalars::Round,
            ("where_scalars", "checked") => self.where_scalars = WhereScalars::Checked,
            ("clip_mixed_bounds", "allowed") => self.clip_mixed_bounds = ClipMixedBounds::Allowed,
            ("clip_mixed_bounds", "unsupported") => {
                self.clip_mixed_bounds = ClipMixedBounds::Unsupported
            }
            _ => return false,
        }
        true
    }

    /// The Rust expression of these semantics (codegen; `op` is this module).
    pub fn to_rust(self) -> String {
        format!(
            "op::Semantics {{ python_int: op::PythonInt::{:?}, integer_division_by_zero: op::DivisionByZero::{:?}, reduced_float_scalars: op::ScalarPrecision::{:?}, remainder_zero_sign: op::ZeroSign::{:?}, complex_negative: op::ComplexNegative::{:?}, complex_add: op::ComplexAdd::{:?}, clip_bounds: op::ClipBounds::{:?}, float_floor_divide: op::FloatFloorDivide::{:?}, scalar_over_array: op::ScalarOverArray::{:?}, clip_composition: op::ClipComposition::{:?}, where_scalars: op::WhereScalars::{:?}, clip_mixed_bounds: op::ClipMixedBounds::{:?} }}",
            self.python_int,
            self.integer_division_by_zero,
            self.reduced_float_scalars,
            self.remainder_zero_sign,
            self.complex_negative,
            self.complex_add,
            self.clip_bounds,
            self.float_floor_divide,
            self.scalar_over_array,
            self.clip_composition,
            self.where_scalars,
            self.clip_mixed_bounds
        )
    }
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
