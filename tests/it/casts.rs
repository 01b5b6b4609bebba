//! Bit-exact casts: every ordered pair of the 13 small float formats, over every source bit
//! pattern, hash-equal to NumPy + ml_dtypes (tests/data/oracle/casts_index.json).

use serde_json::Value;
use sha2::{Digest, Sha256};
use typejoin::format::{SMALL_FLOATS, cast_bits, float_format};

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
    use typejoin::format::{Source, Value as Exact};
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
