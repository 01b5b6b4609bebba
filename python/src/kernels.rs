//! The reference kernels on NumPy arrays, without copies: an operand's buffer is read in place
//! (a [`Data::borrowed`] view), the result is allocated as a NumPy array (or is the caller's
//! `out=`) and the kernel writes straight into it. Only conversion lives here; the one library
//! call is `typejoin::ops::apply_with`.

use crate::gil;
use crate::placed;
use crate::vectorcall;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use numpy::npyffi::{self, NPY_ARRAY_ALIGNED, NPY_ARRAY_C_CONTIGUOUS, NPY_ARRAY_WRITEABLE};
use numpy::{PyArrayDescr, PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyCFunction, PyComplex, PyDict, PyFloat, PyInt, PyString, PyTuple};

use typejoin::{
    Array, DType, Data, Generated, Operand, Shape,
    op::OpId,
    ops::{self, Arg, ArrayPlan, Elementwise, ErrorKind, OpError, Scalar},
};

use crate::KernelError;

/// Below this many result elements a kernel runs with the GIL held: releasing and taking it
/// back costs more than the loop (NumPy's ufuncs keep it for small loops too).
const DETACH_ELEMENTS: usize = 1 << 14;

/// Below this many elements a pass of one cheap step per element runs with the GIL held: a
/// fast lane's elementwise pass (`+ − × ÷`, the bitwise ops, `maximum`/`minimum`, the
/// comparisons, of integers, float32 or float64) and `negative` and `absolute` of an integer,
/// float32 or float64 array in the one-array lane. Releasing the GIL and taking it back cost
/// 54 ns (int8 `absolute` into `out=`: 363 ns at 16,000 elements with the GIL held, 417 ns
/// at 16,384 released); int8 `absolute` at 1e5 into a new result ran 0.99–1.00 of NumPy's
/// in the benchmark released, 1.02–1.03 held. The slowest of these passes just under this size
/// measured 38 µs (float64 division, 131,071 elements on two threads; `negative` of float64
/// 14 µs), under a hundredth of CPython's 5 ms switch interval. Not `astype`, whose slowest
/// conversions take milliseconds there (int64 → float16 5.7 ms, float64 → int64 1.75 ms), nor
/// the 16- and 8-bit floats (`negative` of float16 123 µs).
const DETACH_PASS_ELEMENTS: usize = 1 << 17;

/// Whether the one-array lane runs `op` on `t` as a cheap pass ([`DETACH_PASS_ELEMENTS`]).
fn cheap_pass(op: OpId, t: DType) -> bool {
    const NEGATIVE: OpId = OpId::of("negative");
    const ABSOLUTE: OpId = OpId::of("absolute");
    (op == NEGATIVE || op == ABSOLUTE)
        && matches!(t, DType::Int { .. } | DType::Float32 | DType::Float64)
}

/// Storage for a result computed aside (for an `out=` of another dtype, or one sharing memory
/// with an operand): one buffer per thread, reused call after call, so such a call neither
/// allocates nor zeroes nor faults in pages (a fresh zeroed temporary took a third of
/// `add(int8, int8, out=int16)`'s time at 1e5 elements). Kept while at most [`SCRATCH_KEPT`]
/// bytes (a result of 1e6 float64s: with 4 MiB, `subtract(float64, float64, out=float32)` at
/// 1e6 faulted its temporary's pages in every call, 0.90 of NumPy); a larger one is freed
/// after its call.
struct Scratch(Vec<u64>);
const SCRATCH_KEPT: usize = 8 << 20;
thread_local! {
    static SCRATCH: std::cell::Cell<Vec<u64>> = const { std::cell::Cell::new(Vec::new()) };
}

impl Scratch {
    /// This thread's buffer (an empty one while another `Scratch` of this thread holds it).
    fn take() -> Scratch {
        Scratch(SCRATCH.try_with(std::cell::Cell::take).unwrap_or_default())
    }

    /// A writable view of `len` elements of `unit` over the buffer (grown, zeroed, where it
    /// is too small; else holding what an earlier call left): `None` if memory for it cannot be
    /// had.
    ///
    /// # Safety
    /// The view must be dropped before `self` is used again or dropped, and its old patterns
    /// must not be read as a dtype's values ([`Array::output`]'s contract).
    unsafe fn data(&mut self, unit: typejoin::Unit, len: usize) -> Option<Data> {
        let words = len.checked_mul(unit.bytes())?.div_ceil(8);
        if self.0.len() < words {
            self.0.try_reserve_exact(words - self.0.len()).ok()?;
            self.0.resize(words, 0);
        }
        // SAFETY: `words` initialised u64s, aligned for every unit (at most 8-byte aligned),
        // hold `len` elements of `unit`; the caller keeps `self` untouched while the view lives.
        Some(unsafe { Data::borrowed(unit, self.0.as_mut_ptr().cast::<u8>(), len, true) })
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if self.0.len() * 8 <= SCRATCH_KEPT {
            let kept = std::mem::take(&mut self.0);
            let _ = SCRATCH.try_with(|s| s.set(kept));
        }
    }
}

/// Dtype descriptors seen in operands, with their typejoin dtype (`None`: none matches). Each
/// entry holds a reference to its descriptor, so the address it is found by cannot be reused
/// by another object while the entry lives. At most [`DESCRIPTORS_KEPT`] entries.
static SEEN: Mutex<Vec<(Py<PyArrayDescr>, Option<DType>)>> = Mutex::new(Vec::new());
const DESCRIPTORS_KEPT: usize = 64;

/// The descriptor a result of each dtype is allocated with (NumPy's or ml_dtypes'), by
/// [`DType::id`]: made once, then read without a lock.
static MADE: [PyOnceLock<Py<PyArrayDescr>>; DType::COUNT] =
    [const { PyOnceLock::new() }; DType::COUNT];

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The typejoin dtype of each of NumPy's own type numbers (`NPY_BYTE`, …, `NPY_HALF`), read
/// from the first descriptor of it met: a built-in type number means one dtype in every
/// descriptor of native byte order, which is all this module reads (`dtype_of`'s callers
/// check the byte order first). `NONE_YET` until met; `NO_DTYPE` where no typejoin dtype
/// matches (strings, datetimes, object).
static BUILTIN: [std::sync::atomic::AtomicU16; BUILTIN_TYPES] =
    [const { std::sync::atomic::AtomicU16::new(NONE_YET) }; BUILTIN_TYPES];
const BUILTIN_TYPES: usize = 24; // NPY_HALF is 23; user-defined numbers start at 256
const NONE_YET: u16 = u16::MAX;
const NO_DTYPE: u16 = u16::MAX - 1;

/// The typejoin dtype of a NumPy dtype of native byte order (`float32`, ml_dtypes'
/// `bfloat16`, `int4`, …).
fn dtype_of(d: &Bound<'_, PyArrayDescr>) -> PyResult<DType> {
    use std::sync::atomic::Ordering::Relaxed;
    let builtin = usize::try_from(d.num()).ok().filter(|&n| n < BUILTIN_TYPES);
    let known = builtin.and_then(|n| match BUILTIN[n].load(Relaxed) {
        NONE_YET => None,
        NO_DTYPE => Some(None),
        id => Some(DType::from_id(usize::from(id))),
    });
    let t = match known {
        Some(t) => t,
        None => {
            let t = seen_dtype_of(d)?;
            if let Some(n) = builtin {
                let id = t.map_or(NO_DTYPE, |t| t.id() as u16);
                BUILTIN[n].store(id, Relaxed);
            }
            t
        }
    };
    t.ok_or_else(|| {
        let name = d.str().map_or_else(|_| "?".to_string(), |s| s.to_string());
        PyValueError::new_err(format!("no typejoin dtype for the NumPy dtype {name}"))
    })
}

/// The typejoin dtype of a descriptor by its name, kept by the descriptor's identity.
fn seen_dtype_of(d: &Bound<'_, PyArrayDescr>) -> PyResult<Option<DType>> {
    let found = lock(&SEEN)
        .iter()
        .find(|(k, _)| k.as_ptr() == d.as_ptr())
        .map(|(_, t)| *t);
    if let Some(t) = found {
        return Ok(t);
    }
    let name: String = d.getattr("name")?.extract()?;
    let t = typejoin::canonical(&name).and_then(DType::named);
    let mut seen = lock(&SEEN);
    if seen.len() < DESCRIPTORS_KEPT {
        seen.push((d.clone().unbind(), t));
    }
    Ok(t)
}

/// The NumPy descriptor of a typejoin dtype, for new results.
fn descriptor<'py>(py: Python<'py>, t: DType) -> PyResult<Bound<'py, PyArrayDescr>> {
    MADE[t.id()]
        .get_or_try_init(py, || new_descriptor(py, t))
        .map(|d| d.bind(py).clone())
}

fn new_descriptor(py: Python<'_>, t: DType) -> PyResult<Py<PyArrayDescr>> {
    if matches!(t, DType::Complex32 | DType::BComplex32) {
        return Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "the result is {}, which has no NumPy dtype (the Python kernels return NumPy \
             arrays); cast an operand to complex64, or run the case with `typejoin run`",
            t.name()
        )));
    }
    let numpy_dtype = py.import("numpy")?.getattr("dtype")?;
    let d = match numpy_dtype.call1((t.name(),)) {
        Ok(d) => d,
        Err(_) => numpy_dtype.call1((py.import("ml_dtypes")?.getattr(t.name())?,))?,
    };
    Ok(d.cast_into::<PyArrayDescr>()?.unbind())
}

/// `x` as a C-contiguous, aligned ndarray in native byte order: `x` itself when it is one,
/// else what `typejoin.reference._operand` makes of it (a copy for lists, NumPy scalars,
/// strided views, subclasses, other byte orders, JAX, PyTorch and TensorFlow arrays), or
/// `Err` with a Python number where `x` is a weakly typed zero-dim array (JAX, TensorFlow).
#[allow(clippy::type_complexity)]
fn contiguous_or_weak<'py>(
    x: &Bound<'py, PyAny>,
) -> PyResult<Result<Bound<'py, PyUntypedArray>, Bound<'py, PyAny>>> {
    if let Ok(a) = x.cast::<PyUntypedArray>()
        && flags(a) & (NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED)
            == NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED
        && a.dtype().is_native_byteorder() != Some(false)
    {
        return Ok(Ok(a.clone()));
    }
    static HELPER: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let py = x.py();
    let helper = HELPER.get_or_try_init(py, || -> PyResult<_> {
        Ok(py
            .import("typejoin.reference")?
            .getattr("_operand")?
            .unbind())
    })?;
    let made = helper.bind(py).call1((x,))?;
    Ok(match made.cast_into::<PyUntypedArray>() {
        Ok(a) => Ok(a),
        Err(e) => Err(e.into_inner()),
    })
}

fn flags(a: &Bound<'_, PyUntypedArray>) -> i32 {
    // SAFETY: `a` is a live ndarray; `flags` is a field of its object struct.
    unsafe { (*a.as_array_ptr()).flags }
}

/// The byte range of an array's buffer.
fn span(a: &Bound<'_, PyUntypedArray>, t: DType) -> (usize, usize) {
    // SAFETY: `a` is a live ndarray; `data` is a field of its object struct.
    let start = unsafe { (*a.as_array_ptr()).data } as usize;
    (start, start + a.len() * t.unit().bytes())
}

/// A view of a C-contiguous, aligned, native-order ndarray's buffer as a typejoin array.
///
/// # Safety
/// The ndarray must outlive the returned array, and its buffer must not be written while the
/// view is read-only, nor touched at all while it is `writable`.
unsafe fn view(a: &Bound<'_, PyUntypedArray>, t: DType, writable: bool) -> PyResult<Array> {
    let shape = Shape::from_slice(a.shape());
    // SAFETY: `a` is a live ndarray; `data` is a field of its object struct.
    let ptr = unsafe { (*a.as_array_ptr()).data }.cast::<u8>();
    // SAFETY: a C-contiguous, aligned buffer of `len` elements of `t`'s unit (the caller
    // checked the flags and read `t` from the array's own descriptor); the caller's contract
    // covers its life and aliasing.
    let data = unsafe { Data::borrowed(t.unit(), ptr, a.len(), writable) };
    // A dtype whose patterns leave bits of their unit unused (bool, int4, uint2, float4, …)
    // has patterns it must never meet: another thread may write one (0xff) into the buffer
    // after it was checked, while the kernel runs without the GIL. Such an operand is copied,
    // then checked: the kernel reads only the copy it checked (the copy costs a pass the check
    // makes anyway). Other dtypes have no invalid pattern, so a racing write is only a value.
    let data = if !writable && !t.is_complex() && t.pattern_bits() < 8 * t.unit().bytes() as u32 {
        data.try_to_owned().ok_or_else(|| {
            pyo3::exceptions::PyMemoryError::new_err(format!(
                "cannot copy a {} operand of {} elements to check it",
                t.name(),
                a.len()
            ))
        })?
    } else {
        data
    };
    if writable {
        // A result buffer: its current patterns are overwritten before they are read.
        // SAFETY: `apply_with` writes every element of the result before reading one.
        unsafe { Array::output(t, shape, data) }
    } else {
        Array::new(t, shape, data)
    }
    .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// One operand: a Python scalar (weak) or an array (a zero-dim one where it is 0-d). An
/// array operand's ndarray (`x`, or the contiguous copy made of it) is pushed to `keep`, which
/// outlives the view, with its byte range.
fn operand<'py>(
    x: &Bound<'py, PyAny>,
    keep: &mut Vec<(Bound<'py, PyUntypedArray>, (usize, usize))>,
) -> PyResult<Arg> {
    // A Python number is exactly one (as NumPy reads it): `np.float64` and `np.complex128`
    // subclass `float` and `complex` but are strong NumPy scalars, read below as the zero-dim
    // array `np.array` makes of them.
    if x.is_instance_of::<PyBool>() {
        return Ok(Arg::Scalar(Scalar::Bool(x.extract()?)));
    }
    if x.is_exact_instance_of::<PyInt>() {
        let v = match x.extract::<i64>() {
            Ok(v) => v as i128,
            Err(_) => x.extract::<i128>().map_err(|_| {
                PyValueError::new_err("a Python int operand must fit 128 bits".to_string())
            })?,
        };
        return Ok(Arg::Scalar(Scalar::Int(v)));
    }
    if x.is_exact_instance_of::<PyFloat>() {
        return Ok(Arg::Scalar(Scalar::Float(x.extract()?)));
    }
    if let Ok(c) = x.cast_exact::<PyComplex>() {
        return Ok(Arg::Scalar(Scalar::Complex(c.real(), c.imag())));
    }
    let a = match contiguous_or_weak(x)? {
        Ok(a) => a,
        // A weakly typed zero-dim array of JAX or TensorFlow: the Python number it stands for.
        Err(number) => return operand(&number, keep),
    };
    let t = dtype_of(&a.dtype())?;
    // SAFETY: `a` goes to `keep`, alive for the call; inputs are only read, and an output
    // sharing memory with one is computed aside (`Out::overlaps`).
    let arr = unsafe { view(&a, t, false)? };
    let range = span(&a, t);
    keep.push((a, range));
    Ok(Arg::Array(arr))
}

fn dtype_named(name: &str) -> PyResult<DType> {
    typejoin::canonical(name)
        .and_then(DType::named)
        .ok_or_else(|| PyValueError::new_err(format!("unknown dtype `{name}`")))
}

fn kernel_error(py: Python<'_>, e: OpError) -> PyErr {
    // NumPy's answer to an array it cannot allocate (its `_ArrayMemoryError` is one).
    if e.kind == ErrorKind::Memory {
        return pyo3::exceptions::PyMemoryError::new_err(e.message);
    }
    let err = KernelError::new_err(e.message);
    let _ = err.value(py).setattr("kind", e.kind.key());
    err
}

/// How the error of an `out=` of another dtype or shape than the result's begins
/// (`typejoin.reference._native_call` casts the result into it instead).
const OUT_MISMATCH: &str = "out= is ";

/// The caller's `out=`: its dtype, whether it shares memory with an operand, and the policy
/// whose casting rule decides whether a result of another dtype may be written into it.
struct Out {
    array: Py<PyUntypedArray>,
    dtype: DType,
    overlaps: bool,
    policy: &'static Generated,
}

/// Whether `policy`'s library writes a result of `from` into an `out=` of `to`: the answer of
/// `typejoin.reference._can_cast` (NumPy's `same_kind`, PyTorch's `canCast`), asked once per
/// policy and pair of dtypes.
fn out_casts(py: Python<'_>, policy: &'static Generated, from: DType, to: DType) -> PyResult<bool> {
    type Key = (usize, DType, DType);
    static ASKED: Mutex<Vec<(Key, bool)>> = Mutex::new(Vec::new());
    static CAN_CAST: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let key = (std::ptr::from_ref(policy) as usize, from, to);
    if let Some((_, yes)) = lock(&ASKED).iter().find(|(k, _)| *k == key) {
        return Ok(*yes);
    }
    let can_cast = CAN_CAST.get_or_try_init(py, || -> PyResult<_> {
        Ok(py
            .import("typejoin.reference")?
            .getattr("_can_cast")?
            .unbind())
    })?;
    let yes = can_cast
        .bind(py)
        .call1((policy.name, descriptor(py, from)?, descriptor(py, to)?))?
        .is_truthy()?;
    lock(&ASKED).push((key, yes));
    Ok(yes)
}

/// The result storage `apply_with` asks for: a view of `out`, or of a new NumPy array (put in
/// `made`), or, when `out` overlaps an operand, an owned array copied into `out` afterwards.
///
/// # Safety
/// An array over `scratch` may be returned: it must be dropped before `scratch` is used again
/// or dropped.
unsafe fn allocate(
    py: Python<'_>,
    out: Option<&Out>,
    made: &mut Option<Py<PyAny>>,
    scratch: &mut Scratch,
    t: DType,
    shape: &[usize],
) -> Result<Array, OpError> {
    let input = |message: String| OpError {
        kind: ErrorKind::Input,
        message,
    };
    if let Some(o) = out {
        let a = o.array.bind(py);
        // Another dtype the policy's rule casts into: computed aside, cast into `out` by `run`.
        let casts = o.dtype != t && out_casts(py, o.policy, t, o.dtype).unwrap_or(false);
        if (o.dtype != t && !casts) || a.shape() != shape {
            return Err(input(format!(
                "{OUT_MISMATCH}{} {:?}, the result {} {:?}",
                o.dtype.name(),
                a.shape(),
                t.name(),
                shape
            )));
        }
        if o.overlaps || casts {
            let n = shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
            // SAFETY: the caller's contract; the view is the result storage `apply_with`
            // writes every element of before it reads one (`Array::output`).
            return match n.and_then(|n| unsafe { scratch.data(t.unit(), n) }) {
                Some(data) => unsafe { Array::output(t, Shape::from_slice(shape), data) }
                    .map_err(|e| input(e.to_string())),
                None => Err(OpError {
                    kind: ErrorKind::Memory,
                    message: format!("cannot allocate a {} result of shape {shape:?}", t.name()),
                }),
            };
        }
        // SAFETY: `out` is alive for the call, checked writeable, aligned, C-contiguous and of
        // dtype `t`, and shares no memory with an operand: the caller gave it to be written.
        return unsafe { view(a, t, true) }.map_err(|e| input(e.to_string()));
    }
    // NumPy's dimensions, on the stack for the shapes arrays have (NumPy's limit is 64).
    let mut stack = [0 as npyffi::npy_intp; 8];
    let mut heap = Vec::new();
    let dims: &mut [npyffi::npy_intp] = if shape.len() <= stack.len() {
        &mut stack[..shape.len()]
    } else {
        heap.resize(shape.len(), 0);
        &mut heap
    };
    for (d, &n) in dims.iter_mut().zip(shape) {
        *d = n as npyffi::npy_intp;
    }
    // Uninitialised, as NumPy's own new results are: `apply_with` writes every element of the
    // result before it reads one (the contract `Array::output` states for `out=`), and an
    // array whose kernel fails is dropped unseen.
    let a = empty(py, t, dims, None).map_err(|e| OpError {
        kind: if e.is_instance_of::<pyo3::exceptions::PyMemoryError>(py) {
            ErrorKind::Memory
        } else {
            ErrorKind::Input
        },
        message: format!("cannot allocate the result: {e}"),
    })?;
    // SAFETY: a new array that only this call holds (through `made`) until it returns.
    let v = unsafe { view(&a, t, true) }.map_err(|e| input(e.to_string()))?;
    *made = Some(a.into_any().unbind());
    Ok(v)
}

/// Runs kernel `op` on `args` under `policy` (a generated policy's name, or a parsed policy
/// or table, built at run time: `Loaded::generated`) and returns the result: a new NumPy
/// array, or `out` (a writeable, aligned, C-contiguous array of the result's dtype and shape)
/// written in place. The GIL is released while a large kernel computes.
#[pyfunction]
#[pyo3(signature = (op, args, policy, out=None, dtype=None, axis=None))]
pub fn call<'py>(
    py: Python<'py>,
    op: &str,
    args: &Bound<'py, PyTuple>,
    policy: &Bound<'py, PyAny>,
    out: Option<&Bound<'py, PyAny>>,
    dtype: Option<&str>,
    axis: Option<usize>,
) -> PyResult<Bound<'py, PyAny>> {
    let generated = match policy.cast::<crate::Loaded>() {
        Ok(loaded) => loaded.get().generated(py)?,
        Err(_) => {
            typejoin::policy(policy.extract::<&str>()?).map_err(|e| crate::policy_error(py, &e))?
        }
    };
    let options = ops::Options {
        dtype: dtype.map(dtype_named).transpose()?,
        axis,
        ..ops::Options::default()
    };
    let op = ops::parse_op(op).map_err(|e| kernel_error(py, e))?;
    run(py, op, args, generated, out, options)
}

/// The plans of binary ops on two arrays made so far, by policy (its address: every policy
/// the binding runs lives for the process), op and operands; `None` where the op has no plan
/// for them (`ArrayPlan::new`). At most [`PLANS_KEPT`] per thread.
type PlanKey = (usize, OpId, Operand, Operand);
thread_local! {
    static PLANS: std::cell::RefCell<Vec<(PlanKey, Option<Arc<ArrayPlan<'static>>>)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}
const PLANS_KEPT: usize = 256;

/// The kept plan of `op` on `args` under `policy`, made on first use.
fn array_plan(
    policy: &'static Generated,
    op: OpId,
    args: &[Arg; 2],
) -> Option<Arc<ArrayPlan<'static>>> {
    let [a @ Arg::Array(_), b @ Arg::Array(_)] = args else {
        return None;
    };
    kept_plan(policy, op, (a.operand(), b.operand()), || Some(args))
}

/// The kept plan of `op` on two arrays of `operands` under `policy`; `args` (arrays of those
/// operands, or `None`: then no plan is made or kept) is called only to make the plan on first
/// use.
fn kept_plan<'a>(
    policy: &'static Generated,
    op: OpId,
    (a, b): (Operand, Operand),
    args: impl FnOnce() -> Option<&'a [Arg; 2]>,
) -> Option<Arc<ArrayPlan<'static>>> {
    let key = (std::ptr::from_ref(policy) as usize, op, a, b);
    PLANS.with_borrow_mut(|plans| {
        // The last plan found first: a loop calls one op on one pair of dtypes.
        if let Some(at) = plans.iter().rposition(|(k, _)| *k == key) {
            let last = plans.len() - 1;
            if at != last {
                plans.swap(at, last);
            }
            return plans[last].1.clone();
        }
        let plan = ArrayPlan::new(policy, op, args()?).map(Arc::new);
        if plans.len() < PLANS_KEPT {
            plans.push((key, plan.clone()));
        }
        plan
    })
}

/// `ops::apply_with`, through the kept plan of a binary op on two arrays where it has one
/// (the same result, without deciding again what the operands' dtypes decide).
fn dispatch(
    policy: &'static Generated,
    op: OpId,
    args: &[Arg],
    options: ops::Options,
    alloc: impl FnOnce(DType, &[usize]) -> Result<Array, OpError>,
) -> Result<Array, OpError> {
    if let Ok(pair) = <&[Arg; 2]>::try_from(args)
        && let Some(plan) = array_plan(policy, op, pair)
    {
        return plan.apply_with(pair, options, alloc);
    }
    ops::apply_with(policy, op, args, options, alloc)
}

/// [`call`] of a parsed op under a resolved policy.
fn run<'py>(
    py: Python<'py>,
    op: OpId,
    args: &Bound<'py, PyTuple>,
    generated: &'static Generated,
    out: Option<&Bound<'py, PyAny>>,
    options: ops::Options,
) -> PyResult<Bound<'py, PyAny>> {
    if op == OpId::ASTYPE
        && let Some(r) = astype_bool_bytes(py, args, generated, out, options)?
    {
        return Ok(r);
    }
    let mut keep = Vec::with_capacity(args.len());
    let args: Vec<Arg> = args
        .iter()
        .map(|x| operand(&x, &mut keep))
        .collect::<PyResult<_>>()?;
    let out = out
        .map(|o| out_arg(o, generated, keep.iter().map(|(_, r)| *r)))
        .transpose()?;
    let (mut made, mut scratch) = (None, Scratch::take());
    let big = args
        .iter()
        .any(|a| matches!(a, Arg::Array(a) if a.len() >= DETACH_ELEMENTS));
    // SAFETY (`allocate`): `result` is declared after `scratch`, so it is dropped first (or
    // consumed by `deliver`), and `scratch` is not used again.
    // A large kernel runs without the GIL; allocating the result takes it back for a moment.
    let result = gil::section(py, big, |gil| {
        dispatch(generated, op, &args, options, |t, shape| {
            gil.with(|py| unsafe { allocate(py, out.as_ref(), &mut made, &mut scratch, t, shape) })
        })
    })
    .map_err(|e| kernel_error(py, e))?;
    drop(args); // the operands' views end here
    deliver(py, out, made, result)
}

/// The caller's `out=` of a call under `policy` whose operands' buffers take the byte ranges
/// `operands`.
fn out_arg(
    o: &Bound<'_, PyAny>,
    policy: &'static Generated,
    mut operands: impl Iterator<Item = (usize, usize)>,
) -> PyResult<Out> {
    let bad = || {
        PyValueError::new_err(
            "out= must be a writeable, aligned, C-contiguous NumPy array in native byte order",
        )
    };
    let a = o.cast::<PyUntypedArray>().map_err(|_| bad())?;
    let want = NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED | NPY_ARRAY_WRITEABLE;
    if flags(a) & want != want || a.dtype().is_native_byteorder() == Some(false) {
        return Err(bad());
    }
    let dtype = dtype_of(&a.dtype())?;
    let (lo, hi) = span(a, dtype);
    Ok(Out {
        array: a.clone().unbind(),
        dtype,
        overlaps: operands.any(|(s, e)| s < hi && lo < e),
        policy,
    })
}

/// `astype` of one C-contiguous bool ndarray whose bytes are read in place
/// (`ops::astype_bool_bytes`: any byte a value, nonzero true, as NumPy reads them), not copied
/// and checked as a bool operand is for the other ops (`view`); `None` where that path does
/// not take the call (another operand, layout or destination), and nothing was computed.
fn astype_bool_bytes<'py>(
    py: Python<'py>,
    args: &Bound<'py, PyTuple>,
    policy: &'static Generated,
    out: Option<&Bound<'py, PyAny>>,
    options: ops::Options,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    if args.len() != 1 {
        return Ok(None);
    }
    let x = args.get_item(0)?;
    let Ok(a) = x.cast::<PyUntypedArray>() else {
        return Ok(None);
    };
    if flags(a) & NPY_ARRAY_C_CONTIGUOUS == 0 || dtype_of(&a.dtype()).ok() != Some(DType::Bool) {
        return Ok(None);
    }
    let len = a.len();
    let bytes: &[u8] = if len == 0 {
        &[]
    } else {
        // SAFETY: a live, C-contiguous ndarray of `len` one-byte elements, alive (held by
        // `args`) for the call and only read here; another thread's write into it meanwhile is
        // only a value, as every byte is one.
        unsafe { std::slice::from_raw_parts((*a.as_array_ptr()).data.cast::<u8>(), len) }
    };
    let range = span(a, DType::Bool);
    let out = out
        .map(|o| out_arg(o, policy, std::iter::once(range)))
        .transpose()?;
    let shape = a.shape();
    let (mut made, mut scratch) = (None, Scratch::take());
    // SAFETY (`allocate`): `result` is declared after `scratch`, so it is dropped first (or
    // consumed by `deliver`), and `scratch` is not used again.
    let result = gil::section(py, len >= DETACH_ELEMENTS, |gil| {
        ops::astype_bool_bytes(policy, bytes, shape, options, |t, shape| {
            gil.with(|py| unsafe { allocate(py, out.as_ref(), &mut made, &mut scratch, t, shape) })
        })
    });
    match result.map_err(|e| kernel_error(py, e))? {
        None => Ok(None),
        Some(result) => deliver(py, out, made, result).map(Some),
    }
}

/// What a call returns once its kernel has run: `out` (the result cast into it when it is of
/// another dtype, copied into it when computed aside), or the new array made for the result.
fn deliver<'py>(
    py: Python<'py>,
    out: Option<Out>,
    made: Option<Py<PyAny>>,
    result: Array,
) -> PyResult<Bound<'py, PyAny>> {
    match (out, made) {
        (Some(o), _) => {
            let a = o.array.into_bound(py);
            if o.dtype != result.dtype() {
                // Computed aside in the result's dtype: cast into `out` by the policy's
                // `astype`, as `np.add(a, b, out=o)` casts for an `o` of another dtype.
                // SAFETY: `out` is the caller's to write, and no view of an operand is alive.
                let mut v = Some(unsafe { view(&a, o.dtype, true)? });
                let options = ops::Options {
                    dtype: Some(o.dtype),
                    ..ops::Options::default()
                };
                let cast = |_: DType, _: &[usize]| {
                    v.take().ok_or_else(|| OpError {
                        kind: ErrorKind::Input,
                        message: "astype asked for two results".into(),
                    })
                };
                let big = result.len() >= DETACH_ELEMENTS;
                let args = [Arg::Array(result)];
                let done = gil::section(py, big, |_| {
                    ops::apply_with(o.policy, OpId::ASTYPE, &args, options, cast)
                });
                done.map_err(|e| kernel_error(py, e))?;
            } else if o.overlaps {
                // Computed aside: copied into `out` now that no operand is read any more.
                // SAFETY: `out` is the caller's to write, and no view of an operand is alive.
                let mut v = unsafe { view(&a, o.dtype, true)? };
                v.assign(result);
            }
            Ok(a.into_any())
        }
        (None, Some(made)) => Ok(made.into_bound(py)),
        (None, None) => Err(PyValueError::new_err("the kernel returned no result")),
    }
}

/// The Python function of a unary or binary kernel op (`typejoin.reference.add`, …):
/// `add(x, y, *, policy="numpy", out=None)`, a native function called without a Python frame
/// between the caller and the kernel. A generated policy's name (or none: `numpy`) runs
/// here, and so does an `out=` of another dtype the policy's casting rule allows (computed
/// aside, then cast: `deliver`); any other `policy=` (a `Policy`, a `Table`, a file's path),
/// and an `out=` the rule refuses (for the library's error), take
/// `typejoin.reference._native_call`. One function per op, made on first request.
#[pyfunction]
pub fn kernel<'py>(py: Python<'py>, op: &str) -> PyResult<Bound<'py, PyCFunction>> {
    use typejoin::op::Arity;
    static MADE_KERNELS: Mutex<Vec<(OpId, Py<PyCFunction>)>> = Mutex::new(Vec::new());
    let id = ops::parse_op(op).map_err(|e| kernel_error(py, e))?;
    if let Some((_, f)) = lock(&MADE_KERNELS).iter().find(|(k, _)| *k == id) {
        return Ok(f.bind(py).clone());
    }
    let Some(params) = kernel_params(id) else {
        return Err(PyValueError::new_err(format!(
            "kernel({op:?}): only unary and binary ops, astype and where have a kernel \
             function; typejoin.reference.call runs the others"
        )));
    };
    let list = params.join(", ");
    let name = id.name();
    let doc = if id == OpId::ASTYPE {
        "astype(x, dtype, *, policy='numpy', out=None)\n--\n\n``x`` converted to ``dtype`` \
         (a dtype, a type, or a string as ``np.dtype`` reads it: ``\"i8\"`` is int64; typejoin's \
         names such as ``\"int4\"`` besides): the policy's conversion, bit-exact, correctly \
         rounded."
            .to_string()
    } else if id.info().arity == Arity::Select {
        format!(
            "{name}({list}, *, policy='numpy', out=None)\n--\n\n``{name}({list})``: the \
             result dtype is the join of ``x`` and ``y``."
        )
    } else {
        format!(
            "{name}({list}, *, policy='numpy', out=None)\n--\n\n``{name}({list})`` under \
             ``policy`` (the runner's op ``{name}``)."
        )
    };
    let leak = |s: String| -> PyResult<&'static std::ffi::CStr> {
        let c = std::ffi::CString::new(s).map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(Box::leak(c.into_boxed_c_str()))
    };
    // A function of CPython's vectorcall protocol: `self` is the op's catalogue place. Its
    // definition is leaked once per op (`MADE_KERNELS`).
    let def = vectorcall::definition(leak(name.to_string())?, kernel_fastcall, leak(doc)?);
    let place = id.index().into_pyobject(py)?;
    let f = vectorcall::function(place.as_any(), def)?.cast_into::<PyCFunction>()?;
    lock(&MADE_KERNELS).push((id, f.clone().unbind()));
    Ok(f)
}

/// The parameters of `op`'s [`kernel`] function before its keywords (`policy`, `out`), or
/// `None` for an op that has none.
fn kernel_params(op: OpId) -> Option<&'static [&'static str]> {
    use typejoin::op::Arity;
    match op.info().arity {
        _ if op == OpId::ASTYPE => Some(&["x", "dtype"]),
        Arity::Unary => Some(&["x"]),
        Arity::Binary => Some(&["x", "y"]),
        Arity::Select => Some(&["cond", "x", "y"]),
        _ => None,
    }
}

/// The C entry of every [`kernel`] function: arguments as CPython's vectorcall passes them.
/// Errors become Python exceptions, a panic a `PanicException`, as PyO3's own functions do.
unsafe extern "C" fn kernel_fastcall(
    place: *mut pyo3::ffi::PyObject,
    args: *const *mut pyo3::ffi::PyObject,
    nargs: pyo3::ffi::Py_ssize_t,
    kwnames: *mut pyo3::ffi::PyObject,
) -> *mut pyo3::ffi::PyObject {
    // SAFETY: CPython calls a function of `METH_FASTCALL` with the thread attached.
    let py = unsafe { Python::assume_attached() };
    vectorcall::run(py, "a kernel", || {
        // SAFETY: CPython's vectorcall contract: `args` holds `nargs` positional arguments
        // then one per name in `kwnames` (a tuple, or NULL), all borrowed for the call.
        let args = unsafe { vectorcall::Arguments::read(py, args, nargs, kwnames) }?;
        // SAFETY: as this function's.
        unsafe { fastcall_body(py, place, &args) }.map(Bound::unbind)
    })
}

/// A [`kernel`] function's call: two NumPy arrays of one shape take [`fast_lane`]; anything
/// else (keywords, Python numbers, other array types or layouts) [`kernel_call`].
///
/// # Safety
/// As [`kernel_fastcall`]'s arguments.
unsafe fn fastcall_body<'py>(
    py: Python<'py>,
    place: *mut pyo3::ffi::PyObject,
    args: &vectorcall::Arguments<'_, 'py>,
) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY: `place` is the int `kernel` made the function with.
    let place = unsafe { Bound::from_borrowed_ptr(py, place) }.extract::<usize>()?;
    let op = OpId::at(place);
    if op == OpId::ASTYPE {
        return astype_call(py, args);
    }
    let raw = args.all;
    // One array, and maybe `out=` (the only keyword then): a unary op's lane.
    if op.info().arity == typejoin::op::Arity::Unary {
        let out = match (&args.names, raw) {
            (None, [_]) => Some(None),
            (Some(n), [_, o]) if n.len() == 1 && n.get_item(0)?.eq("out")? => Some(Some(*o)),
            _ => None,
        };
        if let Some(out) = out {
            // SAFETY: the arguments are live objects, borrowed for the call.
            let (x, out) = unsafe {
                (
                    Bound::from_borrowed_ptr(py, raw[0]),
                    out.map(|o| Bound::from_borrowed_ptr(py, o)),
                )
            };
            let policy = default_policy(py)?;
            if let Some(r) = one_array_lane(py, policy, op, &x, out.as_ref(), None)? {
                return Ok(r);
            }
        }
    }
    // A binary op on two arrays, and maybe `out=` (the only keyword then).
    let out = match (&args.names, raw) {
        _ if op.info().arity != typejoin::op::Arity::Binary => None,
        (None, [_, _]) => Some(None),
        (Some(n), [_, _, o]) if n.len() == 1 && n.get_item(0)?.eq("out")? => Some(Some(*o)),
        _ => None,
    };
    if let Some(out) = out
        && let Some(r) = unsafe { fast_lane(py, op, raw[0], raw[1], out) }?
    {
        return Ok(r);
    }
    let (tuple, kwargs) = args.tuple_and_kwargs(py)?;
    let params = kernel_params(op).unwrap_or(&[]);
    kernel_call(py, op, params, &tuple, kwargs.as_ref())
}

/// A call of `astype(x, dtype, *, policy="numpy", out=None)`: a generated policy's name (or
/// none) runs here, on the operand read in place; any other `policy=`, and an `out=` of a dtype
/// the policy's rule does not cast into, take `typejoin.reference._native_call`.
fn astype_call<'py>(
    py: Python<'py>,
    args: &vectorcall::Arguments<'_, 'py>,
) -> PyResult<Bound<'py, PyAny>> {
    const PARAMS: [&str; 4] = ["x", "dtype", "policy", "out"];
    let type_error = pyo3::exceptions::PyTypeError::new_err;
    if args.positional > 2 {
        return Err(type_error(format!(
            "astype() takes 2 positional arguments but {} were given",
            args.positional
        )));
    }
    let mut given: [Option<Bound<'py, PyAny>>; 4] = [None, None, None, None];
    for (k, slot) in given.iter_mut().enumerate().take(args.positional) {
        *slot = Some(args.get(py, k));
    }
    if let Some(names) = &args.names {
        for (k, name) in names.iter().enumerate() {
            let name = name.cast_into::<PyString>()?;
            let name = name.to_str()?;
            let Some(at) = PARAMS.iter().position(|p| *p == name) else {
                return Err(type_error(format!(
                    "astype() got an unexpected keyword argument '{name}'"
                )));
            };
            if given[at].is_some() {
                return Err(type_error(format!(
                    "astype() got multiple values for argument '{name}'"
                )));
            }
            given[at] = Some(args.get(py, args.positional + k));
        }
    }
    let [x, dtype, policy, out] = given;
    let (Some(x), Some(dtype)) = (x, dtype) else {
        return Err(type_error(
            "astype() missing a required argument: 'x' and 'dtype' are required".to_string(),
        ));
    };
    let out = out.filter(|o| !o.is_none());
    let to = astype_target(py, &dtype)?;
    let generated = match &policy {
        None => Some(default_policy(py)?),
        Some(p) => p
            .cast::<PyString>()
            .ok()
            .and_then(|s| typejoin::policy(s.to_str().ok()?).ok()),
    };
    if let Some(generated) = generated
        && let Some(r) = one_array_lane(py, generated, OpId::ASTYPE, &x, out.as_ref(), Some(to))?
    {
        return Ok(r);
    }
    let options = ops::Options {
        dtype: Some(to),
        ..ops::Options::default()
    };
    let operands = PyTuple::new(py, [&x])?;
    let call = (OpId::ASTYPE, &operands, options);
    run_or_fallback(py, call, generated, policy, out)
}

/// The typejoin dtype `astype`'s `dtype` argument names: a NumPy (or ml_dtypes) dtype, a type
/// (`np.float32`, `float`, `ml_dtypes.bfloat16`), or a string as `np.dtype` reads it (`"i8"`
/// is int64, `"<f4"` float32, `"float"` float64), else as typejoin names it (`"int4"`,
/// `"float8_e4m3fn"`: `typejoin._numpy_name`). A string's answer is kept for the process.
fn astype_target(py: Python<'_>, d: &Bound<'_, PyAny>) -> PyResult<DType> {
    if let Ok(descr) = d.cast::<PyArrayDescr>() {
        return dtype_of(&native_order(descr.clone())?);
    }
    if let Ok(s) = d.cast::<PyString>() {
        // Each string kept (so its address is not reused while kept): found by address first
        // (a literal `"int16"` is one object from call to call), then by its text.
        static NAMED: Mutex<Vec<(Py<PyString>, DType)>> = Mutex::new(Vec::new());
        const NAMES_KEPT: usize = 256;
        // The last kept string found by address, packed as `address << 8 | dtype id` (0: none):
        // a loop that names its dtype with one literal reads one word, not the lock (taking
        // and releasing it was 1 % of a 1,000-element `astype`).
        static LAST: AtomicU64 = AtomicU64::new(0);
        let address = s.as_ptr() as u64;
        let last = LAST.load(Ordering::Relaxed);
        if last != 0
            && last >> 8 == address
            && let Some(t) = DType::from_id((last & 0xff) as usize)
        {
            return Ok(t);
        }
        {
            let named = lock(&NAMED);
            let by_address = named.iter().find(|(n, _)| n.as_ptr() == s.as_ptr());
            if let Some((_, t)) = by_address {
                // Kept, so its address is not reused while `LAST` names it.
                if address >> 56 == 0 && t.id() < 256 {
                    LAST.store(address << 8 | t.id() as u64, Ordering::Relaxed);
                }
                return Ok(*t);
            }
            let text = s.to_str()?;
            let by_text = named
                .iter()
                .find(|(n, _)| n.bind(py).to_str().ok() == Some(text));
            if let Some((_, t)) = by_text {
                return Ok(*t);
            }
        }
        let s = s.to_str()?;
        static NUMPY_NAME: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        let numpy_name = NUMPY_NAME.get_or_try_init(py, || -> PyResult<_> {
            Ok(py.import("typejoin")?.getattr("_numpy_name")?.unbind())
        })?;
        let name = numpy_name.bind(py).call1((s,))?;
        let t = dtype_named(name.cast::<PyString>()?.to_str()?)?;
        let mut named = lock(&NAMED);
        if named.len() < NAMES_KEPT {
            named.push((d.cast::<PyString>()?.clone().unbind(), t));
        }
        return Ok(t);
    }
    // A type or any other dtype-like: as `np.dtype(d)` reads it.
    dtype_of(&native_order(PyArrayDescr::new(py, d)?)?)
}

/// `d` in native byte order (`>f4` read as float32, as `astype` gives a native result).
fn native_order(d: Bound<'_, PyArrayDescr>) -> PyResult<Bound<'_, PyArrayDescr>> {
    match d.is_native_byteorder() {
        Some(false) => Ok(d.call_method1("newbyteorder", ("=",))?.cast_into()?),
        _ => Ok(d),
    }
}

/// The typejoin dtype of an ndarray of one of NumPy's own type numbers in native byte order,
/// as met before (`BUILTIN`); `None` otherwise.
///
/// # Safety
/// `a` is a live ndarray.
unsafe fn builtin_dtype(a: *mut numpy::npyffi::PyArrayObject) -> Option<DType> {
    use std::sync::atomic::Ordering::Relaxed;
    // SAFETY: the caller's contract: `descr` is the array's live descriptor.
    let d = unsafe { &*(*a).descr };
    let native = matches!(d.byteorder as u8, b'=' | b'|')
        || (cfg!(target_endian = "little") && d.byteorder as u8 == b'<');
    let num = usize::try_from(d.type_num)
        .ok()
        .filter(|&n| n < BUILTIN_TYPES && native)?;
    match BUILTIN[num].load(Relaxed) {
        NONE_YET | NO_DTYPE => None,
        id => DType::from_id(usize::from(id)),
    }
}

/// `astype(x, to)` (`op` [`OpId::ASTYPE`], `to` given) or a unary op (`to` `None`) under `policy`
/// where `x` is a NumPy array (the `ndarray` type itself), C-contiguous, aligned, in native byte
/// order and of one of NumPy's dtypes whose every pattern is a value (or bool, for `astype`), and
/// `out` is none or such an array of its shape, writeable, of the result's dtype, sharing no memory
/// with it: read straight from their structs, as [`fast_lane`] reads a binary op's. `None` for
/// anything else (nothing computed), which the caller's general path takes; the result is the one
/// it computes.
fn one_array_lane<'py>(
    py: Python<'py>,
    policy: &'static Generated,
    op: OpId,
    x: &Bound<'py, PyAny>,
    out: Option<&Bound<'py, PyAny>>,
    to: Option<DType>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    use numpy::npyffi::PyArrayObject;
    let ndarray = ndarray_type(py);
    // SAFETY: a live object's type.
    let is_array = |o: &Bound<'_, PyAny>| unsafe { pyo3::ffi::Py_TYPE(o.as_ptr()) == ndarray };
    if !is_array(x) || out.is_some_and(|o| !is_array(o)) {
        return Ok(None);
    }
    let to = to.map(|t| policy.canonical_dtype(t));
    let bool_ok = op == OpId::ASTYPE;
    let full = |t: DType| t.pattern_bits() == 8 * t.unit().bytes() as u32 || t.is_complex();
    let want = NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED;
    let xa = x.as_ptr().cast::<PyArrayObject>();
    // SAFETY: `x` is an ndarray (its exact type was checked): these are its struct's fields,
    // and `dimensions` holds `nd` sizes.
    let (tx, dims) = unsafe {
        let Some(tx) = builtin_dtype(xa)
            .filter(|&t| (full(t) || (bool_ok && t == DType::Bool)) && (*xa).flags & want == want)
        else {
            return Ok(None);
        };
        let nd = usize::try_from((*xa).nd).unwrap_or(0);
        let dims: &[npyffi::npy_intp] = match nd {
            0 => &[],
            _ => std::slice::from_raw_parts((*xa).dimensions, nd),
        };
        (tx, dims)
    };
    let len = dims.iter().map(|&d| d as usize).product::<usize>();
    let (x_lo, x_hi) = {
        // SAFETY: a live ndarray's data pointer.
        let start = unsafe { (*xa).data } as usize;
        (start, start + len * tx.unit().bytes())
    };
    let oa = match out {
        None => None,
        Some(o) => {
            let oa = o.as_ptr().cast::<PyArrayObject>();
            // SAFETY: `o` is an ndarray, as `x` above.
            let fits = unsafe {
                let nd = usize::try_from((*oa).nd).unwrap_or(0);
                let same_dims = match nd {
                    0 => dims.is_empty(),
                    _ => std::slice::from_raw_parts((*oa).dimensions, nd) == dims,
                };
                let start = (*oa).data as usize;
                let to = builtin_dtype(oa).filter(|&t| to.is_none_or(|to| t == to));
                let end = start + len * to.map_or(0, |t| t.unit().bytes());
                same_dims
                    && (*oa).flags & (want | NPY_ARRAY_WRITEABLE) == want | NPY_ARRAY_WRITEABLE
                    && to.is_some()
                    && !(start < x_hi && x_lo < end)
            };
            if !fits {
                return Ok(None);
            }
            Some(oa)
        }
    };
    let shape: Shape = dims.iter().map(|&d| d as usize).collect();
    let oa = oa.map(|p| p as usize);
    let mut made: Option<Py<PyUntypedArray>> = None;
    // The result array: `out`, or a new one (made with the GIL, which a large call has
    // released: `gil::section`).
    let alloc = |py: Python<'_>, t: DType, made: &mut Option<Py<PyUntypedArray>>| {
        let input = |message: String| OpError {
            kind: ErrorKind::Input,
            message,
        };
        let a: *mut PyArrayObject = match oa {
            // SAFETY: `oa` is a live ndarray (checked above).
            Some(oa) if unsafe { builtin_dtype(oa as *mut PyArrayObject) } != Some(t) => {
                return Err(input(format!("{OUT_MISMATCH}not {}", t.name())));
            }
            Some(oa) => oa as *mut PyArrayObject,
            None => {
                // A line start near its operand's page offset (`placed`): int8 `absolute` at
                // 1e5 into `out=` ran 2.17–2.25 µs with `out` on a line start (the operand
                // anywhere from 1,024 bytes behind to 2,048 ahead), 2.35–2.57 µs 1 to 48
                // bytes into one (NumPy: 2.13–2.27 µs and 2.38–3.83 µs).
                let at = placed::page_offset(t.unit().bytes(), &[(x_lo, tx.unit().bytes())]);
                let a = empty(py, t, dims, Some(at / 64 * 64)).map_err(|e| input(e.to_string()))?;
                let p = a.as_array_ptr();
                *made = Some(a.unbind());
                p
            }
        };
        // SAFETY: `a` is `out`, alive for the call, writeable, aligned, C-contiguous, of `x`'s
        // shape and of dtype `t` (checked above), sharing no memory with `x`, and the caller
        // gave it to be written; or a new C-contiguous array of `x`'s shape and of `t` that
        // only this call holds (`made`). Either holds `len` elements of `t`; `apply_with`
        // writes every element of its result before it reads one.
        unsafe {
            let data = Data::borrowed(t.unit(), (*a).data.cast::<u8>(), len, true);
            Array::output(t, shape.clone(), data)
        }
        .map_err(|e| input(e.to_string()))
    };
    let options = ops::Options {
        dtype: to,
        ..ops::Options::default()
    };
    let release = len
        >= if cheap_pass(op, tx) {
            DETACH_PASS_ELEMENTS
        } else {
            DETACH_ELEMENTS
        };
    if tx == DType::Bool {
        // SAFETY: `len` bytes of a live, C-contiguous array, only read (as in
        // `astype_bool_bytes`: any byte is a value, so a racing write is only one).
        let bytes: &[u8] = match len {
            0 => &[],
            _ => unsafe { std::slice::from_raw_parts((*xa).data.cast::<u8>().cast_const(), len) },
        };
        let done = gil::section(py, release, |gil| {
            ops::astype_bool_bytes(policy, bytes, &shape, options, |t, _| {
                gil.with(|py| alloc(py, t, &mut made))
            })
        })
        .map_err(|e| kernel_error(py, e))?;
        if done.is_none() {
            return Ok(None);
        }
    } else {
        // SAFETY: a C-contiguous, aligned buffer of `len` elements of `tx` (read from the
        // array's own descriptor), alive while `x` is, only read.
        let data = unsafe { Data::borrowed(tx.unit(), (*xa).data.cast::<u8>(), len, false) };
        let xv = Array::new(tx, shape.clone(), data)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        let args = [Arg::Array(xv)];
        // A released call whose result dtype an earlier one met (`KNOWN_RESULTS`): the result
        // array is made first, with the GIL held, and the GIL released once, for the kernel,
        // as NumPy's ufuncs do. Taking it back mid-call to make the array releases it twice:
        // int8 `absolute` into `out=` at 1e5, 2.49 µs so against 2.43 µs with it held.
        let key = (policy as *const Generated as usize, op, tx, to);
        let known = release.then(|| known_result(key)).flatten();
        let done = match known {
            Some(t) => match alloc(py, t, &mut made) {
                Err(e) => Err(e),
                Ok(view) => {
                    let mut view = Some(view);
                    gil::section(py, true, |_| {
                        ops::apply_with(policy, op, &args, options, |t, _| {
                            view.take()
                                .filter(|v| v.dtype() == t)
                                .ok_or_else(|| OpError {
                                    kind: ErrorKind::Input,
                                    message: format!(
                                        "{}'s result changed dtype: {}",
                                        op.name(),
                                        t.name()
                                    ),
                                })
                        })
                    })
                }
            },
            None => {
                let mut met = None;
                let done = gil::section(py, release, |gil| {
                    ops::apply_with(policy, op, &args, options, |t, _| {
                        met = Some(t);
                        gil.with(|py| alloc(py, t, &mut made))
                    })
                });
                if let (true, Some(t), Ok(_)) = (release, met, &done) {
                    lock(&KNOWN_RESULTS).push((key, t));
                }
                done
            }
        };
        match done {
            // An `out=` of another dtype than the result's: the general path casts into it
            // (nothing was computed: the allocation comes first).
            Err(e) if out.is_some() && e.message.starts_with(OUT_MISMATCH) => return Ok(None),
            Err(e) => return Err(kernel_error(py, e)),
            Ok(_) => {}
        }
    }
    Ok(Some(match (made, out) {
        (Some(a), _) => a.into_bound(py).into_any(),
        (None, Some(o)) => o.clone(),
        (None, None) => return Err(PyValueError::new_err("the op returned no result")),
    }))
}

/// A one-array op's result dtype as a released call of the lane met it, by policy (its
/// address: a generated policy is a static), op, operand dtype and `astype`'s destination:
/// what `ops::apply_with` allocates depends on nothing else. Bounded by the policies, ops and
/// dtypes there are.
type ResultKey = (usize, OpId, DType, Option<DType>);
static KNOWN_RESULTS: Mutex<Vec<(ResultKey, DType)>> = Mutex::new(Vec::new());

/// The result dtype [`KNOWN_RESULTS`] holds for `key`, if a call met it.
fn known_result(key: ResultKey) -> Option<DType> {
    lock(&KNOWN_RESULTS)
        .iter()
        .find(|(k, _)| *k == key)
        .map(|&(_, t)| t)
}

/// NumPy's `ndarray` type object, read from its C API once (through rust-numpy's API table
/// it was 2 % of a 1,000-element `astype`): the lanes compare an operand's exact type with it.
fn ndarray_type(py: Python<'_>) -> *mut pyo3::ffi::PyTypeObject {
    use numpy::npyffi::{NpyTypes, PY_ARRAY_API};
    static TYPE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    // SAFETY: NumPy's C API as rust-numpy imports it; the type is a static object of NumPy's
    // extension module, which is never unloaded.
    let t = *TYPE.get_or_init(|| unsafe {
        PY_ARRAY_API.get_type_object(py, NpyTypes::PyArray_Type) as usize
    });
    t as *mut pyo3::ffi::PyTypeObject
}

/// `op(x, y)` (into `out`, when given) under the default policy (`numpy`) where `x` and `y`
/// are NumPy arrays (the `ndarray` type itself) of one shape of at least one dimension,
/// C-contiguous, aligned and in native byte order, of NumPy's own dtypes whose every pattern
/// is a value (not bool), and `out` is a writeable one of their shape and the result's dtype
/// sharing no memory with them: read straight from their object structs, no other check to
/// make. `None` for anything else, which [`kernel_call`] takes; the result is the one it
/// computes (the same kept plan).
///
/// # Safety
/// `x`, `y` and `out` are live Python objects, borrowed for the call.
unsafe fn fast_lane<'py>(
    py: Python<'py>,
    op: OpId,
    x: *mut pyo3::ffi::PyObject,
    y: *mut pyo3::ffi::PyObject,
    out: Option<*mut pyo3::ffi::PyObject>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    use numpy::npyffi::PyArrayObject;
    let ndarray = ndarray_type(py);
    // SAFETY: `x`, `y` and `out` are live objects.
    let is_array = |o: *mut pyo3::ffi::PyObject| unsafe { pyo3::ffi::Py_TYPE(o) == ndarray };
    if !(is_array(x) && is_array(y) && out.is_none_or(is_array)) {
        return Ok(None);
    }
    let (xa, ya) = (x.cast::<PyArrayObject>(), y.cast::<PyArrayObject>());
    let oa = out.map(|o| o.cast::<PyArrayObject>());
    // SAFETY: both are ndarrays (their exact type was checked): these are their struct's
    // fields, and `dimensions` holds `nd` sizes.
    let (nd, dims, dtype) = unsafe {
        let nd = (*xa).nd;
        if nd < 1 || (*ya).nd != nd {
            return Ok(None);
        }
        let n = nd as usize;
        let dims = std::slice::from_raw_parts((*xa).dimensions, n);
        if dims != std::slice::from_raw_parts((*ya).dimensions, n) {
            return Ok(None);
        }
        let want = NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED;
        if (*xa).flags & want != want || (*ya).flags & want != want {
            return Ok(None);
        }
        if let Some(o) = oa
            && ((*o).nd != nd
                || dims != std::slice::from_raw_parts((*o).dimensions, n)
                || (*o).flags & (want | NPY_ARRAY_WRITEABLE) != want | NPY_ARRAY_WRITEABLE)
        {
            return Ok(None);
        }
        let dtype = |a: *mut PyArrayObject| builtin_dtype(a);
        (n, dims, (dtype(xa), dtype(ya), oa.map(dtype)))
    };
    let (Some(tx), Some(ty)) = (dtype.0, dtype.1) else {
        return Ok(None);
    };
    let out = match (oa, dtype.2) {
        (None, _) => None,
        (Some(o), Some(Some(t))) => Some((o, t)),
        (Some(_), _) => return Ok(None),
    };
    let full = |t: DType| t.pattern_bits() == 8 * t.unit().bytes() as u32 || t.is_complex();
    if !(full(tx) && full(ty)) {
        return Ok(None);
    }
    let shape: Shape = dims.iter().map(|&d| d as usize).collect();
    debug_assert_eq!(shape.len(), nd);
    let len: usize = shape.iter().product();
    // An `out` sharing memory with an operand is computed aside by `kernel_call`.
    let bytes = |a: *mut PyArrayObject, t: DType| {
        // SAFETY: a live ndarray's data pointer.
        let start = unsafe { (*a).data } as usize;
        (start, start + len * t.unit().bytes())
    };
    if let Some((o, t)) = out {
        let (lo, hi) = bytes(o, t);
        let overlaps = |(s, e): (usize, usize)| s < hi && lo < e;
        if overlaps(bytes(xa, tx)) || overlaps(bytes(ya, ty)) {
            return Ok(None);
        }
    }
    let array = |a: *mut PyArrayObject, t: DType, shape: Shape| {
        // SAFETY: a C-contiguous, aligned buffer of `len` elements of `t` (read from the
        // array's own descriptor), alive while `x` and `y` are, only read.
        let data = unsafe { Data::borrowed(t.unit(), (*a).data.cast::<u8>(), len, false) };
        Array::new(t, shape, data).map_err(|e| PyValueError::new_err(e.to_string()))
    };
    let make_args = || -> PyResult<[Arg; 2]> {
        Ok([
            Arg::Array(array(xa, tx, shape.clone())?),
            Arg::Array(array(ya, ty, shape.clone())?),
        ])
    };
    let policy = default_policy(py)?;
    // The arrays are made only where the plan is (on first use) or the pass is not one
    // elementwise pass: that pass runs on the buffers (`Elementwise::run`).
    let made_args = std::cell::OnceCell::new();
    let operands = (Operand::Array(tx), Operand::Array(ty));
    let Some(plan) = kept_plan(policy, op, operands, || {
        made_args.get_or_init(make_args).as_ref().ok()
    }) else {
        return match made_args.into_inner() {
            Some(Err(e)) => Err(e),
            _ => Ok(None),
        };
    };
    if let Some(e) = plan.elementwise() {
        let [ux, uy] = e.operand_dtypes().map(DType::unit);
        let operands = [(xa, ux), (ya, uy)].map(|(a, unit)| {
            // SAFETY: a C-contiguous, aligned buffer of `len` elements of the pass's operand
            // dtype (the plan's operands are the arrays' own dtypes), alive for the call, only
            // read.
            unsafe { Data::borrowed(unit, (*a).data.cast::<u8>(), len, false) }
        });
        // Where in a page a new result starts (`placed`).
        // SAFETY: live ndarrays' data pointers.
        let inputs = unsafe {
            [
                ((*xa).data as usize, ux.bytes()),
                ((*ya).data as usize, uy.bytes()),
            ]
        };
        let like = placed::page_offset(e.out_dtype().unit().bytes(), &inputs);
        // SAFETY: `out` and `dims` are as `fast_lane`'s caller's contract and checks leave them.
        return unsafe { elementwise(py, policy, &e, operands, out, dims, like) };
    }
    let args = match made_args.into_inner() {
        Some(args) => args?,
        None => make_args()?,
    };
    let out = match out {
        None => None,
        Some((o, dtype)) => Some(Out {
            // SAFETY: `o` is a live object, borrowed for the call.
            array: unsafe { Bound::from_borrowed_ptr(py, o.cast()) }
                .cast_into::<PyUntypedArray>()?
                .unbind(),
            dtype,
            overlaps: false,
            policy,
        }),
    };
    let (mut made, mut scratch) = (None, Scratch::take());
    let options = ops::Options::default();
    // SAFETY (`allocate`): `result` is declared after `scratch`, so it is dropped first (or
    // consumed by `deliver`), and `scratch` is not used again.
    let result = gil::section(py, len >= DETACH_ELEMENTS, |gil| {
        plan.apply_with(&args, options, |t, shape| {
            gil.with(|py| unsafe { allocate(py, out.as_ref(), &mut made, &mut scratch, t, shape) })
        })
    });
    drop(args);
    match result {
        // An `out` of a dtype the policy's rule does not cast into: `kernel_call` hands the
        // call to Python, which raises its error (nothing was computed: the allocation comes
        // first).
        Err(e) if out.is_some() && e.message.starts_with(OUT_MISMATCH) => Ok(None),
        Err(e) => Err(kernel_error(py, e)),
        Ok(result) => deliver(py, out, made, result).map(Some),
    }
}

/// The fast lane's one elementwise pass (`ArrayPlan::elementwise`) on `operands` (the
/// operands' buffers): into `out` when it is of the pass's result dtype, aside and then cast
/// into `out` when `policy`'s rule casts the result's dtype into `out`'s (any other `out`:
/// `None`, nothing computed, for `kernel_call`'s other paths), else into a new array of shape
/// `dims` starting `like` bytes into a page (`placed::page_offset`).
///
/// # Safety
/// `out` is a live, writeable, aligned, C-contiguous ndarray of `dims` elements' shape sharing
/// no memory with the operands, of the dtype it names; `operands` hold as many elements.
unsafe fn elementwise<'py>(
    py: Python<'py>,
    policy: &'static Generated,
    e: &Elementwise<'_>,
    [x, y]: [Data; 2],
    out: Option<(*mut numpy::npyffi::PyArrayObject, DType)>,
    dims: &[npyffi::npy_intp],
    like: usize,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let t = e.out_dtype();
    let len = x.len();
    let result = match out {
        // SAFETY: `o` is a live object, borrowed for the call.
        Some((o, d)) if d == t => unsafe { Bound::from_borrowed_ptr(py, o.cast()) },
        // Another dtype the policy's rule casts into: the pass aside, then the cast.
        // (An error asking the rule: `None`, and `kernel_call`'s path raises the library's.)
        Some((o, d)) if out_casts(py, policy, t, d).unwrap_or(false) => {
            let mut scratch = Scratch::take();
            // SAFETY: `aside` is declared after `scratch`, so it is dropped first (or consumed
            // by `deliver`), and `scratch` is not used again; the pass writes every element.
            let Some(mut aside) = (unsafe { scratch.data(t.unit(), len) }) else {
                return Err(pyo3::exceptions::PyMemoryError::new_err(format!(
                    "cannot allocate a {} result of {len} elements",
                    t.name()
                )));
            };
            let done = gil::section(py, len >= DETACH_PASS_ELEMENTS, |_| e.run(x, y, &mut aside));
            done.map_err(|e| kernel_error(py, e))?;
            let shape: Shape = dims.iter().map(|&d| d as usize).collect();
            // SAFETY: the pass wrote every element, a pattern of `t` each.
            let aside = unsafe { Array::output(t, shape, aside) }
                .map_err(|e| PyValueError::new_err(e.to_string()))?;
            // SAFETY: `o` is a live object, borrowed for the call.
            let array = unsafe { Bound::from_borrowed_ptr(py, o.cast()) }
                .cast_into::<PyUntypedArray>()?
                .unbind();
            let out = Out {
                array,
                dtype: d,
                overlaps: false,
                policy,
            };
            return deliver(py, Some(out), None, aside).map(Some);
        }
        Some(_) => return Ok(None),
        None => empty(py, t, dims, Some(like))?.into_any(),
    };
    // SAFETY: `result` is `out` (the caller's contract) or the new array of `len` elements of
    // `t` just made, which only this call holds; the pass writes every element.
    let mut o = unsafe {
        let ptr = (*result.as_ptr().cast::<numpy::npyffi::PyArrayObject>()).data;
        Data::borrowed(t.unit(), ptr.cast::<u8>(), len, true)
    };
    let done = gil::section(py, len >= DETACH_PASS_ELEMENTS, |_| e.run(x, y, &mut o));
    done.map_err(|e| kernel_error(py, e))?;
    Ok(Some(result))
}

/// A new uninitialised NumPy array of `t` and shape `dims`, as NumPy's own new results are
/// (`PyArray_Empty`); starting `at` bytes into a page when that is given and the result is of
/// the sizes `placed` places (`placed::empty_placed`).
fn empty<'py>(
    py: Python<'py>,
    t: DType,
    dims: &[npyffi::npy_intp],
    at: Option<usize>,
) -> PyResult<Bound<'py, PyUntypedArray>> {
    let d = descriptor(py, t)?;
    let bytes = || {
        let n = dims
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d as usize));
        n.and_then(|n| n.checked_mul(t.unit().bytes()))
    };
    if let Some(at) = at
        && let Some(bytes) = bytes().filter(|&b| placed::places(b))
    {
        // SAFETY: an owned descriptor of `t`, whose elements are `t.unit().bytes()` long.
        let d = d.clone().into_ptr().cast();
        let placed = unsafe { placed::empty_placed(py, ndarray_type(py), d, dims, bytes, at) }?;
        if let Some(a) = placed {
            return Ok(a);
        }
    }
    // SAFETY: NumPy's C API as rust-numpy imports it; `PyArray_Empty` steals the descriptor
    // reference given to it, only reads `dims`, and returns a new reference, or NULL with an
    // exception set.
    unsafe {
        let p = npyffi::PY_ARRAY_API.PyArray_Empty(
            py,
            dims.len() as i32,
            dims.as_ptr().cast_mut(),
            d.into_ptr().cast(),
            0,
        );
        // `PyArray_Empty` of subtype 0 makes an `ndarray` (not checked again: the check
        // reads NumPy's type through rust-numpy's API table, 1 % of a 1,000-element `astype`).
        Bound::from_owned_ptr_or_err(py, p).map(|a| a.cast_into_unchecked())
    }
}

/// The kernels' default policy, `numpy`, looked up once.
fn default_policy(py: Python<'_>) -> PyResult<&'static Generated> {
    static NUMPY: std::sync::OnceLock<&'static Generated> = std::sync::OnceLock::new();
    if let Some(p) = NUMPY.get() {
        return Ok(p);
    }
    let p = typejoin::policy("numpy").map_err(|e| crate::policy_error(py, &e))?;
    Ok(NUMPY.get_or_init(|| p))
}

/// One call of a [`kernel`] function: `args` and `kwargs` as Python passed them.
fn kernel_call<'py>(
    py: Python<'py>,
    op: OpId,
    params: &[&str],
    args: &Bound<'py, PyTuple>,
    kwargs: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let name = op.name();
    let type_error = pyo3::exceptions::PyTypeError::new_err;
    if args.len() > params.len() {
        return Err(type_error(format!(
            "{name}() takes {} positional argument(s) but {} were given",
            params.len(),
            args.len()
        )));
    }
    let (mut policy, mut out) = (None, None);
    // At most three parameters (`kernel_params`: `where`).
    let mut named: [Option<Bound<'py, PyAny>>; 3] = [None, None, None];
    if let Some(kwargs) = kwargs {
        for (k, v) in kwargs.iter() {
            let k = k.cast_into::<PyString>()?;
            match k.to_str()? {
                "policy" => policy = Some(v),
                "out" => out = Some(v).filter(|v| !v.is_none()),
                key => match params.iter().position(|p| *p == key) {
                    Some(i) if i >= args.len() => named[i] = Some(v),
                    Some(_) => {
                        return Err(type_error(format!(
                            "{name}() got multiple values for argument '{key}'"
                        )));
                    }
                    None => {
                        return Err(type_error(format!(
                            "{name}() got an unexpected keyword argument '{key}'"
                        )));
                    }
                },
            }
        }
    }
    let operands =
        if named.iter().all(Option::is_none) {
            args.clone()
        } else {
            let mut all: Vec<Bound<'py, PyAny>> = args.iter().collect();
            for (i, p) in params.iter().enumerate().skip(args.len()) {
                all.push(named[i].take().ok_or_else(|| {
                    type_error(format!("{name}() missing required argument: '{p}'"))
                })?);
            }
            PyTuple::new(py, all)?
        };
    if operands.len() < params.len() {
        return Err(type_error(format!(
            "{name}() missing required argument: '{}'",
            params[operands.len()]
        )));
    }
    let generated = match &policy {
        // The kernels' default, `numpy` (a lookup by name: a few nanoseconds).
        None => Some(typejoin::policy("numpy").map_err(|e| crate::policy_error(py, &e))?),
        Some(p) => p
            .cast::<PyString>()
            .ok()
            .and_then(|s| typejoin::policy(s.to_str().ok()?).ok()),
    };
    let call = (op, &operands, ops::Options::default());
    run_or_fallback(py, call, generated, policy, out)
}

/// `op` on `operands` with `options`: natively ([`run`]) under `generated`, the policy's
/// generated form; through `typejoin.reference._native_call` for a `policy` only Python
/// resolves (`generated` is `None`: a `Policy`, a `Table`, a file) and for an `out=` of a dtype
/// the policy's rule does not cast into (for the library's error).
fn run_or_fallback<'py>(
    py: Python<'py>,
    (op, operands, options): (OpId, &Bound<'py, PyTuple>, ops::Options),
    generated: Option<&'static Generated>,
    policy: Option<Bound<'py, PyAny>>,
    out: Option<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    if let Some(generated) = generated {
        match run(py, op, operands, generated, out.as_ref(), options) {
            Err(e) if out.is_some() && is_out_mismatch(py, &e) => {}
            r => return r,
        }
    }
    static FALLBACK: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let fallback = FALLBACK.get_or_try_init(py, || -> PyResult<_> {
        Ok(py
            .import("typejoin.reference")?
            .getattr("_native_call")?
            .unbind())
    })?;
    let policy = match policy {
        Some(p) => p,
        None => PyString::new(py, "numpy").into_any(),
    };
    let dtype = options.dtype.map(DType::name);
    fallback
        .bind(py)
        .call1((op.name(), operands, policy, out, dtype))
}

/// The error of an `out=` whose dtype or shape is not the result's ([`allocate`]).
fn is_out_mismatch(py: Python<'_>, e: &PyErr) -> bool {
    e.is_instance_of::<KernelError>(py)
        && e.value(py)
            .str()
            .is_ok_and(|s| s.to_str().is_ok_and(|s| s.starts_with(OUT_MISMATCH)))
}
