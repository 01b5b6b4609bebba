//! Bit-exact casts: every ordered pair of the 13 small float formats, over every source bit
//! pattern, hash-equal to NumPy + ml_dtypes (tests/data/oracle/casts_index.json).

use serde_json::Value;
use sha2::{Digest, Sha256};
use typejoin::{SMALL_FLOATS, TorchFloat8, cast_bits, float_format};

use crate::root;

fn index() -> Value {
    serde_json::from_str(
        &std::fs::read_to_string(root().join("tests/data/oracle/casts_index.json")).unwrap(),
    )
    .unwrap()
}

/// The little-endian storage bytes of `dst` for every source pattern of `src`.
pub fn cast_all(src: &str, dst: &str) -> Vec<u8> {
    let (s, d) = (float_format(src).unwrap(), float_format(dst).unwrap());
    let mut out = Vec::with_capacity((1usize << s.width()) * d.storage_bytes as usize);
    for bits in 0..(1u64 << s.width()) {
        let y = cast_bits(&s, &d, bits);
        out.extend_from_slice(&y.to_le_bytes()[..d.storage_bytes as usize]);
    }
    out
}

#[test]
fn every_small_pair_hash_equals_ml_dtypes() {
    let idx = index();
    let pairs = idx["small_pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 169);
    let mut checked = 0;
    let mut mismatched = Vec::new();
    for p in pairs {
        let (src, dst) = (p["src"].as_str().unwrap(), p["dst"].as_str().unwrap());
        assert!(SMALL_FLOATS.contains(&src) && SMALL_FLOATS.contains(&dst));
        let Some(want) = p["sha256"].as_str() else {
            // NumPy registers no cast (float8_e8m0fnu with the other float8/6/4 formats).
            assert_eq!(p["astype_ok"], false);
            continue;
        };
        let got: String = Sha256::digest(cast_all(src, dst))
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        if got != want {
            mismatched.push(format!("{src} -> {dst}"));
        }
        checked += 1;
    }
    assert_eq!(checked, 149);
    assert!(
        mismatched.is_empty(),
        "{} pairs differ: {mismatched:?}",
        mismatched.len()
    );
}

fn read_units(rel: &str, width: usize) -> Vec<u64> {
    let raw = std::fs::read(root().join(rel)).unwrap();
    raw.chunks_exact(width)
        .map(|c| c.iter().rev().fold(0u64, |acc, &b| acc << 8 | b as u64))
        .collect()
}

fn hash(units: &[u64], width: usize) -> String {
    let bytes: Vec<u8> = units
        .iter()
        .flat_map(|u| u.to_le_bytes().into_iter().take(width))
        .collect();
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// float32 → every small format, float64 → float16/bfloat16/float32, int64/uint64 → every
/// IEEE format, on the oracle's samples (edge values, every midpoint, double-rounding traps,
/// random values). Hash-equal, except where NumPy + ml_dtypes round twice through float32
/// (float64/int64/uint64 → bfloat16): there typejoin is correctly rounded, and the difference
/// is pinned: emulating the double rounding reproduces NumPy's hash exactly, and the number of
/// differing elements is the oracle's count of incorrectly rounded ones.
#[test]
fn sampled_casts_hash_equal_except_pinned_double_rounding() {
    use typejoin::{Source, Value as Exact};
    let idx = index();
    let entries: Vec<&Value> = idx["samples"]
        .as_array()
        .unwrap()
        .iter()
        .chain(idx["int_samples"].as_array().unwrap())
        .collect();
    assert_eq!(entries.len(), 24);
    let f32f = float_format("float32").unwrap();
    for e in entries {
        let (src, dst) = (e["src"].as_str().unwrap(), e["dst"].as_str().unwrap());
        let s = Source::named(src).unwrap();
        let d = float_format(dst).unwrap();
        let input = read_units(
            &format!("tests/data/oracle/{}", e["input"].as_str().unwrap()),
            s.storage_bytes() as usize,
        );
        assert_eq!(input.len() as u64, e["n"].as_u64().unwrap());
        let ours: Vec<u64> = input
            .iter()
            .map(|&x| match &s {
                Source::Float(f) => cast_bits(f, &d, x),
                Source::Int { .. } => d.encode(s.decode(x)),
            })
            .collect();
        let w = d.storage_bytes as usize;
        let want = e["sha256"].as_str().unwrap();
        let wrong = e["n_differs_from_correct_rne"].as_u64().unwrap_or(0);
        if wrong == 0 {
            assert_eq!(hash(&ours, w), want, "{src} -> {dst}");
            continue;
        }
        // ml_dtypes' route: round to float32 first, then to the destination.
        let twice: Vec<u64> = input
            .iter()
            .map(|&x| d.encode(f32f.decode(f32f.encode(s.decode(x)))))
            .collect();
        assert_eq!(
            hash(&twice, w),
            want,
            "{src} -> {dst}: NumPy's double rounding, emulated"
        );
        let differing = ours.iter().zip(&twice).filter(|(a, b)| a != b).count() as u64;
        assert_eq!(
            differing, wrong,
            "{src} -> {dst}: deliberately different elements"
        );
        for ex in e["first_differs_from_correct_rne"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let i = ex["index"].as_u64().unwrap() as usize;
            let correct = u64::from_str_radix(
                ex["correctly_rounded"]
                    .as_str()
                    .unwrap()
                    .trim_start_matches("0x"),
                16,
            )
            .unwrap();
            assert_eq!(ours[i], correct, "{src} -> {dst} at {i}");
        }
    }
    // The cases of ANCHORS.md §6, by value.
    let exact = |x: f64| Exact::from_f64(x);
    let e4m3 = float_format("float8_e4m3fn").unwrap();
    assert_eq!(
        e4m3.decode(e4m3.encode(exact(1.0625 + 2f64.powi(-30))))
            .to_f64(),
        1.125
    ); // ml_dtypes: 1.0
    let bf16 = float_format("bfloat16").unwrap();
    assert_eq!(
        bf16.decode(bf16.encode(exact(1.0 + 2f64.powi(-8) + 2f64.powi(-30))))
            .to_f64(),
        1.0078125
    ); // ml_dtypes: 1.0
    let int64 = Source::named("int64").unwrap();
    assert_eq!(bf16.encode(int64.decode(24051711)), 0x4bb7); // ml_dtypes: 0x4bb8
}

/// Casts to bool and every integer destination, over every pattern of each source of at most
/// 16 bits and the float32/float64/int64 samples, hash-equal to NumPy + ml_dtypes
/// (tests/data/oracle/int_casts.json, written by scripts/oracle_int_casts.py) on every element
/// NumPy defines. Elsewhere (NaN, ±inf, out of range) NumPy's C cast is undefined and typejoin
/// saturates as JAX does; those elements are pinned separately below.
#[test]
fn casts_to_integers_and_bool_hash_equal_numpy_where_defined() {
    use typejoin::{IntTarget, Source, Value};
    let doc: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("tests/data/oracle/int_casts.json")).unwrap(),
    )
    .unwrap();
    let pairs = doc["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 300);
    let mut bad = Vec::new();
    for p in pairs {
        let (src, dst) = (p["src"].as_str().unwrap(), p["dst"].as_str().unwrap());
        let s = Source::named(src).unwrap();
        let t = IntTarget::named(dst).unwrap();
        let inputs: Vec<u64> = match p["input"].as_str() {
            None => (0..1u64 << s.width()).collect(),
            Some(file) => {
                let raw = std::fs::read(root().join("tests/data/oracle").join(file)).unwrap();
                raw.chunks_exact(s.storage_bytes() as usize)
                    .map(|c| c.iter().rev().fold(0u64, |acc, &b| acc << 8 | b as u64))
                    .collect()
            }
        };
        let (lo, hi): (i128, i128) = match t {
            IntTarget::Bool => (i128::MIN, i128::MAX),
            IntTarget::Int { bits, signed: true } => (-(1 << (bits - 1)), (1 << (bits - 1)) - 1),
            IntTarget::Int { bits, .. } => (0, (1 << bits) - 1),
        };
        let defined = |x: u64| match (&s, s.decode(x)) {
            (Source::Int { .. }, _) => true,
            (_, Value::Finite { neg, mant, exp }) => {
                let whole = if exp >= 0 {
                    if mant.leading_zeros() <= exp as u32 + 1 {
                        i128::MAX
                    } else {
                        (mant << exp) as i128
                    }
                } else if -exp >= 128 {
                    0
                } else {
                    (mant >> -exp) as i128
                };
                let v = if neg { -whole } else { whole };
                lo <= v && v <= hi
            }
            _ => t == IntTarget::Bool,
        };
        let mut out = Vec::new();
        let mut n_defined = 0;
        for &x in &inputs {
            let y = if defined(x) {
                n_defined += 1;
                t.convert(&s, x)
            } else {
                0
            };
            out.extend_from_slice(&y.to_le_bytes()[..t.storage_bytes() as usize]);
        }
        assert_eq!(n_defined, p["n_defined"].as_u64().unwrap(), "{src} → {dst}");
        if format!("{:x}", Sha256::digest(&out)) != p["sha256"].as_str().unwrap() {
            bad.push(format!("{src} → {dst}"));
        }
    }
    assert!(bad.is_empty(), "{bad:?}");
}

/// Where NumPy's cast is undefined, typejoin's is JAX's (and Rust's `as`): NaN → 0, out of
/// range saturates; integers wrap; bool is `!= 0` with NaN true.
#[test]
fn float_to_int_saturates_and_nan_is_zero() {
    use typejoin::{IntTarget, Source, float_format};
    let f32s = Source::Float(float_format("float32").unwrap());
    let cast = |dst: &str, x: f32| {
        IntTarget::named(dst)
            .unwrap()
            .convert(&f32s, x.to_bits() as u64)
    };
    assert_eq!(cast("int8", f32::NAN), 0);
    assert_eq!(cast("int8", -301.5), 0x80); // -128
    assert_eq!(cast("int8", 1e10), 0x7f);
    assert_eq!(cast("uint8", -301.5), 0);
    assert_eq!(cast("int32", f32::INFINITY), 0x7fff_ffff);
    assert_eq!(cast("int64", f32::NEG_INFINITY), 0x8000_0000_0000_0000);
    assert_eq!(cast("uint64", 3e38), u64::MAX);
    assert_eq!(cast("int4", -1.7), 0x0f); // -1, stored in the low bits as ml_dtypes does
    assert_eq!(cast("int4", 9.5), 0x07); // saturates (ml_dtypes wraps to -7)
    assert_eq!(cast("bool", f32::NAN), 1);
    assert_eq!(cast("bool", -0.0), 0);
    let i16s = Source::Int {
        bits: 16,
        signed: true,
    };
    assert_eq!(IntTarget::named("int8").unwrap().convert(&i16s, 300), 44); // wraps
    assert_eq!(
        IntTarget::named("uint4").unwrap().convert(&i16s, 0xffff),
        0x0f
    );
    assert_eq!(IntTarget::named("bool").unwrap().convert(&i16s, 256), 1);
}

fn torch_float8_digests() -> Value {
    let path = root().join("tests/data/kernels/torch_float8_digests.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// `numeric::c10`'s conversions of the float32 patterns yielded by `bits`, hashed.
fn c10_digest(f: TorchFloat8, bits: impl Iterator<Item = u32>) -> String {
    let mut sha = Sha256::new();
    let mut buf = Vec::with_capacity(1 << 16);
    for x in bits {
        buf.push(f.from_f32_bits(x));
        if buf.len() == buf.capacity() {
            sha.update(&buf);
            buf.clear();
        }
    }
    sha.update(&buf);
    format!("{:x}", sha.finalize())
}

/// PyTorch's float32 → float8 conversions (`c10::Float8_*(float)`), hash-equal to torch 2.15 on
/// every sign, exponent and float8 mantissa with the bits below cleared, just set and full
/// (scripts/oracle_torch_float8.py: 393,216 patterns per format).
#[test]
fn torch_float8_conversions_hash_equal_torch() {
    let data = torch_float8_digests();
    let lows: Vec<u32> = data["lows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap() as u32)
        .collect();
    assert_eq!(lows.len(), 6);
    for f in TorchFloat8::ALL {
        let sweep = (0..1u32 << 16).flat_map(|h| lows.iter().map(move |&l| (h << 16) | l));
        assert_eq!(
            c10_digest(f, sweep),
            data["sweep"][f.name()].as_str().unwrap(),
            "{}",
            f.name()
        );
    }
}

/// The same on all 2³² float32 patterns (`--exhaustive`): a minute in release, so run on
/// demand: `cargo test --release -- --ignored every_float32_converts`.
#[test]
#[ignore = "2^32 conversions per format: cargo test --release -- --ignored"]
fn every_float32_converts_into_torch_float8_as_torch() {
    let data = torch_float8_digests();
    for f in TorchFloat8::ALL {
        assert_eq!(
            c10_digest(f, 0..=u32::MAX),
            data["every_float32"][f.name()].as_str().unwrap(),
            "{}",
            f.name()
        );
    }
}
