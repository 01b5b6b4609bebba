//! NumPy's n-ary promotion: `PyArray_PromoteDTypeSequence` (numpy/_core/src/multiarray/
//! common_dtype.c), which `np.result_type` and the ufuncs run on their operands' DType classes.
//! It is not a fold of the pairs: NumPy first reduces the operands pairwise, outside in, to
//! the "most knowledgeable" DType, then promotes every other operand *by that one* and
//! combines the results. So `np.result_type(uint8, int8, float16)` is float16 where the fold
//! gives float32, and `np.result_type(False, bfloat16, 0)` raises where every pair promotes.
//!
//! The pairwise values come from the measured table. What the table cannot hold is which
//! DType's `__common_dtype__` answers for a pair (the other returns NotImplemented); that
//! follows NumPy's slot functions for each class (`NumpyClass`): builtin DTypes
//! (`default_builtin_common_dtype`: the larger type number answers; a numeric one answers
//! for the Python scalars of its category or below, and a float for a Python complex), user
//! DTypes (`legacy_userdtype_common_dtype_function`: the larger type number answers where a
//! safe cast or a common kind exists; never for a Python scalar) and the abstract Python
//! DTypes (`int_common_dtype`, `float_common_dtype`, `complex_common_dtype` in
//! abstractdtypes.c: bool, the integers below their category, any user DType they find a
//! result with, and the abstract kinds below them).

use crate::policy::nary::{NumpyClass, NumpyKind};
use crate::policy::table::Table;

/// One argument of `np.result_type`: a dtype (a descriptor or type) or a value (an array, a
/// NumPy scalar or a Python scalar). NumPy puts every dtype argument before the values
/// (`PyArray_ResultType`); the ufuncs pass their operands, all values, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arg {
    DType(usize),
    Value(usize),
}

impl Arg {
    /// Node `i` of `table` as `np.result_type` reads the operand a name stands for: a Python
    /// scalar (`b*`, `i*`, `f*`, `c*`) is a value, a dtype name a dtype argument
    /// (`np.result_type(np.int8, 0)`).
    pub fn of(table: &Table, i: usize) -> Arg {
        if crate::numeric::dtype::is_weak(table.name(i)) {
            Arg::Value(i)
        } else {
            Arg::DType(i)
        }
    }
}

/// Why NumPy raises `DTypePromotionError`: `dtype` could not be promoted by `by` ("The DType
/// … could not be promoted by …"), or the two have no common DType ("The DTypes `by` and
/// `dtype` do not have a common DType").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refusal {
    pub dtype: usize,
    pub by: usize,
    /// PyTorch's `toComplexType(by)` raised rather than a promotion: a complex zero-dim or
    /// Python operand makes the result complex, and `by` (a float8) has no complex dtype
    /// ("Unknown Complex ScalarType"). Never set by NumPy's rule.
    pub no_complex: bool,
}

impl Refusal {
    /// `dtype` could not be promoted by `by`.
    pub fn new(dtype: usize, by: usize) -> Refusal {
        Refusal {
            dtype,
            by,
            no_complex: false,
        }
    }
}

/// The pairwise values the rule reads: a measured table, or the generated table the kernels
/// read (`promote::Generated`).
pub trait Pairs {
    /// The node of `a ∨ b` as the library answers it (`None`: it raises).
    fn pair(&self, a: usize, b: usize) -> Option<usize>;
    /// The name of node `i` (`int8@0d`, `f*`).
    fn node_name(&self, i: usize) -> &str;
    /// The node named `name`.
    fn node_index(&self, name: &str) -> Option<usize>;
}

impl Pairs for Table {
    fn pair(&self, a: usize, b: usize) -> Option<usize> {
        self.get(a, b)
    }
    fn node_name(&self, i: usize) -> &str {
        self.name(i)
    }
    fn node_index(&self, name: &str) -> Option<usize> {
        self.index_of(name)
    }
}

/// The rule over one table of pairs.
pub struct DTypeSequence<'a, P: Pairs + ?Sized = Table> {
    pub table: &'a P,
    pub classes: &'a [NumpyClass],
}

/// A DType's identity: two nodes of one class (`bool` and a Python bool, `b*`) are the same
/// DType to NumPy.
#[derive(PartialEq, Eq)]
enum Identity {
    Legacy(u16),
    Python(NumpyKind),
}

impl<P: Pairs + ?Sized> DTypeSequence<'_, P> {
    fn identity(&self, a: usize) -> Identity {
        match self.classes[a] {
            NumpyClass::Builtin { num, .. } | NumpyClass::User { num } => Identity::Legacy(num),
            NumpyClass::Python(k) => Identity::Python(k),
        }
    }

    fn same(&self, a: usize, b: usize) -> bool {
        self.identity(a) == self.identity(b)
    }

    /// Whether `a.__common_dtype__(b)` answers (rather than NotImplemented).
    fn knows(&self, a: usize, b: usize) -> bool {
        use NumpyClass::*;
        if self.same(a, b) {
            return true;
        }
        let defined = self.table.pair(a, b).is_some();
        match (self.classes[a], self.classes[b]) {
            (Builtin { num: x, .. }, Builtin { num: y, .. }) => x > y && defined,
            (Builtin { .. }, User { .. }) => false,
            (Builtin { kind, .. }, Python(p)) => match kind {
                NumpyKind::Bool => false,
                // `PyTypeNum_ISFLOAT`: a float answers a Python complex too (float16 ∨ 0j is
                // complex64).
                NumpyKind::Float | NumpyKind::Complex => true,
                NumpyKind::Integer => p == NumpyKind::Integer,
            },
            (User { num: x }, Builtin { num: y, .. } | User { num: y }) => x > y && defined,
            (User { .. }, Python(_)) => false,
            (Python(p), Builtin { kind, .. }) => match kind {
                NumpyKind::Bool => true,
                NumpyKind::Integer => p > NumpyKind::Integer,
                NumpyKind::Float | NumpyKind::Complex => false,
            },
            // The fallback of abstractdtypes.c: the user DType with uint8, int8, the default
            // integer (or float16, float64; complex64, complex128), whatever answers first.
            (Python(_), User { .. }) => defined,
            (Python(p), Python(q)) => p > q,
        }
    }

    /// `a.__common_dtype__(b)`: `None` for NotImplemented. Two abstract DTypes give the
    /// higher abstract one (a Python int and float: the abstract float, not float64).
    fn slot(&self, a: usize, b: usize) -> Option<usize> {
        if !self.knows(a, b) {
            return None;
        }
        match (self.classes[a], self.classes[b]) {
            (NumpyClass::Python(_), NumpyClass::Python(_)) => Some(a),
            _ if self.same(a, b) => Some(a),
            _ => self.table.pair(a, b),
        }
    }

    /// `PyArray_CommonDType`: `a`'s slot, else `b`'s.
    fn common(&self, a: usize, b: usize) -> Result<usize, Refusal> {
        if self.same(a, b) {
            return Ok(a);
        }
        self.slot(a, b)
            .or_else(|| self.slot(b, a))
            .ok_or(Refusal::new(b, a))
    }

    /// `reduce_dtypes_to_most_knowledgeable`: pairs the operands outside in, moves the one
    /// that answers to the front, clears one whose partner's answer is the partner itself, and
    /// repeats on the front half. Returns the last pair's answer (`None`: NotImplemented).
    fn reduce(&self, d: &mut [Option<usize>]) -> Option<usize> {
        let len = d.len();
        let half = len / 2;
        let mut res = None;
        for low in 0..half {
            let high = len - 1 - low;
            let (Some(a), Some(b)) = (d[low], d[high]) else {
                unreachable!("cleared operands lie past the half being reduced")
            };
            res = if self.same(a, b) {
                Some(a)
            } else {
                self.slot(a, b)
            };
            match res {
                None => d.swap(low, high),
                Some(r) if self.same(r, a) => d[high] = None,
                Some(_) => {}
            }
        }
        if len == 2 {
            return res;
        }
        self.reduce(&mut d[..len - half])
    }

    /// `np.result_type(*args)`: the node of the dtype NumPy returns, or the refusal.
    pub fn result_type(&self, args: &[Arg]) -> Result<usize, Refusal> {
        let node = |a: &Arg| match *a {
            Arg::DType(i) | Arg::Value(i) => i,
        };
        let dtypes = args.iter().filter(|a| matches!(a, Arg::DType(_)));
        let values = args.iter().filter(|a| matches!(a, Arg::Value(_)));
        let mut d: Vec<Option<usize>> = dtypes.chain(values).map(|a| Some(node(a))).collect();
        let r = match d.len() {
            0 => return Err(Refusal::new(0, 0)),
            1 => d[0].expect("one operand"),
            _ => self.sequence(&mut d)?,
        };
        // An abstract result (only Python scalars) is its default dtype, as is any node:
        // `r ∨ r` measured.
        self.table.pair(r, r).ok_or(Refusal::new(r, r))
    }

    /// `PyArray_PromoteDTypeSequence` over at least two operands.
    fn sequence(&self, d: &mut [Option<usize>]) -> Result<usize, Refusal> {
        let first = self.reduce(d);
        let main = d[0].expect("the front operand is never cleared");
        let (mut result, start) = match first {
            None => (None, 1),
            Some(r) => (Some(r), 2),
        };
        for &x in &d[start..] {
            let Some(x) = x else { continue };
            let p = self.slot(main, x).ok_or(Refusal::new(x, main))?;
            result = Some(match result {
                None => p,
                Some(r) => self.common(r, p)?,
            });
        }
        Ok(result.expect("two or more operands give a result"))
    }
}
