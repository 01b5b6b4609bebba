//! Agreement with the oracle measured from NumPy and JAX (copied to tests/data/oracle/):
//! JAX's lattice reproduces jax.numpy's measured table cell for cell, and the law counts of every
//! observed table equal the brute-force counts in properties.json.

use serde_json::Value;
use typejoin::{self, CheckOptions, Input, Law, Status};

use crate::{load, root};

fn json(rel: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(root().join(rel)).unwrap()).unwrap()
}

#[test]
fn jax_lattice_equals_measured_jax_numpy_table() {
    let measured = json("tests/data/oracle/jax_numpy_x64_standard.json");
    let input = load("lattices/jax.toml");
    let t = input.table();
    let dtypes: Vec<&str> = measured["dtypes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap())
        .collect();
    assert_eq!(dtypes.len(), 35);
    let mut cells = 0;
    for a in &dtypes {
        for b in &dtypes {
            let want = measured["result"][a][b].as_str();
            let (ia, ib) = (t.index_of(a).unwrap(), t.index_of(b).unwrap());
            let got = t.get(ia, ib).map(|j| t.name(j));
            assert_eq!(got, want, "{a} ∨ {b}");
            cells += 1;
        }
    }
    assert_eq!(cells, 1225);
    assert_eq!(t.undefined_cells(), 618);
}

#[test]
fn law_counts_equal_properties_json() {
    let props = json("tests/data/oracle/properties.json");
    let tables = props["tables"].as_object().unwrap();
    assert_eq!(tables.len(), 11);
    for (file, p) in tables {
        let input = crate::load_as_oracle(file);
        let Input::Observed(o) = &input else { panic!() };
        let t = &o.table;
        let want: Vec<&str> = p["dtypes_analysed"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_str().unwrap())
            .collect();
        assert_eq!(t.names, want, "{file}: dtypes analysed");
        let [assoc, defn, _] = typejoin::brute_force(t, CheckOptions::default());
        assert_eq!(
            assoc.count,
            p["n_nonassociative_triples"].as_u64().unwrap(),
            "{file}: non-associative"
        );
        assert_eq!(
            defn.count,
            p["n_one_side_defined_triples"].as_u64().unwrap(),
            "{file}: one side defined"
        );
        // The first witnesses in table order equal the oracle's first list.
        let mut ours: Vec<Vec<String>> = assoc.witnesses.iter().map(|w| w.dtypes.clone()).collect();
        let index = |n: &String| t.index_of(n).unwrap();
        ours.sort_by_key(|d| d.iter().map(index).collect::<Vec<_>>());
        let first: Vec<Vec<String>> = p["first_nonassociative_triples"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| {
                ["a", "b", "c"]
                    .iter()
                    .map(|k| w[k].as_str().unwrap().to_string())
                    .collect()
            })
            .collect();
        assert_eq!(
            &ours[..first.len()],
            &first[..],
            "{file}: first non-associative triples"
        );

        let r = input.check(CheckOptions::default());
        let comm = r.law(Law::Commutativity).unwrap();
        assert_eq!(
            comm.count,
            p["n_noncommutative_pairs"].as_u64().unwrap(),
            "{file}: non-commutative"
        );
        assert_eq!(
            comm.status == Status::Holds,
            p["commutative"].as_bool().unwrap()
        );
        let idem = r.law(Law::Idempotence).unwrap();
        assert_eq!(
            idem.count,
            p["non_idempotent"].as_array().unwrap().len() as u64,
            "{file}: non-idempotent"
        );
        let order = &p["induced_order"];
        let c = typejoin::induced_counts(t);
        assert_eq!(
            c.antisymmetry == 0,
            order["antisymmetric"].as_bool().unwrap(),
            "{file}"
        );
        assert_eq!(
            c.transitivity,
            order["n_transitivity_violations"].as_u64().unwrap(),
            "{file}: transitivity"
        );
        assert_eq!(
            c.not_least,
            order["n_cells_differing_from_lub_of_induced_order"]
                .as_u64()
                .unwrap(),
            "{file}: cells differing from the induced join"
        );
        assert_eq!(
            t.undefined_cells() as u64,
            p["n_null_cells"].as_u64().unwrap(),
            "{file}: null cells"
        );
    }
}

#[test]
fn numpy_and_pytorch_counts_named_in_the_issue() {
    for (file, n) in [
        ("observed/numpy.json", 4224),
        ("observed/seed_numpy.json", 256),
        ("observed/seed_pytorch.json", 128),
    ] {
        let r = load(file).check(CheckOptions::default());
        assert_eq!(r.law(Law::Associativity).unwrap().count, n, "{file}");
    }
}
