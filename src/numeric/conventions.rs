//! The kernel conventions a policy declares in `[kernels]`: what promotion leaves open and each
//! library answers its own way (Python ints that do not fit, integer division by zero, scalars
//! with 16-bit floats, …). Each convention is declared once, below, by `conventions!`: its key,
//! its values (the first is the default: NumPy 2's, or the IEEE-value contract of the array-api
//! and python policies where NumPy's loops differ by dtype), and the docs of both. The policy parser
//! (its keys, values and messages), codegen ([`Semantics::to_rust`]) and the generated page
//! docs/lattices/conventions.md (`output::pages::conventions`, checked fresh by a test) all read
//! [`CONVENTIONS`] or the enums made here; only the kernel that applies a convention names its
//! enum.
//!
//! Adding a convention is one entry here, the kernel that follows it, and the policies that
//! declare a value other than the default.

/// One `[kernels]` key: its name, what it decides, and its values in declaration order (the
/// first is the default).
#[derive(Clone, Copy, Debug)]
pub struct Convention {
    pub key: &'static str,
    /// The key's doc (its doc comment's lines).
    pub doc: &'static str,
    /// Each value's name and the libraries it models, the default first.
    pub values: &'static [(&'static str, &'static str)],
}

impl Convention {
    /// The values' names, the default first.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + Clone {
        self.values.iter().map(|(v, _)| *v)
    }
}

/// Declares the conventions: for each, the enum of its values (the first the default), the
/// field of [`Semantics`], and its entry of [`CONVENTIONS`].
macro_rules! conventions {
    ($(
        #[doc = $kdoc:literal]
        $(#[doc = $kmore:literal])*
        $key:ident: $Enum:ident {
            $(
                $(#[doc = $vdoc:literal])*
                $Variant:ident = $value:literal ($who:literal)
            ),+ $(,)?
        }
    )+) => {
        $(
            #[doc = $kdoc]
            $(#[doc = $kmore])*
            #[derive(Clone, Copy, Debug, PartialEq, Eq)]
            pub enum $Enum {
                $(
                    $(#[doc = $vdoc])*
                    $Variant,
                )+
            }

            impl $Enum {
                /// Every value with its `[kernels]` name, the default first.
                pub const VALUES: &'static [(Self, &'static str)] = &[$(($Enum::$Variant, $value)),+];

                /// The value's `[kernels]` name.
                pub fn name(self) -> &'static str {
                    match self {
                        $($Enum::$Variant => $value,)+
                    }
                }
            }

            impl Default for $Enum {
                fn default() -> Self {
                    Self::VALUES[0].0
                }
            }
        )+

        /// How a policy's kernels treat what promotion leaves open: one field per `[kernels]`
        /// key (docs/file-formats.md). The default of each is NumPy 2's (and the jax policies').
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
        pub struct Semantics {
            $(
                #[doc = $kdoc]
                $(#[doc = $kmore])*
                pub $key: $Enum,
            )+
        }

        /// Every `[kernels]` key, in declaration order.
        pub const CONVENTIONS: &[Convention] = &[$(
            Convention {
                key: stringify!($key),
                doc: concat!($kdoc $(, "\n", $kmore)*),
                values: &[$(($value, $who)),+],
            }
        ),+];

        impl Semantics {
            /// Sets `key` to `value` (names of [`CONVENTIONS`]); `false` when either is unknown.
            pub fn set(&mut self, key: &str, value: &str) -> bool {
                match key {
                    $(stringify!($key) => {
                        match $Enum::VALUES.iter().find(|(_, v)| *v == value) {
                            Some(&(x, _)) => self.$key = x,
                            None => return false,
                        }
                    })+
                    _ => return false,
                }
                true
            }

            /// The name of `key`'s value (`None` for an unknown key).
            pub fn get(&self, key: &str) -> Option<&'static str> {
                match key {
                    $(stringify!($key) => Some(self.$key.name()),)+
                    _ => None,
                }
            }

            /// The Rust expression of these semantics (codegen; `op` is the module that
            /// re-exports this one).
            pub fn to_rust(self) -> String {
                let fields = [$(
                    format!("{}: op::{}::{:?}", stringify!($key), stringify!($Enum), self.$key)
                ),+];
                format!("op::Semantics {{ {} }}", fields.join(", "))
            }
        }
    };
}

conventions! {
    /// What a Python int operand may hold.
    python_int: PythonInt {
        /// It must fit the policy's Python-int type (`i*`'s materialisation) and the result dtype,
        /// else `overflow` (NumPy 2).
        Fit = "fit" ("NumPy 2: an `overflow` error"),
        /// Any value in [−2⁶³, 2⁶⁴) wraps into an integer result (2⁶³ … 2⁶⁴ − 1 are taken as
        /// uint64) and is rounded into a float one; only values beyond raise (PyTorch).
        Wrap = "wrap" ("PyTorch"),
        /// It must fit the policy's Python-int type (`overflow` otherwise), then is cast to the
        /// operands' join: it wraps into an integer one (also where an op rule then makes the
        /// result a float: `uint8 / -129` divides by 127), save that a negative one into uint64
        /// is `overflow`, and is rounded into a float one (TensorFlow: a Python int is an int32
        /// and `int8 + 300` adds 44).
        Cast = "cast" ("TensorFlow: fit `i*`'s dtype, then wrap into the join"),
        /// It must fit the policy's Python-int type (`overflow` otherwise), then is converted to
        /// the dtype the op computes in: it wraps into an integer one and is rounded into a float
        /// one, also where an op rule makes the result a float (JAX: `int8 + 300` adds 44,
        /// `uint8 / -129` divides by −129.0, `uint8 < 256` compares with 0).
        Convert = "convert" ("JAX: fit `i*`'s dtype, then convert to the computation dtype"),
    }

    /// What a comparison of an integer array with a Python int outside the array's dtype does.
    python_int_comparison: IntComparison {
        /// The Python int is an operand like any other: `python_int` decides (the lattice
        /// policies; JAX 0.10 itself wraps it, `jnp.less(uint8(1), -1)` is True).
        Operand = "operand" ("the lattice policies: as `python_int` says"),
        /// It is compared by its value (NumPy 2: `uint8 < -1` is False, `int8 == 300` False,
        /// no OverflowError), against integer dtypes of a byte or more (ml_dtypes' int4 raises).
        Exact = "exact" ("NumPy 2: compared by value"),
    }

    /// What integer `floor_divide` and `remainder` do with a zero divisor.
    integer_division_by_zero: DivisionByZero {
        /// The result is 0 (NumPy, with a warning).
        Zero = "zero" ("NumPy"),
        /// A `zero-division` error (PyTorch raises ZeroDivisionError).
        Raise = "raise" ("PyTorch, TensorFlow: a `zero-division` error"),
        /// XLA's integer division by zero, floored as `jnp.floor_divide` floors: a signed
        /// `x // 0` is −2 for `x ≠ 0` and −1 for 0 (XLA's quotient −1, less one where the signs
        /// differ and the remainder `x` is not zero), an unsigned one all ones (255 in uint8);
        /// `x % 0` is 0 (JAX divides by 1 instead).
        Xla = "xla" ("JAX: x // 0 is -2 (0 // 0 is -1; unsigned: all ones), x % 0 is 0"),
    }

    /// At what precision a scalar operand (a Python number or a zero-dim array) enters
    /// `multiply`, `true_divide` and `floor_divide` when the result is float16 or bfloat16.
    reduced_float_scalars: ScalarPrecision {
        /// Rounded to the result dtype first, like every operand (NumPy, JAX).
        Result = "result" ("NumPy, JAX"),
        /// Rounded to float32 from its own value, the op computed in float32 and rounded to the
        /// result dtype, when the scalar is the second operand (PyTorch's CPU kernels read it as
        /// `opmath_t`; `add` and `subtract` round it to the result dtype first). The path has
        /// only float16 and bfloat16: a float8 `multiply` by a one-element second array raises
        /// (`unsupported`).
        Float32 = "float32" ("PyTorch's opmath scalars"),
        /// Rounded to the result dtype through float32 (twice: TensorFlow converts a Python number
        /// to a float32 tensor, then casts it), then the op as on any operand.
        ViaFloat32 = "via-float32" ("TensorFlow: rounded through float32, then as any operand"),
    }

    /// The sign of a zero float `remainder`.
    remainder_zero_sign: ZeroSign {
        /// The divisor's (NumPy: `remainder(0.0, -inf)` is −0.0).
        Divisor = "divisor" ("NumPy"),
        /// The dividend's, as C's `fmod` leaves it (PyTorch: `remainder(0.0, -inf)` is 0.0).
        Dividend = "dividend" ("C's fmod, PyTorch"),
    }

    /// Which zero `maximum` and `minimum` give, and `clip` made of them, when the operands are
    /// zeros of opposite signs (a complex pair: equal values, a zero part of each sign).
    zero_ties: ZeroTies {
        /// The second operand, the first in complex: NumPy 2.4's float32, float64 and ml_dtypes
        /// loops (`maximum(float32 0.0, -0.0)` is −0.0), and the contract of the array-api and
        /// python policies' IEEE values (docs/kernels.md).
        Second = "second" ("NumPy's float32/float64/ml_dtypes loops; the IEEE-value contract"),
        /// NumPy 2.4 exactly: as `second`, but float16 keeps the first operand
        /// (`maximum(float16 0.0, -0.0)` is 0.0) and `clip` with two zero-dim bounds keeps its
        /// operand (`clip(float32 -0.0, 0.0, 1.0)` is −0.0; with array bounds 0.0).
        Operand = "operand" ("NumPy 2.4: float16 and two zero-dim clip bounds keep the first"),
        /// The first operand: what PyTorch's and TensorFlow's scalar loops and NumPy's float16
        /// loop choose, and NumPy's `clip` and PyTorch's `clamp` with two zero-dim bounds.
        First = "first" ("the first operand, as scalar loops: NumPy's float16, PyTorch's and TensorFlow's tails"),
        /// By the element's place, as PyTorch's CPU loops on AVX-512 choose: each inner row
        /// of the result (the trailing dimensions over which every operand is whole or
        /// constant) runs in 64-byte vectors (16 float32, 8 float64, 32 float16 or bfloat16
        /// elements) that take the second operand, its tail in a scalar loop that takes the
        /// first (a `maximum` of two 20-element float32 tensors: elements 0–15 the second,
        /// 16–19 the first); `clamp` with two zero-dim bounds keeps its operand.
        Vectors = "vectors" ("PyTorch: the second operand in 64-byte vectors of each row, the first in its tail"),
        /// The second operand in whole 32-byte packets of the flattened result (8 float32 or 4
        /// float64 elements), the first in the rest and in float16 and bfloat16: TensorFlow
        /// 2.21's Eigen kernels, built for AVX2 (a 20-element float32 `tf.maximum` takes the
        /// second operand for elements 0–15, the first for 16–19, whatever the shapes).
        Packets = "packets" ("TensorFlow: the second operand in 32-byte packets, the first in the rest"),
        /// By sign, −0 below +0: `maximum` gives +0 and `minimum` −0 whatever the order; a
        /// complex tie gives the second operand (JAX, XLA on CPU).
        Ordered = "ordered" ("JAX: maximum +0, minimum −0; a complex tie the second"),
    }

    /// How `negative` treats the zero parts of a complex number.
    complex_negative: ComplexNegative {
        /// Each part's sign flips: −(+0) is −0 (NumPy, JAX).
        Flip = "flip" ("NumPy"),
        /// `0 − z`: a zero part becomes +0 (PyTorch's CPU kernel).
        ZeroMinus = "zero-minus" ("0 − z, PyTorch"),
    }

    /// How `add` and `subtract` compute in a complex dtype.
    complex_add: ComplexAdd {
        /// Part by part (NumPy, JAX).
        Parts = "parts" ("NumPy"),
        /// `a + α·b` with α = ±1 + 0i and a complex product: an infinite or NaN part of `b` makes
        /// the other part NaN (`0 · inf`), as PyTorch's `add(a, b, alpha)` does.
        Alpha = "alpha" ("a + (±1 + 0i)·b, PyTorch"),
        /// Part by part as XLA compiles it: a real `b` is converted to `b + 0i` and LLVM folds
        /// the imaginary part of `a − b`, `a.im − 0.0`, to `a.im`, which is then not flushed
        /// under `subnormals = "flush"` (JAX).
        Xla = "xla" ("JAX: part by part; a − real keeps a.im as it is"),
    }

    /// What `clip` does with a Python-number bound past the result dtype's finite range.
    clip_bounds: ClipBounds {
        /// It rounds to ±inf like any operand (JAX).
        Round = "round" ("JAX: a bound past the range is ±inf"),
        /// As `round`, and beside an integer array of the library's own (not bool, not an
        /// ml_dtypes type) a Python-int lower bound at or below the array dtype's minimum, or
        /// upper bound at or above its maximum, is dropped before the op runs, as NumPy's
        /// `np.clip` does (`_clip` in numpy/_core/_methods.py): `clip(uint8, -1, 300)` leaves
        /// every element, where the ufunc would raise OverflowError for either bound; with one
        /// bound dropped the op is `maximum(x, lo)` or `minimum(x, hi)`, so the other bound alone
        /// promotes (`clip(uint32, inf, 2**63 - 1)` is float64 inf); a lower bound above the
        /// range, or an upper below it, still raises.
        Drop = "drop" ("NumPy: a Python-int bound past an integer array's range is dropped"),
        /// An `overflow` error when the bound is greater in magnitude than the result dtype's
        /// largest finite value, even where it would round down to it (PyTorch's `clamp` checks
        /// the conversion: "value cannot be converted to type c10::Half without overflow" for
        /// 65505.0); a Python-int lower bound above an integer result's range, or upper bound
        /// below it, is an `overflow` error too, and one beyond the other end bounds nothing
        /// (`clamp(uint8, -1, 3)` computes); zero-dim array bounds are not checked. With two
        /// Python-number bounds a float array keeps its dtype: a Python complex bound is an
        /// `overflow` error unless its imaginary part is zero, and a NaN bound fills the result
        /// with NaN before any kernel runs.
        Checked = "checked" ("PyTorch's clamp: an `overflow` error"),
    }

    /// What `floor_divide` computes in a float dtype.
    float_floor_divide: FloatFloorDivide {
        /// The floor of the exact quotient, by NumPy's `npy_divmod` (Python's `//`; NumPy, JAX,
        /// PyTorch): `1.0 // 0.1` is 9.0, 0.1 being a little above one tenth.
        Divmod = "divmod" ("NumPy, Python's //: 1.0 // 0.1 is 9.0"),
        /// The floor of the quotient rounded to the dtype, `floor(a / b)` (TensorFlow's
        /// `floordiv`): `1.0 // 0.1` is 10.0, the quotient 9.99… having rounded to 10.
        FloorOfQuotient = "floor-of-quotient" ("TensorFlow: floor(a / b), 10.0"),
        /// JAX's `_float_divmod` on XLA's `rem`, each step rounded to the dtype (float16 and
        /// bfloat16 through float32): `m = fmod(a, b)`, `q = (a − m) / b` (`a / b` where `b` is
        /// zero), less 1 where `m ≠ 0` and `m`'s sign is not `b`'s, rounded half away from zero
        /// (`-0.0 // 3.0` is +0.0, `-0.001 // -2**63` −0.0). `remainder` is `m`, plus `b` where
        /// `m ≠ 0` and the signs differ. Under `subnormals = "flush"` every step reads and writes
        /// flushed but `fmod`, which reads its dividend as it is and whose result, unless `b`
        /// is added, is returned as it is (`remainder(float32 1e-45, 1.0)` is 1e-45), and the
        /// test `b == 0` of a zero-dim array divisor where the result is one element of one
        /// or more dimensions, which reads `b` unflushed (`float32[1] 3 // float32[] -5.9e-39`
        /// is NaN, `float32[2]` or `float32[]` by it −inf; measured on jax 0.10.2).
        Xla = "xla" ("JAX: round((a - fmod(a, b)) / b) adjusted, XLA's rem"),
        /// PyTorch's: `divmod`'s values in its scalar loop (a row's tail), the same formulas
        /// with Sleef's `fmod` in its vector loop over the 64-byte vectors of each row (16
        /// float32, 8 float64, 32 float16 or bfloat16 elements; rows as for `zero_ties =
        /// "vectors"`), NaN where a step of its long division overflows (`remainder(1e30,
        /// 1e-30)` in float32 is NaN there, 8.2e-31 in the tail). A float16 or bfloat16
        /// `floor_divide` rounds each step to the dtype in both loops (`float16 -8440 // 3` of
        /// two tensors is −2816), but by a divisor of one element, read and divided by in
        /// float32 and rounded once (−2814). Measured on torch 2.15: 128,000 random float32
        /// remainders and 192,000 float16 and bfloat16 floor divisions in vectors, the place of
        /// the vectors at every row length from 1 to 79, and the 888 cases of
        /// `scripts/oracle_torch_division.py`.
        Vectors = "vectors" ("PyTorch: Sleef's fmod in 64-byte vectors, 16-bit floor division step by step"),
    }

    /// What `true_divide` computes when a Python number is divided by an array.
    scalar_over_array: ScalarOverArray {
        /// The quotient, rounded once (NumPy, JAX, TensorFlow).
        Divide = "divide" ("NumPy: s / t is the quotient"),
        /// The array's reciprocal times the number, `t.reciprocal() * s`, as PyTorch's `s / t`
        /// computes it (two roundings: `3.0 / float32 7.0` is 0.42857146, the quotient
        /// 0.42857143).
        ReciprocalTimes = "reciprocal-times" ("PyTorch: s / t is t.reciprocal() * s"),
    }

    /// How `clip(x, lo, hi)` is composed of `maximum` and `minimum`.
    clip_composition: ClipComposition {
        /// The three operands converted once to their n-ary join, then
        /// `minimum(maximum(x, lo), hi)`: a lower bound above the upper gives the upper (NumPy,
        /// JAX, PyTorch's `clamp`).
        Joined = "joined" ("NumPy, PyTorch: min(max(x, lo), hi) in the n-ary join; lo > hi gives hi"),
        /// `maximum(minimum(x, hi), lo)`, two binary ops each promoting its own pair (a Python int
        /// converts into the first pair's join: `clip(uint32, 0.5, -3)` bounds by 2³² − 3), and
        /// the result must keep `x`'s shape: a lower bound above the upper gives the lower
        /// (TensorFlow's `clip_by_value`).
        Pairwise = "pairwise" ("TensorFlow: max(min(x, hi), lo), each pair promoted on its own, x's shape kept; lo > hi gives lo"),
        /// `minimum(hi, maximum(lo, x))` as `jnp.clip` writes it: the result dtype is the
        /// n-ary join, but the first step computes in its own pair's dtype, whose values the
        /// second converts (`clip(int64, bfloat16, float16)` is float32 with `x` rounded to
        /// bfloat16 first; a Python int converts into `x`'s pair); a lower bound above the upper
        /// gives the upper (JAX).
        Chained = "chained" ("JAX: min(hi, max(lo, x)), the first step in its own pair's dtype"),
    }

    /// What `where` does with a Python float (or a part of a Python complex) past the finite
    /// range of the result dtype.
    where_scalars: WhereScalars {
        /// It rounds to ±inf like any operand (JAX, TensorFlow; NumPy's `where` also wraps a
        /// Python int: `wrap`).
        Round = "round" ("JAX: a Python float past the range is ±inf"),
        /// An `overflow` error where the result has 32 bits or more per part, float32 or complex64
        /// (PyTorch converts it checked: "value cannot be converted to type float without
        /// overflow", from any value greater than the largest finite float32, even one that would
        /// round down to it); a float16 or bfloat16 result still rounds it (to ±inf), as PyTorch's.
        Checked = "checked" ("PyTorch's where: an `overflow` error into float32/complex64"),
        /// As `round`, and a Python int becomes an integer result wrapped to its width, as
        /// NumPy's `np.where` casts it (`where(c, 300, int8)` is 44, `where(c, 2**64 - 1, 255)`
        /// is int64 −1); below −2^63 or from 2^64 it is an `overflow` error (NumPy 2.4.6).
        Wrap = "wrap" ("NumPy's where: a Python int wraps into an integer result"),
    }

    /// How a value becomes a float8 (a cast, an op's float32 result, a Python number, a
    /// `where` operand).
    float8_conversion: Float8Conversion {
        /// Rounded once, to nearest even, from the exact value: past the range NaN in the
        /// `fn`/`fnuz` formats and ±inf in float8_e5m2; a negative value or zero is NaN in
        /// float8_e8m0fnu (ml_dtypes, NumPy, JAX).
        Nearest = "nearest" ("ml_dtypes: rounded once, NaN past the range"),
        /// Through float32 (a float64 or an integer rounded to float32 first), then PyTorch's
        /// `c10` conversions (`numeric::c10`): float8_e4m3fn saturates at ±448 (±inf too),
        /// float8_e8m0fnu rounds the float32 exponent by its guard bits and ignores the sign
        /// (−3 is 4, 0 is 2⁻¹²⁷).
        C10 = "c10" ("PyTorch: through float32; e4m3fn saturates, e8m0fnu rounds the exponent"),
    }

    /// What float arithmetic does with subnormal numbers.
    subnormals: Subnormals {
        /// IEEE gradual underflow: subnormal operands and results are values like any other
        /// (NumPy, ml_dtypes, PyTorch).
        Keep = "keep" ("NumPy, PyTorch: IEEE gradual underflow"),
        /// As x86 CPUs with the DAZ and FTZ bits set compute, which XLA's and TensorFlow's CPU
        /// kernels set: an operand element or part of bfloat16, float32, float64, complex64 or
        /// complex128 that is subnormal (a float32 one after the small floats' widening to
        /// float32: float16's subnormals are normal there) reads as a zero of its sign, and a
        /// result that is tiny (below the smallest normal once rounded to its precision) is
        /// written as one, in arithmetic, comparisons, `clip`, `sum` and converting casts
        /// (`float32 → float64`, `float64 → float32`, a float32 or float64 to bool; not
        /// `float32 → bfloat16`, `bfloat16 → float32` or bool, a move into a complex part,
        /// `negative`, `absolute` or `where`'s choice); float16 keeps its subnormals (computed in
        /// float32); `remainder` reads its operands as they are (the libraries' `fmod` is
        /// software) and writes a tiny result as zero (TensorFlow), or as
        /// `float_floor_divide = "xla"` says (JAX).
        Flush = "flush" ("JAX (XLA on CPU), TensorFlow: subnormals read and written as zero"),
    }

    /// How comparisons, `maximum` and `minimum` order complex numbers.
    complex_order: ComplexOrder {
        /// Lexicographically, the real parts first, as NumPy does: a NaN part orders nothing
        /// (`3+nanj >= 1` is False) and `maximum`/`minimum` return a NaN operand.
        NumPy = "numpy" ("NumPy: a NaN part orders nothing; maximum/minimum return it"),
        /// Lexicographically as XLA compares: `a < b` is `a.re < b.re or (a.re == b.re and
        /// a.im < b.im)` with IEEE comparisons of the parts (`3+nanj >= 1` is True), and
        /// `maximum(a, b)` is `a` where `a > b`, else `b` (`minimum` likewise): a NaN is chosen
        /// only as the order says, a tie gives the second, and the operand chosen is returned as
        /// converted, subnormal parts unflushed (JAX).
        Lexicographic = "lexicographic" ("JAX: IEEE comparisons of the parts; maximum/minimum select"),
    }

    /// How `true_divide` computes in complex64 and complex128.
    complex_divide: ComplexDivide {
        /// Smith's algorithm as NumPy writes it: the ratio of the divisor's smaller part to its
        /// larger, then both parts of the numerator times the reciprocal of the denominator
        /// (`scl = 1 / (c + d·(d/c))`), without fused multiply-adds.
        Smith = "smith" ("NumPy: Smith's, times the denominator's reciprocal"),
        /// Smith's algorithm as XLA emits it for the CPU: each part divided by the denominator,
        /// the products fused into multiply-adds (`fma(d/c, b, a) / fma(d/c, d, c)`), and where
        /// both parts come out NaN, XLA's corner cases: a zero divisor gives
        /// `copysign(inf, c) · a` (`(7 − inf·i) / −0.0` is `−inf + inf·i`), an infinite
        /// numerator over a finite divisor and a finite numerator over an infinite one their
        /// limits (JAX).
        Xla = "xla" ("JAX: XLA's Smith's with fused multiply-adds and its corner cases"),
        /// As TensorFlow's Eigen kernels divide: over the whole 32-byte packets of the flattened
        /// result (4 complex64, 2 complex128 elements) Eigen's `pdiv_complex` (the divisor
        /// scaled by its larger part's magnitude, `x · conj(y')` by schoolbook products, over
        /// `c'² + d'²`, then over the scale), over the rest C's Smith's division as GCC's
        /// `__divdc3` wrote it before GCC 12, with Annex G's limits (`(8 − i) / 0` is
        /// `inf − inf·i`); every step's subnormals flushed under `subnormals = "flush"`.
        Eigen = "eigen" ("TensorFlow: Eigen's pdiv_complex in packets, Smith's in the rest"),
        /// As PyTorch's `c10::complex` division compiled by GCC, which contracts its products
        /// into fused multiply-adds: `scl = 1 / fma(d, d/c, c)`, `(fma(b, d/c, a) · scl,
        /// fma(−a, d/c, b) · scl)` (the parts swapped where `|d| > |c|`), in the parts' own
        /// precision, in its vector and scalar loops alike. Measured on torch 2.15: 21,744
        /// random complex128 quotients at sizes 1, 7 and 64, and 20,000 complex64 ones in
        /// 8-element tensors and in one tensor of 20,000, every one.
        SmithFused = "smith-fused" ("PyTorch: Smith's with fused multiply-adds in the parts' precision"),
    }

    /// How `multiply` computes in complex64 and complex128.
    complex_multiply: ComplexMultiply {
        /// Each part one fused multiply-add, `fma(a, c, −b·d) + fma(a, d, b·c)·i` (NumPy's SIMD
        /// loops, and PyTorch's scalar loop).
        Fused = "fused" ("NumPy: fused multiply-adds"),
        /// The schoolbook product `(a·c − b·d) + (a·d + b·c)·i`, each product rounded, in the
        /// 64-byte vectors of each row of PyTorch's loop (4 complex128 or 8 complex64
        /// elements), and fused multiply-adds in the row's tail, its scalar loop (a 5-element
        /// complex128 product: elements 0–3 schoolbook, element 4 fused), which in complex64
        /// goes two elements at a time, leaving the last element of an odd tail schoolbook (a
        /// 15-element complex64 row: 8 schoolbook, 6 fused, 1 schoolbook).
        Vectors = "vectors" ("PyTorch: schoolbook in 64-byte vectors of each row, fused in its tail"),
        /// As TensorFlow's Eigen kernels multiply: over the whole 32-byte packets of the
        /// flattened result (4 complex64, 2 complex128 elements) the schoolbook product, each
        /// product rounded (`(100 + 1.5i) · (0.01 + 0.5i)` has the real part 0.25 in complex64;
        /// fused: 0.24999998), over the rest C's product by Annex G (`__mulsc3`/`__muldc3`:
        /// where both parts come out NaN, infinities recovered, so `(FLT_MAX − 0.001i) · (−2.5
        /// + NaN·i)` is NaN + NaN·i in a packet and −inf + inf·i past the last one); every step's
        /// subnormals flushed under `subnormals = "flush"`. Measured on TensorFlow 2.21
        /// (`tf.multiply`): 1,000 random products of each complex dtype at sizes 1 to 1,000,
        /// and the Annex G case at every length from 1 to 12.
        Eigen = "eigen" ("TensorFlow: schoolbook in Eigen's packets, Annex G in the rest"),
        /// As XLA's CPU backend multiplies: each part one fused multiply-add, the imaginary
        /// part's other product fused, `fma(a, c, −b·d) + fma(b, c, a·d)·i`, every step flushed
        /// under `subnormals = "flush"`. Measured on jax 0.10.2 (`jnp.multiply`, found by
        /// `scripts/fuzz_libraries.py jax --seed 200087`): 1,052 random products of complex64
        /// and complex128 at sizes 1 to 333, every imaginary part `fma(b, c, a·d)`, 739 of
        /// them NumPy's `fma(a, d, b·c)`. XLA computes `x · y` as `y · x` (fusing `a·d`) where
        /// `y` is constant along the result's innermost dimension longer than one and `x` is
        /// not, or `y` is converted (complex64 to complex128, a Python complex to complex64)
        /// and has the result's shape (`scripts/oracle_jax_complex_multiply.py`, found by seeds
        /// 200127 and 200203).
        Xla = "xla" ("JAX: fma(a, c, -b·d) + fma(b, c, a·d)·i, as y·x where x is not constant along the innermost dimension and y is, or y is converted and not broadcast"),
    }

    /// What `multiply` computes where one operand is a bool array.
    bool_multiply: BoolMultiply {
        /// The product of the bool as 0 or 1 and the other operand (NumPy: `False · inf` is
        /// NaN, `False · −5.0` is −0.0).
        Product = "product" ("NumPy: the product, False · inf is NaN"),
        /// XLA's algebraic simplifier rewrites `x · convert(b)` as `select(b, x, 0)` where the
        /// bool array `b` has the result's shape (not broadcast) and the result is float16,
        /// float32, float64, complex64 or complex128 (not bfloat16): `False · inf` is +0.0 and
        /// `True · x` is `x` as converted, a subnormal of the result's dtype unflushed (JAX).
        Select = "select" ("JAX: select(b, x, 0) for a bool array of the result's shape"),
    }

    /// How `power` computes in complex64 and complex128.
    complex_power: ComplexPower {
        /// NumPy's `npy_cpow`: an exponent of zero gives 1, a zero base 0 where the exponent's
        /// real part is positive and NaN elsewhere, an integer exponent `n` with `|n| < 100`
        /// multiplies (`x`, `x·x`, `x·(x·x)`, repeated squaring above, `1 / xⁿ` by Smith's for
        /// a negative `n`), and every other pair is C's `cpow` as glibc computes it
        /// (`cexp(y · clog(x))`, the product by Annex G).
        Numpy = "numpy" ("NumPy: npy_cpow, small integer exponents by multiplication"),
        /// PyTorch's `pow`: glibc's `cpow` (its `std::pow`), except for a Python-number exponent
        /// of 0 (1), 1 (the base), 2 and 3 (`x·x`, `x·x·x`, the policy's `multiply`), −1 and −2
        /// (`1 / x`, `1 / (x·x)`, its `true_divide`), 0.5 (glibc's `csqrt`) and −0.5
        /// (`1 / csqrt(x)`), as its `pow_tensor_scalar` kernel dispatches them; complex32 has no
        /// `pow`.
        Torch = "torch" ("PyTorch: cpow, special Python exponents as its pow kernel"),
        /// glibc's `cpow` for every pair, under `subnormals = "flush"` with each operation's
        /// subnormal operands and results flushed to zero, as TensorFlow's threads compute it
        /// (its `std::pow`, DAZ and FTZ on).
        Cpow = "cpow" ("TensorFlow: glibc's cpow"),
    }

    /// What `true_divide` (and `floor_divide`'s division step) computes in a real float dtype
    /// when its divisor is broadcast (holds
    /// fewer elements than the result: a Python number, a zero-dim array, a row).
    broadcast_divisor: BroadcastDivisor {
        /// The quotient, rounded once (NumPy, PyTorch, TensorFlow).
        Divide = "divide" ("NumPy: the quotient"),
        /// `a × (1 / b)`: XLA's algebraic simplifier rewrites a division by a broadcast into a
        /// multiplication by the reciprocal, computed in the dtype (float32 for bfloat16; the
        /// reciprocal of a float16 divisor rounded to float16) and flushed under `subnormals =
        /// "flush"` (JAX: `float64 7 / 1.5` is 4.666666666666666, `int8 3 / -7` is
        /// −0.42857146; a division of arrays of one shape is the quotient). `floor_divide`'s
        /// division step (`float_floor_divide = "xla"`) is rewritten so where the divisor has one
        /// or more dimensions, not where it is zero-dim or a Python number.
        Reciprocal = "reciprocal" ("JAX: a / broadcast b is a * (1 / b)"),
    }

    /// Whether `clip` takes one bound as a Python number and the other as an array.
    clip_mixed_bounds: ClipMixedBounds {
        /// Any mix (NumPy, JAX, TensorFlow).
        Allowed = "allowed" ("NumPy"),
        /// `unsupported` when one bound is a Python number and the other an array of one or more
        /// dimensions: PyTorch's `clamp` takes both as numbers or both as tensors (`clamp(t, 0, u)`
        /// is a TypeError; a zero-dim tensor passes as a number).
        Unsupported = "unsupported" ("PyTorch's clamp: one bound a Python number, the other an array, is `unsupported`"),
    }

    /// How a float becomes a sub-byte integer (int1, int2, int4, uint1, uint2, uint4), in a cast
    /// or as an operand of a loop that computes in one (`np.multiply(uint4, float8_e4m3fn)`).
    intn_conversion: IntnConversion {
        /// Truncated toward zero and saturated to the type's range, NaN 0 (`typejoin cast`'s
        /// rule; JAX, whose XLA conversion saturates).
        Saturate = "saturate" ("JAX (XLA): truncated, saturated, NaN 0"),
        /// As ml_dtypes' `intN(static_cast<int8_t>(float))` runs on x86-64: truncated toward
        /// zero in int32 (`cvttss2si`: past int32's range, ±inf and NaN give INT_MIN, whose low
        /// bits are 0), then the low N bits (300 is 12 in uint4, −1 is 15); a float8, float6 or
        /// float4 reaches it through a conversion that saturates (+inf all ones, −inf and NaN
        /// 0). Measured on every pattern of the 8- and 16-bit floats and 600,000 float32 and
        /// float64 values (ml_dtypes 0.6.0).
        Wrap = "wrap" ("ml_dtypes (NumPy): truncated in int32, low bits kept"),
    }

    /// How `astype` makes a real float, or a complex number's real part, an integer of 8 to 64
    /// bits where the value is past the integer's range, infinite or NaN (in range, every value
    /// is truncated toward zero). The C casts of NumPy, PyTorch and TensorFlow answer as x86-64's
    /// `cvttss2si`/`cvttsd2si` do: past the width they convert to, ±inf and NaN give its least
    /// value. Each value is measured on the library's scalar loop (a one-element array, and
    /// every element of a strided one); their vector loops answer otherwise for some pairs
    /// (uint32 by a split at 2^31, TensorFlow's narrow integers saturated), which
    /// `scripts/fuzz_libraries.py` classifies as place-dependent.
    int_conversion: IntConversion {
        /// Truncated toward zero and saturated to the type's range, NaN 0 (`typejoin cast`'s
        /// rule; JAX, whose XLA conversion saturates).
        Saturate = "saturate" ("JAX (XLA): truncated, saturated, NaN 0"),
        /// NumPy's C casts on x86-64: to int8, int16, uint8 and uint16 through int32, then the
        /// low bits (300.5 is 44 in uint8, −1.0 is 255, 1e10 and NaN are 0); to int32 directly
        /// (past its range, ±inf and NaN: −2^31); to uint32 and int64 through int64 (−2^63
        /// there); to uint64 by a split at 2^63 (below it through int64, so −1.0 is 2^64 − 1
        /// and NaN and −inf are 2^63; from it, 2^63 more than the rest through int64, so 1e20
        /// and +inf are 0). ml_dtypes' floats of 8 bits or fewer give 0 for NaN and saturate
        /// ±inf (`float8_e5m2(inf)` is 127 in int8). Measured on 128 values of each of the 64
        /// pairs of a float, complex or ml_dtypes float8 dtype and an integer
        /// (`scripts/oracle_float_int_casts.py`), NumPy 2.4.6 with ml_dtypes 0.6.0.
        X86 = "x86" ("NumPy: C casts on x86-64"),
        /// As `x86`, but uint8 through int64, as c10's `static_cast<uint8_t>(int64_t(x))` (so
        /// float64 2^32 + 5 is 5, not 0), and a NaN of float8_e4m3fnuz, float8_e5m2fnuz or
        /// float8_e8m0fnu is 0. Measured on the 88 pairs of PyTorch 2.15's catalogue, 128 values
        /// each.
        X86C10 = "x86-c10" ("PyTorch: C casts on x86-64, uint8 through int64"),
        /// As `x86`, but uint64 by Clang's branchless split (`r | (cvtt(x − 2^63) & r >> 63)`
        /// with `r = cvtt(x)`): from 2^64 on and +inf it is 2^63 where `x86` gives 0. Measured on
        /// TensorFlow 2.21's 48 pairs, 128 values each.
        X86Eigen = "x86-eigen" ("TensorFlow: C casts on x86-64, Clang's uint64 split"),
    }

    /// What `astype` of a complex number to bool tests.
    complex_to_bool: ComplexToBool {
        /// Either part nonzero: `17j` is True (NumPy, PyTorch, JAX).
        Either = "either" ("NumPy, PyTorch, JAX: either part nonzero"),
        /// The real part only, as Eigen's cast takes it (`scalar_cast_op` of a complex to a real
        /// type reads `real(z)`): `17j` is False. Measured on TensorFlow 2.21 (`tf.cast`, found
        /// by `scripts/fuzz_libraries.py tensorflow --seed 200003`).
        RealPart = "real-part" ("TensorFlow (Eigen): the real part only"),
    }

    /// How a float64 (a complex128's parts) or a 32- or 64-bit integer becomes a float16 or
    /// bfloat16 (or their complex types): in `astype`, and as an array or scalar operand of an
    /// op computed in one. Float8 targets are `float8_conversion`'s.
    narrowing: Narrowing {
        /// Rounded once, to nearest even, from the exact value (NumPy's float16). ml_dtypes
        /// rounds float64 → bfloat16 through float32; the `numpy` policy does not follow it
        /// (docs/kernels.md).
        Once = "once" ("NumPy: rounded once"),
        /// Rounded to float32 (complex64) first, then to the dtype: `1.0004882821813226`, above
        /// float16's midpoint `1 + 2⁻¹¹` by less than float32's half ulp, is float16 1.0, not
        /// 1.0009766, and int32 `2²⁴ + 2¹⁶ + 1` is bfloat16 2²⁴. Measured on PyTorch 2.15
        /// (`c10::Half(float)`), TensorFlow 2.21 (Eigen's casts) and jax 0.10.2 (XLA's converts)
        /// on the CPU: `astype` from float64, complex128, int32, int64, uint32 and uint64, and
        /// Python numbers and integer arrays in ops (`scripts/oracle_narrowing.py`).
        ViaFloat32 = "via-float32" ("PyTorch, TensorFlow, JAX: through float32"),
    }

    /// In what order `sum` adds the elements of a float or complex array, each step rounded as
    /// the library rounds it.
    sum_order: SumOrder {
        /// Exactly (Shewchuk's partials, as Python's `math.fsum`), rounded once into the result
        /// dtype: no order, so no library's last-place error.
        Exact = "exact" ("exact, rounded once"),
        /// As NumPy's `add.reduce` (`np.sum`) on a C-contiguous array, from +0.0: where the
        /// summed elements are adjacent (the whole array, or an axis followed only by dimensions
        /// of size 1), NumPy's `pairwise_sum` over each line: fewer than 8 elements one by one,
        /// up to 128 in 8 interleaved accumulators added as `((r0 + r1) + (r2 + r3)) + ((r4 +
        /// r5) + (r6 + r7))` and the rest one by one, more split in two at half rounded down to
        /// a multiple of 8; complex numbers 4 accumulators a part, blocks of 64 (float16 in
        /// float32, rounded once at the end). Along any other axis the rows are added one after
        /// another into the result. ml_dtypes' dtypes (bfloat16, the float8s) add one by one
        /// in float32, each step rounded to the dtype. Measured on 3,000 random arrays of every
        /// float and complex dtype, shape and axis, and sums of up to 70,000 elements (NumPy
        /// 2.4.6, ml_dtypes 0.6.0; `scripts/oracle_sums.py numpy`).
        NumPy = "numpy" ("NumPy: pairwise along adjacent elements, rows one by one"),
        /// As PyTorch 2's CPU `cascade_sum` (aten/src/ATen/native/cpu/SumKernel.cpp) on a
        /// contiguous tensor, each sum added to a result of zeros (−0.0s sum to +0.0): where the
        /// summed elements are adjacent, 32-byte vectors (8 float32, 4 float64 or complex64, 2
        /// complex128; float16 and bfloat16 in float32, a vector of 16 as lanes `v[i] + v[i +
        /// 8]`) summed lane by lane as 4 interleaved rows, the tail one by one, then the lanes
        /// in order; shorter lines as 4 interleaved sums; along any other axis 4 columns (or 4
        /// vectors of columns) at once; long sums in chunks of 16 or more rows on 4 levels. The
        /// sum kernel has no AVX-512 build, so its vectors are AVX2's on every x86-64 CPU with
        /// AVX2. Measured on 1,500 random tensors of every float and complex dtype, shape and
        /// axis (PyTorch 2.15, AVX-512 CPU; `scripts/oracle_sums.py torch`).
        Torch = "torch" ("PyTorch: cascade sums over AVX2 vectors"),
        /// As TensorFlow 2's CPU `reduce_sum` on one thread (Eigen's `TensorReduction.h`), each
        /// step from +0.0: a line of adjacent elements (the whole array, or the last axis) in
        /// AVX packets (8 float32, 4 float64 or complex64, 2 complex128, 8 float16), 4 packet
        /// accumulators over whole blocks of 4 packets added as `((p0 + p1) + p2) + p3`, the
        /// other whole packets into it, the tail one by one, then the tail plus the packet's
        /// lanes added half onto half; lines longer than 1,024 packets (200 for float16) split
        /// in two at a packet past half. Along any other axis each element from +0.0 row by
        /// row, or, inside a whole output packet of one row with 16 rows or more, as 4
        /// accumulators by row mod 4 added in order. float16 adds in float32 rounded each step
        /// (lanes in float32, rounded once); bfloat16 sums as float32, rounded once; a single
        /// summed element is copied (−0.0 and subnormals kept); under `subnormals = "flush"`
        /// every float32 and float64 step flushes. Measured on 1,500 random tensors of every
        /// float and complex dtype, shape and axis, up to 9,000 elements (TensorFlow 2.21,
        /// `scripts/oracle_sums.py tensorflow`).
        Eigen = "eigen" ("TensorFlow: Eigen's packet reductions"),
        /// As XLA's CPU backend (jax 0.10) reduces after its `TreeReductionRewriter`: where
        /// every summed dimension holds at most 32 elements, one by one from +0.0 in row-major
        /// order; else windows of `min(d, 32)` elements along each summed dimension (padded
        /// `SAME`, the smaller half of the padding first), each window one by one from +0.0, and
        /// the windows' sums reduced again the same way. Dimensions of size 1 are dropped (a
        /// single summed element is copied, −0.0 and subnormals kept); float16 and bfloat16 sum
        /// in float32, rounded once; under `subnormals = "flush"` every step flushes. A whole
        /// two-dimensional sum of rows of at most 8 real parts adds its rows in vector lanes
        /// where the lanes divide the rows (lane `k` rows `k`, `k + v`, …, then the lanes half
        /// onto half; `v` lanes of 32 bytes of reals or 64 of complex numbers, fewer for fewer
        /// rows, halved while they hold more than 192 bytes of rows). Measured on 1,500 random
        /// arrays of every float and complex dtype, shape and axis up to 3,000 elements (jax
        /// 0.10.2, `scripts/oracle_sums.py jax`), all bit for bit, and on 1,040 whole sums of
        /// 2 to 32 rows of 2 to 20 elements (`scripts/oracle_jax_row_sums.py`), all but 37 of
        /// 20 or 28 rows of float32 or complex64; sums over three or more dimensions are added
        /// in row-major order, which is not measured beyond those arrays. The row lanes are
        /// LLVM's vectorisation of the loop over the rows, which XLA compiles for the machine it
        /// runs on: `"xla"` follows `"xla-avx512"` on a CPU with AVX-512F and `"xla-avx2"` on
        /// any other (measured on one CPU of each kind; others not measured).
        Xla = "xla" ("JAX: XLA's 32-element reduction windows, row lanes as on this CPU"),
        /// `"xla"` with the row lanes XLA's code takes on a CPU with AVX-512 (measured on one,
        /// above: rows of at most 8 real parts, lanes that divide the rows).
        XlaAvx512 = "xla-avx512" ("JAX on an AVX-512 CPU"),
        /// `"xla"` with the row lanes XLA's code takes on a CPU with AVX2 and no AVX-512
        /// (measured on an AMD EPYC of family 23, jax 0.10.2): rows of any length up to 32
        /// elements; under 16 rows the most lanes (of 32 bytes of reals, as above, no more than
        /// the rows) where they divide the rows, else one by one; from 16 rows 8 lanes (float32,
        /// complex64; 4 where the rows leave 4 to 7 over and a row is not 32 bytes) or 4
        /// (float64, complex128) over the rows they divide, the rest added one by one after the
        /// lanes. 1,040 whole sums of 2 to 32 rows of 2 to 20 elements
        /// (`scripts/oracle_jax_row_sums.py 9 2 jax_row_sums_avx2`) and 600 of random shapes up
        /// to 32 × 32, bit for bit; `"xla-avx512"` differs on 402 of the 1,040, and on 380 of
        /// those measured on the AVX-512 CPU `"xla-avx2"` does.
        XlaAvx2 = "xla-avx2" ("JAX on an AVX2 CPU"),
    }

    /// What real float `power` computes where the exponent is one element. Every other
    /// element is libm's `pow` in float64 and `powf` in float32 (also the float32 lanes of
    /// float16 and bfloat16): glibc's, which NumPy's portable loops, PyTorch's scalar loop and
    /// XLA's CPU code call (30,000 random float32 pairs each, bit for bit; `pow` in float64
    /// rounded to float32 differs in 21 of them).
    power_exponent: PowerExponent {
        /// `pow` for every element.
        Pow = "pow" ("libm's pow and powf for every element"),
        /// NumPy 2's float32 and float64 loops, given an exponent of stride zero, compute an
        /// exponent of −1 as `1 / x`, 0 as 1, 0.5 as `sqrt(x)` (`power(-0.0, 0.5)` is −0.0,
        /// `power(-inf, 0.5)` NaN), 1 as `x` and 2 as `x · x`, before they reach libm (or
        /// Intel's SVML on AVX-512). The stride is zero where the exponent is one element and
        /// is zero-dim (a Python number), or where an operand's shape is not the exponent's
        /// (NumPy's iterator then broadcasts it); `power(float64[1], float64[1])` and
        /// `power(float64[], float64[1])` take the trivial loop, stride 8. Not in NumPy's
        /// float16 loop nor ml_dtypes'. Measured on NumPy 2.4.6 (28 shape pairs, 11 dtype
        /// pairs, with and without its AVX-512 dispatch).
        Numpy = "numpy" ("NumPy: a one-element exponent of -1, 0, 0.5, 1, 2 by 1/x, 1, sqrt, x, x*x"),
    }
}
