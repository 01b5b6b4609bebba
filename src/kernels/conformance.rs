//! The conformance runner's line protocol (DESIGN.md, "Conformance runner"): one JSON case
//! per line in, one JSON answer per line out. A case that cannot be read or run becomes an
//! error answer of its own; it never stops the others.

use serde_json::{Value as Json, json};

use crate::kernels::array::Array;
use crate::kernels::ops::{self, Arg, ErrorKind, Op, OpError, Scalar, UnaryOp};
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
        let a = v.as_array()?;
        (a.len() == 2).then_some([a[0].as_u64()?, a[1].as_u64()?])
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
                    .or_else(|| n.to_string().parse().ok())
                    .ok_or_else(bad)?,
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
            if a.dtype.is_complex() {
                json!([re, im])
            } else {
                json!(re)
            }
        })
        .collect();
    json!({"id": id, "dtype": a.dtype.name(), "shape": a.shape, "bits": bits})
}

fn array_arg(args: &[Arg], k: usize, op: &str) -> Result<Array, OpError> {
    match args.get(k) {
        Some(Arg::Array(a)) => Ok(a.clone()),
        Some(Arg::Scalar(_)) => Err(input_error(format!("{op} takes an array argument"))),
        None => Err(input_error(format!("{op} needs {} argument(s)", k + 1))),
    }
}

/// Runs one case (a parsed line).
fn run_case(policy: &Generated, case: &Json) -> Result<Array, OpError> {
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
    if let Some(o) = Op::named(op) {
        if args.len() != 2 {
            return Err(input_error(format!(
                "{op} takes 2 arguments, got {}",
                args.len()
            )));
        }
        return ops::binary(policy, o, &args[0], &args[1]);
    }
    if let Some(u) = UnaryOp::named(op) {
        return ops::unary(u, &array_arg(&args, 0, op)?);
    }
    match op {
        "astype" => {
            let to = parse_dtype(
                case.get("dtype")
                    .ok_or_else(|| input_error("astype needs `dtype`"))?,
                "astype",
            )?;
            Ok(ops::astype(&array_arg(&args, 0, op)?, to))
        }
        "sum" => {
            let axis = match case.get("axis") {
                None | Some(Json::Null) => None,
                Some(a) => Some(
                    a.as_u64()
                        .ok_or_else(|| input_error("`axis` must be a non-negative integer"))?
                        as usize,
                ),
            };
            ops::sum(policy, &array_arg(&args, 0, op)?, axis)
        }
        _ => {
            let known: Vec<&str> = crate::numeric::op::CATALOGUE
                .iter()
                .filter(|o| o.kernel)
                .map(|o| o.name)
                .collect();
            let hint = known
                .iter()
                .map(|k| (strsim::jaro_winkler(op, k), k))
                .filter(|(s, _)| *s > 0.8)
                .max_by(|a, b| a.0.total_cmp(&b.0))
                .map_or(String::new(), |(_, k)| format!("; did you mean `{k}`?"));
            Err(OpError {
                kind: ErrorKind::Unsupported,
                message: format!("unknown op `{op}`{hint}"),
            })
        }
    }
}

/// The answer line (without newline) to one input line.
pub fn run_line(policy: &Generated, line: &str) -> String {
    let (id, result) = match serde_json::from_str::<Json>(line) {
        Err(e) => (Json::Null, Err(input_error(format!("not JSON: {e}")))),
        Ok(case) if !case.is_object() => (Json::Null, Err(input_error("a case is a JSON object"))),
        Ok(case) => {
            let id = case.get("id").cloned().unwrap_or(Json::Null);
            (id, run_case(policy, &case))
        }
    };
    let out = match result {
        Ok(a) => answer(&id, &a),
        Err(e) => json!({"id": id, "error": e.message, "kind": e.kind.key()}),
    };
    out.to_string()
}
