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
    if runs > MAX_RUNS {
        return Err(usage(
            format!("--runs {runs} is more than {MAX_RUNS} timed runs"),
            "a median settles within a few hundred runs: use fewer",
        ));
    }
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
    // The operands' memory, checked before any of it is asked for.
    let operands = [
        Some(lhs),
        rhs.filter(|r| !r.contains('*') && !r.ends_with("@0d")),
    ];
    let mut per_element = 16; // the widest result
    let mut generation = 0;
    for d in operands.into_iter().flatten() {
        let d = dtype(d)?;
        let unit = d.unit().bytes();
        let wide = if d.is_float() || d.is_complex() {
            16
        } else {
            0
        };
        per_element += unit;
        generation = generation.max(16 + unit + wide + unit);
    }
    if let Some(&to) = to.as_ref() {
        per_element += dtype(to)?.unit().bytes();
    }
    let needed = (n as u128) * (per_element + generation) as u128;
    if let Some(budget) = memory_budget()
        && needed > budget as u128
    {
        return Err(usage(
            format!(
                "-n {n} needs about {} of memory for its operands and result ({} bytes an \
                 element), more than the {} this process can have",
                shown_bytes(needed),
                per_element + generation,
                shown_bytes(budget as u128)
            ),
            "use a smaller -n",
        ));
    }
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

/// The most timed runs `bench` takes (`--runs`): their times are kept to take the median.
pub const MAX_RUNS: usize = 1_000_000;

/// The memory this process may still take: the smaller of the machine's available memory
/// (`MemAvailable` in `/proc/meminfo`) and what the address-space limit (`RLIMIT_AS`, what
/// `ulimit -v` sets) leaves beside what is mapped already, when either is known.
fn memory_budget() -> Option<u64> {
    let available = std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
        let line = m.lines().find(|l| l.starts_with("MemAvailable:"))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        kib.checked_mul(1024)
    });
    #[cfg(unix)]
    let limit = {
        let mut r = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes one `rlimit` through a valid pointer.
        let ok = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut r) } == 0;
        // What is already mapped counts against the limit.
        let used = std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|m| {
                let line = m.lines().find(|l| l.starts_with("VmSize:"))?;
                line.split_whitespace().nth(1)?.parse::<u64>().ok()
            })
            .unwrap_or(0)
            * 1024;
        // `rlim_t` is `u64` on Linux, narrower elsewhere.
        #[allow(clippy::unnecessary_cast)]
        let cur = r.rlim_cur as u64;
        (ok && r.rlim_cur != libc::RLIM_INFINITY).then(|| cur.saturating_sub(used))
    };
    #[cfg(not(unix))]
    let limit = None;
    match (available, limit) {
        (Some(a), Some(l)) => Some(a.min(l)),
        (a, l) => a.or(l),
    }
}

/// Bytes as a person reads them (`1.5 GiB`).
fn shown_bytes(b: u128) -> String {
    const UNITS: [&str; 5] = ["bytes", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} bytes")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
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
