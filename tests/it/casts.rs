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
