//! Property tests: the engine against brute force on random DAGs and tables, and the parsers
//! against arbitrary and mutated input (no panic, every error located inside the file).

use proptest::prelude::*;
use typejoin::{self, CheckOptions, Input, Join, Lattice, Law, Status, Table};

/// Reachability by repeated relaxation: `le[a][b]` iff a path a →* b.
fn closure(n: usize, edges: &[(usize, usize)]) -> Vec<Vec<bool>> {
    let mut le = vec![vec![false; n]; n];
    for (a, row) in le.iter_mut().enumerate() {
        row[a] = true;
    }
    loop {
        let mut changed = false;
        for &(a, b) in edges {
            for row in le.iter_mut() {
                if row[a] && !row[b] {
                    row[b] = true;
                    changed = true;
                }
            }
        }
        if !changed {
            return le;
        }
    }
}

/// The least upper bound by definition.
fn brute_join(le: &[Vec<bool>], a: usize, b: usize) -> Join {
    let n = le.len();
    let common: Vec<usize> = (0..n).filter(|&x| le[a][x] && le[b][x]).collect();
    if common.is_empty() {
        return Join::NoUpperBound;
    }
    if let Some(&l) = common.iter().find(|&&m| common.iter().all(|&c| le[m][c])) {
        return Join::Unique(l);
    }
    let min: Vec<usize> = common
        .iter()
        .copied()
        .filter(|&m| !common.iter().any(|&c| c != m && le[c][m]))
        .collect();
    Join::Ambiguous(min)
}

/// Naive associativity / one-side-defined counts over a table.
fn naive_counts(t: &Table) -> (u64, u64) {
    let n = t.n();
    let (mut assoc, mut one) = (0, 0);
    for a in 0..n {
        for b in 0..n {
            for c in 0..n {
                let l = t.get(a, b).and_then(|x| t.get(x, c));
                let r = t.get(b, c).and_then(|y| t.get(a, y));
                match (l, r) {
                    (Some(x), Some(y)) if x != y => assoc += 1,
                    (Some(_), None) | (None, Some(_)) => one += 1,
                    _ => {}
                }
            }
        }
    }
    (assoc, one)
}

fn dag() -> impl Strategy<Value = (usize, Vec<(usize, usize)>, bool)> {
    (1usize..=40).prop_flat_map(|n| {
        let edges = proptest::collection::vec((0..n, 0..n), 0..(3 * n))
            .prop_map(|v| v.into_iter().filter(|(a, b)| a < b).collect::<Vec<_>>());
        (Just(n), edges, any::<bool>())
    })
}

/// proptest's defaults (`PROPTEST_CASES` sets the number of cases), with failing seeds kept
/// in `proptest-regressions/it/NAME.txt` at the crate root (committed, replayed first).
pub fn config(name: &'static str) -> ProptestConfig {
    let path: &'static str =
        Box::leak(format!("proptest-regressions/it/{name}.txt").into_boxed_str());
    ProptestConfig {
        failure_persistence: Some(Box::new(
            proptest::test_runner::FileFailurePersistence::Direct(path),
        )),
        ..ProptestConfig::default()
    }
}

proptest! {

    #![proptest_config(ProptestConfig { cases: 200, ..config("props") })]

    #[test]
    fn joins_equal_brute_force_and_laws_agree((n, edges, partial) in dag()) {
        let names: Vec<String> = (0..n).map(|i| format!("t{i}")).collect();
        let lattice = Lattice::new(names, &edges, partial).unwrap();
        let le = closure(n, &edges);
        let joins = lattice.join_table();
        let (mut ambiguous, mut missing) = (0u64, 0u64);
        for a in 0..n {
            for b in 0..n {
                let want = brute_join(&le, a, b);
                prop_assert_eq!(lattice.join(a, b), want.clone());
                prop_assert_eq!(joins.get(a, b), want.clone());
                prop_assert_eq!(lattice.leq(a, b), le[a][b]);
                if a < b {
                    match want {
                        Join::Ambiguous(_) => ambiguous += 1,
                        Join::NoUpperBound => missing += 1,
                        Join::Unique(_) => {}
                    }
                }
            }
        }
        let report = typejoin::check_lattice("p", "p", &lattice, &joins, CheckOptions::default());
        prop_assert_eq!(report.law(Law::Uniqueness).unwrap().count, ambiguous);
        prop_assert_eq!(report.law(Law::Existence).unwrap().count, missing);
        let (assoc, one) = naive_counts(&joins.table);
        let ra = report.law(Law::Associativity).unwrap();
        let rd = report.law(Law::DefinednessAssociativity).unwrap();
        // Every defined cell of a join table is a least upper bound, so associativity is
        // proved, ambiguous pairs or not (docs/math.md), and brute force agrees; definedness
        // is proved without ambiguous pairs, else swept to the naive count.
        prop_assert_eq!(ra.status, Status::Proved);
        prop_assert_eq!(assoc, 0);
        if rd.status == Status::Proved {
            prop_assert_eq!(one, 0);
        } else {
            prop_assert_eq!(rd.count, one);
        }
        // The laws hold exactly when brute force says they do.
        let brute_ok = ambiguous == 0 && (partial || missing == 0) && assoc == 0 && one == 0;
        prop_assert_eq!(report.ok(), brute_ok);
    }

    /// Tables that are joins of random orders, with one cell sometimes overwritten: whichever
    /// path the checker takes, its counts equal the naive ones.
    #[test]
    fn table_checker_matches_naive_counts((n, edges, _) in dag(), mutate in any::<Option<(usize, usize, Option<usize>)>>()) {
        let n = n.min(12);
        let edges: Vec<_> = edges.into_iter().filter(|&(a, b)| a < n && b < n).collect();
        let names: Vec<String> = (0..n).map(|i| format!("t{i}")).collect();
        let lattice = Lattice::new(names, &edges, true).unwrap();
        let mut t = lattice.join_table().table;
        if let Some((a, b, v)) = mutate {
            t.set(a % n, b % n, v.map(|v| v % n));
        }
        let (assoc, one) = naive_counts(&t);
        let report = typejoin::check_table("t", "t", &t, CheckOptions::default());
        let ra = report.law(Law::Associativity).unwrap();
        let rd = report.law(Law::DefinednessAssociativity).unwrap();
        if ra.status == Status::Proved {
            prop_assert_eq!((assoc, one), (0, 0));
        } else {
            prop_assert_eq!((ra.count, rd.count), (assoc, one));
        }
    }

    /// `suggest`'s set algebra against the law checker, on every candidate placement of a
    /// dtype in random lattices (policies whose laws hold).
    #[test]
    fn suggest_search_agrees_with_the_law_checker((n, edges, partial) in dag()) {
        const NAMES: [&str; 12] = ["bool", "uint8", "int8", "uint16", "int16", "uint32", "int32",
            "uint64", "int64", "float32", "float64", "complex64"];
        let n = n.min(NAMES.len());
        let mut toml = format!("name = \"p\"\npartial = {partial}\ndtypes = {:?}\n[promotes]\n", &NAMES[..n]);
        let mut by_source = std::collections::BTreeMap::<usize, std::collections::BTreeSet<usize>>::new();
        for &(a, b) in edges.iter().filter(|&&(a, b)| a < n && b < n) {
            by_source.entry(a).or_default().insert(b);
        }
        for (a, targets) in by_source {
            let targets: Vec<&str> = targets.iter().map(|&b| NAMES[b]).collect();
            toml += &format!("{} = {:?}\n", NAMES[a], targets);
        }
        let Input::Policy { policy, lattice, joins } = Input::parse("p.toml", &toml).map_err(|e| TestCaseError::fail(e.to_string()))? else {
            unreachable!()
        };
        prop_assume!(typejoin::check_lattice("p", "p", &lattice, &joins, CheckOptions::default()).ok());
        let (accepted, refused) = typejoin::suggest::cross_check(&policy, "float16", 2)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(accepted + refused >= 1);
    }

    #[test]
    fn format_of_never_panics(text in "(exponent_bits|mantissa_bits|bias|nan|infinities|x)=[-a-z0-9]{0,4}(,(exponent_bits|mantissa_bits|bias|nan|infinities)=[-a-z0-9]{0,4}){0,4}|\\PC{0,40}") {
        if let Ok(f) = typejoin::suggest::parse_format(&text) {
            prop_assert!(f.exponent_bits >= 1 && f.exponent_bits + f.mantissa_bits < 64);
        }
    }

    #[test]
    fn parsers_never_panic_on_arbitrary_text(text in "\\PC{0,200}") {
        let _ = Input::parse("x.toml", &text);
        let _ = Input::parse("x.json", &text);
    }

    #[test]
    fn parsers_locate_errors_in_mutated_files(file in 0usize..4, at in any::<prop::sample::Index>(), len in 0usize..12, insert in "[\\[\\]{}\",=:a-z0-9* \\n]{0,6}") {
        let path = ["lattices/jax.toml", "lattices/array-api.toml", "observed/seed_numpy.json", "observed/numpy.json"][file];
        let text = std::fs::read_to_string(crate::root().join(path)).unwrap();
        let mut start = at.index(text.len());
        while !text.is_char_boundary(start) { start -= 1; }
        let mut end = (start + len).min(text.len());
        while !text.is_char_boundary(end) { end += 1; }
        let mutated = format!("{}{}{}", &text[..start], insert, &text[end..]);
        let lines = mutated.lines().count().max(1);
        if let Err(e) = Input::parse(path, &mutated) {
            prop_assert!(!e.diagnostics.is_empty());
            for d in &e.diagnostics {
                prop_assert!(d.line >= 1 && d.line <= lines + 1, "{}", d);
                prop_assert!(d.col >= 1);
            }
        }
    }
}

#[test]
fn table_from_unsorted_cells_is_checked() {
    // Sanity for the helper: a chain table is a lattice.
    let lattice = Lattice::new(vec!["a".into(), "b".into()], &[(0, 1)], false).unwrap();
    let t = lattice.join_table().table;
    assert_eq!(naive_counts(&t), (0, 0));
    assert!(typejoin::check_table("t", "t", &t, CheckOptions::default()).ok());
}
