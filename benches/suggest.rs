//! `typejoin suggest` on JAX's lattice: where bfloat16 goes (removed and re-placed), the full
//! search with every candidate scored and the top five described. Run:
//! `cargo bench --bench suggest`. Figures are recorded in docs/performance.md.

use divan::{Bencher, black_box};
use typejoin::{
    Input,
    suggest::{Options, suggest},
};

fn main() {
    divan::main();
}

fn jax() -> typejoin::Policy {
    let Input::Policy { policy, .. } =
        Input::parse("jax.toml", include_str!("../lattices/jax.toml")).unwrap()
    else {
        unreachable!()
    };
    *policy
}

#[divan::bench(args = [1, 2, 3])]
fn jax_bfloat16(b: Bencher, max_degree: usize) {
    let policy = jax();
    b.bench(|| {
        let s = suggest(
            black_box(&policy),
            "bfloat16",
            None,
            Options { max_degree, top: 5 },
        )
        .unwrap();
        assert_eq!(s.placements[0].below, ["f*"]);
    });
}
