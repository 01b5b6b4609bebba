//! `JoinMemo`: `join`'s answers for dtype-like operands, keyed by the operands' identity, so a
//! repeated `policy.join(np.dtype("int8"), np.dtype("uint8"))` costs one native call and one
//! hash probe (the per-call speed of issue 42: `np.promote_types` is itself one native call).
//!
//! The Python layer decides what may be kept (names, types, NumPy and torch dtypes: immutable,
//! their answer a function of them) and computes every miss; this side only remembers. An entry
//! holds strong references to its operands, so while it lives no other object can take their
//! address: equal pointers mean the same operands.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Mutex;

use pyo3::PyTraverseError;
use pyo3::exceptions::PyRuntimeError;
use pyo3::gc::PyVisit;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::vectorcall;

/// The most answers kept; the memo starts over past it (a program that keeps making new
/// dtype objects cannot grow it without bound).
const CAPACITY: usize = 4096;

struct Entry {
    a: Py<PyAny>,
    b: Py<PyAny>,
    result: Py<PyAny>,
}

/// `join(a, b, *, like=None)` with memory: a hit returns the kept answer; a miss (or any
/// `like=`) calls `slow(a, b, like)`, which returns `(answer, keep)`, and keeps the answer
/// when `keep` is true.
#[pyclass(module = "typejoin._native", frozen)]
pub struct JoinMemo {
    /// `None` once the garbage collector cleared the memo.
    slow: Mutex<Option<Py<PyAny>>>,
    entries: Mutex<Entries>,
}

/// Hashes the pair of addresses: they are already unique, so a multiply mixes them enough.
#[derive(Default)]
struct PairHasher(u64);

impl Hasher for PairHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = (self.0.rotate_left(29) ^ n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

type Entries = HashMap<(usize, usize), Entry, BuildHasherDefault<PairHasher>>;

/// Puts `value` in `memo`, which starts over past [`CAPACITY`]. What is dropped is dropped
/// after the lock is released: dropping an operand may run Python code (a finaliser) that calls
/// back into the memo.
fn keep<K: std::hash::Hash + Eq, V>(
    memo: &Mutex<HashMap<K, V, BuildHasherDefault<PairHasher>>>,
    key: K,
    value: V,
) {
    let old = {
        let mut entries = memo.lock().unwrap_or_else(|p| p.into_inner());
        let old = if entries.len() >= CAPACITY {
            std::mem::take(&mut *entries)
        } else {
            HashMap::default()
        };
        entries.insert(key, value);
        old
    };
    drop(old);
}

fn key(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> (usize, usize) {
    (a.as_ptr() as usize, b.as_ptr() as usize)
}

#[pymethods]
impl JoinMemo {
    #[new]
    fn new(slow: Py<PyAny>) -> Self {
        JoinMemo {
            slow: Mutex::new(Some(slow)),
            entries: Mutex::new(Entries::default()),
        }
    }

    #[pyo3(signature = (a, b, *, like = None))]
    fn join(
        &self,
        py: Python<'_>,
        a: &Bound<'_, PyAny>,
        b: &Bound<'_, PyAny>,
        like: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let k = key(a, b);
        if like.is_none() {
            let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(e) = entries.get(&k) {
                return Ok(e.result.clone_ref(py));
            }
        }
        let slow = match &*self.slow.lock().unwrap_or_else(|p| p.into_inner()) {
            Some(slow) => slow.clone_ref(py),
            None => return Err(PyRuntimeError::new_err("the memo's policy is gone")),
        };
        let out = slow.bind(py).call1((a, b, like))?;
        let out = out.cast_into::<PyTuple>()?;
        let answer = out.get_item(0)?;
        if like.is_none() && out.get_item(1)?.is_truthy()? {
            let entry = Entry {
                a: a.clone().unbind(),
                b: b.clone().unbind(),
                result: answer.clone().unbind(),
            };
            keep(&self.entries, k, entry);
        }
        Ok(answer.unbind())
    }

    /// `join` as a C function of CPython's vectorcall protocol bound to this memo: a kept
    /// answer for two positional operands is found without parsing the arguments as a
    /// method's signature does (`np.promote_types`, the function `join` mirrors, is itself one
    /// C call); any other call goes on to `join`.
    fn entry(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        static DEF: std::sync::OnceLock<vectorcall::Definition> = std::sync::OnceLock::new();
        let def = DEF.get_or_init(|| {
            vectorcall::definition(
                c"join",
                join_fastcall,
                c"join($self, a, b, *, like=None)\n--\n\nThe join of ``a`` and ``b`` under \
                  the policy (``Policy.join``).",
            )
        });
        vectorcall::function(slf.as_any(), *def).map(Bound::unbind)
    }

    /// Forgets every answer.
    fn clear(&self) {
        let old = {
            let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
            std::mem::take(&mut *entries)
        };
        drop(old);
    }

    /// The memo holds its policy (through `slow`) and the policy holds the memo: the cycle
    /// is the garbage collector's to break.
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        if let Ok(slow) = self.slow.try_lock()
            && let Some(slow) = &*slow
        {
            visit.call(slow)?;
        }
        if let Ok(entries) = self.entries.try_lock() {
            for e in entries.values() {
                visit.call(&e.a)?;
                visit.call(&e.b)?;
                visit.call(&e.result)?;
            }
        }
        Ok(())
    }

    fn __clear__(&self) {
        let slow = self.slow.lock().unwrap_or_else(|p| p.into_inner()).take();
        drop(slow);
        self.clear();
    }

    /// How many answers are kept.
    fn __len__(&self) -> usize {
        self.entries.lock().unwrap_or_else(|p| p.into_inner()).len()
    }
}

/// The C entry of [`JoinMemo::entry`]'s function: a kept answer for two positional operands
/// straight from the argument array; anything else through the `join` method.
unsafe extern "C" fn join_fastcall(
    memo: *mut pyo3::ffi::PyObject,
    args: *const *mut pyo3::ffi::PyObject,
    nargs: pyo3::ffi::Py_ssize_t,
    kwnames: *mut pyo3::ffi::PyObject,
) -> *mut pyo3::ffi::PyObject {
    // SAFETY: CPython calls a function of `METH_FASTCALL` with the thread attached.
    let py = unsafe { Python::assume_attached() };
    vectorcall::run(py, "join", || {
        // SAFETY: `memo` is the object `entry` made the function with, borrowed for the call.
        let memo = unsafe { Bound::from_borrowed_ptr(py, memo) };
        if kwnames.is_null() && nargs == 2 {
            // SAFETY: the vectorcall contract: `args` holds the two positional arguments.
            let k = unsafe { (*args as usize, *args.add(1) as usize) };
            let m = memo.cast::<JoinMemo>()?;
            if let Some(e) = locked(&m.get().entries).get(&k) {
                return Ok(e.result.clone_ref(py));
            }
        }
        // SAFETY: the vectorcall contract, as above.
        let args = unsafe { vectorcall::Arguments::read(py, args, nargs, kwnames) }?;
        Ok(args.call_method(&memo, pyo3::intern!(py, "join"))?.unbind())
    })
}

/// The most operands a kept `result_type` answer has; calls with more are not kept.
const KEPT_OPERANDS: usize = 4;

/// How an operand of one type is keyed, as the Python layer classifies the type (its
/// `_memo_kind`, asked once per type): not at all, by identity (names, types, NumPy and
/// PyTorch dtypes), by type alone (Python bools, floats and complex numbers: their kind decides),
/// or by its `dtype`'s identity and whether it is zero-dim (NumPy and PyTorch arrays; with the
/// type's getters of the two where they can be called directly).
#[derive(Clone, Copy)]
enum Kind {
    Never,
    Identity,
    Type,
    DtypeAndRank(Option<Getters>),
}

/// The getters of a type's `ndim` and `dtype`, where its attribute look-up is CPython's generic
/// one (`tp_getattro` is `PyObject_GenericGetAttr`: no `__getattribute__` or `__getattr__` of
/// its own) and each name's first definition along the MRO is a `getset_descriptor` (a data
/// descriptor, so an instance's `__dict__` cannot shadow it). Calling the descriptor's
/// `tp_descr_get` is then what `getattr` does, without the look-up: two `torch.Tensor`
/// operands' `result_type` spends four reads. The descriptors are kept alive by the memo
/// (`types`); one assigned over later on a class (`torch.Tensor.ndim = ...`) is not seen.
#[derive(Clone, Copy)]
struct Getters {
    get: unsafe extern "C" fn(
        *mut pyo3::ffi::PyObject,
        *mut pyo3::ffi::PyObject,
        *mut pyo3::ffi::PyObject,
    ) -> *mut pyo3::ffi::PyObject,
    /// The descriptors' addresses.
    ndim: usize,
    dtype: usize,
}

impl Getters {
    /// The getters of `ty`'s `ndim` and `dtype` (see [`Getters`]), with the two descriptors to
    /// keep; `None` where a type does not qualify.
    fn of(ty: &Bound<'_, pyo3::types::PyType>) -> PyResult<Option<(Getters, [Py<PyAny>; 2])>> {
        use pyo3::ffi;
        let py = ty.py();
        // SAFETY: `ty` is a live type object; every type has a `tp_getattro` slot to read
        // (static types too, since Python 3.10, the package's least).
        let getattro = unsafe { ffi::PyType_GetSlot(ty.as_type_ptr(), ffi::Py_tp_getattro) };
        if getattro != ffi::PyObject_GenericGetAttr as *mut std::ffi::c_void {
            return Ok(None);
        }
        let getset = py
            .get_type::<pyo3::types::PyType>()
            .getattr(pyo3::intern!(py, "__dict__"))?
            .get_item("__name__")?
            .get_type();
        let find = |name: &str| -> PyResult<Option<Bound<'_, PyAny>>> {
            for class in ty.getattr(pyo3::intern!(py, "__mro__"))?.try_iter()? {
                let dict = class?.getattr(pyo3::intern!(py, "__dict__"))?;
                if dict.contains(name)? {
                    let d = dict.get_item(name)?;
                    return Ok(d.get_type().is(&getset).then_some(d));
                }
            }
            Ok(None)
        };
        let (Some(ndim), Some(dtype)) = (find("ndim")?, find("dtype")?) else {
            return Ok(None);
        };
        // SAFETY: `getset_descriptor` is a live type; its `tp_descr_get` slot is read.
        let get = unsafe { ffi::PyType_GetSlot(getset.as_type_ptr(), ffi::Py_tp_descr_get) };
        if get.is_null() {
            return Ok(None);
        }
        // SAFETY: the `tp_descr_get` slot holds a `descrgetfunc`.
        let get: ffi::descrgetfunc = unsafe { std::mem::transmute(get) };
        let getters = Getters {
            get,
            ndim: ndim.as_ptr() as usize,
            dtype: dtype.as_ptr() as usize,
        };
        Ok(Some((getters, [ndim.unbind(), dtype.unbind()])))
    }

    /// `x.ndim == 0` and `x.dtype`, as `getattr` reads them.
    fn read<'py>(&self, x: &Bound<'py, PyAny>) -> PyResult<(bool, Bound<'py, PyAny>)> {
        let py = x.py();
        let ty = x.get_type();
        let call = |descriptor: usize| {
            // SAFETY: `descriptor` is a `getset_descriptor` of `x`'s type's MRO, alive while
            // the memo holds it (`types`); `get` is its type's `tp_descr_get`, which takes
            // (descriptor, object, type) and returns a new reference, or NULL with an
            // exception set.
            unsafe {
                Bound::from_owned_ptr_or_err(
                    py,
                    (self.get)(
                        descriptor as *mut pyo3::ffi::PyObject,
                        x.as_ptr(),
                        ty.as_ptr(),
                    ),
                )
            }
        };
        let ndim: usize = call(self.ndim)?.extract()?;
        Ok((ndim == 0, call(self.dtype)?))
    }
}

/// One operand's part of a key: its type, the object whose identity stands for it (itself,
/// or its dtype; 0 for a key by type alone) and whether it is zero-dim.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
struct Part {
    ty: usize,
    id: usize,
    zero_dim: bool,
}

type Key = ([Part; KEPT_OPERANDS], usize);

/// A kept answer, with strong references to every object its key names by address (so no
/// other object can take that address while it lives).
struct Kept {
    refs: Vec<Py<PyAny>>,
    result: Py<PyAny>,
}

/// `result_type(*operands, like=None, _raise=True)` with memory, for operands whose answer is
/// a function of their key (`Kind`): a hit returns the kept answer; a miss, any `like=` or an
/// operand of a kind never kept calls `slow(operands, like, _raise)`, which returns `(answer,
/// keep)`, and keeps the answer when `keep` is true (the Python layer decides what may be kept
/// and computes every miss; this side only remembers, as [`JoinMemo`] does for `join`).
#[pyclass(module = "typejoin._native", frozen)]
pub struct ResultTypeMemo {
    /// `slow` and `kind_of` (the Python layer's type classifier); `None` once the garbage
    /// collector cleared the memo.
    calls: Mutex<Option<(Py<PyAny>, Py<PyAny>)>>,
    /// Each type's `Kind`, by the type's address (types seen are kept alive by `types`).
    kinds: Mutex<HashMap<usize, Kind, BuildHasherDefault<PairHasher>>>,
    types: Mutex<Vec<Py<PyAny>>>,
    entries: Mutex<HashMap<Key, Kept, BuildHasherDefault<PairHasher>>>,
}

fn locked<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A call's operands, inline for as many as a key holds.
type Operands<'py> = smallvec::SmallVec<[Bound<'py, PyAny>; KEPT_OPERANDS]>;

impl ResultTypeMemo {
    /// The kept answer for `operands`, if there is one.
    fn hit(&self, py: Python<'_>, operands: &[Bound<'_, PyAny>]) -> PyResult<Option<Py<PyAny>>> {
        let Some(k) = self.key(operands, None)? else {
            return Ok(None);
        };
        Ok(locked(&self.entries)
            .get(&k)
            .map(|e| e.result.clone_ref(py)))
    }

    fn calls(&self, py: Python<'_>) -> PyResult<(Py<PyAny>, Py<PyAny>)> {
        match &*locked(&self.calls) {
            Some((slow, kind)) => Ok((slow.clone_ref(py), kind.clone_ref(py))),
            None => Err(PyRuntimeError::new_err("the memo's policy is gone")),
        }
    }

    /// The `Kind` of each operand's type (one look-up under one lock), the Python layer asked
    /// the first time a type is met.
    fn kinds(&self, operands: &[Bound<'_, PyAny>]) -> PyResult<[Kind; KEPT_OPERANDS]> {
        let mut kinds = [Kind::Never; KEPT_OPERANDS];
        let mut unknown = None;
        {
            let known = locked(&self.kinds);
            for (k, x) in kinds.iter_mut().zip(operands.iter()) {
                match known.get(&(x.get_type().as_ptr() as usize)) {
                    Some(kind) => *k = *kind,
                    None => {
                        unknown = Some(x);
                        break;
                    }
                }
            }
        }
        let Some(x) = unknown else {
            return Ok(kinds);
        };
        let ty = x.get_type();
        let (_, kind_of) = self.calls(x.py())?;
        let kind = match kind_of.bind(x.py()).call1((&ty,))?.extract::<u8>()? {
            1 => Kind::Identity,
            2 => Kind::Type,
            3 => match Getters::of(&ty)? {
                Some((getters, descriptors)) => {
                    locked(&self.types).extend(descriptors);
                    Kind::DtypeAndRank(Some(getters))
                }
                None => Kind::DtypeAndRank(None),
            },
            _ => Kind::Never,
        };
        if locked(&self.kinds)
            .insert(ty.as_ptr() as usize, kind)
            .is_none()
        {
            locked(&self.types).push(ty.into_any().unbind());
        }
        self.kinds(operands)
    }

    /// The key of `operands`; `None` where the answer is not kept. With `refs`, the objects the
    /// key names by address are pushed to it (a new entry holds them).
    fn key(
        &self,
        operands: &[Bound<'_, PyAny>],
        mut refs: Option<&mut Vec<Py<PyAny>>>,
    ) -> PyResult<Option<Key>> {
        if operands.len() > KEPT_OPERANDS {
            return Ok(None);
        }
        let kinds = self.kinds(operands)?;
        let mut parts = [Part::default(); KEPT_OPERANDS];
        for ((part, x), kind) in parts.iter_mut().zip(operands.iter()).zip(kinds) {
            let ty = x.get_type().as_ptr() as usize;
            let named = match kind {
                Kind::Never => return Ok(None),
                Kind::Type => None,
                Kind::Identity => Some((x.clone(), false)),
                Kind::DtypeAndRank(Some(getters)) => {
                    let (zero_dim, dtype) = getters.read(x)?;
                    Some((dtype, zero_dim))
                }
                Kind::DtypeAndRank(None) => {
                    let py = x.py();
                    let ndim: usize = x.getattr(pyo3::intern!(py, "ndim"))?.extract()?;
                    Some((x.getattr(pyo3::intern!(py, "dtype"))?, ndim == 0))
                }
            };
            *part = match named {
                None => Part {
                    ty,
                    id: 0,
                    zero_dim: false,
                },
                Some((object, zero_dim)) => {
                    let id = object.as_ptr() as usize;
                    if let Some(refs) = refs.as_deref_mut() {
                        refs.push(object.unbind());
                    }
                    Part { ty, id, zero_dim }
                }
            };
        }
        Ok(Some((parts, operands.len())))
    }
}

#[pymethods]
impl ResultTypeMemo {
    #[new]
    fn new(slow: Py<PyAny>, kind_of: Py<PyAny>) -> Self {
        ResultTypeMemo {
            calls: Mutex::new(Some((slow, kind_of))),
            kinds: Mutex::new(HashMap::default()),
            types: Mutex::new(Vec::new()),
            entries: Mutex::new(HashMap::default()),
        }
    }

    #[pyo3(signature = (*operands, like = None, _raise = true))]
    fn result_type(
        &self,
        py: Python<'_>,
        operands: &Bound<'_, PyTuple>,
        like: Option<&Bound<'_, PyAny>>,
        _raise: bool,
    ) -> PyResult<Py<PyAny>> {
        let all: Operands<'_> = operands.iter().collect();
        if like.is_none()
            && let Some(hit) = self.hit(py, &all)?
        {
            return Ok(hit);
        }
        let (slow, _) = self.calls(py)?;
        let out = slow.bind(py).call1((operands, like, _raise))?;
        let out = out.cast_into::<PyTuple>()?;
        let answer = out.get_item(0)?;
        if like.is_none() && out.get_item(1)?.is_truthy()? {
            // The key with the objects it names (a miss is rare: reading twice is cheap).
            let mut refs = Vec::new();
            let Some(k) = self.key(&all, Some(&mut refs))? else {
                return Ok(answer.unbind());
            };
            let kept = Kept {
                refs,
                result: answer.clone().unbind(),
            };
            keep(&self.entries, k, kept);
        }
        Ok(answer.unbind())
    }

    /// `result_type` as a C function of CPython's vectorcall protocol (`METH_FASTCALL`) bound
    /// to this memo: its operands arrive as an array, so a kept answer is found without the
    /// tuple (a container the garbage collector tracks) a method's `*operands` makes; a call
    /// with keywords, or a miss, goes on to `result_type`.
    fn entry(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        static DEF: std::sync::OnceLock<vectorcall::Definition> = std::sync::OnceLock::new();
        let def = DEF.get_or_init(|| {
            vectorcall::definition(
                c"result_type",
                result_type_fastcall,
                c"result_type($self, *operands, like=None, _raise=True)\n--\n\nThe result \
                  dtype of ``operands`` under the policy (``Policy.result_type``).",
            )
        });
        vectorcall::function(slf.as_any(), *def).map(Bound::unbind)
    }

    /// Forgets every answer.
    fn clear(&self) {
        let old = std::mem::take(&mut *locked(&self.entries));
        drop(old);
    }

    /// The memo holds its policy (through `slow`), which holds the memo: the garbage
    /// collector breaks the cycle.
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        if let Ok(calls) = self.calls.try_lock()
            && let Some((slow, kind)) = &*calls
        {
            visit.call(slow)?;
            visit.call(kind)?;
        }
        if let Ok(entries) = self.entries.try_lock() {
            for e in entries.values() {
                for r in &e.refs {
                    visit.call(r)?;
                }
                visit.call(&e.result)?;
            }
        }
        Ok(())
    }

    fn __clear__(&self) {
        let calls = locked(&self.calls).take();
        drop(calls);
        self.clear();
    }

    /// How many answers are kept.
    fn __len__(&self) -> usize {
        locked(&self.entries).len()
    }
}

/// The C entry of [`ResultTypeMemo::entry`]'s function: a kept answer for positional operands
/// straight from the argument array; anything else through the `result_type` method. Errors
/// become Python exceptions, a panic a `PanicException`, as PyO3's own methods do.
unsafe extern "C" fn result_type_fastcall(
    memo: *mut pyo3::ffi::PyObject,
    args: *const *mut pyo3::ffi::PyObject,
    nargs: pyo3::ffi::Py_ssize_t,
    kwnames: *mut pyo3::ffi::PyObject,
) -> *mut pyo3::ffi::PyObject {
    // SAFETY: CPython calls a function of `METH_FASTCALL` with the thread attached.
    let py = unsafe { Python::assume_attached() };
    vectorcall::run(py, "result_type", || {
        // SAFETY: `memo` is the object `entry` made the function with; the vectorcall
        // contract: `args` holds `nargs` positional arguments then one per name in `kwnames`
        // (a tuple, or NULL), all borrowed for the call.
        let memo = unsafe { Bound::from_borrowed_ptr(py, memo) };
        let args = unsafe { vectorcall::Arguments::read(py, args, nargs, kwnames) }?;
        if args.names.is_none() && args.positional <= KEPT_OPERANDS {
            let operands: Operands<'_> = (0..args.positional).map(|k| args.get(py, k)).collect();
            let m = memo.cast::<ResultTypeMemo>()?;
            if let Some(hit) = m.get().hit(py, &operands)? {
                return Ok(hit);
            }
        }
        Ok(args
            .call_method(&memo, pyo3::intern!(py, "result_type"))?
            .unbind())
    })
}
