//! The law checker on the non-lattice fixtures and on hand-made tables, asserting exact
//! witnesses and counts.

use typejoin::{self, CheckOptions, Join, Law, Status, Table};

use crate::load;

fn names(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn numpy_dag_has_an_ambiguous_join() {
    let report = load("tests/data/not-lattice/numpy-dag.toml").check(CheckOptions::default());
    let u = report.law(Law::Uniqueness).unwrap();
    assert_eq!(u.status, Status::Violated);
    assert_eq!(u.count, 1);
    assert_eq!(u.witnesses[0].dtypes, ["int8", "uint8"]);
    assert_eq!(u.witnesses[0].left.as_deref(), Some("int16"));
    assert_eq!(u.witnesses[0].right.as_deref(), Some("float16"));
    assert_eq!(report.law(Law::DefinednessAssociativity).unwrap().count, 12);
}

#[test]
fn jep_non_lattices() {
    let r = load("tests/data/not-lattice/jep-no-upper-bound.toml").check(CheckOptions::default());
    let e = r.law(Law::Existence).unwrap();
    assert_eq!((e.status, e.count), (Status::Violated, 4));
    let pairs: Vec<_> = e.witnesses.iter().map(|w| w.dtypes.join("|")).collect();
    assert_eq!(
        pairs,
        [
            "uint64|int8",
            "uint64|int16",
            "uint64|int32",
            "uint64|int64"
        ]
    );
    assert_eq!(r.violated().count(), 1);

    let r = load("tests/data/not-lattice/jep-ambiguous.toml").check(CheckOptions::default());
    let u = r.law(Law::Uniqueness).unwrap();
    assert_eq!(u.count, 6);
    assert_eq!(u.witnesses[0].dtypes, ["uint8", "int8"]);
    assert!(!r.ok());
}

#[test]
fn numpy_witness_is_first_and_exact() {
    let input = load("observed/numpy_promote_types.json");
    let r = input.check(CheckOptions::default());
    let a = r.law(Law::Associativity).unwrap();
    assert_eq!(a.count, 40);
    let w = a
        .witnesses
        .iter()
        .find(|w| w.dtypes == ["int8", "uint8", "float16"])
        .expect("the int8/uint8/float16 witness");
    assert_eq!(w.left.as_deref(), Some("float32"));
    assert_eq!(w.right.as_deref(), Some("float16"));
    assert_eq!(
        w.detail,
        "(int8 ∨ uint8) ∨ float16 = int16 ∨ float16 = float32, but int8 ∨ (uint8 ∨ float16) = int8 ∨ float16 = float16"
    );
    // The simplest witnesses come first: the first two are the int8/uint8/float16 triple.
    let first: Vec<_> = a.witnesses[..2]
        .iter()
        .map(|w| w.dtypes.join(","))
        .collect();
    assert_eq!(first, ["uint8,int8,float16", "int8,uint8,float16"]);
}

#[test]
fn structural_and_brute_force_agree_on_jax() {
    let input = load("lattices/jax.toml");
    let t = input.table();
    let [assoc, defn, nary] = typejoin::brute_force(t, CheckOptions::default());
    assert_eq!((assoc.count, defn.count, nary.count), (0, 0, 0));
    let r = input.check(CheckOptions::default());
    assert_eq!(r.law(Law::Associativity).unwrap().status, Status::Proved);
}

#[test]
fn flipped_entries() {
    let input = load("lattices/jax.toml");
    let id = |n: &str| input.table().index_of(n).unwrap();
    // int8 ∨ uint8 := int8 (both orders) is still the join of an order: uint8 < int8.
    let mut t: Table = input.table().clone();
    t.set(id("int8"), id("uint8"), Some(id("int8")));
    t.set(id("uint8"), id("int8"), Some(id("int8")));
    assert!(typejoin::check_table("m", "m", &t, CheckOptions::default()).ok());
    // int8 ∨ uint8 := float16, NumPy's other choice, breaks associativity.
    let mut t: Table = input.table().clone();
    t.set(id("int8"), id("uint8"), Some(id("float16")));
    t.set(id("uint8"), id("int8"), Some(id("float16")));
    let r = typejoin::check_table("m", "m", &t, CheckOptions::default());
    assert!(!r.ok());
    let a = r.law(Law::Associativity).unwrap();
    let w = a
        .witnesses
        .iter()
        .find(|w| w.dtypes == ["int8", "uint8", "int16"])
        .unwrap();
    assert_eq!(
        (w.left.as_deref(), w.right.as_deref()),
        (Some("float16"), Some("int16"))
    );
    assert_eq!(r.law(Law::Commutativity).unwrap().status, Status::Holds);
    // One direction only: commutativity breaks, with the pair as witness.
    let mut t: Table = input.table().clone();
    t.set(id("int8"), id("uint8"), Some(id("int8")));
    let r = typejoin::check_table("m", "m", &t, CheckOptions::default());
    let c = r.law(Law::Commutativity).unwrap();
    assert_eq!(c.count, 1);
    assert_eq!(
        c.witnesses[0].detail,
        "uint8 ∨ int8 = int16, but int8 ∨ uint8 = int8"
    );
}

#[test]
fn nary_result_type_is_the_least_common_upper_bound() {
    let input = load("lattices/jax.toml");
    let typejoin::Input::Policy { lattice, .. } = &input else {
        unreachable!()
    };
    let t = input.table();
    let id = |n: &str| t.index_of(n).unwrap();
    assert_eq!(
        lattice.result_type(&[id("int8"), id("uint8"), id("float16")]),
        Some(Join::Unique(id("float16")))
    );
    assert_eq!(
        lattice.result_type(&[id("bfloat16"), id("float16")]),
        Some(Join::Unique(id("float32")))
    );
    assert_eq!(
        lattice.result_type(&[id("int4"), id("int8")]),
        Some(Join::NoUpperBound)
    );
    assert_eq!(lattice.result_type(&[]), None);
}

#[test]
fn induced_order_parts_of_a_small_table() {
    // a ∨ b = b, b ∨ c = c, but a ∨ c = a: not transitive.
    let mut t = Table::new(names(&["a", "b", "c"]));
    for (x, y, r) in [
        (0, 0, 0),
        (1, 1, 1),
        (2, 2, 2),
        (0, 1, 1),
        (1, 0, 1),
        (1, 2, 2),
        (2, 1, 2),
        (0, 2, 0),
        (2, 0, 0),
    ] {
        t.set(x, y, Some(r));
    }
    let c = typejoin::induced_counts(&t);
    assert_eq!((c.antisymmetry, c.transitivity), (0, 3));
}

/// `n` dtypes where `a ∨ b = a` (left projection), undefined where 7 divides a + b.
fn projection(n: usize) -> Table {
    let mut t = Table::new((0..n).map(|i| format!("d{i}")).collect());
    for a in 0..n {
        for b in 0..n {
            t.set(a, b, ((a + b) % 7 != 0).then_some(a));
        }
    }
    t
}

#[test]
fn the_triple_sweep_counts_exactly_up_to_500_dtypes_and_stops_early_beyond() {
    let opts = CheckOptions {
        max_witnesses: 10,
        ..CheckOptions::default()
    };
    // 60 dtypes: every violation counted (the rows swept in parallel, merged in order, give
    // the serial sweep's first witnesses).
    let [assoc, defn, nary] = typejoin::brute_force(&projection(60), opts);
    assert_eq!(
        (assoc.status, assoc.count, assoc.exact),
        (Status::Holds, 0, true)
    );
    // (counts from a serial Python sweep of the same table)
    assert_eq!((defn.count, defn.exact), (45_414, true));
    assert_eq!((nary.count, nary.exact), (35_552, true));
    assert_eq!(defn.witnesses.len(), 10);
    // 600 dtypes: associativity holds, so its sweep (and definedness-associativity's, which
    // shares it) runs to the end and counts exactly; the n-ary fold stops at its witnesses
    // and its count is a lower bound, the same on every machine (fixed batches of rows).
    let [assoc, defn, nary] = typejoin::brute_force(&projection(600), opts);
    assert_eq!((assoc.status, assoc.exact), (Status::Holds, true));
    // (a ∨ b defined, and exactly one of a ∨ c, b ∨ c: counted by residues mod 7)
    assert_eq!((defn.count, defn.exact), (45_352_960, true));
    assert_eq!((nary.status, nary.exact), (Status::Violated, false));
    assert_eq!(nary.witnesses.len(), 10);
    assert_eq!(nary.count, 4_084); // the first batch of 8 rows, each stopped once it had 10
}

/// `described` limits only the witnesses turned into text: the counts, exactness and the
/// ranking are those of the full report, whose first witnesses these are (PyTorch's operand
/// categories: thousands of violations, three shown).
#[test]
fn describing_fewer_witnesses_keeps_the_counts_and_the_simplest() {
    let input = load("observed/torch_categories.json");
    let full = input.check(CheckOptions::default());
    let three = input.check(CheckOptions {
        described: 3,
        ..CheckOptions::default()
    });
    assert_eq!(full.laws.len(), three.laws.len());
    let mut many = 0;
    for (f, t) in full.laws.iter().zip(&three.laws) {
        assert_eq!(
            (f.law, f.status, f.count, f.exact),
            (t.law, t.status, t.count, t.exact)
        );
        assert_eq!(t.witnesses.len(), f.witnesses.len().min(3));
        assert_eq!(t.witnesses[..], f.witnesses[..t.witnesses.len()]);
        many += usize::from(f.witnesses.len() > 100);
    }
    assert!(many > 0, "a law with many witnesses to leave undescribed");
}
