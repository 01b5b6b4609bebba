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
            // What is dropped is dropped after the lock is released: dropping an operand may
            // run Python code (a finaliser) that calls back into this memo.
            let old = {
                let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
                let old = if entries.len() >= CAPACITY {
                    std::mem::take(&mut *entries)
                } else {
                    Entries::default()
                };
                entries.insert(k, entry);
                old
            };
            drop(old);
        }
        Ok(answer.unbind())
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
