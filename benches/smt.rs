//! z3 verdict time per law, next to the exhaustive checker on the same tables: JAX's 35-node
//! lattice and synthetic 100- and 300-node lattices (chain products), each as a join table.
//! Run: `cargo bench --bench smt`. Figures are recorded in docs/performance.md.

use divan::Bencher;
use typejoin::{
    Check, CheckOptions, Input, Lattice, Table,
    smt::solve::{Verdict, Z3Options, solve},
    smt::{body, table_prefix, width},
};

fn main() {
    divan::main();
}

const LAWS: &[&str] = &[
    "commutativity",
    "idempotence",
    "associativity",
    "definedness-associativity",
    "nary-fold",
];

fn check(name: &str) -> Check {
    match name {
        "commutativity" => Check::Commutativity,
        "idempotence" => Check::Idempotence,
        "associativity" => Check::Associativity,
        "definedness-associativity" => Check::DefinednessAssociativity,
        _ => Check::NaryFold,
    }
}

fn table(n: usize) -> Table {
    if n == 35 {
        let input = Input::parse("jax.toml", include_str!("../lattices/jax.toml")).unwrap();
        return input.table().clone();
    }
    let (rows, cols) = if n == 100 { (10, 10) } else { (15, 20) };
    let (names, edges) = typejoin::grid(rows, cols);
    Lattice::new(names, &edges, false)
        .unwrap()
        .join_table()
        .table
}

fn z3(b: Bencher, n: usize, law: &str) {
    let t = table(n);
    let script = body(check(law), &table_prefix(&t));
    let w = width(t.n());
    let opts = Z3Options {
        timeout_ms: 600_000,
        limit: 1,
    };
    b.bench(|| assert_eq!(solve(&script, check(law).vars(), w, opts), Verdict::Holds));
}

#[divan::bench(args = LAWS, sample_count = 5, sample_size = 1)]
fn z3_jax_35(b: Bencher, law: &str) {
    z3(b, 35, law);
}

#[divan::bench(args = LAWS, sample_count = 3, sample_size = 1)]
fn z3_grid_100(b: Bencher, law: &str) {
    z3(b, 100, law);
}

#[divan::bench(args = LAWS, sample_count = 1, sample_size = 1)]
fn z3_grid_300(b: Bencher, law: &str) {
    z3(b, 300, law);
}

/// The exhaustive checker on the same tables, every law (table path: induced order, then
/// associativity by theorem).
#[divan::bench(args = [35, 100, 300])]
fn exhaustive_all_laws(b: Bencher, n: usize) {
    let t = table(n);
    b.bench(|| assert!(typejoin::check_table("t", "t", &t, CheckOptions::default()).ok()));
}

/// The exhaustive brute force (no theorem): the n³ sweep the solver is up against.
#[divan::bench(args = [35, 100, 300], sample_count = 5)]
fn exhaustive_brute_force(b: Bencher, n: usize) {
    let t = table(n);
    b.bench(|| typejoin::brute_force(&t, CheckOptions::default()));
}
