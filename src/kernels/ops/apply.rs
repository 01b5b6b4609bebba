//! The one dispatcher the conformance runner and the Python package share: an op parsed once
//! from its name, then run on its arguments, into storage the caller may provide.

use super::accept::canonical_arg;
use super::astype::{astype_into, c_int_cast, c10_into, through_float32};
use super::binary::{as_rewritten, compute_binary, rewrite};
use super::flush;
use super::fused::compares_exactly;
use super::nary::{clip_with, select_with};
use super::plan::{Decided, decide, planned};
use super::reduce::sum_within;
use super::scalar::Conversion;
use super::shape::{allocated, moved_into};
use super::unary::unary_with;
use super::vocab::{Arg, DEFAULT_MAX_ELEMENTS, ErrorKind, Op, OpError, UnaryOp, input_error};
use crate::kernels::array::{Array, Data, Shape};
use crate::numeric::dtype::DType;
use crate::numeric::op::OpId;
use crate::numeric::op::{ComplexToBool, Float8Conversion, Narrowing};
use crate::numeric::op::{Subnormals, SumOrder, ZeroTies};
use crate::promote::{Generated, Operand};
use std::borrow::Cow;

/// What some ops take beyond their arguments, and the limit every op runs under.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// The destination dtype of `astype`.
    pub dtype: Option<DType>,
    /// The axis of `sum` (`None`: the whole array).
    pub axis: Option<usize>,
    /// The largest result (elements) a broadcast or reduction may make: over it the op is an
    /// `input` error before anything is allocated.
    pub max_elements: usize,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            dtype: None,
            axis: None,
            max_elements: DEFAULT_MAX_ELEMENTS,
        }
    }
}

/// The kernel op of a name, parsed once at the edge (a runner line, a Python call): an op of the
/// catalogue the reference kernels run, or an `unsupported` error with the nearest name.
pub fn parse_op(name: &str) -> Result<OpId, OpError> {
    if let Some(op) = OpId::named(name).filter(|o| o.info().kernel) {
        return Ok(op);
    }
    let known: Vec<&str> = crate::numeric::op::CATALOGUE
        .iter()
        .filter(|o| o.kernel)
        .map(|o| o.name)
        .collect();
    let hint = known
        .iter()
        .map(|k| (strsim::jaro_winkler(name, k), k))
        .filter(|(s, _)| *s > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map_or(String::new(), |(_, k)| format!("; did you mean `{k}`?"));
    Err(OpError {
        kind: ErrorKind::Unsupported,
        message: format!("unknown op `{name}`{hint}"),
    })
}

/// Runs the kernel op `op` (a binary op, a unary op, `astype`, `clip`, `where`, `sum`: see
/// [`parse_op`]) on `args` under `policy`: the one dispatcher the conformance runner and the
/// Python package share.
pub fn apply(
    policy: &Generated,
    op: OpId,
    args: &[Arg],
    options: Options,
) -> Result<Array, OpError> {
    apply_with(policy, op, args, options, |dtype, shape| {
        Ok(Array::zeros(dtype, shape.to_vec())?)
    })
}

/// `astype` (as [`apply_with`] runs it, `options.dtype` the destination) of a bool array
/// given as its bytes, NumPy's storage, which need not hold only 0 and 1 (another thread may
/// even write them meanwhile): each byte is read as NumPy reads a bool, nonzero true, so the
/// bytes need neither a copy nor a check ([`Array`]'s invariant is about arrays; these are
/// bytes). `Ok(None)`, before `alloc` is called, unless the conversion is one no policy
/// changes: to an integer of 8 to 64 bits, float32 or float64 (not to bool: NumPy copies a
/// bool's bytes as they are, which would put patterns other than 0 and 1 into the result).
pub fn astype_bool_bytes(
    policy: &Generated,
    bytes: &[u8],
    shape: &[usize],
    options: Options,
    alloc: impl FnOnce(DType, &[usize]) -> Result<Array, OpError>,
) -> Result<Option<Array>, OpError> {
    let Some(to) = options.dtype.map(|d| policy.canonical_dtype(d)) else {
        return Ok(None);
    };
    let plain = matches!(
        to,
        DType::Float32
            | DType::Float64
            | DType::Int {
                bits: 8 | 16 | 32 | 64,
                ..
            }
    );
    if !plain || policy.canonical_dtype(DType::Bool) != DType::Bool {
        return Ok(None);
    }
    if crate::kernels::array::element_count(shape) != Some(bytes.len()) {
        return Err(input_error(format!(
            "astype of {} bool bytes to shape {shape:?}",
            bytes.len()
        )));
    }
    policy.cast_loop(DType::Bool, to).map_err(|e| OpError {
        kind: ErrorKind::Unsupported,
        message: e.0,
    })?;
    let mut out = allocated(alloc, to, shape)?;
    super::astype::bool_bytes_into(bytes, &mut out);
    Ok(Some(out))
}

/// [`apply`] into storage the caller provides: `alloc` is called once, with the result's
/// dtype and shape, after the operands are checked and before any work, and returns the array
/// to fill (a view of a NumPy array's buffer, say: `Data::borrowed`). Binary ops,
/// `astype`, the unary ops on integers of 8 to 64 bits, float32 and float64, `clip` of such an
/// array of the result dtype by two zero-dim bounds, and `where` of a bool condition between
/// values of the result's dtype and shape (or zero-dim) compute straight into it; the other
/// ops compute, then copy into it. An `Err` from
/// `alloc` is returned as is. An op the policy's library computes as another (PyTorch's
/// `s / t`, `t.reciprocal() * s`: `binary::rewrite`) computes its first step before `alloc`.
pub fn apply_with(
    policy: &Generated,
    op: OpId,
    args: &[Arg],
    options: Options,
    alloc: impl FnOnce(DType, &[usize]) -> Result<Array, OpError>,
) -> Result<Array, OpError> {
    // The library's own conversion of each input comes first (`[canonical]`).
    if args
        .iter()
        .any(|a| matches!(a, Arg::Array(x) if policy.canonical_dtype(x.dtype) != x.dtype))
    {
        let args: Vec<Arg> = args
            .iter()
            .map(|a| canonical_arg(policy, a).into_owned())
            .collect();
        return apply_with(policy, op, &args, options, alloc);
    }
    let name = op.name();
    if let Some(o) = Op::of_id(op) {
        let [a, b] = args else {
            return Err(input_error(format!(
                "{name} takes 2 arguments, got {}",
                args.len()
            )));
        };
        if let Some(args) = rewrite(policy, o, a, b, options.max_elements)? {
            return apply_with(policy, Op::Multiply.id(), &args, options, alloc)
                .map_err(as_rewritten(policy));
        }
        let decided = decide(policy, o, a, b)?;
        return run_binary(policy, o, &decided, (a, b), options, alloc);
    }
    if op == OpId::ASTYPE {
        let to = policy.canonical_dtype(
            options
                .dtype
                .ok_or_else(|| input_error("astype needs `dtype`"))?,
        );
        let a = array_arg(args, 0, name)?;
        policy.cast_loop(a.dtype, to).map_err(|e| OpError {
            kind: ErrorKind::Unsupported,
            message: e.0,
        })?;
        // A library that flushes subnormals reads (and narrows) them so in a converting cast.
        let read = flush::converted_by(policy, a, to);
        let a = read.as_ref().unwrap_or(a);
        // Eigen's cast of a complex to bool tests its real part (`ComplexToBool::RealPart`).
        let real;
        let a = if a.dtype.is_complex()
            && to == DType::Bool
            && policy.semantics.complex_to_bool == ComplexToBool::RealPart
        {
            real = super::astype::try_astype(a, a.dtype.part())?;
            &real
        } else {
            a
        };
        // PyTorch, TensorFlow and JAX narrow into float16 and bfloat16 through float32.
        let narrowed = match policy.semantics.narrowing {
            Narrowing::ViaFloat32 => through_float32(a, to),
            Narrowing::Once => None,
        };
        let a = narrowed.as_ref().unwrap_or(a);
        let mut out = allocated(alloc, to, &a.shape)?;
        if c_int_cast(a, &mut out, policy.semantics.int_conversion) {
            // A float or complex number into an integer under the C conventions: done.
        } else if policy.semantics.float8_conversion == Float8Conversion::C10 {
            c10_into(a, &mut out)?;
        } else if let Some(wrapped) = Conversion::of(policy, to).intn(a, to) {
            out.data.assign(wrapped.data);
        } else {
            astype_into(a, &mut out)?;
        }
        return Ok(out);
    }
    if let Some(u) = UnaryOp::of_id(op) {
        return unary_with(policy, u, array_arg(args, 0, name)?, alloc);
    }
    if op == OpId::CLIP || op == OpId::WHERE {
        let [a, b, c] = args else {
            let names = if op == OpId::CLIP {
                "x, lo, hi"
            } else {
                "cond, x, y"
            };
            return Err(input_error(format!(
                "{name} takes 3 arguments ({names}), got {}",
                args.len()
            )));
        };
        if op == OpId::CLIP {
            return clip_with(policy, [a, b, c], options.max_elements, alloc);
        }
        return select_with(policy, [a, b, c], options.max_elements, alloc);
    }
    let r = if op == OpId::SUM {
        let a = array_arg(args, 0, name)?;
        // Eigen's and XLA's orders flush each step themselves, and copy a lone summed element
        // as it is.
        if policy.semantics.subnormals == Subnormals::Flush
            && !matches!(
                policy.semantics.sum_order,
                SumOrder::Eigen | SumOrder::Xla | SumOrder::XlaAvx512 | SumOrder::XlaAvx2
            )
        {
            // Read and written as a library that flushes subnormals sums (its partial sums are
            // exact here).
            let read = flush::read(a);
            let mut r = sum_within(
                policy,
                read.as_ref().unwrap_or(a),
                options.axis,
                options.max_elements,
            )?;
            flush::write(&mut r);
            r
        } else {
            sum_within(policy, a, options.axis, options.max_elements)?
        }
    } else {
        return Err(OpError {
            kind: ErrorKind::Unsupported,
            message: format!("{name} has no reference kernel"),
        });
    };
    moved_into(r, alloc)
}

/// A binary op after [`decide`]: planned for the operands' shapes and values, then computed
/// into the storage `alloc` gives.
fn run_binary(
    policy: &Generated,
    op: Op,
    decided: &Decided,
    (a, b): (&Arg, &Arg),
    options: Options,
    alloc: impl FnOnce(DType, &[usize]) -> Result<Array, OpError>,
) -> Result<Array, OpError> {
    let (out_dtype, shape, x, y, compute) =
        planned(policy, op, decided, a, b, options.max_elements)?;
    let mut out = allocated(alloc, out_dtype, &shape)?;
    compute_binary(policy, op, compute, (a, &x), (b, &y), &mut out)?;
    Ok(out)
}

/// A binary op planned for two array operands from their [`Operand`]s (dtype, zero-dim or
/// not) alone: what [`apply_with`] decides before it sees a shape or a value, made once and
/// reused for every call on arrays of those dtypes (the Python binding keeps one per policy,
/// op and operand pair). [`ArrayPlan::apply_with`] computes exactly what [`apply_with`]
/// computes for the same arguments.
#[derive(Clone, Debug)]
pub struct ArrayPlan<'p> {
    policy: &'p Generated,
    op: Op,
    operands: (Operand, Operand),
    decided: Decided,
}

impl<'p> ArrayPlan<'p> {
    /// The plan of `op` on two arrays like `a` and `b` (`Arg::Array`s), or `None` where
    /// there is none to keep: `op` is not binary, an operand is a Python scalar or is first
    /// converted by the policy's `[canonical]`, or the op refuses these dtypes (
    /// [`apply_with`] then says why).
    pub fn new(policy: &'p Generated, op: OpId, [a, b]: &[Arg; 2]) -> Option<ArrayPlan<'p>> {
        let o = Op::of_id(op)?;
        let array =
            |x: &Arg| matches!(x, Arg::Array(x) if policy.canonical_dtype(x.dtype) == x.dtype);
        if !(array(a) && array(b)) {
            return None;
        }
        let decided = decide(policy, o, a, b).ok().filter(Decided::computes)?;
        Some(ArrayPlan {
            policy,
            op: o,
            operands: (a.operand(), b.operand()),
            decided,
        })
    }

    /// The operands the plan was made for.
    pub fn operands(&self) -> (Operand, Operand) {
        self.operands
    }

    /// The plan as one elementwise pass, where that is all [`apply_with`] computes for two
    /// arrays of the plan's operands and of one shape of at least one dimension, both of the
    /// computation dtype:
    ///
    /// - `+ − × ÷` of float32 or float64, and `maximum`/`minimum` of them where the policy's
    ///   `zero_ties` is the vector loops' (`second`, `operand`), under a policy that keeps
    ///   subnormals;
    /// - `+ − ×`, the bitwise ops, `maximum` and `minimum` of an integer dtype (wrapping);
    /// - the six comparisons of any of those dtypes, into bool, where the policy has no mixed
    ///   loop for the pair; for float32/float64, one operand may be of a dtype whose every
    ///   value the other holds, read by `as` (an int8 against a float32: `fused_compare`).
    ///
    /// No step comes before or after the pass for them (no conversion, broadcast, divisor
    /// check, rewrite, select, tie of zeros or flush), so [`Elementwise::apply`] skips deciding
    /// it again; `tests/it/plans.rs` holds the two to the same bits on every shipped policy.
    pub fn elementwise(&self) -> Option<Elementwise<'_>> {
        let c = self.decided.compute;
        let s = &self.policy.semantics;
        let same = |o: Operand| o == Operand::Array(c);
        let widened = |o: Operand| matches!(o, Operand::Array(d) if self.op.is_comparison() && compares_exactly(c, d));
        let float =
            matches!(c, DType::Float32 | DType::Float64) && s.subnormals != Subnormals::Flush;
        let int = matches!(c, DType::Int { .. });
        let pass = match self.op {
            Op::Add | Op::Subtract | Op::Multiply => float || int,
            Op::TrueDivide => float,
            Op::BitwiseAnd | Op::BitwiseOr | Op::BitwiseXor => int,
            Op::Maximum | Op::Minimum => {
                int || (float && matches!(s.zero_ties, ZeroTies::Second | ZeroTies::Operand))
            }
            op => {
                op.is_comparison()
                    && (float || int)
                    && !self
                        .policy
                        .mixed_loop(op.id(), self.operands.0, self.operands.1)
            }
        };
        let (x, y) = self.operands;
        let operands =
            (same(x) && same(y)) || (float && (same(x) && widened(y) || widened(x) && same(y)));
        (pass && operands).then_some(Elementwise(self))
    }

    /// [`apply_with`] of the plan's policy and op on `args` (with the default options but
    /// `max_elements`), `alloc` called as it calls it; arguments other than the plan's
    /// operands take the whole dispatcher.
    pub fn apply_with(
        &self,
        args: &[Arg; 2],
        options: Options,
        alloc: impl FnOnce(DType, &[usize]) -> Result<Array, OpError>,
    ) -> Result<Array, OpError> {
        let [a, b] = args;
        if !matches!((a, b), (Arg::Array(_), Arg::Array(_)))
            || (a.operand(), b.operand()) != self.operands
        {
            return apply_with(self.policy, self.op.id(), args, options, alloc);
        }
        run_binary(self.policy, self.op, &self.decided, (a, b), options, alloc)
    }
}

/// An [`ArrayPlan`] that is one elementwise pass ([`ArrayPlan::elementwise`]).
#[derive(Clone, Copy, Debug)]
pub struct Elementwise<'a>(&'a ArrayPlan<'a>);

impl Elementwise<'_> {
    /// The computation dtype.
    pub fn dtype(&self) -> DType {
        self.0.decided.compute
    }

    /// The operands' dtypes: [`Self::dtype`] both, or for a comparison one of them a dtype the
    /// other holds.
    pub fn operand_dtypes(&self) -> [DType; 2] {
        match self.0.operands {
            (Operand::Array(x), Operand::Array(y)) => [x, y],
            _ => unreachable!("an elementwise pass is made of two array operands"),
        }
    }

    /// The result's dtype: the operands', bool for a comparison.
    pub fn out_dtype(&self) -> DType {
        match self.0.op.is_comparison() {
            true => DType::Bool,
            false => self.dtype(),
        }
    }

    /// The op on `x` and `y` into `out`: what [`ArrayPlan::apply_with`] computes when its
    /// `alloc` returns `out`. `x` and `y` must be of [`Self::operand_dtypes`], `out` of
    /// [`Self::out_dtype`], all of one shape (else an `input` error, nothing written).
    pub fn apply(&self, x: &Array, y: &Array, out: &mut Array) -> Result<(), OpError> {
        if [x.dtype, y.dtype] != self.operand_dtypes()
            || out.dtype != self.out_dtype()
            || x.shape != y.shape
            || x.shape != out.shape
            || x.shape.is_empty()
        {
            return Err(self.mismatch("arrays", "one shape of at least one dimension"));
        }
        self.pass(Cow::Borrowed(x), Cow::Borrowed(y), &mut out.data);
        Ok(())
    }

    /// [`Self::apply`] on the elements alone, for a caller that holds storage, not arrays (the
    /// Python binding's NumPy buffers): `x` and `y` in the units of [`Self::operand_dtypes`],
    /// `out` in [`Self::out_dtype`]'s, all of one length (else an `input` error, nothing
    /// written). The op is elementwise, so the shape does not matter, only the count. A dtype
    /// whose patterns leave bits of their unit unused (int4, …) has its operands' patterns
    /// checked, as [`Array::new`] checks them.
    pub fn run(&self, x: Data, y: Data, out: &mut Data) -> Result<(), OpError> {
        let ([tx, ty], n) = (self.operand_dtypes(), out.len());
        let fits = |d: &Data, u: DType| d.unit() == u.unit() && d.len() == n;
        if !(fits(&x, tx) && fits(&y, ty) && fits(out, self.out_dtype())) {
            return Err(self.mismatch("operands", "one length"));
        }
        let array = |t: DType, d: Data| -> Result<Array, OpError> {
            match t.pattern_bits() < 8 * t.unit().bytes() as u32 {
                true => Ok(Array::new(t, &[n][..], d)?),
                // Every pattern of the unit is a value: the invariant holds by construction.
                false => Ok(Array {
                    dtype: t,
                    shape: Shape::from_slice(&[n]),
                    data: d,
                }),
            }
        };
        let (x, y) = (array(tx, x)?, array(ty, y)?);
        if n > 0 {
            self.pass(Cow::Owned(x), Cow::Owned(y), out);
        }
        Ok(())
    }

    /// The pass on two operands of the checked dtypes and length, read as `plan::prepare`
    /// reads an operand of the result's shape (one element: a broadcast scalar).
    fn pass(&self, x: Cow<'_, Array>, y: Cow<'_, Array>, out: &mut Data) {
        fn input(a: Cow<'_, Array>) -> super::input::Input<'_> {
            let splat = a.len() == 1;
            super::input::Input { array: a, splat }
        }
        super::dispatch::run_same(self.0.op, self.dtype(), &input(x), &input(y), out)
    }

    /// The `input` error of operands (`what`) or a result not as the pass takes them.
    fn mismatch(&self, what: &str, of: &str) -> OpError {
        let [x, y] = self.operand_dtypes().map(DType::name);
        input_error(format!(
            "an elementwise pass of {} takes {x} and {y} {what} and a {} result, of {of}",
            self.0.op.name(),
            self.out_dtype().name()
        ))
    }
}

fn array_arg<'a>(args: &'a [Arg], k: usize, op: &str) -> Result<&'a Array, OpError> {
    match args.get(k) {
        Some(Arg::Array(a)) => Ok(a),
        Some(Arg::Scalar(_)) => Err(input_error(format!("{op} takes an array argument"))),
        None => Err(input_error(format!("{op} needs {} argument(s)", k + 1))),
    }
}
