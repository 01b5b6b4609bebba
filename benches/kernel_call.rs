//! The fixed cost of one reference-kernel call: `ops::apply` of `add` on float32 arrays of 1
//! and 1,000 elements under the `numpy` policy (planning, operand preparation, the result's
//! allocation, the loop). At one element it is the per-call cost the Python package adds to
//! its binding's (docs/python.md compares the whole call with `np.add`'s). `add_float32_kept_plan`
//! is the same call through a kept `ops::ArrayPlan`, as the binding runs a binary op on arrays.
//! Run: `cargo bench --bench kernel_call`.

use divan::{Bencher, black_box};
use typejoin::{
    Array, DType,
    ops::{self, Arg},
};

fn main() {
    divan::main();
}

/// The `numpy` policy, `add`, and two float32 arrays of `n` zeros.
fn float32_add(n: usize) -> (&'static typejoin::Generated, typejoin::op::OpId, [Arg; 2]) {
    let policy = typejoin::policy("numpy").expect("the numpy policy is generated");
    let op = ops::parse_op("add").expect("add is a kernel op");
    let arg = || Arg::Array(Array::zeros(DType::Float32, vec![n]).expect("a small array"));
    (policy, op, [arg(), arg()])
}

#[divan::bench(args = [1, 1000])]
fn add_float32(b: Bencher, n: usize) {
    let (policy, op, args) = float32_add(n);
    b.bench(|| ops::apply(policy, op, black_box(&args), ops::Options::default()));
}

#[divan::bench]
fn parse_policy_and_op() -> bool {
    typejoin::policy(black_box("numpy")).is_ok() && ops::parse_op(black_box("add")).is_ok()
}

/// [`add_float32`] through a kept plan (`ops::ArrayPlan`, what the Python binding runs): the
/// dtype-level planning done once.
#[divan::bench(args = [1, 1000])]
fn add_float32_kept_plan(b: Bencher, n: usize) {
    let (policy, op, args) = float32_add(n);
    let plan = ops::ArrayPlan::new(policy, op, &args).expect("float32 + float32 has a plan");
    b.bench(|| {
        plan.apply_with(black_box(&args), ops::Options::default(), |t, shape| {
            Ok(Array::zeros(t, shape.to_vec())?)
        })
    });
}
