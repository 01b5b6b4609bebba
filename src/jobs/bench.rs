//! Kernel timing for `typejoin bench`: the values a user has by default (normally distributed
//! floats, full-range integers) or random bit patterns, output preallocated, one warm-up, then
//! timed runs on a rayon pool of the given size. The `scripts/bench_*` scripts
//! and `docs/performance.md` are built from its measurements.

use serde::Serialize;

use crate::policy::diag::{Diagnostic, LoadError};

/// What to time.
#[derive(Clone, Debug)]
pub struct Spec<'a> {
    /// An elementwise binary op (`add`, `multiply`, …) or `astype`.
    pub op: &'a str,
    pub lhs: &'a str,
    /// The second operand's dtype (binary ops).
    pub rhs: Option<&'a str>,
    /// The destination dtype of `astype`.
    pub to: Option<&'a str>,
    /// Elements.
    pub n: usize,
    pub threads: usize,
    /// A generated policy (`jax`, `array-api`, …) that gives the result dtype.
    pub policy: &'a str,
    /// Timed runs, after one warm-up.
    pub runs: usize,
    /// The operands' values.
    pub data: Values,
}

/// What the operands hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Values {
    /// Floats (and complex parts) drawn from N(0, 1) and rounded to the dtype; integers and
    /// bool over their full range: what an array library's users compute on.
    #[default]
    Normal,
    /// Random bit patterns: every encoding as likely (NaN, ±∞, subnormals and huge values
    /// are common, which sends float arithmetic and casts down their slow paths).
    Bits,
}

/// One measurement: the best and median time per element, and the bandwidth of the best run
/// (bytes read and written).
#[derive(Clone, Debug, Serialize)]
pub struct Measurement {
    pub op: String,
    pub lhs: String,
    pub rhs: Option<String>,
    pub out: String,
    pub n: usize,
    pub threads: usize,
    pub ns_per_element_best: f64,
    pub ns_per_element_median: f64,
    pub gb_per_s_best: f64,
}

/// Times the kernel `spec` names. Errors name the flag to change.
pub fn measure(spec: &Spec) -> Result<Measurement, LoadError> {
    let &Spec {
        op,
        lhs,
        rhs,
        to,
        n,
        threads,
        policy,
        runs,
        data,
    } = spec;
    use crate::kernels::array::Array;
    use crate::kernels::ops::{self, Arg};
    use crate::numeric::dtype::DType;
    let usage = |msg: String, help: &str| {
        LoadError::one(Diagnostic::file("typejoin bench", msg).with_help(help))
    };
    let policy = crate::kernels::policy(policy)?;
    let dtype = |name: &str| {
        crate::numeric::dtype::canonical(name)
            .and_then(DType::named)
            .ok_or_else(|| usage(format!("unknown dtype `{name}`"), "use a catalogue name"))
    };
    let mut rng = crate::synth::Rng::new(7);
    let random = |d: DType, rng: &mut crate::synth::Rng| {
        let w = d.pattern_bits();
        let mask = if w >= 64 { u64::MAX } else { (1u64 << w) - 1 };
        let floats = data == Values::Normal && (d.is_float() || d.is_complex());
        let mut draw = || {
            if floats {
                normal(rng).to_bits()
            } else {
                rng.next_u64() & mask
            }
        };
        let bits: Vec<[u64; 2]> = (0..n)
            .map(|_| [draw(), if d.is_complex() { draw() } else { 0 }])
            .collect();
        if !floats {
            return Array::from_bits(d, vec![n], &bits).expect("fits");
        }
        let wide = if d.is_complex() {
            DType::Complex128
        } else {
            DType::Float64
        };
        ops::astype(&Array::from_bits(wide, vec![n], &bits).expect("fits"), d)
    };
    let a = random(dtype(lhs)?, &mut rng);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .build()
        .map_err(|e| usage(format!("cannot start {threads} threads: {e}"), "use fewer"))?;
    type Kernel<'a> = Box<dyn FnMut() -> Result<(), crate::kernels::ops::OpError> + Send + 'a>;
    let (out_name, rhs_name, bytes, mut kernel): (String, Option<String>, usize, Kernel) = if op
        == "astype"
    {
        let to = dtype(to.ok_or_else(|| usage("astype needs --to".into(), "e.g. --to float32"))?)?;
        let mut out = Array::zeros(to, vec![n])
            .map_err(|e| LoadError::one(Diagnostic::file("-n", e.to_string())))?;
        let bytes = n * (a.dtype().unit().bytes() + to.unit().bytes());
        (
            to.name().to_string(),
            None,
            bytes,
            Box::new(move || ops::astype_into(&a, &mut out)),
        )
    } else {
        let o = ops::Op::named(op).ok_or_else(|| {
            let binary: Vec<&str> = ops::Op::ALL.iter().map(|(n, _)| *n).collect();
            let help = crate::policy::diag::did_you_mean(op, binary.iter().copied()).map_or_else(
                || {
                    format!(
                        "the elementwise binary ops ({}), or astype",
                        binary.join(", ")
                    )
                },
                |s| format!("did you mean `{s}`?"),
            );
            usage(format!("unknown op `{op}`"), &help)
        })?;
        let rhs_name =
            rhs.ok_or_else(|| usage("a binary op needs --rhs".into(), "e.g. --rhs float32"))?;
        // A weak (Python scalar) right operand: one fixed value, no array to read.
        let scalar = match crate::numeric::dtype::canonical(rhs_name) {
            Some("b*") => Some(ops::Scalar::Bool(true)),
            Some("i*") => Some(ops::Scalar::Int(3)),
            Some("f*") => Some(ops::Scalar::Float(1.5)),
            Some("c*") => Some(ops::Scalar::Complex(1.5, -0.5)),
            _ => None,
        };
        let zero_dim = rhs_name.strip_suffix("@0d");
        let (y, rhs_bytes, shown) = match (scalar, zero_dim) {
            (Some(v), _) => (Arg::Scalar(v), 0, rhs_name.to_string()),
            // A zero-dim array (`float32@0d`): one element of that dtype, shape [].
            (None, Some(name)) => {
                let d = dtype(name)?;
                let value = if d.is_float() || d.is_complex() {
                    1.5
                } else {
                    3.0
                };
                let f64 = Array::from_bits(DType::Float64, vec![], &[[f64::to_bits(value), 0]])
                    .expect("one element");
                let one = ops::astype(&f64, d);
                (Arg::Array(one), 0, format!("{}@0d", d.name()))
            }
            (None, None) => {
                let d = dtype(rhs_name)?;
                (
                    Arg::Array(random(d, &mut rng)),
                    d.unit().bytes(),
                    d.name().to_string(),
                )
            }
        };
        let x = Arg::Array(a);
        let probe = ops::binary(policy, o, &x, &y)
            .map_err(|e| usage(e.message, "pick dtypes the policy promotes"))?;
        let bytes = n * (x_dtype(&x).unit().bytes() + rhs_bytes + probe.dtype().unit().bytes());
        let name = probe.dtype().name().to_string();
        let mut out = probe;
        (
            name,
            Some(shown),
            bytes,
            Box::new(move || ops::binary_into(policy, o, &x, &y, &mut out)),
        )
    };
    let mut times = Vec::with_capacity(runs);
    pool.install(|| -> Result<(), LoadError> {
        let fail = |e: crate::kernels::ops::OpError| {
            usage(e.message, "see `typejoin run` for the op's rules")
        };
        kernel().map_err(fail)?;
        for _ in 0..runs.max(1) {
            let t = std::time::Instant::now();
            kernel().map_err(fail)?;
            times.push(t.elapsed().as_secs_f64());
        }
        Ok(())
    })?;
    times.sort_by(f64::total_cmp);
    let best = times[0];
    let median = times[times.len() / 2];
    Ok(Measurement {
        op: op.to_string(),
        lhs: dtype(lhs)?.name().to_string(),
        rhs: rhs_name,
        out: out_name,
        n,
        threads: threads.max(1),
        ns_per_element_best: best * 1e9 / n as f64,
        ns_per_element_median: median * 1e9 / n as f64,
        gb_per_s_best: bytes as f64 / best / 1e9,
    })
}

/// A draw from N(0, 1) (Box–Muller).
fn normal(rng: &mut crate::synth::Rng) -> f64 {
    let unit =
        |rng: &mut crate::synth::Rng| ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
    let (u, v) = (unit(rng), unit(rng));
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

fn x_dtype(a: &crate::kernels::ops::Arg) -> crate::numeric::dtype::DType {
    match a {
        crate::kernels::ops::Arg::Array(a) => a.dtype(),
        crate::kernels::ops::Arg::Scalar(_) => unreachable!("bench operands are arrays"),
    }
}
