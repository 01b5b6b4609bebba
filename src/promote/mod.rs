//! Promotion as the kernels see it: a `Generated` table (written by `codegen` from a verified
//! lattice, committed under `src/generated/`) and the lookups on it. Kernels never compute a
//! join; they read this table.

use crate::numeric::dtype::DType;
use crate::numeric::op::{Kinds, OpId, Semantics};
use crate::policy::diag::{Diagnostic, LoadError};

pub mod plan;

/// "No join" in a generated table.
pub const UNDEFINED: u8 = u8::MAX;

/// A cell of a loop table (`Generated::loops`): a mixed loop whose operands keep their own
/// dtypes (NumPy 2 compares int64 with uint64 exactly).
pub const MIXED: u8 = u8::MAX - 1;

/// A cell of a loop table (`Generated::loops`, `dtype_loops`, `sum_acc`): the policy's own
/// rule (a lattice's cells in a policy a measured table extends).
pub const RULE: u8 = u8::MAX - 2;

/// How a policy promotes more than two operands (`clip`, `where`).
#[derive(Debug, Clone, Copy)]
pub enum Nary {
    /// A fold of the join table: the n-ary join, for a lattice.
    Fold,
    /// NumPy's DType-sequence promotion (`order::dtype_sequence`) over the pairs, with each
    /// node's DType class.
    Numpy(&'static [crate::policy::nary::NumpyClass]),
    /// PyTorch's `at::native::result_type` (`order::result_type_state`) over the pairs, with
    /// each node's kind: each operand category folded on its own, then the categories
    /// combined (what `clip` promotes by over torch's whole catalogue).
    Torch(&'static [crate::policy::nary::TorchKind]),
}

/// A promotion policy in the form codegen writes it.
#[derive(Debug)]
pub struct Generated {
    pub name: &'static str,
    pub source: &'static str,
    /// Dtype names, in the policy's order; weak types are `i*`, `f*`, `c*`.
    pub dtypes: &'static [&'static str],
    /// `join[a * n + b]`: the index of `a ∨ b`, or `UNDEFINED`.
    pub join: &'static [u8],
    /// What each dtype materialises as (itself, or a weak type's rule; `UNDEFINED` if none).
    pub materialise: &'static [u8],
    /// `true_divide`: what an integer or bool join (by index) becomes; `UNDEFINED` keeps it.
    pub true_divide: &'static [u8],
    /// `sum`: inputs below this dtype accumulate in it.
    pub sum_lowest: Option<u8>,
    /// `sum`: unsigned inputs below this dtype accumulate in it (`lowest_unsigned`).
    pub sum_lowest_unsigned: Option<u8>,
    /// The kernel dtype of each node's own dtype, by node (`None`: a weak or category node, or
    /// a dtype with no array type in the kernels, such as PyTorch's int3 or a user's format).
    pub node_dtype: &'static [Option<DType>],
    /// The node of an array of each dtype, by [`DType::id`] (`UNDEFINED`: not in the policy).
    pub array_node: [u8; DType::COUNT],
    /// The node of a zero-dim array of each dtype, by [`DType::id`]: its `dtype@0d` where the
    /// policy has operand categories, else its array's node.
    pub zero_dim_node: [u8; DType::COUNT],
    /// The node of a Python bool, int, float and complex ([`ScalarKind`] order).
    pub scalar_node: [u8; 4],
    /// The kinds each listed op accepts in this policy (`[ops.X] kinds`), in place of the op
    /// catalogue's.
    pub op_kinds: &'static [(OpId, Kinds)],
    /// What a bool join of each listed op computes and returns as (`[ops.X] bool_result`).
    pub op_bool_result: &'static [(OpId, u8)],
    /// The kinds each listed op accepts of every operand, whatever the computation dtype
    /// (`[ops.X] operand_kinds`: PyTorch's subtract refuses a bool operand).
    pub op_operand_kinds: &'static [(OpId, Kinds)],
    /// The dtypes beside whose array each listed op refuses a Python bool
    /// (`[ops.X] python_bool_refused_with`: TensorFlow's `tf.add(int8, True)`).
    pub op_python_bool_refused: &'static [(OpId, &'static [DType])],
    /// The kinds the operands' join may have for each listed op before its rule replaces the
    /// join (`[ops.X] join_kinds`: TensorFlow's `truediv` refuses bool / bool).
    pub op_join_kinds: &'static [(OpId, Kinds)],
    /// The node each listed op computes in when the operands' join is the Python-int node
    /// (`[ops.X] python_int_as`: TensorFlow's `bitwise_and(True, 3)` is int64).
    pub op_python_int_as: &'static [(OpId, u8)],
    /// `[canonical]`: (dtype, the dtype an array of it becomes before it is promoted): JAX
    /// without x64 converts every 64-bit input to its 32-bit type.
    pub canonical: &'static [(DType, DType)],
    /// The kernels' conventions (`[kernels]`).
    pub semantics: Semantics,
    /// Ops whose loop is not the join (a measured library's `kernels.loops`): for each, the
    /// node every pair computes in (`a * n + b`; `UNDEFINED`: no loop, `MIXED`: each operand in
    /// its own dtype, `RULE`: the policy's rules). Empty for a lattice policy.
    pub loops: &'static [(OpId, &'static [u8])],
    /// Unary ops and `clip` by computation node (`UNDEFINED`: the library has no kernel for
    /// it, `RULE`: it computes as the op says): PyTorch has no `neg` of uint16.
    pub dtype_loops: &'static [(OpId, &'static [u8])],
    /// The node `sum` accumulates each node in (a measured library's `kernels.sum`;
    /// `UNDEFINED`: no kernel; `RULE`: the `sum_lowest` rule); empty: the rule for every node.
    pub sum_acc: &'static [u8],
    /// The n-ary rule.
    pub nary: Nary,
    /// NumPy's legacy loop search, which the listed n-ary ops run where an operand's DType is
    /// user-defined (a measured table's `kernels.search`; `None` for every other policy).
    pub search: Option<LoopSearch>,
}

/// NumPy's legacy loop search (`linear_search_type_resolver`), which `np.clip` runs where an
/// operand's DType is user-defined (ml_dtypes'): the first of the op's loops every operand
/// casts to safely (`np.clip(bfloat16, bfloat16, bfloat16)` computes in float32).
#[derive(Debug, Clone, Copy)]
pub struct LoopSearch {
    /// Each op's loops, by node, in the library's order (`ufunc.types`).
    pub ops: &'static [(OpId, &'static [u8])],
    /// The loops each node casts to safely, by node.
    pub safe: &'static [&'static [u8]],
}

/// An operand's place in the policy: an array's dtype, or a weak Python scalar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operand {
    Array(DType),
    /// A zero-dim array: its own node (`int8@0d`) where the policy has operand categories,
    /// else its dtype's.
    ZeroDim(DType),
    /// A Python scalar of kind `bool` (a plain bool), `int`, `float` or `complex`.
    Scalar(ScalarKind),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarKind {
    Bool,
    Int,
    Float,
    Complex,
}

/// Why operands have no result dtype.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromotionError(pub String, pub Failure);

/// Why a promotion failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Failure {
    /// The operands have no join, or an operand is not in the policy.
    #[default]
    NoJoin,
    /// The result dtype has no array type in the reference kernels (PyTorch's int3, a
    /// user-declared format).
    NoArrayType,
    /// The library's op has no loop for the operands (a measured library's table).
    Refused,
}

/// The pairs NumPy's n-ary rule reads (`order::dtype_sequence`).
impl crate::order::dtype_sequence::Pairs for Generated {
    fn pair(&self, a: usize, b: usize) -> Option<usize> {
        match self.join[a * self.n() + b] {
            UNDEFINED => None,
            r => Some(r as usize),
        }
    }
    fn node_name(&self, i: usize) -> &str {
        self.dtypes[i]
    }
    fn node_index(&self, name: &str) -> Option<usize> {
        self.dtypes.iter().position(|d| *d == name)
    }
}

impl Generated {
    /// The dtype an array of `d` is promoted and computed as: its `[canonical]` dtype (JAX
    /// without x64 reads an int64 array as int32), else `d`.
    pub fn canonical_dtype(&self, d: DType) -> DType {
        self.canonical
            .iter()
            .find(|&&(f, _)| f == d)
            .map_or(d, |&(_, t)| t)
    }

    /// The policy's node of an operand (an array's after `[canonical]`).
    fn index(&self, o: Operand) -> Result<usize, PromotionError> {
        let node = match o {
            Operand::Array(d) => self.array_node[self.canonical_dtype(d).id()],
            Operand::ZeroDim(d) => self.zero_dim_node[self.canonical_dtype(d).id()],
            Operand::Scalar(k) => self.scalar_node[k as usize],
        };
        if node == UNDEFINED {
            let name = match o {
                Operand::Array(d) | Operand::ZeroDim(d) => self.canonical_dtype(d).name(),
                Operand::Scalar(k) => ["bool", "i*", "f*", "c*"][k as usize],
            };
            return Err(PromotionError(
                format!("the {} policy has no dtype {name}", self.name),
                Failure::NoJoin,
            ));
        }
        Ok(node as usize)
    }

    fn n(&self) -> usize {
        self.dtypes.len()
    }

    /// The concrete dtype of a node (materialising a weak type).
    fn concrete(&self, i: usize) -> Result<DType, PromotionError> {
        let m = self.materialise[i];
        if m == UNDEFINED {
            return Err(PromotionError(
                format!(
                    "{} does not materialise in the {} policy",
                    self.dtypes[i], self.name
                ),
                Failure::NoJoin,
            ));
        }
        self.node_dtype[m as usize].ok_or_else(|| {
            PromotionError(
                format!(
                    "{} has no array type in the reference kernels",
                    self.dtypes[m as usize]
                ),
                Failure::NoArrayType,
            )
        })
    }

    /// The kinds of computation dtype `op` accepts in this policy: its `[ops.X] kinds`, else
    /// the op catalogue's.
    pub fn kinds(&self, op: OpId) -> Kinds {
        self.op_kinds
            .iter()
            .find(|(o, _)| *o == op)
            .map_or(op.info().kinds, |(_, k)| *k)
    }

    /// The kinds `op` accepts of each operand in this policy (`[ops.X] operand_kinds`); `None`:
    /// any operand whose computation dtype the op accepts.
    pub fn operand_kinds(&self, op: OpId) -> Option<Kinds> {
        self.op_operand_kinds
            .iter()
            .find(|(o, _)| *o == op)
            .map(|(_, k)| *k)
    }

    /// The kinds the operands' join may have for `op` in this policy before the op's rule
    /// replaces it (`[ops.X] join_kinds`); `None`: any.
    pub fn join_kinds(&self, op: OpId) -> Option<Kinds> {
        self.op_join_kinds
            .iter()
            .find(|(o, _)| *o == op)
            .map(|(_, k)| *k)
    }

    /// The dtypes beside whose array `op` refuses a Python bool operand in this policy
    /// (`[ops.X] python_bool_refused_with`; empty: none).
    pub fn python_bool_refused_with(&self, op: OpId) -> &'static [DType] {
        self.op_python_bool_refused
            .iter()
            .find(|(o, _)| *o == op)
            .map_or(&[], |(_, d)| *d)
    }

    /// `a ∨ b` as an index, or the promotion error naming both and suggesting a cast.
    fn join_index(&self, a: Operand, b: Operand) -> Result<usize, PromotionError> {
        let (i, j) = (self.index(a)?, self.index(b)?);
        let r = self.join[i * self.n() + j];
        if r == UNDEFINED {
            return Err(PromotionError(
                format!(
                    "no promotion for {} and {} in the {} policy (they have no unique least upper \
                 bound); cast one operand explicitly, e.g. .astype(float32)",
                    self.dtypes[i], self.dtypes[j], self.name
                ),
                Failure::NoJoin,
            ));
        }
        Ok(r as usize)
    }

    /// The n-ary result dtype of `operands` (`clip(x, lo, hi)`): the join of all their nodes,
    /// not a fold of materialised binary results (`int8, f*, bfloat16` is bfloat16 in JAX,
    /// where folding through `int8 ∨ f*` = float64 would give float64). A fold over the join
    /// table is the n-ary join, since generated lattice policies are lattices; a library
    /// table declares its own rule (`Nary::Numpy`).
    pub fn nary_type(&self, operands: &[Operand]) -> Result<DType, PromotionError> {
        let Some((&first, rest)) = operands.split_first() else {
            return Err(PromotionError("no operands".into(), Failure::NoJoin));
        };
        if let Nary::Numpy(classes) = self.nary {
            use crate::order::dtype_sequence::{Arg, DTypeSequence};
            let nodes = operands
                .iter()
                .map(|&o| self.index(o).map(Arg::Value))
                .collect::<Result<Vec<_>, _>>()?;
            let rule = DTypeSequence {
                table: self,
                classes,
            };
            return match rule.result_type(&nodes) {
                Ok(r) => self.concrete(r),
                Err(refusal) => Err(PromotionError(
                    format!(
                        "no promotion for {} and {} in the {} policy (NumPy's promotion of the \
                         operands refuses them); cast one operand explicitly",
                        self.dtypes[refusal.by], self.dtypes[refusal.dtype], self.name
                    ),
                    Failure::NoJoin,
                )),
            };
        }
        if let Nary::Torch(kinds) = self.nary {
            use crate::order::result_type_state::ResultTypeState;
            let nodes = operands
                .iter()
                .map(|&o| self.index(o))
                .collect::<Result<Vec<_>, _>>()?;
            let materialised: Vec<Option<usize>> = self
                .materialise
                .iter()
                .map(|&m| (m != UNDEFINED).then_some(m as usize))
                .collect();
            let rule = ResultTypeState {
                table: self,
                materialised: Some(&materialised),
                kinds,
            };
            return match rule.result_type(&nodes) {
                Ok(r) => self.concrete(r),
                Err(refusal) if refusal.no_complex => Err(PromotionError(
                    format!(
                        "a complex operand makes the result complex, and {} has no complex dtype \
                         in the {} policy's library (it raises \"Unknown Complex ScalarType\"); \
                         cast it to a float dtype with one first",
                        self.dtypes[refusal.by], self.name
                    ),
                    Failure::Refused,
                )),
                Err(refusal) => Err(PromotionError(
                    format!(
                        "no promotion for {} and {} in the {} policy (PyTorch's promotion of \
                         the operands, category by category, refuses them); cast one operand \
                         explicitly",
                        self.dtypes[refusal.by], self.dtypes[refusal.dtype], self.name
                    ),
                    Failure::NoJoin,
                )),
            };
        }
        let mut j = self.index(first)?;
        for &o in rest {
            let k = self.index(o)?;
            let r = self.join[j * self.n() + k];
            if r == UNDEFINED {
                return Err(PromotionError(
                    format!(
                        "no promotion for {} and {} in the {} policy (they have no unique least \
                     upper bound); cast one operand explicitly, e.g. .astype(float32)",
                        self.dtypes[j], self.dtypes[k], self.name
                    ),
                    Failure::NoJoin,
                ));
            }
            j = r as usize;
        }
        self.concrete(j)
    }

    /// Whether arrays of `d` are of a user-defined DType in the policy's library (NumPy's n-ary
    /// classes: ml_dtypes' types).
    pub fn user_dtype(&self, d: DType) -> bool {
        use crate::policy::nary::NumpyClass;
        let node = self.array_node[d.id()];
        matches!(self.nary, Nary::Numpy(classes)
            if node != UNDEFINED && matches!(classes[node as usize], NumpyClass::User { .. }))
    }

    /// The computation (and result) dtype of the n-ary `op` (`clip`) on `operands`: the loop
    /// NumPy's legacy loop search finds where the policy's library runs one for `op` and an
    /// operand's DType is user-defined (an ml_dtypes type), else [`Generated::nary_type`].
    pub fn nary_op_type(&self, op: OpId, operands: &[Operand]) -> Result<DType, PromotionError> {
        use crate::policy::nary::NumpyClass;
        let (Some(search), Nary::Numpy(classes)) = (self.search, self.nary) else {
            return self.nary_type(operands);
        };
        let Some((_, loops)) = search.ops.iter().find(|(o, _)| *o == op) else {
            return self.nary_type(operands);
        };
        let nodes = operands
            .iter()
            .map(|&o| self.index(o))
            .collect::<Result<Vec<_>, _>>()?;
        if !nodes
            .iter()
            .any(|&i| matches!(classes[i], NumpyClass::User { .. }))
        {
            return self.nary_type(operands);
        }
        let fits = |l: u8| nodes.iter().all(|&i| search.safe[i].contains(&l));
        match loops.iter().find(|&&l| fits(l)) {
            Some(&l) => self.concrete(l as usize),
            None => {
                let names: Vec<&str> = nodes.iter().map(|&i| self.dtypes[i]).collect();
                Err(PromotionError(
                    format!(
                        "{} has no loop that {} all cast to safely in the {} policy's library \
                         (NumPy's loop search raises UFuncNoLoopError); cast the operands to \
                         one dtype first",
                        op.name(),
                        names.join(", "),
                        self.name
                    ),
                    Failure::Refused,
                ))
            }
        }
    }

    /// The loop `op` computes `a` and `b` in, where the policy lists one (a measured
    /// library's): `Ok(None)` for a mixed loop, an error where the library has none.
    fn loop_of(
        &self,
        op: OpId,
        a: Operand,
        b: Operand,
    ) -> Option<Result<Option<DType>, PromotionError>> {
        let (_, table) = self.loops.iter().find(|(o, _)| *o == op)?;
        let (i, j) = match (self.index(a), self.index(b)) {
            (Ok(i), Ok(j)) => (i, j),
            (Err(e), _) | (_, Err(e)) => return Some(Err(e)),
        };
        Some(match table[i * self.n() + j] {
            UNDEFINED => Err(PromotionError(
                format!(
                    "{} has no loop for {} and {} in the {} policy's library (it raises \
                     TypeError); cast the operands to a dtype it computes in",
                    op.name(),
                    self.dtypes[i],
                    self.dtypes[j],
                    self.name
                ),
                Failure::Refused,
            )),
            MIXED => Ok(None),
            RULE => return None,
            c => self.concrete(c as usize).map(Some),
        })
    }

    /// The dtype of `op`'s measured loop for `a` and `b` (`None`: no measured loop, or a
    /// mixed one, which computes in the join's place).
    fn measured_loop(
        &self,
        op: OpId,
        a: Operand,
        b: Operand,
    ) -> Result<Option<DType>, PromotionError> {
        Ok(self.loop_of(op, a, b).transpose()?.flatten())
    }

    /// Whether the policy lists the loop `op` computes `a` and `b` in (a measured library's
    /// table): a weak scalar then converts to the loop's dtype directly
    /// (`np.true_divide(int8, 300)` is 1/300 in float64, not an overflow of int8).
    pub fn measures(&self, op: OpId, a: Operand, b: Operand) -> bool {
        self.loop_of(op, a, b).is_some()
    }

    /// Whether the policy's library casts `from` to `to` (`astype`); the error names both where
    /// it has no such cast (ml_dtypes registers none from float8_e8m0fnu to the other float8s).
    pub fn cast_loop(&self, from: DType, to: DType) -> Result<(), PromotionError> {
        match self.loop_of(OpId::ASTYPE, Operand::Array(from), Operand::Array(to)) {
            Some(Err(e)) if e.1 == Failure::Refused => Err(PromotionError(
                format!(
                    "the {} policy's library has no cast from {} to {} (it raises TypeError); \
                     cast through a dtype it converts both to and from, such as float32",
                    self.name,
                    from.name(),
                    to.name()
                ),
                Failure::Refused,
            )),
            _ => Ok(()),
        }
    }

    /// Whether the policy's library has a kernel of `op` (unary, `clip`) computing in `d`;
    /// the error names the dtype where it has none (PyTorch's `neg` of uint16).
    pub fn dtype_loop(&self, op: OpId, d: DType) -> Result<(), PromotionError> {
        let Some((_, table)) = self.dtype_loops.iter().find(|(o, _)| *o == op) else {
            return Ok(());
        };
        match self.array_node[d.id()] {
            UNDEFINED => Ok(()),
            i if table[i as usize] == UNDEFINED => Err(PromotionError(
                format!(
                    "{} has no kernel for {} in the {} policy's library (it raises); cast the \
                     operand to a dtype it computes in",
                    op.name(),
                    d.name(),
                    self.name
                ),
                Failure::Refused,
            )),
            _ => Ok(()),
        }
    }

    /// Whether `op` compares `a` and `b` in a mixed loop, each in its own dtype (NumPy 2's
    /// int64 against uint64).
    pub fn mixed_loop(&self, op: OpId, a: Operand, b: Operand) -> bool {
        matches!(self.loop_of(op, a, b), Some(Ok(None)))
    }

    /// The result dtype of a binary elementwise op on `a` and `b` before op rules.
    pub fn result_type(&self, a: Operand, b: Operand) -> Result<DType, PromotionError> {
        self.concrete(self.join_index(a, b)?)
    }

    /// The computation (and result) dtype of `op` on `a` and `b` before kind checks: the join,
    /// or the op's `bool_result` when that join is bool (JAX floors bools as int32), or its
    /// `python_int_as` when the join is the Python-int node (TensorFlow's bitwise ops).
    pub fn op_type(&self, op: OpId, a: Operand, b: Operand) -> Result<DType, PromotionError> {
        if let Some(c) = self.measured_loop(op, a, b)? {
            return Ok(c);
        }
        let j = self.join_index(a, b)?;
        if j == self.scalar_node[ScalarKind::Int as usize] as usize
            && let Some(&(_, r)) = self.op_python_int_as.iter().find(|(o, _)| *o == op)
        {
            return self.concrete(r as usize);
        }
        match self.op_bool_result.iter().find(|(o, _)| *o == op) {
            Some(&(_, r)) if self.concrete(j)? == DType::Bool => self.concrete(r as usize),
            _ => self.concrete(j),
        }
    }

    /// The result dtype of `true_divide`: the join, with integer and bool results replaced
    /// by the policy's rule.
    pub fn true_divide_type(&self, a: Operand, b: Operand) -> Result<DType, PromotionError> {
        const TRUE_DIVIDE: OpId = OpId::of("true_divide");
        if let Some(c) = self.measured_loop(TRUE_DIVIDE, a, b)? {
            return Ok(c);
        }
        let j = self.join_index(a, b)?;
        match self.true_divide[j] {
            UNDEFINED => self.concrete(j),
            r => self.concrete(r as usize),
        }
    }

    /// The dtype a Python int is parsed as before it combines (`i*`'s materialisation: int64
    /// under JAX with x64, int32 without), when the policy has one.
    pub fn python_int_type(&self) -> Option<DType> {
        let i = self.index(Operand::Scalar(ScalarKind::Int)).ok()?;
        self.concrete(i).ok()
    }

    /// The accumulator dtype of `sum` over an array of `d`: the policy's lowest accumulator
    /// (`lowest_unsigned` for an unsigned `d`, when set) when `d` is below it (`d ∨ lowest =
    /// lowest`) or is bool or a narrower integer of at least a byte (JAX's strict policy, where
    /// no two dtypes join, still sums int8 in int64), else `d`. Sub-byte integers keep the
    /// join's rule: JAX refuses to sum them, ml_dtypes sums them in their own type. A measured
    /// library's table gives each dtype's accumulator instead (`sum_acc`).
    pub fn sum_type(&self, d: DType) -> Result<DType, PromotionError> {
        if !self.sum_acc.is_empty() {
            let i = self.index(Operand::Array(d))?;
            match self.sum_acc[i] {
                RULE => {}
                UNDEFINED => {
                    return Err(PromotionError(
                        format!(
                            "sum has no kernel for {} in the {} policy's library (it raises); \
                             cast the operand to a dtype it sums",
                            d.name(),
                            self.name
                        ),
                        Failure::Refused,
                    ));
                }
                acc => return self.concrete(acc as usize),
            }
        }
        let low = match d {
            DType::Int { signed: false, .. } => self.sum_lowest_unsigned.or(self.sum_lowest),
            _ => self.sum_lowest,
        };
        let Some(low) = low else {
            return Ok(d);
        };
        let acc = self.concrete(low as usize)?;
        let narrower = match (d, acc) {
            (DType::Bool, DType::Int { .. }) => true,
            (DType::Int { bits: a, .. }, DType::Int { bits: b, .. }) => a >= 8 && a < b,
            _ => false,
        };
        let i = self.index(Operand::Array(d))?;
        if narrower || self.join[i * self.n() + low as usize] == low {
            Ok(acc)
        } else {
            Ok(d)
        }
    }
}

/// The `Generated` of a policy that was never generated into the crate (a file given to
/// `typejoin run --policy`, a Python `Policy`), built at run time from the plan codegen would
/// write (`plan`), and kept for the process. As `typejoin codegen` does, it refuses a policy
/// whose laws fail (the kernels read a lattice's joins as verified), a measured table that
/// says nothing of what its library computes in (`kernels`), and one that extends a lattice
/// (generated only beside it).
pub fn runtime(input: &crate::order::input::Input) -> Result<&'static Generated, LoadError> {
    use crate::order::input::Input;
    let refuse = |message: String, help: &str| {
        Err(LoadError::one(
            Diagnostic::file(input.path(), message).with_help(help.to_string()),
        ))
    };
    let report = input.check(crate::laws::CheckOptions::default());
    let plan = match input {
        Input::Policy { policy, joins, .. } => {
            let checked = crate::check::Checked::from(report);
            if !checked.ok() {
                return refuse(
                    format!(
                        "the `{}` policy's laws do not hold; the kernels run only a verified \
                         lattice",
                        policy.name()
                    ),
                    "`typejoin check` shows what fails; `typejoin repair` the fewest changes \
                     that make it a lattice",
                );
            }
            plan::lattice(policy, joins)
        }
        Input::Observed(o) => {
            if let Some(base) = o.kernels.as_ref().and_then(|k| k.extends.as_deref()) {
                return refuse(
                    format!("this table extends the `{base}` policy"),
                    "the kernels run it as generated beside that policy (`typejoin codegen`)",
                );
            }
            match plan::table(o, &report) {
                Some(plan) => plan,
                None => {
                    return refuse(
                        "a measured table without `kernels` says nothing of what its library \
                         computes in"
                            .to_string(),
                        "scripts/dump_table.py numpy-result-type measures NumPy's loops \
                         (docs/policy-kinds.md); or run a policy (.toml)",
                    );
                }
            }
        }
    };
    Ok(plan.build(input.path()))
}
