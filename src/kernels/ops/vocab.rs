//! The kernels' op vocabulary: the binary and unary ops as variants, each with its identity in
//! the op catalogue. It names nothing of the kernels, so the SIMD files (`avx512`) can take an
//! `Op` without depending on the ops' implementation.

use crate::numeric::op::{OpId, OpInfo};

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
        match self {
            UnaryOp::Negative => OpId::of("negative"),
            UnaryOp::Absolute => OpId::of("absolute"),
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
}
