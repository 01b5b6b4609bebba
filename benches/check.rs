//! Full law check (closure + every join + every law) of JAX's lattice, of synthetic lattices of
//! 100, 300 and 1,000 nodes, and of NumPy's measured table (which takes the brute-force path).
//! Run: `cargo bench --bench check`. Figures are recorded in docs/performance.md.

use divan::{Bencher, black_box};
use typejoin::{CheckOptions, Input, Lattice};

fn main() {
    divan::main();
}

fn full_check(lattice: &Lattice) -> bool {
    let joins = lattice.join_table();
    typejoin::check_lattice("bench", "bench", lattice, &joins, CheckOptions::default()).ok()
}

#[divan::bench]
fn jax_35_nodes(b: Bencher) {
    let input = Input::parse("jax.toml", include_str!("../lattices/jax.toml")).unwrap();
    let Input::Policy { policy, .. } = input else {
        unreachable!()
    };
    b.bench(|| {
        let lattice = Lattice::from_policy(black_box(&policy));
        assert!(full_check(&lattice));
    });
}

#[divan::bench]
fn jax_35_nodes_from_text(b: Bencher) {
    b.bench(|| {
        let input =
            Input::parse("jax.toml", black_box(include_str!("../lattices/jax.toml"))).unwrap();
        assert!(input.check(CheckOptions::default()).ok());
    });
}

/// Products of two chains: total lattices of 10×10, 15×20 and 25×40 nodes.
#[divan::bench(args = [100, 300, 1000])]
fn grid_lattice(b: Bencher, n: usize) {
    let (rows, cols) = match n {
        100 => (10, 10),
        300 => (15, 20),
        _ => (25, 40),
    };
    let (names, edges) = typejoin::grid(rows, cols);
    b.bench(|| {
        let lattice = Lattice::new(names.clone(), black_box(&edges), false).unwrap();
        assert!(full_check(&lattice));
    });
}

#[divan::bench]
fn numpy_table_37_brute_force(b: Bencher) {
    let input = Input::parse("numpy.json", include_str!("../observed/numpy.json")).unwrap();
    b.bench(|| {
        assert!(!black_box(&input).check(CheckOptions::default()).ok());
    });
}
