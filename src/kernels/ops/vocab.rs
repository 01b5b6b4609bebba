//! The kernels' vocabulary: the binary and unary ops (each with its identity in the op
//! catalogue), the operands (`Arg`, `Scalar`), the error (`OpError`, `ErrorKind`) and the
//! sizes every kernel shares (`CHUNK`, `PARALLEL_MIN`, the result-size limit). It names nothing
//! of the kernels, so every file of `ops/` and the SIMD files (`avx512`) can take from it
//! without depending on the ops' implementation.

use crate::kernels::array::Array;
use crate::numeric::op::OpId;
use crate::numeric::op::OpInfo;
use crate::promote::Operand;
use crate::promote::ScalarKind;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    Add,
    Subtract,
    Multiply,
    TrueDivide,
    FloorDivide,
    Remainder,
    Power,
    Maximum,
    Minimum,
    Equal,
    NotEqual,
    Less,
    LessEqual,
    Greater,
    GreaterEqual,
    BitwiseAnd,
    BitwiseOr,
    BitwiseXor,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    Negative,
    Absolute,
}

impl UnaryOp {
    /// The unary ops of the catalogue (tested equal), as variants.
    pub const ALL: [(&'static str, UnaryOp); 2] = [
        ("negative", UnaryOp::Negative),
        ("absolute", UnaryOp::Absolute),
    ];

    pub fn named(name: &str) -> Option<UnaryOp> {
        UnaryOp::ALL
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, o)| *o)
    }

    pub fn name(self) -> &'static str {
        UnaryOp::ALL
            .iter()
            .find(|(_, o)| *o == self)
            .expect("listed")
            .0
    }

    /// The op's catalogue entry.
    pub fn info(self) -> &'static OpInfo {
        self.id().info()
    }

    /// The op's identity in the catalogue.
    pub const fn id(self) -> OpId {
        // Constants, so the catalogue is searched by name at compile time, not on each call.
        const NEGATIVE: OpId = OpId::of("negative");
        const ABSOLUTE: OpId = OpId::of("absolute");
        match self {
            UnaryOp::Negative => NEGATIVE,
            UnaryOp::Absolute => ABSOLUTE,
        }
    }

    /// The unary op of an identity (`None` for the catalogue's other ops).
    pub fn of_id(op: OpId) -> Option<UnaryOp> {
        UnaryOp::ALL.iter().map(|&(_, u)| u).find(|u| u.id() == op)
    }
}

impl Op {
    /// The binary ops of the catalogue (`numeric::op::CATALOGUE`, tested equal), as variants.
    pub const ALL: [(&'static str, Op); 18] = [
        ("add", Op::Add),
        ("subtract", Op::Subtract),
        ("multiply", Op::Multiply),
        ("true_divide", Op::TrueDivide),
        ("floor_divide", Op::FloorDivide),
        ("remainder", Op::Remainder),
        ("power", Op::Power),
        ("maximum", Op::Maximum),
        ("minimum", Op::Minimum),
        ("equal", Op::Equal),
        ("not_equal", Op::NotEqual),
        ("less", Op::Less),
        ("less_equal", Op::LessEqual),
        ("greater", Op::Greater),
        ("greater_equal", Op::GreaterEqual),
        ("bitwise_and", Op::BitwiseAnd),
        ("bitwise_or", Op::BitwiseOr),
        ("bitwise_xor", Op::BitwiseXor),
    ];

    pub fn named(name: &str) -> Option<Op> {
        Op::ALL.iter().find(|(n, _)| *n == name).map(|(_, o)| *o)
    }

    pub fn name(self) -> &'static str {
        Op::ALL.iter().find(|(_, o)| *o == self).expect("listed").0
    }

    /// The op's catalogue entry.
    pub fn info(self) -> &'static OpInfo {
        self.id().info()
    }

    /// The op's identity in the catalogue, whose first places are the binary ops in this
    /// order (`ops_are_the_catalogues` holds it).
    pub const fn id(self) -> OpId {
        OpId::at(self as usize)
    }

    /// The binary op of an identity (`None` for the catalogue's other ops).
    pub fn of_id(op: OpId) -> Option<Op> {
        Op::ALL.get(op.index()).map(|&(_, o)| o)
    }

    pub(crate) fn is_comparison(self) -> bool {
        matches!(
            self,
            Op::Equal | Op::NotEqual | Op::Less | Op::LessEqual | Op::Greater | Op::GreaterEqual
        )
    }

    /// The comparison that gives the same answer with its operands swapped (`x < y` is
    /// `y > x`, NaN or not); any other op as it is.
    pub(crate) fn swapped(self) -> Op {
        match self {
            Op::Less => Op::Greater,
            Op::Greater => Op::Less,
            Op::LessEqual => Op::GreaterEqual,
            Op::GreaterEqual => Op::LessEqual,
            op => op,
        }
    }
}

/// Elements per chunk: lane buffers of this size stay in L1/L2.
pub const CHUNK: usize = 4096;

/// The largest array a kernel creates unless told otherwise (elements): 2^28 (2 GiB of
/// float64, 4 GiB of complex128). A broadcast or reduction result over the limit is an `input`
/// error, refused before anything is allocated. The limit is a value each call takes
/// (`Options::max_elements`; `typejoin run --max-elements`); the ops called without options
/// (`binary`, `clip`, …) run under this one.
pub const DEFAULT_MAX_ELEMENTS: usize = 1 << 28;

/// Arrays at least this long run their chunks on the rayon pool.
pub const PARALLEL_MIN: usize = 1 << 17;

/// A Python scalar operand (weak in the policy).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    Bool(bool),
    Int(i128),
    Float(f64),
    Complex(f64, f64),
}

impl Scalar {
    pub(super) fn kind(self) -> ScalarKind {
        match self {
            Scalar::Bool(_) => ScalarKind::Bool,
            Scalar::Int(_) => ScalarKind::Int,
            Scalar::Float(_) => ScalarKind::Float,
            Scalar::Complex(..) => ScalarKind::Complex,
        }
    }

    /// The scalar's value as a complex number of f64 parts (an int past 2⁵³ rounded).
    pub(super) fn as_complex(self) -> (f64, f64) {
        match self {
            Scalar::Bool(b) => (b as u8 as f64, 0.0),
            Scalar::Int(i) => (i as f64, 0.0),
            Scalar::Float(f) => (f, 0.0),
            Scalar::Complex(re, im) => (re, im),
        }
    }
}

/// An operand: an array or a weak scalar.
#[derive(Clone, Debug, PartialEq)]
pub enum Arg {
    Array(Array),
    Scalar(Scalar),
}

impl Arg {
    /// The operand's place in a policy: its dtype (zero-dim or not), or its Python kind.
    pub fn operand(&self) -> Operand {
        match self {
            Arg::Array(a) if a.shape.is_empty() => Operand::ZeroDim(a.dtype),
            Arg::Array(a) => Operand::Array(a.dtype),
            Arg::Scalar(s) => Operand::Scalar(s.kind()),
        }
    }

    pub(super) fn shape(&self) -> &[usize] {
        match self {
            Arg::Array(a) => &a.shape,
            Arg::Scalar(_) => &[],
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The operands' dtypes have no join in the policy.
    Promotion,
    /// A weak scalar does not fit the result dtype.
    Overflow,
    /// The op is not defined for the dtype (bitwise on floats, …).
    Unsupported,
    /// Malformed input (shapes that do not broadcast, a bad axis, a limit passed, …).
    Input,
    /// Integer division by zero, in a policy whose library raises for it (PyTorch).
    ZeroDivision,
    /// The result (or a step towards it) needs more memory than the process could allocate
    /// (NumPy's `MemoryError`); nothing was computed.
    Memory,
    /// A bug in typejoin (a kernel panicked); the runner answers it and goes on.
    Internal,
}

impl ErrorKind {
    pub fn key(self) -> &'static str {
        match self {
            ErrorKind::Promotion => "promotion",
            ErrorKind::Overflow => "overflow",
            ErrorKind::Unsupported => "unsupported",
            ErrorKind::Input => "input",
            ErrorKind::ZeroDivision => "zero-division",
            ErrorKind::Memory => "memory",
            ErrorKind::Internal => "internal",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpError {
    pub kind: ErrorKind,
    pub message: String,
}

impl From<crate::kernels::array::ArrayError> for OpError {
    fn from(e: crate::kernels::array::ArrayError) -> OpError {
        use crate::kernels::array::ArrayError;
        OpError {
            kind: match e {
                ArrayError::OutOfMemory { .. } => ErrorKind::Memory,
                _ => ErrorKind::Input,
            },
            message: e.to_string(),
        }
    }
}

/// `n` units reserved for a vector the kernel fills, or a `memory` error when the allocator
/// refuses them (never an abort).
pub(super) fn try_vec<T>(n: usize) -> Result<Vec<T>, OpError> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| OpError {
        kind: ErrorKind::Memory,
        message: format!(
            "the result needs {} bytes, more than this process could allocate",
            n as u128 * std::mem::size_of::<T>() as u128
        ),
    })?;
    Ok(v)
}

pub(super) fn err<T>(kind: ErrorKind, message: impl Into<String>) -> Result<T, OpError> {
    Err(OpError {
        kind,
        message: message.into(),
    })
}

pub(super) fn promotion(e: crate::promote::PromotionError) -> OpError {
    OpError {
        kind: match e.1 {
            crate::promote::Failure::NoJoin => ErrorKind::Promotion,
            crate::promote::Failure::NoArrayType | crate::promote::Failure::Refused => {
                ErrorKind::Unsupported
            }
        },
        message: e.0,
    }
}

pub(super) fn input_error(message: impl Into<String>) -> OpError {
    OpError {
        kind: ErrorKind::Input,
        message: message.into(),
    }
}
