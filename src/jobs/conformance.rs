//! The conformance runner's line protocol (docs/contracts.md, "Conformance runner"): one JSON case
//! per line in, one JSON answer per line out. A case that cannot be read or run becomes an
//! error answer of its own; it never stops the others.

use std::io::Write as _;

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

/// An array argument's `bits`, read straight from the line's text into patterns (16 bytes
/// an element), never into a JSON tree (about 100 bytes an element): a line near the line
/// limit fits in memory with its array.
enum Bits {
    /// Every element an unsigned integer (`pairs: false`) or every one an `[re, im]` pair of
    /// them (`pairs: true`; an empty list is both).
    Patterns { pairs: bool, bits: Vec<[u64; 2]> },
    /// A list with an element of neither form, or of both.
    Mixed,
    /// More patterns than the process could allocate (read to the end and dropped).
    OutOfMemory(usize),
    /// Not a list.
    NotList,
}

impl<'de> serde::Deserialize<'de> for Bits {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Bits, D::Error> {
        use serde::de::{IgnoredAny, SeqAccess, Visitor};
        /// One element: a pattern, a pair of them, or anything else (read and dropped).
        enum Element {
            One(u64),
            Pair([u64; 2]),
            Other,
        }
        struct ElementVisitor;
        impl<'de> Visitor<'de> for ElementVisitor {
            type Value = Element;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a bit pattern")
            }
            fn visit_u64<E>(self, v: u64) -> Result<Element, E> {
                Ok(Element::One(v))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Element, E> {
                Ok(u64::try_from(v).map_or(Element::Other, Element::One))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Element, E> {
                Ok(Element::Other)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Element, E> {
                Ok(Element::Other)
            }
            fn visit_str<E>(self, _: &str) -> Result<Element, E> {
                Ok(Element::Other)
            }
            fn visit_unit<E>(self) -> Result<Element, E> {
                Ok(Element::Other)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> Result<Element, A::Error> {
                while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Element::Other)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Element, A::Error> {
                let mut parts = [None, None];
                let mut n = 0;
                while let Some(e) = s.next_element::<Element>()? {
                    if let (Some(slot), Element::One(v)) = (parts.get_mut(n), e) {
                        *slot = Some(v);
                    }
                    n += 1;
                }
                Ok(match (n, parts) {
                    (2, [Some(re), Some(im)]) => Element::Pair([re, im]),
                    _ => Element::Other,
                })
            }
        }
        impl<'de> serde::Deserialize<'de> for Element {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Element, D::Error> {
                d.deserialize_any(ElementVisitor)
            }
        }
        struct BitsVisitor;
        impl<'de> Visitor<'de> for BitsVisitor {
            type Value = Bits;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a list of bit patterns")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Bits, A::Error> {
                let (mut bits, mut pairs, mut mixed) = (Vec::new(), None, false);
                let mut refused = None;
                while let Some(e) = s.next_element::<Element>()? {
                    if let Some(n) = &mut refused {
                        *n += 1;
                        continue;
                    }
                    // Grown fallibly: a list the allocator refuses is an answer, not an abort.
                    if bits.len() == bits.capacity()
                        && bits.try_reserve(bits.len().max(64)).is_err()
                    {
                        refused = Some(bits.len() + 1);
                        bits = Vec::new();
                        continue;
                    }
                    let (b, pair) = match e {
                        Element::One(v) => ([v, 0], false),
                        Element::Pair(p) => (p, true),
                        Element::Other => {
                            mixed = true;
                            continue;
                        }
                    };
                    mixed |= *pairs.get_or_insert(pair) != pair;
                    if !mixed {
                        bits.push(b);
                    }
                }
                if let Some(n) = refused {
                    return Ok(Bits::OutOfMemory(n));
                }
                Ok(match mixed {
                    true => Bits::Mixed,
                    false => Bits::Patterns {
                        pairs: pairs.unwrap_or(false),
                        bits,
                    },
                })
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut m: A) -> Result<Bits, A::Error> {
                while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Bits::NotList)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Bits, E> {
                Ok(Bits::NotList)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Bits, E> {
                Ok(Bits::NotList)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Bits, E> {
                Ok(Bits::NotList)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Bits, E> {
                Ok(Bits::NotList)
            }
            fn visit_str<E>(self, _: &str) -> Result<Bits, E> {
                Ok(Bits::NotList)
            }
            fn visit_unit<E>(self) -> Result<Bits, E> {
                Ok(Bits::NotList)
            }
        }
        d.deserialize_any(BitsVisitor)
    }
}

/// A case read from its line: its fields but the arguments as JSON, and each argument's
/// fields as JSON but its `bits`, which are read straight into patterns ([`Bits`]). `args`
/// is `None` when the case has none or they are not a list.
struct Case {
    fields: serde_json::Map<String, Json>,
    args: Option<Vec<(Json, Option<Bits>)>>,
}

/// Reads a line as a case: `Err` with the answer's message when it is not JSON or not an
/// object.
fn read_case(line: &str) -> Result<Case, String> {
    use serde_json::value::RawValue;
    let not_json = |e: serde_json::Error| format!("not JSON: {e}");
    let raw: &RawValue = serde_json::from_str(line).map_err(not_json)?;
    if !raw.get().starts_with('{') {
        return Err("a case is a JSON object".into());
    }
    let fields: std::collections::BTreeMap<String, &RawValue> =
        serde_json::from_str(raw.get()).map_err(not_json)?;
    let object = |fields: std::collections::BTreeMap<String, &RawValue>, skip: &str| {
        fields
            .iter()
            .filter(|(k, _)| *k != skip)
            .map(|(k, v)| Ok((k.clone(), serde_json::from_str(v.get())?)))
            .collect::<serde_json::Result<serde_json::Map<String, Json>>>()
    };
    let args = match fields.get("args") {
        Some(a) if a.get().starts_with('[') => {
            let list: Vec<&RawValue> = serde_json::from_str(a.get()).map_err(not_json)?;
            let each = list.into_iter().map(|arg| {
                if !arg.get().starts_with('{') {
                    return Ok((serde_json::from_str(arg.get())?, None));
                }
                let f: std::collections::BTreeMap<String, &RawValue> =
                    serde_json::from_str(arg.get())?;
                let bits = f
                    .get("bits")
                    .map(|b| serde_json::from_str::<Bits>(b.get()))
                    .transpose()?;
                Ok((Json::Object(object(f, "bits")?), bits))
            });
            Some(
                each.collect::<serde_json::Result<Vec<_>>>()
                    .map_err(not_json)?,
            )
        }
        _ => None,
    };
    Ok(Case {
        fields: object(fields, "args").map_err(not_json)?,
        args,
    })
}

fn parse_arg((v, bits): &(Json, Option<Bits>), k: usize) -> Result<Arg, OpError> {
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
    let bits = match bits {
        None | Some(Bits::NotList) => {
            return Err(input_error(format!(
                "{what}: an array needs `bits` (a list)"
            )));
        }
        Some(Bits::OutOfMemory(n)) => {
            return Err(OpError {
                kind: ErrorKind::Memory,
                message: format!(
                    "{what}: its {n} bit patterns need more memory than this process could allocate"
                ),
            });
        }
        Some(Bits::Patterns { pairs, bits }) if bits.is_empty() || *pairs == dtype.is_complex() => {
            bits
        }
        Some(_) => {
            return Err(input_error(format!(
                "{what}: `bits` holds unsigned integers ([re, im] pairs for complex)"
            )));
        }
    };
    Array::from_bits(dtype, shape, bits)
        .map(Arg::Array)
        .map_err(|m| input_error(format!("{what}: {m}")))
}

/// The decimal digits of `n`.
fn digits(n: u64) -> u64 {
    n.checked_ilog10().map_or(1, |d| u64::from(d) + 1)
}

/// Writes one result's answer line (newline included) element by element, never holding the
/// line: `{"id", "dtype", "shape", "bits"}`. Its exact length is counted first, so an answer
/// over `max_bytes` is an `input` error answer instead, never a cut line.
fn write_result(
    out: &mut impl std::io::Write,
    id: &Json,
    a: &Array,
    max_bytes: u64,
) -> std::io::Result<()> {
    let head = format!(
        "{{\"id\":{id},\"dtype\":\"{}\",\"shape\":{},\"bits\":[",
        a.dtype().name(),
        json!(a.shape())
    );
    let complex = a.dtype().is_complex();
    let mut len = head.len() as u64 + "]}\n".len() as u64;
    let mut count = 0u64;
    a.for_each_bits(|[re, im]| {
        count += 1;
        len += digits(re) + if complex { digits(im) + 3 } else { 0 };
    });
    len += count.saturating_sub(1);
    if len > max_bytes {
        let e = input_error(format!(
            "the answer would take {len} bytes, over the limit of {max_bytes} (raise it with --max-output-bytes)"
        ));
        return write_error(out, id, &e);
    }
    let mut w = std::io::BufWriter::with_capacity(1 << 16, out);
    w.write_all(head.as_bytes())?;
    let (mut first, mut failed) = (true, None);
    let mut buf = itoa::Buffer::new();
    a.for_each_bits(|[re, im]| {
        if failed.is_some() {
            return;
        }
        let r = (|| {
            if !first {
                w.write_all(b",")?;
            }
            first = false;
            if complex {
                w.write_all(b"[")?;
                w.write_all(buf.format(re).as_bytes())?;
                w.write_all(b",")?;
                w.write_all(buf.format(im).as_bytes())?;
                w.write_all(b"]")
            } else {
                w.write_all(buf.format(re).as_bytes())
            }
        })();
        if let Err(e) = r {
            failed = Some(e);
        }
    });
    if let Some(e) = failed {
        return Err(e);
    }
    w.write_all(b"]}\n")?;
    w.flush()
}

/// Writes one error answer line (newline included): `{"id", "error", "kind"}`.
fn write_error(out: &mut impl std::io::Write, id: &Json, e: &OpError) -> std::io::Result<()> {
    writeln!(
        out,
        "{}",
        json!({"id": id, "error": e.message, "kind": e.kind.key()})
    )
}

/// Runs one case (a parsed line).
fn run_case(policy: &Generated, whole: Case, max_elements: usize) -> Result<Array, OpError> {
    let case = &whole.fields;
    let op = case
        .get("op")
        .and_then(Json::as_str)
        .ok_or_else(|| input_error("a case needs `op` (a string)"))?;
    let args: Vec<Arg> = whole
        .args
        .as_ref()
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

/// Runs one input line: the case's `id` (null when it could not be read) and its result. A
/// panic in a kernel (a bug, never the input's fault) is caught and answered as an `internal`
/// error, so one case cannot take the rest of the stream down. An op's result holds at most
/// `limits.max_elements`.
fn run_text(policy: &Generated, line: &str, limits: Limits) -> (Json, Result<Array, OpError>) {
    match read_case(line) {
        Err(e) => (readable_id(line), Err(input_error(e))),
        Ok(case) => {
            let id = case.fields.get("id").cloned().unwrap_or(Json::Null);
            let run = std::panic::catch_unwind(|| run_case(policy, case, limits.max_elements));
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
    }
}

/// The `id` of a line that is a JSON object, read alone, where the rest of the line is not a
/// case (a number past f64's range, a field of the wrong type): the answer still says which
/// case it answers. `null` where the line is not an object or its `id` is not readable.
fn readable_id(line: &str) -> Json {
    use serde_json::value::RawValue;
    serde_json::from_str::<std::collections::BTreeMap<String, &RawValue>>(line)
        .ok()
        .and_then(|fields| serde_json::from_str(fields.get("id")?.get()).ok())
        .unwrap_or(Json::Null)
}

/// The answer line (without newline) to one input line, as a string: what [`run_stream`]
/// writes for it (which never holds the whole line).
pub fn run_line(policy: &Generated, line: &str, limits: Limits) -> String {
    let (id, result) = run_text(policy, line, limits);
    let mut out = Vec::new();
    write_answer(&mut out, &id, result, limits.max_output_bytes).expect("writing to memory");
    out.pop();
    String::from_utf8(out).expect("JSON is UTF-8")
}

fn write_answer(
    out: &mut impl std::io::Write,
    id: &Json,
    result: Result<Array, OpError>,
    max_output_bytes: u64,
) -> std::io::Result<()> {
    match result {
        Ok(a) => write_result(out, id, &a, max_output_bytes),
        Err(e) => write_error(out, id, &e),
    }
}

/// The runner's limits (`typejoin run --max-line-bytes`, `--max-elements`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The longest line read (bytes, newline excluded); a longer line is skipped to its end
    /// without being held in memory and answered with an `input` error.
    pub max_line_bytes: usize,
    /// The largest result (elements) an op may make; over it the case is an `input` error.
    pub max_elements: usize,
    /// The longest answer line (bytes, newline included); a longer answer is replaced by an
    /// `input` error answer before any of it is written.
    pub max_output_bytes: u64,
}

/// 64 MiB: a million float64 elements as JSON take about 20 MB.
pub const DEFAULT_MAX_LINE_BYTES: usize = 64 << 20;

/// 8 GiB: the longest answer (2^28 float64 elements take about 5.4 GB as JSON). Answers are
/// written element by element, so this bounds what a reader must take, not typejoin's memory.
pub const DEFAULT_MAX_OUTPUT_BYTES: u64 = 8 << 30;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            max_elements: ops::DEFAULT_MAX_ELEMENTS,
            max_output_bytes: DEFAULT_MAX_OUTPUT_BYTES,
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
        let written = if too_long {
            let e = input_error(format!(
                "line {n} is longer than {} bytes (raise it with --max-line-bytes)",
                limits.max_line_bytes
            ));
            write_error(&mut output, &Json::Null, &e)
        } else {
            match std::str::from_utf8(&line) {
                Ok(text) if text.trim().is_empty() => continue,
                Ok(text) => {
                    let (id, result) = run_text(policy, text, limits);
                    write_answer(&mut output, &id, result, limits.max_output_bytes)
                }
                Err(e) => {
                    let e = input_error(format!(
                        "line {n} is not UTF-8 (invalid byte at offset {})",
                        e.valid_up_to()
                    ));
                    write_error(&mut output, &Json::Null, &e)
                }
            }
        };
        // Every answer is on its way before the next case runs: a later case that takes the
        // process down (killed, out of memory outside typejoin's checks) loses none of them.
        if let Err(e) = written.and_then(|()| output.flush()) {
            return if e.kind() == std::io::ErrorKind::BrokenPipe {
                Ok(())
            } else {
                Err(e)
            };
        }
    }
    Ok(())
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
