//! The fast cast kernels equal the reference codec bit for bit, and hash-equal NumPy.

use sha2::{Digest, Sha256};
use typejoin::{Caster, FloatFormat, Rng, SMALL_FLOATS, cast_bits, float_format};

use crate::root;

fn f(n: &str) -> FloatFormat {
    float_format(n).unwrap()
}

/// float32 patterns that exercise every rounding path: the oracle's 2^20 samples (every
/// bfloat16/float16 value, midpoint and neighbour), every exponent with boundary mantissas,
/// and random patterns.
fn f32_patterns() -> Vec<u32> {
    let raw = std::fs::read(root().join("tests/data/oracle/casts/sample_float32.bin")).unwrap();
    let mut v: Vec<u32> = raw
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let mants = [
        0u32, 1, 2, 0xfff, 0x1000, 0x1001, 0x1fff, 0x2000, 0x2001, 0x7fff, 0x8000, 0x8001, 0xffff,
        0x1_0000, 0x40_0000, 0x7f_ffff,
    ];
    for e in 0..256u32 {
        for &m in &mants {
            for s in [0, 0x8000_0000] {
                v.push(s | e << 23 | m);
            }
        }
    }
    let mut rng = Rng::new(7);
    v.extend((0..2_000_000).map(|_| rng.next_u64() as u32));
    v
}

#[test]
fn f32_kernels_equal_the_codec() {
    let input = f32_patterns();
    let src = f("float32");
    for dst in SMALL_FLOATS {
        let d = f(dst);
        let caster = Caster::new(&src, &d);
        if *dst != "float8_e8m0fnu" {
            assert_ne!(caster.kernel(), "codec", "{dst} has a fast kernel");
        }
        let mut out = vec![0u16; input.len()];
        caster.run(&input, &mut out);
        for (&x, &y) in input.iter().zip(&out) {
            assert_eq!(
                y as u64,
                cast_bits(&src, &d, x as u64),
                "float32 {x:#010x} -> {dst}"
            );
        }
    }
}

#[test]
fn table_kernels_equal_the_codec_for_every_small_pair() {
    for s in SMALL_FLOATS {
        for d in SMALL_FLOATS.iter().chain(&["float32", "float64"]) {
            let (src, dst) = (f(s), f(d));
            let caster = Caster::new(&src, &dst);
            let fast = if (*s, *d) == ("bfloat16", "float32") {
                "bf16-f32"
            } else {
                "table"
            };
            assert_eq!(caster.kernel(), fast);
            let input: Vec<u16> = (0..1u32 << src.width()).map(|b| b as u16).collect();
            let mut out = vec![0u64; input.len()];
            caster.run(&input, &mut out);
            for (&x, &y) in input.iter().zip(&out) {
                assert_eq!(y, cast_bits(&src, &dst, x as u64), "{s} {x:#x} -> {d}");
            }
        }
    }
}

#[test]
fn fast_kernels_hash_equal_numpy_on_the_samples() {
    let raw = std::fs::read(root().join("tests/data/oracle/casts/sample_float32.bin")).unwrap();
    let input: Vec<u32> = raw
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    for (dst, want) in [
        (
            "bfloat16",
            "d39246a300cc97e57481d58c736f8f83cb037dd0619fc065944b28b5b551af5c",
        ),
        (
            "float16",
            "cfbf607d04fb1152e495bd11d09c59dc2c577887b902f8f39b9f6f2dec582999",
        ),
    ] {
        let mut out = vec![0u16; input.len()];
        Caster::new(&f("float32"), &f(dst)).run(&input, &mut out);
        let bytes: Vec<u8> = out.iter().flat_map(|u| u.to_le_bytes()).collect();
        let got: String = Sha256::digest(bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(got, want, "float32 -> {dst}");
    }
}

/// NaN payloads measured with NumPy 2.4.6 + ml_dtypes 0.6.0 (LOCAL, this project's machine):
/// bfloat16 widens by a shift, float8 gives the canonical NaN.
#[test]
fn nan_payloads_of_widening_casts_match_ml_dtypes() {
    let c = |s: &str, d: &str, b: u64| cast_bits(&f(s), &f(d), b);
    assert_eq!(c("bfloat16", "float32", 0x7f81), 0x7f81_0000);
    assert_eq!(c("bfloat16", "float32", 0xff85), 0xff85_0000);
    assert_eq!(c("bfloat16", "float64", 0x7f81), 0x7ff8_2000_0000_0000);
    assert_eq!(c("bfloat16", "float64", 0xff85), 0xfff8_a000_0000_0000);
    assert_eq!(c("float8_e4m3fn", "float32", 0x7f), 0x7fc0_0000);
    assert_eq!(c("float8_e5m2", "float32", 0x7d), 0x7fc0_0000);
    assert_eq!(c("float32", "bfloat16", 0x7f80_0001), 0x7fc0);
    assert_eq!(c("float32", "float8_e4m3fn", 0xffc0_0001), 0xff);
}

/// The branch-free float16 → float32 widening equals the codec (NumPy's cast) on every pattern.
#[test]
fn f16_widening_equals_the_codec_everywhere() {
    let (h, f) = (
        typejoin::float_format("float16").unwrap(),
        typejoin::float_format("float32").unwrap(),
    );
    for b in 0..=u16::MAX {
        assert_eq!(
            typejoin::f16_to_f32(b) as u64,
            typejoin::cast_bits(&h, &f, b as u64),
            "{b:#06x}"
        );
    }
}

/// float32 ↔ float64 and a wide format to itself have kernels of their own, not the
/// per-element codec (their values are held to the codec by
/// `ops::tests::astype_fast_paths_equal_the_general_path`).
#[test]
fn wide_float_casts_have_kernels() {
    let k = |s: &str, d: &str| Caster::new(&f(s), &f(d)).kernel();
    assert_eq!(k("float32", "float64"), "f32-f64");
    assert_eq!(k("float64", "float32"), "f64-f32");
    assert_eq!(k("float32", "float32"), "same");
    assert_eq!(k("float64", "float64"), "same");
    assert_eq!(k("float64", "bfloat16"), "f64-small");
    assert_eq!(k("float64", "float16"), "f64-small");
    assert_eq!(k("float64", "float8_e8m0fnu"), "codec");
}

/// float64 → every signed small format with subnormals narrows by `Narrow64`, correctly
/// rounded (float16's NaN keeping its top payload bits, as NumPy's): equal to the codec on
/// every float32 sample widened, its float64 neighbours (where rounding through float32 first,
/// as ml_dtypes does, goes wrong), NaN payloads, specials and random patterns.
#[test]
fn f64_kernels_equal_the_codec() {
    let mut input: Vec<u64> = Vec::new();
    for x in f32_patterns().into_iter().step_by(3) {
        let w = (f32::from_bits(x) as f64).to_bits();
        input.extend([w, w.wrapping_add(1), w.wrapping_sub(1)]);
    }
    input.extend([
        0x7ff0_0000_0000_0001,
        0x7ff0_0400_0000_0000,
        0xfff0_03ff_ffff_ffff,
        0x7fff_ffff_ffff_ffff,
        0xfff8_0000_0000_0000,
        1,
        0x8000_0000_0000_0001,
    ]);
    let mut rng = Rng::new(9);
    input.extend((0..1_000_000).map(|_| rng.next_u64()));
    let src = f("float64");
    for dst in SMALL_FLOATS {
        let d = f(dst);
        let caster = Caster::new(&src, &d);
        let fast = if *dst == "float8_e8m0fnu" {
            "codec"
        } else {
            "f64-small"
        };
        assert_eq!(caster.kernel(), fast, "{dst}");
        if fast == "codec" {
            continue;
        }
        let mut out = vec![0u16; input.len()];
        caster.run(&input, &mut out);
        for (&x, &y) in input.iter().zip(&out) {
            let want = cast_bits(&src, &d, x);
            assert_eq!(y as u64, want, "float64 {x:#018x} -> {dst}");
        }
    }
}

/// ANCHORS.md §6: ml_dtypes converts float64 to bfloat16 through float32, rounding twice.
/// 1 + 2^-8 + 2^-30 is just above the bfloat16 midpoint between 1 and 1 + 2^-7, so it rounds
/// up; rounded to float32 first it lands on the midpoint, which ties to even, down to 1.0
/// (0x3f80), ml_dtypes' answer. typejoin gives the correctly rounded 0x3f81.
#[test]
fn float64_to_bfloat16_rounds_once() {
    let x = 1.0f64 + 2f64.powi(-8) + 2f64.powi(-30);
    let caster = Caster::new(&f("float64"), &f("bfloat16"));
    let mut out = [0u16; 1];
    caster.run(&[x.to_bits()], &mut out);
    assert_eq!(out[0], 0x3f81);
    let twice = Caster::new(&f("float32"), &f("bfloat16"));
    twice.run(&[(x as f32).to_bits()], &mut out);
    assert_eq!(out[0], 0x3f80);
}
