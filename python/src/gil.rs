//! A kernel call's section without the GIL, and the one step inside it that needs the GIL
//! back: making the result array.
//!
//! NumPy releases the GIL around a ufunc's inner loop (`NPY_BEGIN_THREADS`): one
//! `PyEval_SaveThread` and one `PyEval_RestoreThread`. A kernel here learns its result's dtype
//! and shape only inside `ops::apply_with`, so it asks for the result array from within the
//! section. Through pyo3's `Python::attach` that step goes by `PyGILState_Ensure`, pyo3's
//! reference pool and `PyGILState_Release`: with `Python::detach` around it, 0.4 µs a call
//! (int8 `absolute` from Python, `out=`: 2.82 µs at 1e5 elements with the GIL released, 2.43
//! µs with it held; NumPy's own call 2.40). [`Reattach::with`] restores the thread's own state
//! instead (`PyEval_RestoreThread`, then `PyEval_SaveThread`), as NumPy's loops do.

use pyo3::Python;
use pyo3::ffi;

/// Runs `f` without the GIL when `release` (else with it, as it is held now), giving it the
/// [`Reattach`] through which it takes the GIL back for a step. `f` is `Send`, so it holds no
/// `Python` token or `Bound` of the caller's: whatever needs the interpreter inside it goes
/// through the `Python` that [`Reattach::with`] hands out.
pub(crate) fn section<T: Send>(
    py: Python<'_>,
    release: bool,
    f: impl FnOnce(Reattach) -> T + Send,
) -> T {
    if !release {
        return f(Reattach::new(0));
    }
    // SAFETY: the GIL is held (`py`), so the thread has a current state to name.
    let state = unsafe { ffi::PyThreadState_Get() } as usize;
    py.detach(move || f(Reattach::new(state)))
}

/// The calling thread's interpreter state while a [`section`] runs without the GIL (`0`: the
/// section kept it). Neither `Send` nor `Sync`: only the thread that runs the section can use
/// it (the kernels ask for their result on the calling thread, before any parallel loop).
#[derive(Clone, Copy)]
pub(crate) struct Reattach {
    state: usize,
    this_thread: std::marker::PhantomData<*const ()>,
}

impl Reattach {
    fn new(state: usize) -> Reattach {
        Reattach {
            state,
            this_thread: std::marker::PhantomData,
        }
    }

    /// `g` with the GIL held: taken back for `g` and released after it (also when `g`
    /// panics), or held already.
    pub(crate) fn with<R>(self, g: impl for<'py> FnOnce(Python<'py>) -> R) -> R {
        if self.state == 0 {
            // SAFETY: a section that kept the GIL runs on the thread that holds it.
            return g(unsafe { Python::assume_attached() });
        }
        /// Releases the GIL again when `g` returns or unwinds.
        struct Release;
        impl Drop for Release {
            fn drop(&mut self) {
                // SAFETY: the GIL was taken back on this thread by `PyEval_RestoreThread`.
                unsafe { ffi::PyEval_SaveThread() };
            }
        }
        // SAFETY: `state` is this thread's own state, saved by `Python::detach` (which
        // restores it at the section's end), and the GIL is not held on this thread now.
        unsafe { ffi::PyEval_RestoreThread(self.state as *mut ffi::PyThreadState) };
        let _release = Release;
        // SAFETY: the GIL is held on this thread until `_release` drops.
        g(unsafe { Python::assume_attached() })
    }
}
