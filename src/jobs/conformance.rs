//! The conformance runner's line protocol (docs/contracts.md, "Conformance runner"): one JSON case
//! per line in, one JSON answer per line out. A case that cannot be read or run becomes an
//! error answer of its own; it never stops the others.

use serde_json::{Value as Json, json};

use crate::kernels::array::Array;
use crate::kernels::ops::{self, Arg, ErrorKind, OpError, Scalar};
use crate::numeric::dtype::DType;
use crate::promote::Generated;

fn input_error(message: impl Into<String>) -> OpError {
    OpError {
        kind: ErrorKind::Input,
        message: message.into(),
    }
}

fn parse_dtype(v: &Json, what: &str) -> Result<DType, OpError> {
    let name = v
        .as_str()
        .ok_or_else(|| input_error(format!("{what}: `dtype` must be a string")))?;
    let canonical = crate::numeric::dtype::canonical(name).unwrap_or(name);
    DType::named(canonical).ok_or_else(|| input_error(format!("{what}: unknown dtype `{name}`")))
}

fn parse_bits(v: &Json, complex: bool) -> Option<[u64; 2]> {
    if complex {
        match v.as_array()?.as_slice() {
            [re, im] => Some([re.as_u64()?, im.as_u64()?]),
            _ => None,
        }
    } else {
        Some([v.as_u64()?, 0])
    }
}

fn parse_float(v: &Json) -> Option<f64> {
    match v {
        Json::String(s) => match s.as_str() {
            "nan" => Some(f64::NAN),
            "inf" => Some(f64::INFINITY),
            "-inf" => Some(f64::NEG_INFINITY),
            _ => None,
        },
        _ => v.as_f64(),
    }
}

/// An integer literal JSON holds only as a float: one outside [-2^63, 2^64), which the parser
/// rounded to 53 bits. Its exact value is lost but not its side of every 64-bit range, which
/// is all the kernels ask of it (it fits no 64-bit dtype): -2^63 - 1 rounds to -2^63, and is
/// kept below it. Pass the value as a string to keep every digit.
fn beyond_64_bits(x: f64) -> Option<i128> {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if x.fract() != 0.0 || !x.is_finite() || (-TWO_63 < x && x < 2.0 * TWO_63) {
        return None;
    }
    let v = x as i128;
    Some(if v == i64::MIN as i128 { v - 1 } else { v })
}

fn parse_arg(v: &Json, k: usize) -> Result<Arg, OpError> {
    let what = format!("argument {k}");
    if let Some(kind) = v.get("scalar") {
        let value = v
            .get("value")
            .ok_or_else(|| input_error(format!("{what}: a scalar needs `value`")))?;
        let bad = || input_error(format!("{what}: bad {kind} scalar value {value}"));
        let s = match kind.as_str() {
            Some("bool") => Scalar::Bool(value.as_bool().ok_or_else(bad)?),
            Some("int") => Scalar::Int(match value {
                Json::Number(n) => n
                    .as_i64()
                    .map(i128::from)
                    .or_else(|| n.as_u64().map(i128::from))
                    .or_else(|| n.as_f64().and_then(beyond_64_bits))
                    .ok_or_else(bad)?,
                // Exact beyond 64 bits: `"value": "-9223372036854775809"`.
                Json::String(t) => t.parse().map_err(|_| bad())?,
                _ => return Err(bad()),
            }),
            Some("float") => Scalar::Float(parse_float(value).ok_or_else(bad)?),
            Some("complex") => {
                let a = value.as_array().filter(|a| a.len() == 2).ok_or_else(bad)?;
                Scalar::Complex(
                    parse_float(&a[0]).ok_or_else(bad)?,
                    parse_float(&a[1]).ok_or_else(bad)?,
                )
            }
            _ => {
                return Err(input_error(format!(
                    "{what}: `scalar` must be \"bool\", \"int\", \"float\" or \"complex\""
                )));
            }
        };
        return Ok(Arg::Scalar(s));
    }
    let dtype = parse_dtype(
        v.get("dtype")
            .ok_or_else(|| input_error(format!("{what}: an array needs `dtype`")))?,
        &what,
    )?;
    let shape: Vec<usize> = v
        .get("shape")
        .and_then(Json::as_array)
        .ok_or_else(|| input_error(format!("{what}: an array needs `shape` (a list)")))?
        .iter()
        .map(|d| d.as_u64().map(|d| d as usize))
        .collect::<Option<_>>()
        .ok_or_else(|| input_error(format!("{what}: `shape` holds non-negative integers")))?;
    let bits: Vec<[u64; 2]> = v
        .get("bits")
        .and_then(Json::as_array)
        .ok_or_else(|| input_error(format!("{what}: an array needs `bits` (a list)")))?
        .iter()
        .map(|b| parse_bits(b, dtype.is_complex()))
        .collect::<Option<_>>()
        .ok_or_else(|| {
            input_error(format!(
                "{what}: `bits` holds unsigned integers ([re, im] pairs for complex)"
            ))
        })?;
    Array::from_bits(dtype, shape, &bits)
        .map(Arg::Array)
        .map_err(|m| input_error(format!("{what}: {m}")))
}

fn answer(id: &Json, a: &Array) -> Json {
    let bits: Vec<Json> = a
        .bits()
        .into_iter()
        .map(|[re, im]| {
            if a.dtype().is_complex() {
                json!([re, im])
            } else {
                json!(re)
            }
        })
        .collect();
    json!({"id": id, "dtype": a.dtype().name(), "shape": a.shape(), "bits": bits})
}

/// Runs one case (a parsed line).
fn run_case(policy: &Generated, case: &Json, max_elements: usize) -> Result<Array, OpError> {
    let op = case
        .get("op")
        .and_then(Json::as_str)
        .ok_or_else(|| input_error("a case needs `op` (a string)"))?;
    let args: Vec<Arg> = case
        .get("args")
        .and_then(Json::as_array)
        .ok_or_else(|| input_error("a case needs `args` (a list)"))?
        .iter()
        .enumerate()
        .map(|(k, a)| parse_arg(a, k))
        .collect::<Result<_, _>>()?;
    let dtype = match case.get("dtype") {
        None => None,
        Some(d) => Some(parse_dtype(d, op)?),
    };
    let axis = match case.get("axis") {
        None | Some(Json::Null) => None,
        Some(a) => Some(
            a.as_u64()
                .ok_or_else(|| input_error("`axis` must be a non-negative integer"))?
                as usize,
        ),
    };
    ops::apply(
        policy,
        ops::parse_op(op)?,
        &args,
        ops::Options {
            dtype,
            axis,
            max_elements,
        },
    )
}

/// The answer line (without newline) to one input line. A panic in a kernel (a bug, never
/// the input's fault) is caught and answered as an `internal` error, so one case cannot take
/// the rest of the stream down. An op's result holds at most `limits.max_elements`.
pub fn run_line(policy: &Generated, line: &str, limits: Limits) -> String {
    let (id, result) = match serde_json::from_str::<Json>(line) {
        Err(e) => (Json::Null, Err(input_error(format!("not JSON: {e}")))),
        Ok(case) if !case.is_object() => (Json::Null, Err(input_error("a case is a JSON object"))),
        Ok(case) => {
            let id = case.get("id").cloned().unwrap_or(Json::Null);
            let run = std::panic::catch_unwind(|| run_case(policy, &case, limits.max_elements));
            (
                id,
                run.unwrap_or_else(|_| {
                    Err(OpError {
                        kind: ErrorKind::Internal,
                        message: "the kernel panicked on this case: a bug in typejoin; please report the line".into(),
                    })
                }),
            )
        }
    };
    let out = match result {
        Ok(a) => answer(&id, &a),
        Err(e) => json!({"id": id, "error": e.message, "kind": e.kind.key()}),
    };
    out.to_string()
}

/// The runner's limits (`typejoin run --max-line-bytes`, `--max-elements`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The longest line read (bytes, newline excluded); a longer line is skipped to its end
    /// without being held in memory and answered with an `input` error.
    pub max_line_bytes: usize,
    /// The largest result (elements) an op may make; over it the case is an `input` error.
    pub max_elements: usize,
}

/// 64 MiB: a million float64 elements as JSON take about 20 MB.
pub const DEFAULT_MAX_LINE_BYTES: usize = 64 << 20;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            max_elements: ops::DEFAULT_MAX_ELEMENTS,
        }
    }
}

/// Answers every non-blank line of `input` on `output`, in order, one line each: a line that
/// is not UTF-8, not JSON, over the limits, or fails in any way gets an error answer of its
/// own (its `id` when it could be read) and the stream goes on. `Err` only when reading or
/// writing fails; a closed output (the reader went away) ends the run quietly.
pub fn run_stream(
    policy: &Generated,
    mut input: impl std::io::BufRead,
    mut output: impl std::io::Write,
    limits: Limits,
) -> std::io::Result<()> {
    let mut line = Vec::new();
    let mut n = 0usize;
    loop {
        line.clear();
        n += 1;
        let (read, too_long) = read_line(&mut input, &mut line, limits.max_line_bytes)?;
        if read == 0 {
            break;
        }
        let answer = if too_long {
            json!({
                "id": Json::Null,
                "error": format!(
                    "line {n} is longer than {} bytes (raise it with --max-line-bytes)",
                    limits.max_line_bytes
                ),
                "kind": "input",
            })
            .to_string()
        } else {
            match std::str::from_utf8(&line) {
                Ok(text) if text.trim().is_empty() => continue,
                Ok(text) => run_line(policy, text, limits),
                Err(e) => json!({
                    "id": Json::Null,
                    "error": format!(
                        "line {n} is not UTF-8 (invalid byte at offset {})",
                        e.valid_up_to()
                    ),
                    "kind": "input",
                })
                .to_string(),
            }
        };
        if let Err(e) = writeln!(output, "{answer}") {
            return if e.kind() == std::io::ErrorKind::BrokenPipe {
                Ok(())
            } else {
                Err(e)
            };
        }
    }
    match output.flush() {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e),
        _ => Ok(()),
    }
}

/// Reads one line into `buf` (without its newline), keeping at most `max` bytes: the rest of
/// a longer line is consumed and dropped. Returns the bytes read (0 at the end) and whether
/// the line was too long.
fn read_line(
    input: &mut impl std::io::BufRead,
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<(usize, bool)> {
    let (mut read, mut too_long) = (0usize, false);
    loop {
        let chunk = match input.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok((read, too_long));
        }
        let (part, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (&chunk[..i], i + 1),
            None => (chunk, chunk.len()),
        };
        if !too_long && buf.len() + part.len() <= max {
            buf.extend_from_slice(part);
        } else {
            too_long = true;
            buf.clear();
        }
        let newline = done > part.len();
        input.consume(done);
        read += done;
        if newline {
            return Ok((read, too_long));
        }
    }
}
