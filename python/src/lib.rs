//! `typejoin._native`: the Rust side of the Python package. It only converts: Python values in,
//! one typejoin library call, Python values (or the library's own JSON and text renderings)
//! out. The Python layer (`python/typejoin/`) builds the public API on it.

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyTuple};

use typejoin::Input;
use typejoin::kernels::array::{Array, Data};
use typejoin::kernels::ops::{self, Arg, Scalar};
use typejoin::numeric::dtype::DType;
use typejoin::output::render::ReportOptions;
use typejoin::policy::diag::LoadError;

pyo3::create_exception!(
    typejoin,
    PolicyError,
    PyValueError,
    "A policy file or observed table that cannot be read: `.path`, `.line`, `.column` locate \
     the first problem, `str()` is the CLI's message (every problem, with help)."
);

pyo3::create_exception!(
    typejoin,
    KernelError,
    PyValueError,
    "A reference kernel refused its operands: `.kind` is the runner's error kind (promotion, \
     overflow, unsupported, zero-division, input)."
);

/// The shipped policies, embedded: (name, file text).
const SHIPPED: [(&str, &str); 8] = [
    ("array-api", include_str!("../../lattices/array-api.toml")),
    ("jax", include_str!("../../lattices/jax.toml")),
    ("jax-strict", include_str!("../../lattices/jax-strict.toml")),
    ("jax-x32", include_str!("../../lattices/jax-x32.toml")),
    ("python", include_str!("../../lattices/python.toml")),
    ("tensorflow", include_str!("../../lattices/tensorflow.toml")),
    ("torch", include_str!("../../lattices/torch.toml")),
    (
        "torch-float64",
        include_str!("../../lattices/torch-float64.toml"),
    ),
];

fn policy_error(py: Python<'_>, e: &LoadError) -> PyErr {
    let err = PolicyError::new_err(e.render(false));
    if let Some(d) = e.diagnostics.first() {
        let value = err.value(py);
        let _ = value.setattr("path", d.path.clone());
        let _ = value.setattr("line", d.line);
        let _ = value.setattr("column", d.col);
        let _ = value.setattr("help", d.help.clone());
        let _ = value.setattr(
            "messages",
            e.diagnostics
                .iter()
                .map(|d| d.message.clone())
                .collect::<Vec<_>>(),
        );
    }
    err
}

/// A parsed policy or observed table.
#[pyclass(module = "typejoin._native", frozen)]
struct Loaded {
    input: Input,
}

impl Loaded {
    fn policy(&self, what: &str) -> PyResult<&typejoin::Policy> {
        match &self.input {
            Input::Policy { policy, .. } => Ok(policy),
            Input::Observed(_) => Err(PyValueError::new_err(format!(
                "{what} needs a policy (a .toml): an observed table has no formats or edges"
            ))),
        }
    }
}

#[pymethods]
impl Loaded {
    /// "policy" or "table".
    #[getter]
    fn kind(&self) -> &'static str {
        match self.input {
            Input::Policy { .. } => "policy",
            Input::Observed(_) => "table",
        }
    }

    #[getter]
    fn name(&self) -> String {
        self.input.name().to_string()
    }

    /// Every node, in table order (dtypes, weak types, category nodes).
    #[getter]
    fn nodes(&self) -> Vec<String> {
        self.input.table().names.clone()
    }

    /// The laws (exhaustive engine) and lints: (the `check --format json` entry, the human
    /// report).
    fn check(&self, py: Python<'_>, witnesses: usize) -> PyResult<(String, String)> {
        let o = ReportOptions {
            witnesses,
            verbose: true,
            color: false,
        };
        let opts = typejoin::check::Options {
            witnesses,
            ..typejoin::check::Options::with(typejoin::Engine::Exhaustive)
        };
        let checked = py
            .detach(|| typejoin::check::check(&self.input, opts))
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        let json = typejoin::output::render::json_file(&checked, o).to_string();
        Ok((json, typejoin::output::render::human(&checked, o)))
    }

    /// (node, dtype, error) of the n-ary result of `operands` (names, `i*`, `int8@0d`, …).
    fn result_type(
        &self,
        operands: Vec<String>,
    ) -> PyResult<(Option<String>, Option<String>, Option<String>)> {
        match typejoin::design::result_type::result_type(&self.input, &operands) {
            Ok(r) => Ok((r.node, r.dtype, r.error)),
            Err(e) => Err(PyValueError::new_err(match e.suggestion {
                Some(s) => format!(
                    "`{}` is not an operand of `{}`; did you mean `{s}`?",
                    e.operand,
                    self.input.name()
                ),
                None => format!(
                    "`{}` is not an operand of `{}`",
                    e.operand,
                    self.input.name()
                ),
            })),
        }
    }

    /// (names, rows): every cell of the join table, `None` where there is no join; with
    /// `materialise`, nodes as the dtype the library returns.
    fn table(&self, materialise: bool) -> (Vec<String>, Vec<Vec<Option<String>>>) {
        let owned = materialise.then(|| self.input.materialised_table());
        let t = owned.as_ref().unwrap_or_else(|| self.input.table());
        let rows = (0..t.n())
            .map(|a| {
                (0..t.n())
                    .map(|b| t.get(a, b).map(|j| t.name(j).to_string()))
                    .collect()
            })
            .collect();
        (t.names.clone(), rows)
    }

    /// (same, text, json) of where `self` and `other` disagree.
    fn diff(&self, other: &Loaded, materialise: bool) -> (bool, String, String) {
        let d = typejoin::design::diff::diff(&self.input, &other.input, materialise);
        (
            d.same(),
            typejoin::output::diff::text(&d),
            typejoin::output::diff::json(&d),
        )
    }

    /// (json, text) of what every edge and join does to values (`typejoin safety`).
    fn safety(&self, py: Python<'_>) -> PyResult<(String, String)> {
        let policy = self.policy("safety")?;
        let Input::Policy { joins, .. } = &self.input else {
            unreachable!("a policy")
        };
        let conversions = py.detach(|| {
            typejoin::safety::analyse(policy, &joins.table, typejoin::safety::Engine::Search)
        });
        Ok((
            typejoin::output::safety::json(&policy.name, &conversions),
            typejoin::output::safety::text(&conversions),
        ))
    }

    /// (json, text) of where a new dtype `name` can go (`typejoin suggest`).
    #[pyo3(signature = (name, format_of=None, max_degree=2, top=5))]
    fn suggest(
        &self,
        py: Python<'_>,
        name: &str,
        format_of: Option<&str>,
        max_degree: usize,
        top: usize,
    ) -> PyResult<(String, String)> {
        let policy = self.policy("suggest")?;
        let name = typejoin::numeric::dtype::canonical(name).unwrap_or(name);
        let decl = format_of
            .map(typejoin::design::suggest::parse_format)
            .transpose()
            .map_err(|e| PyValueError::new_err(format!("format_of: {e}")))?;
        let options = typejoin::design::suggest::Options { max_degree, top };
        let s = py
            .detach(|| typejoin::design::suggest::suggest(policy, name, decl.as_ref(), options))
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok((
            typejoin::output::suggest::json(&s),
            typejoin::output::suggest::text(&s),
        ))
    }

    /// The Hasse diagram as DOT (a policy's edges styled by safety class; a table's violations
    /// marked).
    fn dot(&self) -> String {
        use typejoin::output::dot;
        match &self.input {
            Input::Policy {
                policy, lattice, ..
            } => dot::to_dot(&dot::diagram(
                policy,
                lattice,
                None,
                typejoin::safety::Engine::Search,
            )),
            Input::Observed(o) => {
                let report = self.input.check(typejoin::CheckOptions::default());
                dot::to_dot(&dot::table_diagram(&o.name, &o.table, &report))
            }
        }
    }
}

/// Parses a policy (`.toml`) or an observed table (`.json`, by content) from its text.
#[pyfunction]
fn parse(py: Python<'_>, path: &str, text: &str) -> PyResult<Loaded> {
    Input::parse(path, text)
        .map(|input| Loaded { input })
        .map_err(|e| policy_error(py, &e))
}

/// The shipped policies: (name, file text).
#[pyfunction]
fn shipped() -> Vec<(&'static str, &'static str)> {
    SHIPPED.to_vec()
}

/// DOT text rendered by Graphviz's `dot` (`svg` or `png`).
#[pyfunction]
fn render(py: Python<'_>, dot: &str, format: &str) -> PyResult<Vec<u8>> {
    py.detach(|| typejoin::output::dot::render(dot, format))
        .map_err(PyRuntimeError::new_err)
}

/// The ops of the reference kernels from the op catalogue, as (name, arity): `unary`,
/// `binary`, `cast`, `reduction`, `ternary` or `select`.
#[pyfunction]
fn kernel_ops() -> Vec<(&'static str, &'static str)> {
    use typejoin::numeric::op::Arity;
    typejoin::numeric::op::CATALOGUE
        .iter()
        .filter(|o| o.kernel)
        .map(|o| {
            let arity = match o.arity {
                Arity::Unary => "unary",
                Arity::Binary => "binary",
                Arity::Cast => "cast",
                Arity::Reduction => "reduction",
                Arity::Ternary => "ternary",
                Arity::Select => "select",
            };
            (o.name, arity)
        })
        .collect()
}

/// A contiguous array's storage read from `nbytes` bytes at `address`.
///
/// # Safety
/// `address` must point to `nbytes` readable bytes that stay valid and unchanged during the
/// call: the Python layer passes `arr.__array_interface__["data"][0]` of a C-contiguous array
/// it holds a reference to.
unsafe fn read_data(dtype: DType, address: usize, nbytes: usize) -> PyResult<Data> {
    use typejoin::numeric::dtype::Unit;
    let unit = dtype.unit().bytes();
    if !nbytes.is_multiple_of(unit) {
        return Err(PyValueError::new_err(format!(
            "{nbytes} bytes are not a whole number of {} elements",
            dtype.name()
        )));
    }
    let n = nbytes / unit;
    /// `v` (emptied) holding `n` elements of `T` copied from `address` (one memcpy).
    ///
    /// # Safety
    /// `n * size_of::<T>()` readable bytes at `address`; `T` a plain integer (array).
    unsafe fn copied<T: Copy>(mut v: Vec<T>, address: usize, n: usize) -> Vec<T> {
        v.clear();
        v.reserve(n);
        // SAFETY: the caller's contract covers the source; the destination has capacity for
        // `n` elements; integers have no invalid bit patterns, so `set_len` after the copy
        // exposes only initialised values.
        unsafe {
            std::ptr::copy_nonoverlapping(
                address as *const u8,
                v.as_mut_ptr().cast::<u8>(),
                n * size_of::<T>(),
            );
            v.set_len(n);
        }
        v
    }
    if n == 0 {
        return Ok(Data::zeros(dtype.unit(), 0));
    }
    macro_rules! fill {
        ($variant:ident) => {{
            let v = match spare(dtype.unit(), n) {
                Some(Data::$variant(v)) => v,
                _ => Vec::new(),
            };
            // SAFETY: the caller's contract: `nbytes` = `n` elements readable at `address`.
            Data::$variant(unsafe { copied(v, address, n) })
        }};
    }
    Ok(match dtype.unit() {
        Unit::U8 => fill!(U8),
        Unit::U16 => fill!(U16),
        Unit::U32 => fill!(U32),
        Unit::U64 => fill!(U64),
        Unit::C64 => fill!(C64),
        Unit::C128 => fill!(C128),
    })
}

/// Storage of earlier calls' operands and results, reused for the next operands' copies: a
/// fresh allocation of tens of megabytes is paid again in page faults on every call (most of
/// `reference.add`'s time at 1e7 elements on this project's machine), memory the process has
/// touched is not. At most [`SPARE_BYTES`] are kept.
static SPARE: std::sync::Mutex<Vec<Data>> = std::sync::Mutex::new(Vec::new());
const SPARE_BYTES: usize = 256 << 20;

fn capacity_bytes(d: &Data) -> usize {
    match d {
        Data::U8(v) => v.capacity(),
        Data::U16(v) => v.capacity() * 2,
        Data::U32(v) => v.capacity() * 4,
        Data::U64(v) => v.capacity() * 8,
        Data::C64(v) => v.capacity() * 8,
        Data::C128(v) => v.capacity() * 16,
    }
}

/// A kept buffer of `unit` with room for `n` elements, if there is one.
fn spare(unit: typejoin::numeric::dtype::Unit, n: usize) -> Option<Data> {
    let mut kept = SPARE.lock().unwrap_or_else(|e| e.into_inner());
    let i = kept
        .iter()
        .position(|d| d.unit() == unit && capacity_bytes(d) >= n * unit.bytes())?;
    Some(kept.swap_remove(i))
}

/// Keeps `d` for a later call (the oldest kept go first beyond [`SPARE_BYTES`]).
fn recycle(d: Data) {
    let bytes = capacity_bytes(&d);
    if !(1 << 20..=SPARE_BYTES).contains(&bytes) {
        return; // small buffers come cheap; a huge one is not kept
    }
    let mut kept = SPARE.lock().unwrap_or_else(|e| e.into_inner());
    kept.push(d);
    while kept.iter().map(capacity_bytes).sum::<usize>() > SPARE_BYTES {
        kept.remove(0);
    }
}

/// The bytes of an array's storage (native-endian).
fn bytes_of(data: &Data) -> &[u8] {
    fn raw<T>(v: &[T]) -> &[u8] {
        // SAFETY: `T` is an integer or an array of integers: no padding, every byte
        // initialised; the slice covers exactly the vector's elements.
        unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
    }
    match data {
        Data::U8(v) => v,
        Data::U16(v) => raw(v),
        Data::U32(v) => raw(v),
        Data::U64(v) => raw(v),
        Data::C64(v) => raw(v),
        Data::C128(v) => raw(v),
    }
}

fn dtype_named(name: &str) -> PyResult<DType> {
    typejoin::numeric::dtype::canonical(name)
        .and_then(DType::named)
        .ok_or_else(|| PyValueError::new_err(format!("unknown dtype `{name}`")))
}

/// The data pointer of a NumPy array: `PyArray_DATA`, the field that follows the object
/// header in `PyArrayObject` (NumPy's stable ABI, what every compiled extension reads; the
/// buffer protocol is not in the limited API of CPython 3.9).
fn ndarray_data(a: &Bound<'_, PyAny>) -> PyResult<usize> {
    static NDARRAY: pyo3::sync::PyOnceLock<Py<pyo3::types::PyType>> = pyo3::sync::PyOnceLock::new();
    let py = a.py();
    let ndarray = NDARRAY.get_or_try_init(py, || -> PyResult<_> {
        Ok(py
            .import("numpy")?
            .getattr("ndarray")?
            .cast_into::<pyo3::types::PyType>()?
            .unbind())
    })?;
    if !a.get_type().is(ndarray.bind(py)) {
        return Err(PyValueError::new_err(
            "an array operand must be a numpy.ndarray",
        ));
    }
    // SAFETY: `a` is exactly a `numpy.ndarray`, whose C layout starts with the object header
    // and then `char *data` (PyArrayObject_fields); it is alive for the borrow of `a`.
    Ok(unsafe {
        *(a.as_ptr() as *const u8)
            .add(size_of::<pyo3::ffi::PyObject>())
            .cast::<usize>()
    })
}

/// One operand from the Python layer: `("array", dtype, shape, ndarray, nbytes)` or
/// `("bool" | "int" | "float" | "complex", value)`.
fn operand(spec: &Bound<'_, PyTuple>) -> PyResult<Arg> {
    let tag: String = spec.get_item(0)?.extract()?;
    Ok(match tag.as_str() {
        "array" => {
            let dtype = dtype_named(&spec.get_item(1)?.extract::<String>()?)?;
            let shape: Vec<usize> = spec.get_item(2)?.extract()?;
            let nbytes: usize = spec.get_item(4)?.extract()?;
            let address = ndarray_data(&spec.get_item(3)?)?;
            // SAFETY: the Python layer's contract (`read_data`): a C-contiguous array it holds.
            let data = unsafe { read_data(dtype, address, nbytes)? };
            Arg::Array(
                Array::new(dtype, shape, data).map_err(|e| PyValueError::new_err(e.to_string()))?,
            )
        }
        "bool" => Arg::Scalar(Scalar::Bool(spec.get_item(1)?.extract()?)),
        "int" => Arg::Scalar(Scalar::Int(spec.get_item(1)?.extract()?)),
        "float" => Arg::Scalar(Scalar::Float(spec.get_item(1)?.extract()?)),
        "complex" => {
            let (re, im): (f64, f64) = spec.get_item(1)?.extract()?;
            Arg::Scalar(Scalar::Complex(re, im))
        }
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown operand tag `{other}`"
            )));
        }
    })
}

/// Runs kernel `op` under the generated `policy` and returns (dtype, shape, data): the result's
/// storage in a new bytearray, or, with `out = (address, nbytes)`, written there (after
/// checking its size) and `None` returned as data. The GIL is released while it computes.
#[pyfunction]
#[pyo3(signature = (policy, op, args, dtype=None, axis=None, out=None))]
#[allow(clippy::type_complexity)]
fn run<'py>(
    py: Python<'py>,
    policy: &str,
    op: &str,
    args: Vec<Bound<'py, PyTuple>>,
    dtype: Option<&str>,
    axis: Option<usize>,
    out: Option<(usize, usize)>,
) -> PyResult<(String, Vec<usize>, Option<Bound<'py, PyByteArray>>)> {
    let generated = typejoin::kernels::policy(policy).map_err(|e| policy_error(py, &e))?;
    let args: Vec<Arg> = args.iter().map(operand).collect::<PyResult<_>>()?;
    let options = ops::Options {
        dtype: dtype.map(dtype_named).transpose()?,
        axis,
    };
    let result = py
        .detach(|| {
            let r = ops::apply(generated, op, &args, options);
            for a in args {
                if let Arg::Array(a) = a {
                    recycle(a.into_data());
                }
            }
            r
        })
        .map_err(|e| {
            let err = KernelError::new_err(e.message.clone());
            let _ = err.value(py).setattr("kind", e.kind.key());
            err
        })?;
    let unit = result.data().len();
    let nbytes = if unit == 0 {
        0
    } else {
        result.len() * result.dtype().unit().bytes()
    };
    let (name, shape) = (result.dtype().name().to_string(), result.shape().to_vec());
    match out {
        Some((address, size)) => {
            if size != nbytes {
                return Err(PyValueError::new_err(format!(
                    "out= holds {size} bytes, the result {} {:?} needs {nbytes}",
                    name, shape
                )));
            }
            if nbytes > 0 {
                // SAFETY: the Python layer passes a writable C-contiguous array it holds, of
                // `size` bytes, checked equal to the result's size above.
                let dst = unsafe { std::slice::from_raw_parts_mut(address as *mut u8, size) };
                py.detach(|| dst.copy_from_slice(bytes_of(result.data())));
            }
            recycle(result.into_data());
            Ok((name, shape, None))
        }
        None => {
            let buf = PyByteArray::new(py, bytes_of(result.data()));
            recycle(result.into_data());
            Ok((name, shape, Some(buf)))
        }
    }
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Loaded>()?;
    m.add_function(wrap_pyfunction!(parse, m)?)?;
    m.add_function(wrap_pyfunction!(shipped, m)?)?;
    m.add_function(wrap_pyfunction!(render, m)?)?;
    m.add_function(wrap_pyfunction!(kernel_ops, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add("PolicyError", m.py().get_type::<PolicyError>())?;
    m.add("KernelError", m.py().get_type::<KernelError>())?;
    Ok(())
}
