//! New result arrays placed for the loop that writes them.
//!
//! A loop over arrays in L2 runs fastest when its inputs start at the same offset into a
//! 64-byte line as its output: the loop brings its stores to a line start first
//! (`stream::map2`'s head), and every load then starts on a vector's boundary too. float32
//! `add` at 1e4 elements into `out=`, from Python: 1.27 µs with the three arrays at one line
//! offset, 1.47 µs with the inputs 16 bytes off the output's (NumPy 1.30 µs and 1.47 µs).
//! glibc's `malloc` starts a block 16 bytes into a line or anywhere after, so a new result
//! from NumPy's handler lands wherever it lands, and where it lands differs from one process
//! to the next: the benchmark's NumPy ran that `add` into its new results at 1.37 µs in one
//! run and 2.2–2.5 µs in another.
//!
//! So a new result of [`PLACED_MIN_BYTES`] up to [`PLACED_MAX_BYTES`] of the fast lanes (a binary
//! op's elementwise pass; `negative`, `absolute`, `astype` and the other unary ops in the
//! one-array lane) comes from typejoin's own NumPy memory handler (NEP 49's
//! `PyDataMem_Handler`), whose blocks start where the lane asks ([`page_offset`]): the array
//! owns its data as any array NumPy makes does (`OWNDATA`, no `base`), and NumPy frees (and
//! `resize`s) it through the handler the array records
//! (`numpy._core.multiarray.get_handler_name(a)` is `"typejoin"`). Only while the handler in
//! effect is the one NumPy started with: a user's own handler (`PyDataMem_SetHandler`) gets
//! every result, as it gets NumPy's. Larger results stay with NumPy's handler, which asks the
//! kernel for huge pages from 4 MiB.

use std::ffi::{c_char, c_void};
use std::sync::OnceLock;

use numpy::PyUntypedArray;
use numpy::npyffi::{self, NPY_ARRAY_ALIGNED, NPY_ARRAY_C_CONTIGUOUS, NPY_ARRAY_WRITEABLE};
use pyo3::ffi;
use pyo3::prelude::*;

/// The least result, in bytes, made by [`empty_placed`]: below it NumPy's own handler keeps
/// freed blocks of each size for the next array (its cache, up to 1 KiB).
pub(crate) const PLACED_MIN_BYTES: usize = 1 << 10;
/// Results from this size stay with NumPy's handler (huge pages from 4 MiB).
pub(crate) const PLACED_MAX_BYTES: usize = 4 << 20;

/// NumPy's `PyDataMemAllocator` (numpy/ndarraytypes.h, NumPy ≥ 1.22).
#[repr(C)]
struct Allocator {
    ctx: *mut c_void,
    malloc: unsafe extern "C" fn(*mut c_void, usize) -> *mut c_void,
    calloc: unsafe extern "C" fn(*mut c_void, usize, usize) -> *mut c_void,
    realloc: unsafe extern "C" fn(*mut c_void, *mut c_void, usize) -> *mut c_void,
    free: unsafe extern "C" fn(*mut c_void, *mut c_void, usize),
}

/// NumPy's `PyDataMem_Handler`.
#[repr(C)]
struct Handler {
    name: [c_char; 127],
    version: u8,
    allocator: Allocator,
}

/// A page: [`page_offset`] places a result within one.
const PAGE: usize = 4096;
/// A cache line: the handler's own allocations (NumPy's `malloc`, `calloc`, `realloc`) start
/// on one.
const LINE: usize = 64;

/// Where in a page a new result of elements `size` bytes long starts, for a loop that reads
/// `inputs` (each an address and its element size) in step with writing it: at the page
/// offset of the input of `size`-byte elements that the others lie ahead of by the least,
/// else at a page start. That input's loads then start where the loop's stores start in a
/// line (the loop brings its stores to a line start, `stream::map2`), and no load of an input
/// lies a little behind a store still in flight at the same page offset (a core compares the
/// low 12 bits of the two addresses; a match makes the load wait).
///
/// Measured from Python (float32 `add` at 1e4 into a new result, the benchmark's eight
/// placements of the operands, two runs alternating the two builds): at the first input's
/// offset in a line (and anywhere in the page) 1.27–1.49 µs a call, at the offset in the page
/// this chooses 1.24–1.37 µs.
pub(crate) fn page_offset(size: usize, inputs: &[(usize, usize)]) -> usize {
    let offsets = || {
        inputs
            .iter()
            .filter(|&&(_, s)| s == size)
            .map(|&(a, _)| a % PAGE)
    };
    // Each candidate's greatest distance, forward in the page, to an input.
    let ahead = |from: usize| {
        offsets()
            .map(|p| (p + PAGE - from) % PAGE)
            .max()
            .unwrap_or(0)
    };
    offsets().min_by_key(|&p| ahead(p)).unwrap_or(0)
}

/// The fields of NumPy's `PyArrayObject_fields` from NumPy 1.22 on: rust-numpy's
/// `PyArrayObject` and the two that follow it.
#[repr(C)]
struct ArrayFields {
    array: npyffi::PyArrayObject,
    buffer_info: *mut c_void,
    mem_handler: *mut ffi::PyObject,
}

const fn handler_name() -> [c_char; 127] {
    let mut name = [0 as c_char; 127];
    let text = b"typejoin";
    let mut i = 0;
    while i < text.len() {
        name[i] = text[i] as c_char;
        i += 1;
    }
    name
}

static HANDLER: Handler = Handler {
    name: handler_name(),
    version: 1,
    allocator: Allocator {
        ctx: std::ptr::null_mut(),
        malloc: handler_malloc,
        calloc: handler_calloc,
        realloc: handler_realloc,
        free: handler_free,
    },
};

// SAFETY: `HANDLER` is immutable; its null `ctx` is never dereferenced.
unsafe impl Sync for Handler {}

/// A block's header, the three words before its data: the start and length of the allocation
/// and the length the data was asked for (`realloc` copies that much).
const HEADER: usize = 3 * size_of::<usize>();
/// The allocation's own alignment (glibc's `malloc`'s).
const ALIGN: usize = 16;

/// A block of `size` bytes whose data starts `offset` bytes (a multiple of 8) after a multiple
/// of `span` (a power of two from 64), zeroed if asked; null when the allocator has none.
fn block(size: usize, offset: usize, span: usize, zeroed: bool) -> *mut u8 {
    debug_assert!(span.is_power_of_two() && span >= 64);
    debug_assert!(offset < span && offset.is_multiple_of(8));
    let Some(total) = size.checked_add(HEADER + span) else {
        return std::ptr::null_mut();
    };
    let Ok(layout) = std::alloc::Layout::from_size_align(total, ALIGN) else {
        return std::ptr::null_mut();
    };
    let raw = match zeroed {
        false => kept(total).unwrap_or_else(|| {
            // SAFETY: `layout` has a non-zero size.
            unsafe { std::alloc::alloc(layout) }
        }),
        // SAFETY: as above.
        true => unsafe { std::alloc::alloc_zeroed(layout) },
    };
    if raw.is_null() {
        return raw;
    }
    let first = raw as usize + HEADER;
    // `span` is a power of two: a mask, not a division (a 32-bit `div` took a fifth of this
    // function's time).
    let skip = (offset + span - (first & (span - 1))) & (span - 1);
    // SAFETY: `HEADER + skip` < `HEADER + span` bytes into an allocation of `size + HEADER +
    // span` bytes, so the data's `size` bytes and the header before them are inside it; the
    // header is 8-byte aligned (`raw` is 16-aligned, `first` 8 bytes from a multiple of 16 or
    // on one, and `skip` a multiple of 8, as `offset` and `span` are).
    unsafe {
        let data = raw.add(HEADER + skip);
        let header = data.sub(HEADER).cast::<usize>();
        header.write(raw as usize);
        header.add(1).write(total);
        header.add(2).write(size);
        data
    }
}

/// Frees a block [`block`] made (null: nothing).
///
/// # Safety
/// `data` is null or a block's data pointer, not freed before.
unsafe fn free_block(data: *mut u8) {
    if data.is_null() {
        return;
    }
    // SAFETY: the caller's contract: the header `block` wrote sits before `data`.
    let (raw, total) = unsafe {
        let header = data.sub(HEADER).cast::<usize>();
        (header.read() as *mut u8, header.add(1).read())
    };
    if !keep(raw, total) {
        // SAFETY: an allocation `block` made with this layout, not kept.
        unsafe { dealloc(raw, total) };
    }
}

/// Frees an allocation of `total` bytes that [`block`] made.
///
/// # Safety
/// `raw` is such an allocation, not freed before.
unsafe fn dealloc(raw: *mut u8, total: usize) {
    // SAFETY: the caller's contract (the layout `block` allocated with).
    unsafe {
        std::alloc::dealloc(
            raw,
            std::alloc::Layout::from_size_align_unchecked(total, ALIGN),
        )
    }
}

/// Allocations freed on this thread, kept for the next block of their length: a result made
/// and dropped call after call (a loop's temporaries) takes its block back without `malloc`
/// and `free`, which took 55 ns of a 1,000-element `astype` into a new result (370 ns), a
/// block of 4 KB coming from glibc's bins rather than its per-thread cache (up to 1 KiB, as
/// NumPy's own cache is). At most [`KEPT_BLOCKS`] blocks and [`KEPT_BYTES`] bytes, each at
/// most a quarter of that; freed when the thread ends.
struct Kept {
    blocks: Vec<(*mut u8, usize)>,
    bytes: usize,
}

const KEPT_BLOCKS: usize = 8;
const KEPT_BYTES: usize = 1 << 20;

impl Drop for Kept {
    fn drop(&mut self) {
        for (raw, total) in self.blocks.drain(..) {
            // SAFETY: blocks are kept once, and leave `blocks` when taken.
            unsafe { dealloc(raw, total) };
        }
    }
}

thread_local! {
    static KEPT: std::cell::RefCell<Kept> = const {
        std::cell::RefCell::new(Kept { blocks: Vec::new(), bytes: 0 })
    };
}

/// A kept allocation of exactly `total` bytes, if this thread has one.
fn kept(total: usize) -> Option<*mut u8> {
    KEPT.try_with(|k| {
        let mut k = k.try_borrow_mut().ok()?;
        let at = k.blocks.iter().rposition(|&(_, t)| t == total)?;
        k.bytes -= total;
        Some(k.blocks.swap_remove(at).0)
    })
    .ok()
    .flatten()
}

/// Keeps a freed allocation for [`kept`] (the oldest kept ones freed to make room); `false`
/// where it is not kept (too large, or the thread's cache is gone), to be freed now.
fn keep(raw: *mut u8, total: usize) -> bool {
    if total > KEPT_BYTES / 4 {
        return false;
    }
    KEPT.try_with(|k| {
        let Ok(mut k) = k.try_borrow_mut() else {
            return false;
        };
        // Ends: with no block kept, `total` fits.
        while k.blocks.len() >= KEPT_BLOCKS || k.bytes + total > KEPT_BYTES {
            let (r, t) = k.blocks.remove(0);
            k.bytes -= t;
            // SAFETY: a kept allocation, taken out of `blocks`.
            unsafe { dealloc(r, t) };
        }
        k.blocks.push((raw, total));
        k.bytes += total;
        true
    })
    .unwrap_or(false)
}

/// The data length a block was asked for.
///
/// # Safety
/// `data` is a live block's data pointer.
unsafe fn block_size(data: *mut u8) -> usize {
    // SAFETY: the caller's contract.
    unsafe { data.sub(HEADER).cast::<usize>().add(2).read() }
}

unsafe extern "C" fn handler_malloc(_: *mut c_void, size: usize) -> *mut c_void {
    block(size, 0, LINE, false).cast()
}

unsafe extern "C" fn handler_calloc(_: *mut c_void, n: usize, size: usize) -> *mut c_void {
    match n.checked_mul(size) {
        Some(bytes) => block(bytes, 0, LINE, true).cast(),
        None => std::ptr::null_mut(),
    }
}

/// NumPy's `realloc` (`ndarray.resize`): a new block and the old data copied into it. On
/// failure the old block stays as it was (C's `realloc`).
unsafe extern "C" fn handler_realloc(_: *mut c_void, ptr: *mut c_void, size: usize) -> *mut c_void {
    let old = ptr.cast::<u8>();
    let new = block(size, 0, LINE, false);
    if !old.is_null() && !new.is_null() {
        // SAFETY: NumPy passes a live block of this handler's; both blocks hold the bytes
        // copied, and two live allocations do not overlap.
        unsafe {
            std::ptr::copy_nonoverlapping(old, new, block_size(old).min(size));
            free_block(old);
        }
    }
    new.cast()
}

unsafe extern "C" fn handler_free(_: *mut c_void, ptr: *mut c_void, _: usize) {
    // SAFETY: NumPy frees only blocks of this handler's (the arrays that record it), once.
    unsafe { free_block(ptr.cast()) }
}

/// The capsule NumPy's handler API names (`"mem_handler"`) around [`HANDLER`], and the
/// handler capsule NumPy started with (the one its own arrays record while no other is set):
/// made once, with a check that NumPy's array struct is the one [`ArrayFields`] describes;
/// `None` where it is not (NumPy before 1.22).
struct Handlers {
    ours: *mut ffi::PyObject,
    numpys: *mut ffi::PyObject,
}

// SAFETY: both capsules are kept alive for the process (a reference held, never released) and
// only compared or handed to NumPy with the GIL held.
unsafe impl Send for Handlers {}
unsafe impl Sync for Handlers {}

fn handlers(py: Python<'_>) -> Option<&'static Handlers> {
    static HANDLERS: OnceLock<Option<Handlers>> = OnceLock::new();
    HANDLERS.get_or_init(|| make_handlers(py)).as_ref()
}

fn make_handlers(py: Python<'_>) -> Option<Handlers> {
    let api = &npyffi::PY_ARRAY_API;
    /// NumPy 1.22's C API version, the first with the handler API (`NPY_1_22_API_VERSION`).
    const HANDLER_API: u32 = 0x0000_000f;
    // SAFETY: NumPy's C API with the GIL held (a function every NumPy has).
    if unsafe { api.PyArray_GetNDArrayCFeatureVersion(py) } < HANDLER_API {
        return None;
    }
    // SAFETY: NumPy's C API with the GIL held, of a NumPy that has the handler API (checked
    // above); `PyDataMem_GetHandler` returns a new reference (kept for the process) or NULL
    // with an exception set; the probe array is a new reference, read through the struct
    // NumPy ≥ 1.22 declares and released.
    unsafe {
        let numpys = api.PyDataMem_GetHandler(py);
        if numpys.is_null() {
            ffi::PyErr_Clear();
            return None;
        }
        let mut one: npyffi::npy_intp = 1;
        let descr = api.PyArray_DescrFromType(py, npyffi::NPY_TYPES::NPY_UBYTE as i32);
        let probe = api.PyArray_Empty(py, 1, &mut one, descr, 0);
        if probe.is_null() {
            ffi::PyErr_Clear();
            ffi::Py_DECREF(numpys);
            return None;
        }
        let fields = probe.cast::<ArrayFields>();
        let owns = (*fields).array.flags & npyffi::NPY_ARRAY_OWNDATA != 0;
        let same = owns && (*fields).mem_handler == numpys;
        ffi::Py_DECREF(probe);
        if !same {
            ffi::Py_DECREF(numpys);
            return None;
        }
        let name = c"mem_handler";
        let ours = ffi::PyCapsule_New(
            std::ptr::addr_of!(HANDLER).cast_mut().cast(),
            name.as_ptr(),
            None,
        );
        if ours.is_null() {
            ffi::PyErr_Clear();
            ffi::Py_DECREF(numpys);
            return None;
        }
        Some(Handlers { ours, numpys })
    }
}

/// Whether a result of `nbytes` is of the sizes [`empty_placed`] places.
pub(crate) fn places(nbytes: usize) -> bool {
    (PLACED_MIN_BYTES..PLACED_MAX_BYTES).contains(&nbytes)
}

/// A new uninitialised C-contiguous `ndarray` (NumPy's type) of `descr` (stolen) and shape
/// `dims`, `nbytes` long, whose data starts `at` bytes into a page (taken modulo 4096, rounded
/// down to a multiple of 8: [`page_offset`] chooses it), from [`HANDLER`]; `Ok(None)` (and
/// `descr` released) where it would not be placed: a size outside [`PLACED_MIN_BYTES`]–
/// [`PLACED_MAX_BYTES`], a NumPy without the handler API, or a handler in effect other than
/// NumPy's first.
///
/// # Safety
/// `descr` is an owned reference to a descriptor of elements `nbytes / product(dims)` long.
pub(crate) unsafe fn empty_placed<'py>(
    py: Python<'py>,
    ndarray: *mut ffi::PyTypeObject,
    descr: *mut npyffi::PyArray_Descr,
    dims: &[npyffi::npy_intp],
    nbytes: usize,
    at: usize,
) -> PyResult<Option<Bound<'py, PyUntypedArray>>> {
    let release = || {
        // SAFETY: the caller's owned reference.
        unsafe { ffi::Py_DECREF(descr.cast()) };
        Ok(None)
    };
    if !places(nbytes) {
        return release();
    }
    let Some(h) = handlers(py) else {
        return release();
    };
    let api = &npyffi::PY_ARRAY_API;
    // SAFETY: NumPy's C API with the GIL held: a new reference or NULL with an exception.
    let current = unsafe { api.PyDataMem_GetHandler(py) };
    if current.is_null() {
        return Err(PyErr::fetch(py));
    }
    // SAFETY: the new reference just taken.
    unsafe { ffi::Py_DECREF(current) };
    if current != h.numpys {
        return release();
    }
    let data = block(nbytes, at % PAGE / 8 * 8, PAGE, false);
    if data.is_null() {
        // SAFETY: as `release`.
        unsafe { ffi::Py_DECREF(descr.cast()) };
        return Err(pyo3::exceptions::PyMemoryError::new_err(format!(
            "cannot allocate a result of {nbytes} bytes"
        )));
    }
    // SAFETY: NumPy's C API with the GIL held. `PyArray_NewFromDescr` steals `descr`, reads
    // `dims`, and makes an array over `data` (`nbytes` long, the caller's contract) that does
    // not own it, or returns NULL with an exception set (then the block is freed here). The
    // array is new and only this call holds it: it is made the data's owner as NumPy makes
    // its own arrays (`OWNDATA` and the handler, a reference of its own, in `mem_handler`,
    // whose place `make_handlers` checked), so that its deallocation frees the block through
    // `HANDLER`.
    unsafe {
        let p = api.PyArray_NewFromDescr(
            py,
            ndarray,
            descr,
            dims.len() as i32,
            dims.as_ptr().cast_mut(),
            std::ptr::null_mut(),
            data.cast(),
            NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED | NPY_ARRAY_WRITEABLE,
            std::ptr::null_mut(),
        );
        if p.is_null() {
            free_block(data);
            return Err(PyErr::fetch(py));
        }
        let fields = p.cast::<ArrayFields>();
        ffi::Py_INCREF(h.ours);
        (*fields).mem_handler = h.ours;
        (*fields).array.flags |= npyffi::NPY_ARRAY_OWNDATA;
        Ok(Some(Bound::from_owned_ptr(py, p).cast_into_unchecked()))
    }
}
