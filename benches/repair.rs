//! `typejoin repair` and `typejoin synth`: NumPy's, PyTorch's and TensorFlow's measured tables
//! repaired (the search and the proof of minimality together), the JEP 9407 studies and a
//! 35-dtype JAX-like lattice synthesised, and perturbed product-of-chains tables of growing
//! size. Run: `cargo bench --bench repair`. Figures are recorded in docs/performance.md.

use divan::{Bencher, black_box};
use typejoin::repair::{Optimality, Options, repair};
use typejoin::synthesis::{Synthesis, synthesize};
use typejoin::{Input, Rng, Table};

fn main() {
    divan::main();
}

fn load(path: &str) -> Input {
    let text = std::fs::read_to_string(format!("{}/{path}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    Input::parse(path, &text).unwrap()
}

fn partial() -> Options {
    Options {
        partial: true,
        ..Options::default()
    }
}

#[divan::bench(sample_count = 3, sample_size = 1, args = [
    "observed/numpy_promote_types.json",
    "observed/torch.json",
    "observed/tensorflow_safe.json",
])]
fn repair_measured(b: Bencher, path: &str) {
    let input = load(path);
    b.bench(|| {
        let r = repair(black_box(&input), &partial()).unwrap();
        assert!(matches!(r.optimality, Optimality::Proved { .. }));
    });
}

#[divan::bench(sample_count = 3, sample_size = 1, args = [
    "requirements/no-precision-loss.toml",
    "requirements/float64-for-all-ints.toml",
    "requirements/ints-below-weak-float.toml",
    "requirements/numpy-triple.toml",
])]
fn synth_requirements(b: Bencher, path: &str) {
    let text = std::fs::read_to_string(format!("{}/{path}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let req = typejoin::parse_requirements(path, &text).unwrap();
    b.bench(|| synthesize(black_box(&req), 600_000).unwrap());
}

/// JAX's 35 dtypes with its 41 edges as `below` requirements and its partiality: the lattice
/// synthesised is JAX's.
fn jax_like() -> typejoin::Requirements {
    let Input::Policy { policy, .. } = load("lattices/jax.toml") else {
        unreachable!()
    };
    let names = policy.dtypes().to_vec();
    let q = |s: &str| format!("\"{s}\"");
    let below: Vec<String> = policy
        .edges()
        .iter()
        .map(|e| q(&format!("{} < {}", names[e.from], names[e.to])))
        .collect();
    let text = format!(
        "name = \"jax-like\"\npartial = true\ndtypes = [{}]\n[require]\nbelow = [{}]\n",
        names.iter().map(|n| q(n)).collect::<Vec<_>>().join(", "),
        below.join(", ")
    );
    typejoin::parse_requirements("jax-like.toml", &text).unwrap()
}

#[divan::bench(sample_count = 3, sample_size = 1)]
fn synth_jax_like_35(b: Bencher) {
    let req = jax_like();
    b.bench(|| {
        let Synthesis::Found(f) = synthesize(black_box(&req), 600_000).unwrap() else {
            panic!("JAX's edges are a lattice")
        };
        assert_eq!(f.edges.len(), 41);
    });
}

/// The join table of a `side × side` product of chains with `side` random pairs changed (both
/// cells) to a random dtype.
pub fn perturbed_grid(side: usize, seed: u64) -> Input {
    let (names, edges) = typejoin::grid(side, side);
    let lattice = typejoin::Lattice::new(names.clone(), &edges, false).unwrap();
    let mut t: Table = lattice.join_table().table;
    let n = names.len();
    let mut rng = Rng::new(seed);
    for _ in 0..side {
        let (a, b, c) = (rng.below(n), rng.below(n), rng.below(n));
        if a != b {
            t.set(a, b, Some(c));
            t.set(b, a, Some(c));
        }
    }
    Input::parse("grid.json", &t.to_json("grid", "", "")).unwrap()
}

#[divan::bench(sample_count = 1, sample_size = 1, args = [4, 6, 8, 10])]
fn repair_perturbed_grid(b: Bencher, side: usize) {
    let input = perturbed_grid(side, side as u64);
    b.bench(|| {
        let r = repair(black_box(&input), &Options::default()).unwrap();
        assert!(r.cost <= side as u64);
    });
}
