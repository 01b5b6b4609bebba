//! Functions of CPython's vectorcall protocol (`METH_FASTCALL | METH_KEYWORDS`): the arguments
//! arrive as an array, no tuple or dict is made. The per-call entries of the package (the
//! kernel functions, `result_type` and `join`) are such functions; this module holds what they
//! share: making one bound to an object, reading its arguments, and turning its `PyResult` (or
//! a panic) into what CPython expects.

use pyo3::exceptions::PyValueError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};

/// The C signature of such a function.
pub type Entry = unsafe extern "C" fn(
    *mut ffi::PyObject,
    *const *mut ffi::PyObject,
    ffi::Py_ssize_t,
    *mut ffi::PyObject,
) -> *mut ffi::PyObject;

/// A function's definition, made by [`definition`]: CPython keeps a pointer to it for each
/// function's life, so it is leaked (callers make one per entry point, once, and keep it in a
/// static).
#[derive(Clone, Copy)]
pub struct Definition(&'static ffi::PyMethodDef);

// SAFETY: a definition is never written after it is made; its pointers are to static C
// strings and a function.
unsafe impl Sync for Definition {}
// SAFETY: as above.
unsafe impl Send for Definition {}

/// The definition of a function named `name` whose C entry is `entry`.
pub fn definition(
    name: &'static std::ffi::CStr,
    entry: Entry,
    doc: &'static std::ffi::CStr,
) -> Definition {
    Definition(Box::leak(Box::new(ffi::PyMethodDef {
        ml_name: name.as_ptr(),
        ml_meth: ffi::PyMethodDefPointer {
            PyCFunctionFastWithKeywords: entry,
        },
        ml_flags: ffi::METH_FASTCALL | ffi::METH_KEYWORDS,
        ml_doc: doc.as_ptr(),
    })))
}

/// The function of `def` bound to `slf` (its first C argument on every call).
pub fn function<'py>(slf: &Bound<'py, PyAny>, def: Definition) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY: `def` lives for the process; `PyCFunction_NewEx` takes its own reference to
    // `slf` and returns a new reference, or NULL with an exception set.
    unsafe {
        Bound::from_owned_ptr_or_err(
            slf.py(),
            ffi::PyCFunction_NewEx(
                std::ptr::from_ref(def.0).cast_mut(),
                slf.as_ptr(),
                std::ptr::null_mut(),
            ),
        )
    }
}

/// One call's arguments: `args` holds the positional ones, then one per name in `names`.
pub struct Arguments<'a, 'py> {
    pub all: &'a [*mut ffi::PyObject],
    pub positional: usize,
    pub names: Option<Bound<'py, PyTuple>>,
}

impl<'py> Arguments<'_, 'py> {
    /// Reads the arguments of a call.
    ///
    /// # Safety
    /// CPython's vectorcall contract: `args` holds `nargs` positional arguments then one per
    /// name in `kwnames` (a tuple of str, or NULL), all borrowed for the call, which outlives
    /// the result.
    pub unsafe fn read(
        py: Python<'py>,
        args: *const *mut ffi::PyObject,
        nargs: ffi::Py_ssize_t,
        kwnames: *mut ffi::PyObject,
    ) -> PyResult<Self> {
        let names = if kwnames.is_null() {
            None
        } else {
            // SAFETY: a tuple of str, borrowed for the call.
            Some(unsafe { Bound::from_borrowed_ptr(py, kwnames) }.cast_into::<PyTuple>()?)
        };
        let positional =
            usize::try_from(nargs).map_err(|e| PyValueError::new_err(e.to_string()))?;
        let count = positional + names.as_ref().map_or(0, |n| n.len());
        let all = if count == 0 {
            &[][..]
        } else {
            // SAFETY: the contract above.
            unsafe { std::slice::from_raw_parts(args, count) }
        };
        Ok(Arguments {
            all,
            positional,
            names,
        })
    }

    /// Argument `k` (positional ones first).
    pub fn get(&self, py: Python<'py>, k: usize) -> Bound<'py, PyAny> {
        // SAFETY: every pointer of `all` is a borrowed reference for the call.
        unsafe { Bound::from_borrowed_ptr(py, self.all[k]) }
    }

    /// The arguments as a tuple and a dict of the keyword ones (for a slow path).
    pub fn tuple_and_kwargs(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyTuple>, Option<Bound<'py, PyDict>>)> {
        let tuple = PyTuple::new(py, (0..self.positional).map(|k| self.get(py, k)))?;
        let kwargs = match &self.names {
            None => None,
            Some(names) => {
                let d = PyDict::new(py);
                for (k, name) in names.iter().enumerate() {
                    d.set_item(name, self.get(py, self.positional + k))?;
                }
                Some(d)
            }
        };
        Ok((tuple, kwargs))
    }

    /// `slf.method(*args, **kwargs)` with these arguments.
    pub fn call_method(
        &self,
        slf: &Bound<'py, PyAny>,
        method: &Bound<'py, PyString>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (tuple, kwargs) = self.tuple_and_kwargs(slf.py())?;
        slf.call_method(method, tuple, kwargs.as_ref())
    }
}

/// Runs an entry's body: its result as a new reference, or NULL with its error (a panic as a
/// `PanicException`, as PyO3's own functions do) set.
pub fn run(
    py: Python<'_>,
    what: &str,
    body: impl FnOnce() -> PyResult<Py<PyAny>>,
) -> *mut ffi::PyObject {
    let err = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) {
        Ok(Ok(r)) => return r.into_ptr(),
        Ok(Err(e)) => e,
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| format!("{what} panicked"));
            pyo3::panic::PanicException::new_err(message)
        }
    };
    err.restore(py);
    std::ptr::null_mut()
}
