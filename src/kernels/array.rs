//! Typed n-dimensional arrays over every dtype of the shipped policies: a dtype, a shape and
//! contiguous row-major storage of raw bit patterns, one storage unit per element (sub-byte
//! types take one byte each, in the low bits, as ml_dtypes stores them).

use crate::numeric::dtype::{DType, Unit};

/// The elements of one storage unit: an owned vector, or memory another owner keeps (a NumPy
/// array's buffer, borrowed by the Python package without copying it).
///
/// A `Buf` reads as a slice (`Deref<Target = [T]>`) and writes as one (`DerefMut`): a borrowed
/// read-only buffer is copied into an owned vector on its first write, so a kernel can never
/// write through to memory it was only lent. Cloning a borrowed buffer copies it.
pub struct Buf<T: Copy> {
    repr: Repr<T>,
}

enum Repr<T> {
    Owned(Vec<T>),
    /// `len` elements at `ptr`, valid (and, unless `writable`, unchanged) while the `Buf`
    /// lives: the contract of [`Buf::borrowed`] / [`Buf::borrowed_mut`].
    Foreign {
        ptr: std::ptr::NonNull<T>,
        len: usize,
        writable: bool,
    },
}

// SAFETY: a foreign buffer is plain memory of `T` that the constructor's caller guarantees
// valid for the `Buf`'s life and not touched by anyone else while it is borrowed mutably, the
// guarantees a `&[T]` / `&mut [T]` would give, which are `Send`/`Sync` for `T: Send`/`Sync`.
unsafe impl<T: Copy + Send> Send for Buf<T> {}
// SAFETY: as for `Send`: shared access only reads.
unsafe impl<T: Copy + Sync> Sync for Buf<T> {}

impl<T: Copy> Buf<T> {
    /// A read-only view of `len` elements at `ptr` (no copy).
    ///
    /// # Safety
    /// `ptr` must be aligned for `T` and point to `len` initialised elements that stay valid
    /// and unchanged while the returned `Buf` (or an array holding it) lives.
    pub unsafe fn borrowed(ptr: *const T, len: usize) -> Buf<T> {
        Buf {
            repr: Repr::Foreign {
                ptr: std::ptr::NonNull::new(ptr as *mut T).unwrap_or(std::ptr::NonNull::dangling()),
                len,
                writable: false,
            },
        }
    }

    /// A writable view of `len` elements at `ptr` (no copy): kernels write their results
    /// straight into it.
    ///
    /// # Safety
    /// As [`Buf::borrowed`], and nothing else may read or write the memory while the `Buf`
    /// lives (it is a `&mut [T]` in all but lifetime).
    pub unsafe fn borrowed_mut(ptr: *mut T, len: usize) -> Buf<T> {
        Buf {
            repr: Repr::Foreign {
                ptr: std::ptr::NonNull::new(ptr).unwrap_or(std::ptr::NonNull::dangling()),
                len,
                writable: true,
            },
        }
    }

    /// `true` when the elements live in memory this `Buf` does not own.
    pub fn is_borrowed(&self) -> bool {
        matches!(self.repr, Repr::Foreign { .. })
    }

    /// The elements as an owned vector (a borrowed buffer is copied).
    pub fn into_vec(self) -> Vec<T> {
        match self.repr {
            Repr::Owned(v) => v,
            Repr::Foreign { .. } => self.to_vec(),
        }
    }
}

impl<T: Copy> std::ops::Deref for Buf<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        match &self.repr {
            Repr::Owned(v) => v,
            // SAFETY: the constructor's contract: `len` initialised, aligned elements, valid
            // while `self` lives (a null pointer, given for an empty buffer, was replaced by
            // an aligned dangling one, which a zero-length slice may hold).
            Repr::Foreign { ptr, len, .. } => unsafe {
                std::slice::from_raw_parts(ptr.as_ptr(), *len)
            },
        }
    }
}

impl<T: Copy> std::ops::DerefMut for Buf<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        if let Repr::Foreign {
            writable: false, ..
        } = self.repr
        {
            self.repr = Repr::Owned(self.to_vec()); // copy on write: never write a lent buffer
        }
        match &mut self.repr {
            Repr::Owned(v) => v,
            // SAFETY: `borrowed_mut`'s contract: exclusive, valid, aligned, initialised.
            Repr::Foreign { ptr, len, .. } => unsafe {
                std::slice::from_raw_parts_mut(ptr.as_ptr(), *len)
            },
        }
    }
}

impl<T: Copy> From<Vec<T>> for Buf<T> {
    fn from(v: Vec<T>) -> Buf<T> {
        Buf {
            repr: Repr::Owned(v),
        }
    }
}

impl<T: Copy> FromIterator<T> for Buf<T> {
    fn from_iter<I: IntoIterator<Item = T>>(it: I) -> Buf<T> {
        Vec::from_iter(it).into()
    }
}

impl<T: Copy> Clone for Buf<T> {
    fn clone(&self) -> Buf<T> {
        self.to_vec().into()
    }
}

impl<T: Copy + std::fmt::Debug> std::fmt::Debug for Buf<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: Copy + PartialEq> PartialEq for Buf<T> {
    fn eq(&self, other: &Buf<T>) -> bool {
        **self == **other
    }
}

impl<T: Copy + Eq> Eq for Buf<T> {}

/// Storage of an array: raw bit patterns, one unit per element (complex: `[re, im]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Data {
    U8(Buf<u8>),
    U16(Buf<u16>),
    U32(Buf<u32>),
    U64(Buf<u64>),
    C32(Buf<[u16; 2]>),
    C64(Buf<[u32; 2]>),
    C128(Buf<[u64; 2]>),
}

impl Data {
    /// The storage unit.
    pub fn unit(&self) -> Unit {
        match self {
            Data::U8(_) => Unit::U8,
            Data::U16(_) => Unit::U16,
            Data::U32(_) => Unit::U32,
            Data::U64(_) => Unit::U64,
            Data::C32(_) => Unit::C32,
            Data::C64(_) => Unit::C64,
            Data::C128(_) => Unit::C128,
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Data::U8(v) => v.len(),
            Data::U16(v) => v.len(),
            Data::U32(v) => v.len(),
            Data::U64(v) => v.len(),
            Data::C32(v) => v.len(),
            Data::C64(v) => v.len(),
            Data::C128(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A view of `n` units of `unit` at `ptr` ([`Buf::borrowed`], or [`Buf::borrowed_mut`]
    /// when `writable`): no copy.
    ///
    /// # Safety
    /// `ptr` must be aligned for the unit and point to `n * unit.bytes()` initialised bytes
    /// that stay valid (and unchanged unless `writable`) while the `Data` lives; when
    /// `writable`, nothing else may touch them meanwhile.
    pub unsafe fn borrowed(unit: Unit, ptr: *mut u8, n: usize, writable: bool) -> Data {
        macro_rules! view {
            ($variant:ident) => {{
                let p = ptr.cast();
                // SAFETY: the caller's contract, for this unit's element type.
                Data::$variant(unsafe {
                    if writable {
                        Buf::borrowed_mut(p, n)
                    } else {
                        Buf::borrowed(p, n)
                    }
                })
            }};
        }
        match unit {
            Unit::U8 => view!(U8),
            Unit::U16 => view!(U16),
            Unit::U32 => view!(U32),
            Unit::U64 => view!(U64),
            Unit::C32 => view!(C32),
            Unit::C64 => view!(C64),
            Unit::C128 => view!(C128),
        }
    }

    /// `true` when the elements live in memory the array does not own ([`Buf::borrowed`]).
    pub fn is_borrowed(&self) -> bool {
        match self {
            Data::U8(v) => v.is_borrowed(),
            Data::U16(v) => v.is_borrowed(),
            Data::U32(v) => v.is_borrowed(),
            Data::U64(v) => v.is_borrowed(),
            Data::C32(v) => v.is_borrowed(),
            Data::C64(v) => v.is_borrowed(),
            Data::C128(v) => v.is_borrowed(),
        }
    }

    /// Puts `src`'s elements in `self`: moved when `self` owns its storage, copied into it
    /// when it is a borrowed view, so a result always lands in the memory its caller gave.
    ///
    /// # Panics
    /// When the units or lengths differ (a kernel's bug: both are the result's).
    pub fn assign(&mut self, src: Data) {
        if !self.is_borrowed() {
            *self = src;
            return;
        }
        match (self, &src) {
            (Data::U8(d), Data::U8(s)) => d.copy_from_slice(s),
            (Data::U16(d), Data::U16(s)) => d.copy_from_slice(s),
            (Data::U32(d), Data::U32(s)) => d.copy_from_slice(s),
            (Data::U64(d), Data::U64(s)) => d.copy_from_slice(s),
            (Data::C32(d), Data::C32(s)) => d.copy_from_slice(s),
            (Data::C64(d), Data::C64(s)) => d.copy_from_slice(s),
            (Data::C128(d), Data::C128(s)) => d.copy_from_slice(s),
            _ => panic!("assigning storage of another unit"),
        }
    }

    /// Zeroed storage of `n` units.
    pub fn zeros(unit: Unit, n: usize) -> Data {
        match unit {
            Unit::U8 => Data::U8(vec![0; n].into()),
            Unit::U16 => Data::U16(vec![0; n].into()),
            Unit::U32 => Data::U32(vec![0; n].into()),
            Unit::U64 => Data::U64(vec![0; n].into()),
            Unit::C32 => Data::C32(vec![[0; 2]; n].into()),
            Unit::C64 => Data::C64(vec![[0; 2]; n].into()),
            Unit::C128 => Data::C128(vec![[0; 2]; n].into()),
        }
    }

    /// An owned copy of the storage (of a view too), or `None` when the allocator refuses it.
    pub fn try_to_owned(&self) -> Option<Data> {
        fn copy<T: Copy>(v: &[T]) -> Option<Buf<T>> {
            let mut out = Vec::new();
            out.try_reserve_exact(v.len()).ok()?;
            out.extend_from_slice(v);
            Some(out.into())
        }
        Some(match self {
            Data::U8(v) => Data::U8(copy(v)?),
            Data::U16(v) => Data::U16(copy(v)?),
            Data::U32(v) => Data::U32(copy(v)?),
            Data::U64(v) => Data::U64(copy(v)?),
            Data::C32(v) => Data::C32(copy(v)?),
            Data::C64(v) => Data::C64(copy(v)?),
            Data::C128(v) => Data::C128(copy(v)?),
        })
    }

    /// Zeroed storage of `n` units, or `None` when the allocator refuses it (an address-space
    /// limit, more than memory): [`Data::zeros`] without the abort.
    pub fn try_zeros(unit: Unit, n: usize) -> Option<Data> {
        Some(match unit {
            Unit::U8 => Data::U8(try_zeroed_vec(n)?.into()),
            Unit::U16 => Data::U16(try_zeroed_vec(n)?.into()),
            Unit::U32 => Data::U32(try_zeroed_vec(n)?.into()),
            Unit::U64 => Data::U64(try_zeroed_vec(n)?.into()),
            Unit::C32 => Data::C32(try_zeroed_vec(n)?.into()),
            Unit::C64 => Data::C64(try_zeroed_vec(n)?.into()),
            Unit::C128 => Data::C128(try_zeroed_vec(n)?.into()),
        })
    }
}

/// An array's dimensions, held inline up to four (no heap block per operand, result or
/// broadcast for the shapes programs use; a per-call cost the Python binding measured).
pub type Shape = smallvec::SmallVec<[usize; 4]>;

/// An n-dimensional array: dtype, shape, row-major storage.
///
/// **Invariant** (what makes the kernels' unchecked loops sound): the storage unit is the
/// dtype's ([`DType::unit`]), the element count is the product of the shape, and every
/// pattern fits the dtype's width ([`DType::pattern_bits`]: sub-byte and bool codes index
/// tables of `2^bits` entries). The fields are private to the kernels, and every constructor
/// outside them ([`Array::new`], [`Array::from_bits`], [`Array::zeros`]) checks the invariant
/// and returns an [`ArrayError`] otherwise, so safe code cannot build an array a kernel would
/// read out of bounds. The one exception, [`Array::output`] (result storage whose old
/// patterns are overwritten unread), is `unsafe`, as are the views of foreign memory
/// ([`Data::borrowed`]) whose life and aliasing the caller vouches for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Array {
    pub(in crate::kernels) dtype: DType,
    pub(in crate::kernels) shape: Shape,
    pub(in crate::kernels) data: Data,
}

/// Why an array cannot be built: its parts break [`Array`]'s invariant.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ArrayError {
    #[error("shape {shape:?} has more elements than memory can hold")]
    TooLarge { shape: Vec<usize> },
    #[error("shape {shape:?} holds {expected} elements but {given} bit patterns were given")]
    Length {
        shape: Vec<usize>,
        expected: usize,
        given: usize,
    },
    #[error("{dtype} is stored as {expected:?}, not {given:?}")]
    Storage {
        dtype: &'static str,
        expected: Unit,
        given: Unit,
    },
    #[error("bit pattern {pattern} does not fit {dtype} ({bits} bits)")]
    Pattern {
        pattern: u64,
        dtype: &'static str,
        bits: u32,
    },
    #[error(
        "an array of shape {shape:?} needs {bytes} bytes, more than this process could allocate"
    )]
    OutOfMemory { shape: Vec<usize>, bytes: u128 },
}

/// A storage unit's element type, for which every bit pattern (all zeros included) is a value.
trait Unsigned: Copy {}
impl Unsigned for u8 {}
impl Unsigned for u16 {}
impl Unsigned for u32 {}
impl Unsigned for u64 {}
impl<T: Unsigned> Unsigned for [T; 2] {}

/// `vec![0; n]` (zeroed by the allocator, as `vec!` is: pages the kernel zeroes lazily), or
/// `None` when the allocator refuses the block instead of aborting the process.
fn try_zeroed_vec<T: Unsigned>(n: usize) -> Option<Vec<T>> {
    let layout = std::alloc::Layout::array::<T>(n).ok()?;
    if layout.size() == 0 {
        return Some(Vec::new());
    }
    // SAFETY: the layout's size is not zero.
    let p = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<T>();
    if p.is_null() {
        return None;
    }
    // SAFETY: `p` was allocated by the global allocator with `T`'s alignment and the size of
    // `n` `T`s (the layout of a `Vec<T>` of capacity `n`), and its `n` elements are zero bits,
    // a value of every `Unsigned` type.
    Some(unsafe { Vec::from_raw_parts(p, n, n) })
}

/// The element count of a shape, or `None` when it overflows.
pub fn element_count(shape: &[usize]) -> Option<usize> {
    shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d))
}

/// `Ok` when `shape` holds exactly `given` elements.
fn check_length(shape: &[usize], given: usize) -> Result<(), ArrayError> {
    let expected = element_count(shape).ok_or_else(|| ArrayError::TooLarge {
        shape: shape.to_vec(),
    })?;
    if given != expected {
        return Err(ArrayError::Length {
            shape: shape.to_vec(),
            expected,
            given,
        });
    }
    Ok(())
}

/// `Ok` when `data` is stored in `dtype`'s unit and holds exactly `shape`'s element count.
fn check_parts(dtype: DType, shape: &[usize], data: &Data) -> Result<(), ArrayError> {
    if data.unit() != dtype.unit() {
        return Err(ArrayError::Storage {
            dtype: dtype.name(),
            expected: dtype.unit(),
            given: data.unit(),
        });
    }
    check_length(shape, data.len())
}

impl Array {
    /// An array of `dtype` and `shape` over `data`, checked against the invariant.
    pub fn new(dtype: DType, shape: impl Into<Shape>, data: Data) -> Result<Array, ArrayError> {
        let shape = shape.into();
        check_parts(dtype, &shape, &data)?;
        let w = dtype.pattern_bits();
        let limit = if w >= 64 { u64::MAX } else { (1u64 << w) - 1 };
        // Bits above the width, found by one OR over the storage (it vectorises; a NumPy
        // operand of 10^7 elements is checked at memory speed), then the first offender.
        fn first_over<T>(v: &[T], limit: u64) -> Option<u64>
        where
            T: Copy + Default + Into<u64> + std::ops::BitOr<Output = T>,
        {
            let spare = !limit;
            let any: u64 = v.iter().fold(T::default(), |m, &b| m | b).into();
            (any & spare != 0).then(|| v.iter().map(|&b| b.into()).find(|&b| b & spare != 0))?
        }
        let bad = match &data {
            Data::U8(_) | Data::U16(_) if w >= 8 * dtype.unit().bytes() as u32 => None,
            Data::U8(v) => first_over(v, limit),
            Data::U16(v) => first_over(v, limit),
            // Patterns of 16, 32 and 64 bits fill their units.
            Data::U32(_) | Data::U64(_) | Data::C32(_) | Data::C64(_) | Data::C128(_) => None,
        };
        if let Some(pattern) = bad {
            return Err(ArrayError::Pattern {
                pattern,
                dtype: dtype.name(),
                bits: w,
            });
        }
        Ok(Array { dtype, shape, data })
    }

    /// A result array over `data` (a caller's output buffer, say: [`Data::borrowed`]) whose
    /// current patterns are not checked, only its unit and length.
    ///
    /// # Safety
    /// Only for storage a kernel writes before it reads: the result `alloc` returns to
    /// [`crate::kernels::ops::apply_with`]. Its patterns may break the invariant until then.
    pub unsafe fn output(
        dtype: DType,
        shape: impl Into<Shape>,
        data: Data,
    ) -> Result<Array, ArrayError> {
        let shape = shape.into();
        check_parts(dtype, &shape, &data)?;
        Ok(Array { dtype, shape, data })
    }

    /// Puts `src`'s elements in this array's storage ([`Data::assign`]: copied into a
    /// borrowed buffer, moved into an owned one).
    ///
    /// # Panics
    /// When the dtypes or shapes differ.
    pub fn assign(&mut self, src: Array) {
        assert!(
            self.dtype == src.dtype && self.shape == src.shape,
            "assigning an array of another dtype or shape"
        );
        self.data.assign(src.data);
    }

    /// An array from bit patterns (complex: `[re, im]` per element). `Err` names what is wrong:
    /// a length that does not match the shape, or a pattern wider than the dtype.
    pub fn from_bits(
        dtype: DType,
        shape: impl Into<Shape>,
        bits: &[[u64; 2]],
    ) -> Result<Array, ArrayError> {
        let shape = shape.into();
        check_length(&shape, bits.len())?;
        let w = dtype.pattern_bits();
        let limit = if w >= 64 { u64::MAX } else { (1u64 << w) - 1 };
        if let Some(bad) = bits.iter().find(|b| b[0] > limit || b[1] > limit) {
            return Err(ArrayError::Pattern {
                pattern: if bad[0] > limit { bad[0] } else { bad[1] },
                dtype: dtype.name(),
                bits: w,
            });
        }
        let re = bits.iter().map(|b| b[0]);
        let data = match dtype.unit() {
            Unit::U8 => Data::U8(re.map(|b| b as u8).collect()),
            Unit::U16 => Data::U16(re.map(|b| b as u16).collect()),
            Unit::U32 => Data::U32(re.map(|b| b as u32).collect()),
            Unit::U64 => Data::U64(re.collect()),
            Unit::C32 => Data::C32(bits.iter().map(|b| [b[0] as u16, b[1] as u16]).collect()),
            Unit::C64 => Data::C64(bits.iter().map(|b| [b[0] as u32, b[1] as u32]).collect()),
            Unit::C128 => Data::C128(bits.to_vec().into()),
        };
        Ok(Array { dtype, shape, data })
    }

    /// Every element's bit patterns (`[re, 0]` for real dtypes).
    /// Calls `f` with each element's bit patterns (`[re, im]`; `[pattern, 0]` for a real
    /// dtype), row-major, without collecting them: what [`Array::bits`] returns, one at a time.
    pub fn for_each_bits(&self, mut f: impl FnMut([u64; 2])) {
        match &self.data {
            Data::U8(v) => v.iter().for_each(|&b| f([b as u64, 0])),
            Data::U16(v) => v.iter().for_each(|&b| f([b as u64, 0])),
            Data::U32(v) => v.iter().for_each(|&b| f([b as u64, 0])),
            Data::U64(v) => v.iter().for_each(|&b| f([b, 0])),
            Data::C32(v) => v.iter().for_each(|&[r, i]| f([r as u64, i as u64])),
            Data::C64(v) => v.iter().for_each(|&[r, i]| f([r as u64, i as u64])),
            Data::C128(v) => v.iter().for_each(|&p| f(p)),
        }
    }

    pub fn bits(&self) -> Vec<[u64; 2]> {
        match &self.data {
            Data::U8(v) => v.iter().map(|&b| [b as u64, 0]).collect(),
            Data::U16(v) => v.iter().map(|&b| [b as u64, 0]).collect(),
            Data::U32(v) => v.iter().map(|&b| [b as u64, 0]).collect(),
            Data::U64(v) => v.iter().map(|&b| [b, 0]).collect(),
            Data::C32(v) => v.iter().map(|&[r, i]| [r as u64, i as u64]).collect(),
            Data::C64(v) => v.iter().map(|&[r, i]| [r as u64, i as u64]).collect(),
            Data::C128(v) => v.to_vec(),
        }
    }

    /// The indices of the elements with a zero part (+0 or −0 by bit pattern: every bit but the
    /// dtype's top one clear), in order. A block of 256 elements is tested branch-free first,
    /// so a result without zeros costs one vectorised read.
    pub fn zero_part_indices(&self) -> Vec<usize> {
        const BLOCK: usize = 256;
        // `magnitude` clears the sign bit (of the smaller part, for complex): zero at a ±0.
        fn scan<T: Copy, M: Copy + Ord + Default>(
            v: &[T],
            magnitude: impl Fn(T) -> M,
        ) -> Vec<usize> {
            let mut at = Vec::new();
            for (c, block) in v.chunks(BLOCK).enumerate() {
                // An or of equalities, which vectorises on every x86-64 (a min of unsigned
                // lanes needs SSE4.1, of 64-bit ones AVX-512: 0.56 ns an element without).
                let zero = block
                    .iter()
                    .fold(false, |z, &b| z | (magnitude(b) == M::default()));
                if zero {
                    let hits = block
                        .iter()
                        .enumerate()
                        .filter(|&(_, &b)| magnitude(b) == M::default());
                    at.extend(hits.map(|(i, _)| c * BLOCK + i));
                }
            }
            at
        }
        let w = self.dtype.pattern_bits();
        let m = if w >= 64 {
            u64::MAX >> 1
        } else {
            (1u64 << (w - 1)) - 1
        };
        let (m8, m16, m32) = (m as u8, m as u16, m as u32);
        match &self.data {
            Data::U8(v) => scan(v, |b| b & m8),
            Data::U16(v) => scan(v, |b| b & m16),
            Data::U32(v) => scan(v, |b| b & m32),
            Data::U64(v) => scan(v, |b| b & m),
            Data::C32(v) => scan(v, |[r, i]| (r & m16).min(i & m16)),
            Data::C64(v) => scan(v, |[r, i]| (r & m32).min(i & m32)),
            Data::C128(v) => scan(v, |[r, i]| (r & m).min(i & m)),
        }
    }

    /// The elements at `at` as a one-dimensional array of this dtype; when `splat` the array
    /// holds one element that stands for every index.
    pub fn gather(&self, at: &[usize], splat: bool) -> Array {
        fn pick<T: Copy>(v: &[T], at: &[usize], splat: bool) -> Buf<T> {
            at.iter().map(|&i| v[if splat { 0 } else { i }]).collect()
        }
        let data = match &self.data {
            Data::U8(v) => Data::U8(pick(v, at, splat)),
            Data::U16(v) => Data::U16(pick(v, at, splat)),
            Data::U32(v) => Data::U32(pick(v, at, splat)),
            Data::U64(v) => Data::U64(pick(v, at, splat)),
            Data::C32(v) => Data::C32(pick(v, at, splat)),
            Data::C64(v) => Data::C64(pick(v, at, splat)),
            Data::C128(v) => Data::C128(pick(v, at, splat)),
        };
        Array {
            dtype: self.dtype,
            shape: smallvec::smallvec![at.len()],
            data,
        }
    }

    /// Element `i`'s bit patterns (`[pattern, 0]` for a real dtype): one element of
    /// [`Array::bits`], read without collecting the others.
    pub fn bits_at(&self, i: usize) -> [u64; 2] {
        match &self.data {
            Data::U8(v) => [v[i] as u64, 0],
            Data::U16(v) => [v[i] as u64, 0],
            Data::U32(v) => [v[i] as u64, 0],
            Data::U64(v) => [v[i], 0],
            Data::C32(v) => [v[i][0] as u64, v[i][1] as u64],
            Data::C64(v) => [v[i][0] as u64, v[i][1] as u64],
            Data::C128(v) => v[i],
        }
    }

    /// Sets element `i` to the bit patterns `bits` (`[re, _]` for real dtypes), which must fit
    /// the dtype (patterns taken from an array of the same dtype).
    pub fn set_bits(&mut self, i: usize, [re, im]: [u64; 2]) {
        match &mut self.data {
            Data::U8(v) => v[i] = re as u8,
            Data::U16(v) => v[i] = re as u16,
            Data::U32(v) => v[i] = re as u32,
            Data::U64(v) => v[i] = re,
            Data::C32(v) => v[i] = [re as u16, im as u16],
            Data::C64(v) => v[i] = [re as u32, im as u32],
            Data::C128(v) => v[i] = [re, im],
        }
    }

    pub fn len(&self) -> usize {
        self.data.len()
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// A zero-filled array (`Err` when the shape's element count overflows, or when the
    /// allocator refuses its storage: never an abort).
    pub fn zeros(dtype: DType, shape: impl Into<Shape>) -> Result<Array, ArrayError> {
        let shape = shape.into();
        let n = element_count(&shape).ok_or_else(|| ArrayError::TooLarge {
            shape: shape.to_vec(),
        })?;
        let Some(data) = Data::try_zeros(dtype.unit(), n) else {
            let bytes = n as u128 * dtype.unit().bytes() as u128;
            return Err(ArrayError::OutOfMemory {
                shape: shape.to_vec(),
                bytes,
            });
        };
        Ok(Array { dtype, data, shape })
    }

    /// A zero-filled array whose shape is known to be countable: an existing array's, or a
    /// broadcast result already checked against its call's element limit (`ops::Options`).
    pub(in crate::kernels) fn zeroed(dtype: DType, shape: impl Into<Shape>) -> Array {
        Array::zeros(dtype, shape).expect("the shape of an existing array or a checked broadcast")
    }

    pub fn dtype(&self) -> DType {
        self.dtype
    }

    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The storage, row-major (read only: a kernel's input).
    pub fn data(&self) -> &Data {
        &self.data
    }

    /// The storage, handing it over.
    pub fn into_data(self) -> Data {
        self.data
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_units() {
        for d in crate::numeric::dtype::CATALOGUE {
            if let Some(t) = DType::named(d.name) {
                assert_eq!(t.name(), d.name);
            } else {
                // No array type: weak and opaque types and PyTorch's integers of 3, 5, 6 and
                // 7 bits.
                use crate::numeric::dtype::Kind;
                let expected = matches!(d.kind, Kind::Weak | Kind::Opaque)
                    || (matches!(d.kind, Kind::Signed | Kind::Unsigned)
                        && [3, 5, 6, 7].contains(&d.bits));
                assert!(expected, "{}", d.name);
            }
        }
        assert_eq!(DType::named("float8_e4m3fn").unwrap().unit(), Unit::U8);
        assert_eq!(DType::named("bfloat16").unwrap().unit(), Unit::U16);
        assert_eq!(DType::named("int4").unwrap().unit(), Unit::U8);
        assert_eq!(DType::named("uint64").unwrap().unit(), Unit::U64);
        assert_eq!(DType::named("complex32").unwrap().unit(), Unit::C32);
        assert_eq!(DType::named("bcomplex32").unwrap().part(), DType::BFLOAT16);
    }

    #[test]
    fn from_bits_checks_shape_and_width() {
        let t = DType::named("int4").unwrap();
        assert!(Array::from_bits(t, vec![2], &[[15, 0], [0, 0]]).is_ok());
        assert_eq!(
            Array::from_bits(t, vec![2], &[[16, 0], [0, 0]])
                .unwrap_err()
                .to_string(),
            "bit pattern 16 does not fit int4 (4 bits)"
        );
        assert_eq!(
            Array::from_bits(t, vec![3], &[[1, 0]])
                .unwrap_err()
                .to_string(),
            "shape [3] holds 3 elements but 1 bit patterns were given"
        );
    }
}
