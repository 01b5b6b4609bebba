//! The kernel API is sound by construction: every way safe code could build an `Array` whose
//! parts disagree (the out-of-bounds reads the fast kernels would then make) is an `Err`.

use typejoin::kernels::array::{Array, ArrayError, Data};
use typejoin::kernels::ops::{self, Arg, Op};
use typejoin::numeric::dtype::{DType, Unit};

fn dtype(name: &str) -> DType {
    DType::named(name).unwrap()
}

#[test]
fn a_shape_that_promises_more_elements_than_the_data_has_is_refused() {
    // Before the fields were private, this array made the F16C loop read 997 halves past the
    // end of its buffer (valgrind: invalid read).
    let e = Array::new(dtype("float16"), vec![1000], Data::U16(vec![0x3c00; 3])).unwrap_err();
    assert_eq!(
        e,
        ArrayError::Length {
            shape: vec![1000],
            expected: 1000,
            given: 3
        }
    );
    assert_eq!(
        e.to_string(),
        "shape [1000] holds 1000 elements but 3 bit patterns were given"
    );
    let e = Array::new(dtype("int32"), vec![2, 2], Data::U32(vec![1; 5])).unwrap_err();
    assert!(
        matches!(
            e,
            ArrayError::Length {
                expected: 4,
                given: 5,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn storage_of_another_unit_is_refused() {
    let e = Array::new(dtype("float32"), vec![2], Data::U8(vec![1, 2])).unwrap_err();
    assert_eq!(
        e,
        ArrayError::Storage {
            dtype: "float32",
            expected: Unit::U32,
            given: Unit::U8
        }
    );
    assert_eq!(e.to_string(), "float32 is stored as U32, not U8");
    let e = Array::new(dtype("complex64"), vec![1], Data::U64(vec![0])).unwrap_err();
    assert!(matches!(e, ArrayError::Storage { .. }), "{e}");
}

#[test]
fn a_code_wider_than_its_dtype_is_refused() {
    // Sub-byte codes and float8 codes index tables of 2^bits entries.
    for (name, bad) in [
        ("int4", 16u8),
        ("uint2", 4),
        ("bool", 2),
        ("float4_e2m1fn", 16),
    ] {
        let e = Array::new(dtype(name), vec![2], Data::U8(vec![0, bad])).unwrap_err();
        assert!(
            matches!(e, ArrayError::Pattern { pattern, .. } if pattern == bad as u64),
            "{name}: {e}"
        );
    }
    assert_eq!(
        Array::new(dtype("int4"), vec![1], Data::U8(vec![16]))
            .unwrap_err()
            .to_string(),
        "bit pattern 16 does not fit int4 (4 bits)"
    );
    let e = Array::from_bits(dtype("float8_e4m3fn"), vec![1], &[[256, 0]]).unwrap_err();
    assert!(
        matches!(
            e,
            ArrayError::Pattern {
                pattern: 256,
                bits: 8,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn a_shape_whose_element_count_overflows_is_refused() {
    let huge = vec![1 << 40, 1 << 40];
    assert!(matches!(
        Array::zeros(dtype("int8"), huge.clone()),
        Err(ArrayError::TooLarge { .. })
    ));
    assert!(matches!(
        Array::new(dtype("int8"), huge.clone(), Data::U8(vec![])),
        Err(ArrayError::TooLarge { .. })
    ));
    assert!(matches!(
        Array::from_bits(dtype("int8"), huge, &[]),
        Err(ArrayError::TooLarge { .. })
    ));
}

#[test]
fn valid_parts_make_an_array_the_kernels_compute_with() {
    let a = Array::new(
        dtype("float16"),
        vec![3],
        Data::U16(vec![0x3c00, 0x4000, 0x7c00]),
    )
    .unwrap();
    assert_eq!(a.dtype(), dtype("float16"));
    assert_eq!(a.shape(), &[3]);
    assert_eq!(a.len(), 3);
    let jax = typejoin::kernels::policy("jax").unwrap();
    let sum = ops::binary(jax, Op::Add, &Arg::Array(a.clone()), &Arg::Array(a)).unwrap();
    // 1 + 1 = 2, 2 + 2 = 4, inf + inf = inf
    assert_eq!(sum.into_data(), Data::U16(vec![0x4000, 0x4400, 0x7c00]));
    // An empty array of any shape with a zero extent is valid.
    let e = Array::new(dtype("int8"), vec![0, 1 << 40], Data::U8(vec![])).unwrap();
    assert!(e.is_empty());
}

#[test]
fn an_output_of_the_wrong_shape_is_refused() {
    let jax = typejoin::kernels::policy("jax").unwrap();
    let a = Arg::Array(Array::zeros(dtype("float32"), vec![4]).unwrap());
    let mut out = Array::zeros(dtype("float32"), vec![2]).unwrap();
    assert!(ops::binary_into(jax, Op::Add, &a, &a, &mut out).is_err());
    let mut out = Array::zeros(dtype("float16"), vec![4]).unwrap();
    assert!(ops::binary_into(jax, Op::Add, &a, &a, &mut out).is_err());
    let src = Array::zeros(dtype("float32"), vec![4]).unwrap();
    let mut out = Array::zeros(dtype("bfloat16"), vec![5]).unwrap();
    assert!(ops::astype_into(&src, &mut out).is_err());
}
