//! The kernel API is sound by construction: every way safe code could build an `Array` whose
//! parts disagree (the out-of-bounds reads the fast kernels would then make) is an `Err`.

use typejoin::{
    Array, ArrayError, DType, Data, Unit,
    ops::{self, Arg, Op},
};

fn dtype(name: &str) -> DType {
    DType::named(name).unwrap()
}

#[test]
fn a_shape_that_promises_more_elements_than_the_data_has_is_refused() {
    // Before the fields were private, this array made the F16C loop read 997 halves past the
    // end of its buffer (valgrind: invalid read).
    let e = Array::new(
        dtype("float16"),
        vec![1000],
        Data::U16(vec![0x3c00; 3].into()),
    )
    .unwrap_err();
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
    let e = Array::new(dtype("int32"), vec![2, 2], Data::U32(vec![1; 5].into())).unwrap_err();
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
    let e = Array::new(dtype("float32"), vec![2], Data::U8(vec![1, 2].into())).unwrap_err();
    assert_eq!(
        e,
        ArrayError::Storage {
            dtype: "float32",
            expected: Unit::U32,
            given: Unit::U8
        }
    );
    assert_eq!(e.to_string(), "float32 is stored as U32, not U8");
    let e = Array::new(dtype("complex64"), vec![1], Data::U64(vec![0].into())).unwrap_err();
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
        let e = Array::new(dtype(name), vec![2], Data::U8(vec![0, bad].into())).unwrap_err();
        assert!(
            matches!(e, ArrayError::Pattern { pattern, .. } if pattern == bad as u64),
            "{name}: {e}"
        );
    }
    assert_eq!(
        Array::new(dtype("int4"), vec![1], Data::U8(vec![16].into()))
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
        Array::new(dtype("int8"), huge.clone(), Data::U8(vec![].into())),
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
        Data::U16(vec![0x3c00, 0x4000, 0x7c00].into()),
    )
    .unwrap();
    assert_eq!(a.dtype(), dtype("float16"));
    assert_eq!(a.shape(), &[3]);
    assert_eq!(a.len(), 3);
    let jax = typejoin::policy("jax").unwrap();
    let sum = ops::binary(jax, Op::Add, &Arg::Array(a.clone()), &Arg::Array(a)).unwrap();
    // 1 + 1 = 2, 2 + 2 = 4, inf + inf = inf
    assert_eq!(
        sum.into_data(),
        Data::U16(vec![0x4000, 0x4400, 0x7c00].into())
    );
    // An empty array of any shape with a zero extent is valid.
    let e = Array::new(dtype("int8"), vec![0, 1 << 40], Data::U8(vec![].into())).unwrap();
    assert!(e.is_empty());
}

#[test]
fn an_output_of_the_wrong_shape_is_refused() {
    let jax = typejoin::policy("jax").unwrap();
    let a = Arg::Array(Array::zeros(dtype("float32"), vec![4]).unwrap());
    let mut out = Array::zeros(dtype("float32"), vec![2]).unwrap();
    assert!(ops::binary_into(jax, Op::Add, &a, &a, &mut out).is_err());
    let mut out = Array::zeros(dtype("float16"), vec![4]).unwrap();
    assert!(ops::binary_into(jax, Op::Add, &a, &a, &mut out).is_err());
    let src = Array::zeros(dtype("float32"), vec![4]).unwrap();
    let mut out = Array::zeros(dtype("bfloat16"), vec![5]).unwrap();
    assert!(ops::astype_into(&src, &mut out).is_err());
}

#[test]
fn a_borrowed_read_only_buffer_is_copied_on_write_never_written_through() {
    use typejoin::Buf;
    let lent = [1u16, 2, 3];
    // SAFETY: `lent` outlives `b` and is not written while `b` lives.
    let mut b = unsafe { Buf::borrowed(lent.as_ptr(), lent.len()) };
    assert!(b.is_borrowed());
    assert_eq!(&b[..], &[1, 2, 3]);
    b[0] = 9;
    assert!(!b.is_borrowed());
    assert_eq!((&b[..], &lent[..]), (&[9u16, 2, 3][..], &[1u16, 2, 3][..]));
}

/// An array viewing `v` (no copy) of dtype `t`.
fn view<T>(t: DType, v: &mut [T], writable: bool) -> Array {
    let n = v.len();
    // SAFETY: `v` is aligned for its unit, outlives the array in every use below, and is not
    // otherwise touched while the view lives.
    let data = unsafe { Data::borrowed(t.unit(), v.as_mut_ptr().cast(), n, writable) };
    if writable {
        // SAFETY: a result buffer handed to `apply_with`, which writes before it reads.
        unsafe { Array::output(t, vec![n], data) }.unwrap()
    } else {
        Array::new(t, vec![n], data).unwrap()
    }
}

#[test]
fn results_land_in_the_callers_storage_on_every_path() {
    // Each case's result is also built aside by some paths (torch's complex add with alpha,
    // the dividend's sign of a zero float remainder, sum, astype through the codec); the
    // result must still end up in the caller's buffer.
    let torch = typejoin::policy("torch").unwrap();
    let jax = typejoin::policy("jax").unwrap();
    // float16 -3, 3, -4.5, 0.5 and 1.5, -1.5, 1.5, 0.25 (remainder -3 % 1.5 is -0 in torch)
    let mut a16: Vec<u16> = vec![0xc200, 0x4200, 0xc480, 0x3800];
    let mut b16: Vec<u16> = vec![0x3e00, 0xbe00, 0x3e00, 0x3400];
    let mut c64: Vec<[u32; 2]> = vec![[1.5f32.to_bits(), 2f32.to_bits()]; 4];
    let a16_before = a16.clone();
    let f = dtype("float16");
    let args16 = [
        Arg::Array(view(f, &mut a16, false)),
        Arg::Array(view(f, &mut b16, false)),
    ];
    let argc = [
        Arg::Array(view(dtype("complex64"), &mut c64, false)),
        Arg::Scalar(ops::Scalar::Int(2)),
    ];
    let cases: Vec<(&typejoin::Generated, &str, &[Arg], ops::Options)> = vec![
        (torch, "add", &args16[..], ops::Options::default()),
        (torch, "remainder", &args16[..], ops::Options::default()),
        (torch, "add", &argc[..], ops::Options::default()),
        (jax, "sum", &args16[..1], ops::Options::default()),
        (
            jax,
            "astype",
            &args16[..1],
            ops::Options {
                dtype: Some(dtype("float8_e4m3fn")),
                ..ops::Options::default()
            },
        ),
        (jax, "negative", &args16[..1], ops::Options::default()),
    ];
    for (policy, op, args, options) in cases {
        let id = ops::parse_op(op).unwrap();
        let want = ops::apply(policy, id, args, options).unwrap();
        // Storage of the widest unit, big enough for any of the results.
        let mut buf = vec![[0u64; 2]; 4];
        let got = ops::apply_with(policy, id, args, options, |t, shape| {
            let n: usize = shape.iter().product();
            // SAFETY: `buf` is aligned for every unit, holds 64 bytes (>= n units of any unit
            // here), outlives `got`, and is touched by nothing else meanwhile.
            let data = unsafe { Data::borrowed(t.unit(), buf.as_mut_ptr().cast(), n, true) };
            // SAFETY: a result buffer: `apply_with` writes it before reading it.
            Ok(unsafe { Array::output(t, shape.to_vec(), data) }.unwrap())
        })
        .unwrap();
        // Still a view of `buf`: the elements compared are the caller's memory.
        assert!(got.data().is_borrowed(), "{op}");
        assert_eq!(got, want, "{op}");
    }
    drop(args16);
    assert_eq!(a16, a16_before, "operands are only read");
    // A result of the wrong dtype or shape is refused before any work.
    let e = ops::apply_with(
        torch,
        ops::parse_op("add").unwrap(),
        &argc,
        ops::Options::default(),
        |_, _| Ok(Array::zeros(dtype("float32"), vec![4]).unwrap()),
    )
    .unwrap_err();
    assert_eq!(
        e.message,
        "the output is float32 [4], the result complex64 [4]"
    );
}
