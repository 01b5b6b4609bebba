//! Planning a binary op: broadcasting, weak scalars materialised, operands prepared in the computation dtype, the kinds the op accepts (the op catalogue), and the public `binary`/`binary_into`.

use super::*;

/// NumPy broadcasting of two shapes.
pub fn broadcast(a: &[usize], b: &[usize]) -> Result<Vec<usize>, OpError> {
    let n = a.len().max(b.len());
    let mut out = vec![0; n];
    for i in 0..n {
        let x = if i < n - a.len() {
            1
        } else {
            a[i - (n - a.len())]
        };
        let y = if i < n - b.len() {
            1
        } else {
            b[i - (n - b.len())]
        };
        out[i] = if x == y || y == 1 {
            x
        } else if x == 1 {
            y
        } else {
            return err(
                ErrorKind::Input,
                format!("shapes {a:?} and {b:?} do not broadcast"),
            );
        };
    }
    // Inputs are real arrays, but their broadcast product can be out of reach.
    check_result_size(&out, || format!("broadcasting {a:?} with {b:?}"))?;
    Ok(out)
}

/// `a` repeated to `shape` (which it broadcasts to), contiguous.
pub(super) fn expand(a: &Array, shape: &[usize]) -> Array {
    let n: usize = shape.iter().product();
    let offset = shape.len() - a.shape.len();
    // Strides of `a` in the output's index space (0 on broadcast dimensions).
    let mut strides = vec![0usize; shape.len()];
    let mut s = 1;
    for d in (0..a.shape.len()).rev() {
        strides[d + offset] = if a.shape[d] == 1 { 0 } else { s };
        s *= a.shape[d];
    }
    let mut idx = Vec::with_capacity(n);
    let mut counter = vec![0usize; shape.len()];
    for _ in 0..n {
        idx.push(
            counter
                .iter()
                .zip(&strides)
                .map(|(c, s)| c * s)
                .sum::<usize>(),
        );
        for d in (0..shape.len()).rev() {
            counter[d] += 1;
            if counter[d] < shape[d] {
                break;
            }
            counter[d] = 0;
        }
    }
    let data = match &a.data {
        Data::U8(v) => Data::U8(idx.iter().map(|&i| v[i]).collect()),
        Data::U16(v) => Data::U16(idx.iter().map(|&i| v[i]).collect()),
        Data::U32(v) => Data::U32(idx.iter().map(|&i| v[i]).collect()),
        Data::U64(v) => Data::U64(idx.iter().map(|&i| v[i]).collect()),
        Data::C64(v) => Data::C64(idx.iter().map(|&i| v[i]).collect()),
        Data::C128(v) => Data::C128(idx.iter().map(|&i| v[i]).collect()),
    };
    Array {
        dtype: a.dtype,
        shape: shape.to_vec(),
        data,
    }
}

/// The values an integer dtype of `bits` holds, as a closed range.
fn int_range(bits: u32, signed: bool) -> (i128, i128) {
    if signed {
        (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    } else {
        (0, (1 << bits) - 1)
    }
}

/// A Python int is first parsed as the policy's Python-int type (`i*`'s materialisation), as
/// JAX and TensorFlow do: outside its range it is an `overflow` error whatever the result
/// dtype (`float16 + 2**63` raises OverflowError under JAX's x64, `float32 + 2**31` under x32
/// and TensorFlow), except under `PythonInt::Wrap` (PyTorch's wider range).
fn python_int_fits(policy: &Generated, x: i128) -> Result<(), OpError> {
    if policy.semantics.python_int == PythonInt::Wrap {
        // PyTorch takes a Python int as int64, or as uint64 from 2^63 on: only beyond raise.
        if (-(1i128 << 63)..(1i128 << 64)).contains(&x) {
            return Ok(());
        }
        return err(
            ErrorKind::Overflow,
            format!(
                "Python integer {x} is outside [-2**63, 2**64) (PyTorch raises OverflowError); \
                 use an array of the dtype wanted"
            ),
        );
    }
    let Some(DType::Int { bits, signed }) = policy.python_int_type() else {
        return Ok(());
    };
    let (lo, hi) = int_range(bits, signed);
    if (lo..=hi).contains(&x) {
        return Ok(());
    }
    let int = DType::Int { bits, signed }.name();
    err(
        ErrorKind::Overflow,
        format!(
            "Python integer {x} does not fit {int}, the {} policy's Python-int type (its \
             library raises OverflowError whatever the other operand); use an array of the \
             dtype wanted",
            policy.name
        ),
    )
}

/// A scalar as a one-element array of dtype `to` (the policy's result dtype): an int that
/// does not fit an integer `to` is an `overflow` error, or wraps under `PythonInt::Wrap` and
/// `PythonInt::Cast`.
pub(super) fn materialise(s: Scalar, to: DType, python_int: PythonInt) -> Result<Array, OpError> {
    let one = |bits: [u64; 2]| Array::from_bits(to, vec![], &[bits]).expect("fits");
    let real = |v: Value| -> Result<u64, OpError> {
        match to {
            DType::Bool | DType::Int { .. } => {
                let Value::Finite { neg, mant, .. } = v else {
                    unreachable!("integer scalars")
                };
                let (lo, hi) = match to {
                    DType::Int { bits, signed } => int_range(bits, signed),
                    _ => (0, 1),
                };
                let x = if neg { -(mant as i128) } else { mant as i128 };
                if python_int != PythonInt::Fit && !matches!(to, DType::Bool) {
                    let w = to.pattern_bits();
                    return Ok((x as u64) & if w >= 64 { u64::MAX } else { (1 << w) - 1 });
                }
                if x < lo || x > hi {
                    return err(
                        ErrorKind::Overflow,
                        format!(
                            "Python integer {x} out of bounds for {} (NumPy 2 raises OverflowError); \
                             use an array of a wider dtype",
                            to.name()
                        ),
                    );
                }
                let w = to.pattern_bits();
                Ok((x as u64) & if w >= 64 { u64::MAX } else { (1 << w) - 1 })
            }
            _ => Ok(to.float_format().expect("float").encode(v)),
        }
    };
    let int_value = |x: i128| Value::Finite {
        neg: x < 0,
        mant: x.unsigned_abs(),
        exp: 0,
    };
    let (re, im) = match s {
        Scalar::Bool(b) => (int_value(b as i128), None),
        Scalar::Int(x) => (int_value(x), None),
        Scalar::Float(x) => (Value::from_f64(x), None),
        Scalar::Complex(r, i) => (Value::from_f64(r), Some(Value::from_f64(i))),
    };
    if to.is_complex() {
        let f = to.float_format().expect("complex parts");
        let im = im.unwrap_or(Value::zero(false));
        return Ok(one([f.encode(re), f.encode(im)]));
    }
    if im.is_some() {
        return err(
            ErrorKind::Unsupported,
            format!("a complex scalar cannot combine into {}", to.name()),
        );
    }
    if matches!(s, Scalar::Float(_)) && !to.is_float() {
        return err(
            ErrorKind::Unsupported,
            format!("a float scalar cannot combine into {}", to.name()),
        );
    }
    Ok(one([real(re)?, 0]))
}

/// Runs `f(start, chunk)` over the output storage in `CHUNK`s, on the rayon pool for large
/// arrays. Each call gets its own disjoint slice of the storage.
pub(super) fn for_chunks(out: &mut Data, f: impl Fn(usize, OutChunk) + Sync) {
    pub(super) fn split<T: Send>(
        v: &mut [T],
        wrap: fn(&mut [T]) -> OutChunk,
        f: &(impl Fn(usize, OutChunk) + Sync),
    ) {
        if v.len() >= PARALLEL_MIN && rayon::current_num_threads() > 1 {
            crate::kernels::parallel::for_each_chunk(v, CHUNK, |start, s| f(start, wrap(s)));
        } else {
            for (c, s) in v.chunks_mut(CHUNK).enumerate() {
                f(c * CHUNK, wrap(s));
            }
        }
    }
    match out {
        Data::U8(v) => split(v, |s| OutChunk::U8(s), &f),
        Data::U16(v) => split(v, |s| OutChunk::U16(s), &f),
        Data::U32(v) => split(v, |s| OutChunk::U32(s), &f),
        Data::U64(v) => split(v, |s| OutChunk::U64(s), &f),
        Data::C64(v) => split(v, |s| OutChunk::C64(s), &f),
        Data::C128(v) => split(v, |s| OutChunk::C128(s), &f),
    }
}

// ---------------------------------------------------------------------------------------------
// Binary ops

/// An operand ready to load: its array (full length, or one element to splat).
pub(super) struct Input<'a> {
    pub(super) array: std::borrow::Cow<'a, Array>,
    pub(super) splat: bool,
}

/// How scalar operands (Python numbers, zero-dim arrays) reach the computation dtype.
#[derive(Clone, Copy, Debug)]
pub(super) struct Conversion {
    python_int: PythonInt,
    /// Through float32 first (PyTorch's `c10::Half(float)`, `c10::BFloat16(float)`;
    /// TensorFlow's float32 tensor of a Python number): a Python float or a zero-dim float64
    /// into float16/bfloat16 is rounded twice.
    via_float32: bool,
    /// Under `PythonInt::Cast`, the integer join a Python int is cast to before it reaches a
    /// computation dtype the op rule chose (TensorFlow: `uint8 / -129` divides by 127.0).
    int_join: Option<DType>,
}

impl Conversion {
    pub(super) fn of(policy: &Generated, compute: DType) -> Conversion {
        Conversion {
            python_int: policy.semantics.python_int,
            via_float32: policy.semantics.reduced_float_scalars != ScalarPrecision::Result
                && matches!(compute, DType::FLOAT16 | DType::BFLOAT16),
            int_join: None,
        }
    }

    /// The same, with `join` the operands' join where an op rule made the computation dtype
    /// something else (`true_divide` of integers): a Python int is cast to an integer join
    /// first under `PythonInt::Cast`.
    fn through(self, join: DType) -> Conversion {
        let cast = self.python_int == PythonInt::Cast && matches!(join, DType::Int { .. });
        Conversion {
            int_join: cast.then_some(join),
            ..self
        }
    }

    /// A scalar operand as a one-element array of `compute`.
    fn scalar(self, s: Scalar, compute: DType) -> Result<Array, OpError> {
        if let (Scalar::Int(_), Some(join)) = (s, self.int_join) {
            return Ok(super::astype(
                &materialise(s, join, self.python_int)?,
                compute,
            ));
        }
        let s = match s {
            Scalar::Float(v) if self.via_float32 => Scalar::Float(v as f32 as f64),
            Scalar::Int(v) if self.via_float32 => Scalar::Float(v as f32 as f64),
            s => s,
        };
        materialise(s, compute, self.python_int)
    }

    /// A zero-dim array operand, rounded through float32 where it must be (else as it is:
    /// the loaders convert it once).
    fn zero_dim(self, a: &Array, compute: DType) -> Option<Array> {
        (self.via_float32 && a.shape.is_empty() && a.dtype != compute && !a.dtype.is_complex())
            .then(|| super::astype(&super::astype(a, DType::Float32), compute))
    }
}

/// Every Python int operand is one the policy's library reads: `python_int_fits`, and under
/// `PythonInt::Wrap` an int from 2^63 on (a uint64 to PyTorch) does not combine with a bool
/// array or with another Python bool, int or complex ("Promotion for uint16, uint32, uint64
/// types is not supported": PyTorch promotes uint64 only with a float, and a dimensioned or
/// zero-dim integer, float or complex array outranks the Python number).
fn python_ints_fit(policy: &Generated, args: &[&Arg]) -> Result<(), OpError> {
    for (k, arg) in args.iter().enumerate() {
        let Arg::Scalar(Scalar::Int(x)) = arg else {
            continue;
        };
        python_int_fits(policy, *x)?;
        let clash = args.iter().enumerate().find_map(|(j, o)| match o {
            _ if j == k => None,
            Arg::Array(a) if a.dtype == DType::Bool => Some("a bool array"),
            Arg::Scalar(Scalar::Bool(_)) => Some("a Python bool"),
            Arg::Scalar(Scalar::Int(y)) if *y < 1 << 63 => Some("a Python int (int64)"),
            Arg::Scalar(Scalar::Complex(..)) => Some("a Python complex"),
            _ => None,
        });
        if let (PythonInt::Wrap, true, Some(other)) =
            (policy.semantics.python_int, *x >= 1 << 63, clash)
        {
            return err(
                ErrorKind::Promotion,
                format!(
                    "Python integer {x} is a uint64 to the {} policy's library, which does not \
                     promote uint64 with {other}; use an int64 array",
                    policy.name
                ),
            );
        }
    }
    Ok(())
}

pub(super) fn prepare<'a>(
    arg: &'a Arg,
    compute: DType,
    shape: &[usize],
    conv: Conversion,
) -> Result<Input<'a>, OpError> {
    let array = match arg {
        Arg::Array(a) => match conv.zero_dim(a, compute) {
            Some(r) => std::borrow::Cow::Owned(r),
            None => std::borrow::Cow::Borrowed(a),
        },
        Arg::Scalar(s) => std::borrow::Cow::Owned(conv.scalar(*s, compute)?),
    };
    if array.len() == 1 {
        return Ok(Input { array, splat: true });
    }
    if array.shape != shape {
        let expanded = expand(&array, shape);
        return Ok(Input {
            array: std::borrow::Cow::Owned(expanded),
            splat: false,
        });
    }
    Ok(Input {
        array,
        splat: false,
    })
}

/// `Err(unsupported)` when an operand is of a kind op `name` refuses in `policy`, whatever the
/// computation dtype (its `[ops.X] operand_kinds`: PyTorch's `int8 - True` raises though the
/// result would be int8). A Python number is of its own kind; a Python int is an integer.
pub(super) fn accepts_operands(
    policy: &Generated,
    op: OpId,
    operands: &[Operand],
) -> Result<(), OpError> {
    let Some(kinds) = policy.operand_kinds(op) else {
        return Ok(());
    };
    let name = op.name();
    for o in operands {
        let (ok, what) = match *o {
            Operand::Array(d) | Operand::ZeroDim(d) => (kinds.accepts(d.kind()), d.name()),
            Operand::Scalar(ScalarKind::Bool) => (kinds.bool, "Python bool"),
            Operand::Scalar(ScalarKind::Int) => (kinds.signed || kinds.unsigned, "Python int"),
            Operand::Scalar(ScalarKind::Float) => (kinds.float, "Python float"),
            Operand::Scalar(ScalarKind::Complex) => (kinds.complex, "Python complex"),
        };
        if !ok {
            return err(
                ErrorKind::Unsupported,
                format!(
                    "{name} is not defined with an operand of {what} in the {} policy's library, \
                     whatever the result dtype; its operands are {}",
                    policy.name,
                    kinds.describe()
                ),
            );
        }
    }
    Ok(())
}

/// `Err(unsupported)` unless op `name` is defined on computation dtype `c` in `policy` (its
/// `[ops.X] kinds`, else the catalogue's: `numeric::op`); the message says what to do instead.
/// Every op's kernel asks here, binary, unary and n-ary alike.
pub(super) fn accepts(policy: &Generated, op: OpId, c: DType) -> Result<(), OpError> {
    const BITWISE: [OpId; 3] = [
        OpId::of("bitwise_and"),
        OpId::of("bitwise_or"),
        OpId::of("bitwise_xor"),
    ];
    const INTEGRAL: [OpId; 3] = [
        OpId::of("floor_divide"),
        OpId::of("remainder"),
        OpId::of("power"),
    ];
    let info = op.info();
    let kinds = policy.kinds(op);
    if kinds.accepts(c.kind()) {
        return Ok(());
    }
    let (name, d) = (op.name(), c.name());
    let why = if kinds != info.kinds {
        format!(
            "{name} is not defined for {d} in the {} policy's library; it takes {}",
            policy.name,
            kinds.describe()
        )
    } else if BITWISE.contains(&op) {
        format!("{name} is not defined for {d}; bitwise ops take integers and bool")
    } else if op == OpId::of("subtract") && c == DType::Bool {
        "subtract is not defined for bool (NumPy: use bitwise_xor or logical_xor)".into()
    } else if op == OpId::of("negative") && c == DType::Bool {
        "negative is not defined for bool (NumPy: use logical_not)".into()
    } else if INTEGRAL.contains(&op) && c == DType::Bool {
        format!("{name} is not defined for bool; cast to an integer dtype first")
    } else if op == OpId::of("true_divide") && matches!(c, DType::Bool | DType::Int { .. }) {
        format!(
            "true_divide of {d} needs a float result and the policy has no [ops.true_divide] rule"
        )
    } else if INTEGRAL.contains(&op) && c.is_complex() {
        format!("{name} is not implemented for {d} in the reference kernels")
    } else {
        format!(
            "{name} is not defined for {d}; it takes {}",
            kinds.describe()
        )
    };
    err(ErrorKind::Unsupported, why)
}

/// The result dtype, shape and prepared operands of `op(a, b)`.
pub(super) fn plan<'a>(
    policy: &Generated,
    op: Op,
    a: &'a Arg,
    b: &'a Arg,
) -> Result<Prepared<'a>, OpError> {
    // A Python int is read before anything else (PyTorch wraps it as a tensor, JAX parses it).
    python_ints_fit(policy, &[a, b])?;
    let (oa, ob) = (a.operand(), b.operand());
    accepts_operands(policy, op.id(), &[oa, ob])?;
    let compute = if op == Op::TrueDivide {
        policy.true_divide_type(oa, ob)
    } else {
        policy.op_type(op.id(), oa, ob)
    }
    .map_err(promotion)?;
    accepts(policy, op.id(), compute)?;
    let shape = broadcast(a.shape(), b.shape())?;
    let mut conv = Conversion::of(policy, compute);
    if op == Op::TrueDivide {
        conv = conv.through(policy.result_type(oa, ob).map_err(promotion)?);
    }
    let (x, y) = (
        prepare(a, compute, &shape, conv)?,
        prepare(b, compute, &shape, conv)?,
    );
    // The libraries check divisors and exponents as they compute: an empty result divides by
    // nothing (`torch.remainder(int8[0], 0)` and `np.power(int8[0], -1)` are empty).
    let computes = shape.iter().product::<usize>() > 0;
    if matches!(op, Op::FloorDivide | Op::Remainder)
        && matches!(compute, DType::Int { .. })
        && policy.semantics.integer_division_by_zero == DivisionByZero::Raise
        && computes
    {
        let t = int_loader(y.array.dtype, compute);
        let n = y.array.len();
        let mut buf = vec![0i64; n];
        load_into(&t, &y.array.data, 0, false, &mut buf, int_lane);
        if buf.contains(&0) {
            return err(
                ErrorKind::ZeroDivision,
                format!(
                    "integer {} by zero (the {} policy's library raises ZeroDivisionError)",
                    op.name(),
                    policy.name
                ),
            );
        }
    }
    if op == Op::Power && matches!(compute, DType::Int { signed: true, .. }) && computes {
        let t = int_loader(y.array.dtype, compute);
        let n = y.array.len();
        let mut buf = vec![0i64; n];
        load_into(&t, &y.array.data, 0, false, &mut buf, int_lane);
        if buf.iter().any(|&e| e < 0) {
            return err(
                ErrorKind::Input,
                "integers to negative integer powers are not allowed (NumPy raises ValueError)",
            );
        }
    }
    let out_dtype = if op.is_comparison() {
        DType::Bool
    } else {
        compute
    };
    Ok((out_dtype, shape, x, y, compute))
}

pub(super) type Prepared<'a> = (DType, Vec<usize>, Input<'a>, Input<'a>, DType);

/// `true_divide(s, t)` of a Python number and an array as the policy's library computes it:
/// under `ScalarOverArray::ReciprocalTimes` (PyTorch's `s / t`) the operands of
/// `multiply(1 / t, s)`, the reciprocal computed here; `None` where the op is as written. The
/// product's dtype and errors are then the op's: `2**63 / bool` is float32, where the quotient
/// would have no dtype (bool with uint64).
pub(super) fn rewrite(
    policy: &Generated,
    op: Op,
    a: &Arg,
    b: &Arg,
) -> Result<Option<[Arg; 2]>, OpError> {
    let (Op::TrueDivide, Arg::Scalar(s), Arg::Array(_), ScalarOverArray::ReciprocalTimes) =
        (op, a, b, policy.semantics.scalar_over_array)
    else {
        return Ok(None);
    };
    // The op as written takes these operands before it becomes two others.
    accepts_operands(policy, op.id(), &[a.operand(), b.operand()])?;
    let one = Arg::Scalar(Scalar::Int(1));
    let (to, shape, x, y, compute) = plan(policy, Op::TrueDivide, &one, b)?;
    let mut r = Array::zeroed(to, shape);
    compute_binary(policy, Op::TrueDivide, compute, (&one, &x), (b, &y), &mut r);
    Ok(Some([Arg::Array(r), Arg::Scalar(*s)]))
}

/// An error of a rewritten op (see [`rewrite`]) that says what was computed.
pub(super) fn as_rewritten(policy: &Generated) -> impl Fn(OpError) -> OpError + '_ {
    move |e| OpError {
        kind: e.kind,
        message: format!(
            "the {} policy's library computes `s / t` as `t.reciprocal() * s`: {}",
            policy.name, e.message
        ),
    }
}

/// An array as the policy's library reads it: converted to its `[canonical]` dtype when it
/// has one (JAX without x64 wraps an int64 input to int32 and rounds a float64 one to float32
/// before it promotes anything), else borrowed.
pub(super) fn canonical_array<'a>(policy: &Generated, a: &'a Array) -> std::borrow::Cow<'a, Array> {
    match policy.canonical_dtype(a.dtype) {
        d if d == a.dtype => std::borrow::Cow::Borrowed(a),
        d => std::borrow::Cow::Owned(super::astype(a, d)),
    }
}

/// [`canonical_array`] of an operand; a Python scalar is read as it is.
pub(super) fn canonical_arg<'a>(policy: &Generated, a: &'a Arg) -> std::borrow::Cow<'a, Arg> {
    match a {
        Arg::Array(x) => match canonical_array(policy, x) {
            std::borrow::Cow::Borrowed(_) => std::borrow::Cow::Borrowed(a),
            std::borrow::Cow::Owned(c) => std::borrow::Cow::Owned(Arg::Array(c)),
        },
        Arg::Scalar(_) => std::borrow::Cow::Borrowed(a),
    }
}

/// `op(a, b)` under `policy`: result dtype from the generated table, NumPy broadcasting.
pub fn binary(policy: &Generated, op: Op, a: &Arg, b: &Arg) -> Result<Array, OpError> {
    let (a, b) = (canonical_arg(policy, a), canonical_arg(policy, b));
    let (a, b) = (a.as_ref(), b.as_ref());
    if let Some([r, s]) = rewrite(policy, op, a, b)? {
        return binary(policy, Op::Multiply, &r, &s).map_err(as_rewritten(policy));
    }
    let (out_dtype, shape, x, y, compute) = plan(policy, op, a, b)?;
    let mut out = Array::zeroed(out_dtype, shape);
    compute_binary(policy, op, compute, (a, &x), (b, &y), &mut out);
    Ok(out)
}

/// Runs a planned op into `out` with the policy's conventions: a scalar second operand of a
/// 16-bit float op at float32 precision (`ScalarPrecision::Float32`), the sign of a zero
/// float remainder (`ZeroSign::Dividend`), float floor division as the floor of the rounded
/// quotient (`FloatFloorDivide::FloorOfQuotient`).
pub(super) fn compute_binary(
    policy: &Generated,
    op: Op,
    compute: DType,
    (a, x): (&Arg, &Input),
    (b, y): (&Arg, &Input),
    out: &mut Array,
) {
    // The float dtypes every library computes in (the conventions below are theirs).
    let common_float = matches!(
        compute,
        DType::FLOAT16 | DType::BFLOAT16 | DType::Float32 | DType::Float64
    );
    // `floor(a / b)`: the quotient as true_divide rounds it, then its floor in place (exact).
    let floor_of_quotient = op == Op::FloorDivide
        && common_float
        && out.dtype == compute
        && policy.semantics.float_floor_divide == FloatFloorDivide::FloorOfQuotient;
    let op = if floor_of_quotient {
        Op::TrueDivide
    } else {
        op
    };
    // `2.5 * t` is `t * 2.5` to Python: a Python scalar first multiplies as a second one.
    let swapped = op == Op::Multiply && matches!(a, Arg::Scalar(_));
    let scalar = if swapped {
        opmath_scalar(policy, op, compute, a)
    } else {
        opmath_scalar(policy, op, compute, b)
    };
    let alpha = matches!(op, Op::Add | Op::Subtract)
        && compute.is_complex()
        && policy.semantics.complex_add == ComplexAdd::Alpha;
    match scalar {
        Some(s) if swapped => run_opmath(op, compute, y, s, &mut out.data),
        Some(s) => run_opmath(op, compute, x, s, &mut out.data),
        // `2 + t` is `t + 2` to Python: the scalar is the one multiplied by α.
        None if alpha && op == Op::Add && matches!(a, Arg::Scalar(_)) => out
            .data
            .assign(complex_alpha(op, compute, y, x, out.shape.clone()).data),
        None if alpha => out
            .data
            .assign(complex_alpha(op, compute, x, y, out.shape.clone()).data),
        None => run_binary(op, compute, x, y, &mut out.data),
    }
    if op == Op::Remainder
        && policy.semantics.remainder_zero_sign == ZeroSign::Dividend
        && common_float
    {
        zero_takes_dividends_sign(a, x, compute, out);
    }
    if floor_of_quotient {
        floor_in_place(compute, &mut out.data);
    }
}

/// Every element of a float16, bfloat16, float32 or float64 array replaced by its floor, which
/// is a value of the same format (no rounding); NaN and ±inf stay.
fn floor_in_place(d: DType, data: &mut Data) {
    use crate::kernels::cast::{f16_to_f32, f32_to_f16};
    match data {
        Data::U64(v) => v
            .iter_mut()
            .for_each(|b| *b = f64::from_bits(*b).floor().to_bits()),
        Data::U32(v) => v
            .iter_mut()
            .for_each(|b| *b = f32::from_bits(*b).floor().to_bits()),
        Data::U16(v) if d == DType::BFLOAT16 => v
            .iter_mut()
            .for_each(|b| *b = (f32::from_bits((*b as u32) << 16).floor().to_bits() >> 16) as u16),
        Data::U16(v) => v
            .iter_mut()
            .for_each(|b| *b = f32_to_f16(f32::from_bits(f16_to_f32(*b)).floor().to_bits())),
        _ => unreachable!("the storage of float16, bfloat16, float32 or float64"),
    }
}

/// The float32 value of `b` when it enters `op` at float32 precision: PyTorch computes
/// `multiply`, `true_divide` and `floor_divide` of float16/bfloat16 with a second operand that
/// is a scalar (a Python number or a zero-dim array) in float32, the scalar rounded to
/// float32 from its own value.
fn opmath_scalar(policy: &Generated, op: Op, compute: DType, b: &Arg) -> Option<f32> {
    if policy.semantics.reduced_float_scalars != ScalarPrecision::Float32
        || !matches!(op, Op::Multiply | Op::TrueDivide | Op::FloorDivide)
        || !matches!(compute, DType::FLOAT16 | DType::BFLOAT16)
    {
        return None;
    }
    match b {
        Arg::Scalar(Scalar::Bool(v)) => Some(*v as u8 as f32),
        Arg::Scalar(Scalar::Int(v)) => Some(*v as f32),
        Arg::Scalar(Scalar::Float(v)) => Some(*v as f32),
        Arg::Scalar(Scalar::Complex(..)) => None,
        Arg::Array(arr) if arr.shape.is_empty() && !arr.dtype.is_complex() => {
            let Data::U32(v) = super::astype(arr, DType::Float32).data else {
                unreachable!("float32 storage")
            };
            Some(f32::from_bits(v[0]))
        }
        Arg::Array(_) => None,
    }
}

/// A zero result of a float `remainder` takes the dividend's sign (C's `fmod`), not the
/// divisor's.
fn zero_takes_dividends_sign(a: &Arg, x: &Input, compute: DType, out: &mut Array) {
    let w = compute.pattern_bits();
    let sign = 1u64 << (w - 1);
    let dividend = match a {
        Arg::Scalar(_) => x.array.clone().into_owned(),
        Arg::Array(_) => super::astype(&x.array, compute),
    };
    let signs: Vec<u64> = dividend.bits().iter().map(|b| b[0] & sign).collect();
    let bits: Vec<[u64; 2]> = out
        .bits()
        .into_iter()
        .enumerate()
        .map(|(i, [r, _])| {
            let s = signs[if signs.len() == 1 { 0 } else { i }];
            [if r & !sign == 0 { s } else { r }, 0]
        })
        .collect();
    let r = Array::from_bits(out.dtype, out.shape.clone(), &bits).expect("same shape");
    out.data.assign(r.data);
}

/// `binary` into a preallocated output of the result's dtype and shape.
pub fn binary_into(
    policy: &Generated,
    op: Op,
    a: &Arg,
    b: &Arg,
    out: &mut Array,
) -> Result<(), OpError> {
    let (a, b) = (canonical_arg(policy, a), canonical_arg(policy, b));
    let (a, b) = (a.as_ref(), b.as_ref());
    if let Some([r, s]) = rewrite(policy, op, a, b)? {
        return binary_into(policy, Op::Multiply, &r, &s, out).map_err(as_rewritten(policy));
    }
    let (out_dtype, shape, x, y, compute) = plan(policy, op, a, b)?;
    check_out(out, out_dtype, &shape)?;
    compute_binary(policy, op, compute, (a, &x), (b, &y), out);
    Ok(())
}

/// `Err` unless a caller's output array has the result's dtype and shape.
pub(super) fn check_out(out: &Array, dtype: DType, shape: &[usize]) -> Result<(), OpError> {
    if out.dtype == dtype && out.shape == shape {
        return Ok(());
    }
    err(
        ErrorKind::Input,
        format!(
            "the output is {} {:?}, the result {} {shape:?}",
            out.dtype.name(),
            out.shape,
            dtype.name()
        ),
    )
}

/// An operand of an n-ary op converted once to its computation dtype: an array by `astype`
/// (a zero-dim one through float32 where the policy's library rounds it so), a Python scalar by
/// the policy's scalar rules, except that under `PythonInt::Wrap` an int must be one the
/// integer result can take (`int_fits_nary`).
fn in_dtype(policy: &Generated, a: &Arg, compute: DType, strict: bool) -> Result<Array, OpError> {
    let conv = Conversion::of(policy, compute);
    match a {
        Arg::Array(arr) => Ok(conv
            .zero_dim(arr, compute)
            .unwrap_or_else(|| super::astype(arr, compute))),
        Arg::Scalar(s) => {
            if let (Scalar::Int(v), PythonInt::Wrap) = (s, policy.semantics.python_int) {
                int_fits_nary(policy, *v, compute, strict)?;
            }
            conv.scalar(*s, compute)
        }
    }
}

/// A Python int entering an n-ary op under `PythonInt::Wrap` (PyTorch): arithmetic wraps it,
/// but `where` converts it checked (a negative value may wrap into an unsigned dtype by two's
/// complement: `where(c, uint8, -1)` is 255, `where(c, int8, 300)` raises) and, `strict`,
/// `clamp` with `ClipBounds::Checked` wants it in the dtype's range (`clamp(uint8, -1)` raises).
fn int_fits_nary(policy: &Generated, v: i128, compute: DType, strict: bool) -> Result<(), OpError> {
    let DType::Int { bits, signed } = compute else {
        return Ok(());
    };
    let (lo, hi) = int_range(bits, signed);
    let fits = (lo..=hi).contains(&v) || (!signed && !strict && v < 0 && -v <= hi);
    if fits {
        return Ok(());
    }
    err(
        ErrorKind::Overflow,
        format!(
            "Python integer {v} does not fit {} (the {} policy's library raises for a scalar of \
             clamp or where it cannot convert); use an array or a value in range",
            compute.name(),
            policy.name
        ),
    )
}

/// `clip(x, lo, hi)` under `policy` (`np.clip`, `jnp.clip`, `torch.clamp`,
/// `tf.clip_by_value`): the result dtype is the n-ary join of all three operands (not a chain
/// of binary joins), every operand is converted to it once, then `minimum(maximum(x, lo), hi)`
/// with NumPy's NaN propagation; the three shapes broadcast together. Under
/// `ClipComposition::Pairwise` it is `maximum(minimum(x, hi), lo)`, each a binary op on the
/// operands as given, and the result keeps `x`'s shape.
pub fn clip(policy: &Generated, x: &Arg, lo: &Arg, hi: &Arg) -> Result<Array, OpError> {
    let (x, lo, hi) = (
        canonical_arg(policy, x),
        canonical_arg(policy, lo),
        canonical_arg(policy, hi),
    );
    let (x, lo, hi) = (x.as_ref(), lo.as_ref(), hi.as_ref());
    if policy.semantics.clip_mixed_bounds == ClipMixedBounds::Unsupported {
        let dimensioned = |a: &Arg| matches!(a, Arg::Array(arr) if !arr.shape.is_empty());
        let number = |a: &Arg| matches!(a, Arg::Scalar(_));
        if dimensioned(lo) && number(hi) || number(lo) && dimensioned(hi) {
            return err(
                ErrorKind::Unsupported,
                format!(
                    "clip with one bound a Python number and the other an array: the {} \
                     policy's library takes both bounds as numbers or both as arrays (PyTorch's \
                     clamp raises TypeError); pass both the same way",
                    policy.name
                ),
            );
        }
    }
    python_ints_fit(policy, &[x, lo, hi])?;
    accepts_operands(
        policy,
        OpId::CLIP,
        &[x.operand(), lo.operand(), hi.operand()],
    )?;
    let compute = policy
        .nary_type(&[x.operand(), lo.operand(), hi.operand()])
        .map_err(promotion)?;
    accepts(policy, OpId::CLIP, compute)?;
    let strict = policy.semantics.clip_bounds == ClipBounds::Checked;
    let cast = |a: &Arg| in_dtype(policy, a, compute, strict).map(Arg::Array);
    if strict {
        for bound in [lo, hi] {
            cast(bound)?; // a Python int out of the dtype's range first
            checked_scalar(bound, compute, "clamp")?;
        }
    }
    if policy.semantics.clip_composition == ClipComposition::Pairwise {
        let shape = broadcast(&broadcast(x.shape(), lo.shape())?, hi.shape())?;
        if shape != x.shape() {
            return err(
                ErrorKind::Input,
                format!(
                    "bounds of shapes {:?} and {:?} broadcast the clipped operand's {:?} to \
                     {shape:?}; the {} policy's library keeps its shape (TensorFlow raises \
                     ValueError): broadcast the operand first",
                    lo.shape(),
                    hi.shape(),
                    x.shape(),
                    policy.name
                ),
            );
        }
        let below = binary(policy, Op::Minimum, x, hi)?;
        return binary(policy, Op::Maximum, &Arg::Array(below), lo);
    }
    let (x, lo, hi) = (cast(x)?, cast(lo)?, cast(hi)?);
    let floor = binary(policy, Op::Maximum, &x, &lo)?;
    binary(policy, Op::Minimum, &Arg::Array(floor), &hi)
}

/// A Python number that `op` converts checked into `compute` (`ClipBounds::Checked`'s clip
/// bounds, `WhereScalars::Checked`'s where values): greater in magnitude than the dtype's
/// largest finite value, it is an `overflow` error.
fn checked_scalar(value: &Arg, compute: DType, op: &str) -> Result<(), OpError> {
    let Arg::Scalar(s) = value else {
        return Ok(());
    };
    if !past_finite_range(*s, compute) {
        return Ok(());
    }
    err(
        ErrorKind::Overflow,
        format!(
            "the Python number {} is past {}'s range (PyTorch's {op} raises: \"value cannot be \
             converted without overflow\"); pass a value the result dtype holds",
            shown(*s),
            compute.name()
        ),
    )
}

/// Whether a Python number has a finite value (or part) greater in magnitude than the largest
/// finite value of the float or complex dtype `compute` (never for other dtypes, nor for ±inf
/// and NaN, which every float format holds or represents).
fn past_finite_range(s: Scalar, compute: DType) -> bool {
    let Some(format) = compute.float_format() else {
        return false;
    };
    let max = format.max_finite().to_f64();
    let past = |v: f64| v.is_finite() && v.abs() > max;
    match s {
        Scalar::Bool(_) => false,
        Scalar::Int(v) => (v as f64).abs() > max,
        Scalar::Float(v) => past(v),
        Scalar::Complex(re, im) => past(re) || past(im),
    }
}

/// A Python number as an error message shows it.
fn shown(s: Scalar) -> String {
    match s {
        Scalar::Bool(b) => b.to_string(),
        Scalar::Int(v) => v.to_string(),
        Scalar::Float(v) => format!("{v:e}"),
        Scalar::Complex(re, im) => format!("({re:e}, {im:e})"),
    }
}

/// Whether a Python scalar is true as a condition (nonzero; NaN is true, as in NumPy).
fn truthy(s: Scalar) -> bool {
    match s {
        Scalar::Bool(b) => b,
        Scalar::Int(x) => x != 0,
        Scalar::Float(x) => x != 0.0,
        Scalar::Complex(r, i) => r != 0.0 || i != 0.0,
    }
}

/// `where(cond, x, y)` under `policy` (`np.where`, `jnp.where`, `torch.where`): the result
/// dtype is the join of the two values (their n-ary join, categories included; the condition
/// takes no part), each value converted to it once; an element is `x`'s where the condition
/// is nonzero (NaN counts as true, −0.0 as false), `y`'s elsewhere; the three shapes broadcast
/// together.
pub fn select(policy: &Generated, cond: &Arg, x: &Arg, y: &Arg) -> Result<Array, OpError> {
    let (cond, x, y) = (
        canonical_arg(policy, cond),
        canonical_arg(policy, x),
        canonical_arg(policy, y),
    );
    let (cond, x, y) = (cond.as_ref(), x.as_ref(), y.as_ref());
    python_ints_fit(policy, &[x, y])?;
    accepts_operands(policy, OpId::WHERE, &[x.operand(), y.operand()])?;
    let compute = policy
        .nary_type(&[x.operand(), y.operand()])
        .map_err(promotion)?;
    accepts(policy, OpId::WHERE, compute)?;
    // A float16 or bfloat16 result rounds the number (to ±inf) in PyTorch's where.
    let wide = matches!(
        compute,
        DType::Float32 | DType::Float64 | DType::Complex64 | DType::Complex128
    );
    if policy.semantics.where_scalars == WhereScalars::Checked && wide {
        checked_scalar(x, compute, "where")?;
        checked_scalar(y, compute, "where")?;
    }
    let shape = broadcast(&broadcast(cond.shape(), x.shape())?, y.shape())?;
    let cond = match cond {
        Arg::Array(a) => super::astype(a, DType::Bool),
        Arg::Scalar(s) => {
            Array::from_bits(DType::Bool, vec![], &[[truthy(*s) as u64, 0]]).expect("one element")
        }
    };
    let (x, y) = (
        in_dtype(policy, x, compute, false)?,
        in_dtype(policy, y, compute, false)?,
    );
    let full = |a: Array| {
        if a.shape == shape {
            a
        } else {
            expand(&a, &shape)
        }
    };
    let (c, x, y) = (full(cond), full(x), full(y));
    let Data::U8(c) = &c.data else {
        unreachable!("bool is stored in bytes")
    };
    fn pick<T: Copy>(c: &[u8], x: &[T], y: &[T]) -> Vec<T> {
        c.iter()
            .zip(x.iter().zip(y))
            .map(|(&c, (&x, &y))| if c != 0 { x } else { y })
            .collect()
    }
    let data = match (&x.data, &y.data) {
        (Data::U8(x), Data::U8(y)) => Data::U8(pick(c, x, y).into()),
        (Data::U16(x), Data::U16(y)) => Data::U16(pick(c, x, y).into()),
        (Data::U32(x), Data::U32(y)) => Data::U32(pick(c, x, y).into()),
        (Data::U64(x), Data::U64(y)) => Data::U64(pick(c, x, y).into()),
        (Data::C64(x), Data::C64(y)) => Data::C64(pick(c, x, y).into()),
        (Data::C128(x), Data::C128(y)) => Data::C128(pick(c, x, y).into()),
        _ => unreachable!("both values are in the result dtype"),
    };
    Ok(Array {
        dtype: compute,
        shape,
        data,
    })
}
