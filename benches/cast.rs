//! Cast throughput on 1e7 elements (random bit patterns), output preallocated: the five
//! conversions of issue 4. `python3 benches/compare_numpy_casts.py` runs this next to NumPy +
//! ml_dtypes `astype` and prints the ratios; figures in docs/performance.md.

use divan::{Bencher, black_box};
use typejoin::{Caster, Lane, Rng, float_format};

fn main() {
    divan::main();
}

const N: usize = 10_000_000;

fn bench<S: Lane, D: Lane>(b: Bencher, src: &str, dst: &str) {
    let caster = Caster::new(&float_format(src).unwrap(), &float_format(dst).unwrap());
    let mut rng = Rng::new(1);
    let input: Vec<S> = (0..N).map(|_| S::from_bits(rng.next_u64())).collect();
    let mut out = vec![D::default(); N];
    b.counter(divan::counter::BytesCount::new(
        N * (size_of::<S>() + size_of::<D>()),
    ))
    .bench_local(|| caster.run(black_box(&input), black_box(&mut out)));
}

#[divan::bench(sample_count = 10)]
fn f32_to_bf16(b: Bencher) {
    bench::<u32, u16>(b, "float32", "bfloat16");
}

#[divan::bench(sample_count = 10)]
fn f32_to_f16(b: Bencher) {
    bench::<u32, u16>(b, "float32", "float16");
}

#[divan::bench(sample_count = 10)]
fn f32_to_float8_e4m3fn(b: Bencher) {
    bench::<u32, u8>(b, "float32", "float8_e4m3fn");
}

#[divan::bench(sample_count = 10)]
fn bf16_to_f32(b: Bencher) {
    bench::<u16, u32>(b, "bfloat16", "float32");
}

#[divan::bench(sample_count = 10)]
fn float8_e5m2_to_f16(b: Bencher) {
    bench::<u8, u16>(b, "float8_e5m2", "float16");
}
