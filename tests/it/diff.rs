//! `typejoin diff`: where two policies or tables disagree, and the exit code that pins one.

use std::process::Command;

use serde_json::Value;

use crate::{load, root};

fn diff(args: &[&str]) -> (Option<i32>, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_typejoin"))
        .arg("diff")
        .args(args)
        .current_dir(root())
        .output()
        .unwrap();
    (o.status.code(), String::from_utf8(o.stdout).unwrap())
}

#[test]
fn jax_policy_vs_numpy_table_reports_int32_float32() {
    let (code, out) = diff(&["lattices/jax.toml", "observed/numpy.json"]);
    assert_eq!(code, Some(1));
    assert!(
        out.contains("\n  int32 ∨ float32: float32 → float64\n"),
        "{out}"
    );
    assert!(
        out.starts_with(
            "jax (lattices/jax.toml) vs numpy (observed/numpy.json): 530 of 630 joins differ over 35 common dtypes\nonly in numpy: complex32, bcomplex32\nby change: 133 changed, 0 defined only in jax, 397 defined only in numpy\n"
        ),
        "{out}"
    );
    // NumPy's table is not commutative for sub-byte ints with float4: each order alone.
    assert!(out.contains("\n  uint1 ∨ float4_e2m1fn (this order only): undefined → uint1\n"));

    let (_, out) = diff(&[
        "lattices/jax.toml",
        "observed/numpy.json",
        "--format",
        "json",
    ]);
    let v: Value = serde_json::from_str(&out).unwrap();
    let entry = v["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["a"] == "int32" && e["b"] == "float32")
        .unwrap();
    assert_eq!(
        entry,
        &serde_json::json!({"a": "int32", "b": "float32", "left": "float32", "right": "float64",
                            "change": "changed", "ordered": false})
    );
    assert_eq!(
        v["counts"]["by_change"],
        serde_json::json!({"changed": 133, "only-b": 397})
    );
    assert_eq!(v["counts"]["by_kinds"]["signed ∨ float"], 20);
    assert_eq!(v["same"], false);
}

#[test]
fn a_policy_pinned_to_its_library_is_the_same() {
    // The shipped JAX policy is JAX's measured table, entry for entry (weak results included).
    let (code, out) = diff(&["lattices/jax.toml", "observed/jax_numpy_x64_standard.json"]);
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(
        out,
        "jax (lattices/jax.toml) vs jax_numpy_x64_standard (observed/jax_numpy_x64_standard.json): the same on all 35 dtypes\n"
    );
    // Materialising weak results makes them differ from JAX's table, which keeps them weak.
    let (code, out) = diff(&[
        "lattices/jax.toml",
        "observed/jax_numpy_x64_standard.json",
        "--materialise-weak",
    ]);
    assert_eq!(code, Some(1));
    assert!(out.contains("\n  bool ∨ f*: float64 → f*\n"), "{out}");
}

#[test]
fn x64_vs_x32_text_and_markdown() {
    let (code, out) = diff(&["lattices/jax.toml", "lattices/jax-x32.toml"]);
    assert_eq!(code, Some(1));
    assert_eq!(
        out,
        "jax (lattices/jax.toml) vs jax-x32 (lattices/jax-x32.toml): 3 of 630 joins differ over 35 common dtypes
by change: 3 changed, 0 defined only in jax, 0 defined only in jax-x32
by kinds: unsigned ∨ signed: 3
joins (jax → jax-x32):
  uint32 ∨ int8: int64 → int32
  uint32 ∨ int16: int64 → int32
  uint32 ∨ int32: int64 → int32
edges only in jax (2):
  uint16 → int32
  uint32 → int64
edges only in jax-x32 (1):
  uint32 → int32
"
    );
    let (_, md) = diff(&[
        "lattices/jax.toml",
        "lattices/jax-x32.toml",
        "--format",
        "markdown",
    ]);
    assert_eq!(
        md,
        "# `jax` vs `jax-x32`

`lattices/jax.toml` vs `lattices/jax-x32.toml`: 3 of 630 joins differ over 35 common dtypes (3 changed, 0 defined only in jax, 0 defined only in jax-x32).

| kinds | entries |
|---|---:|
| unsigned ∨ signed | 3 |

| join | `jax` | `jax-x32` | change |
|---|---|---|---|
| `uint32` ∨ `int8` | int64 | int32 | changed |
| `uint32` ∨ `int16` | int64 | int32 | changed |
| `uint32` ∨ `int32` | int64 | int32 | changed |

Edges only in `jax`: `uint16` → `int32`, `uint32` → `int64`.

Edges only in `jax-x32`: `uint32` → `int32`.
"
    );
}

#[test]
fn diff_is_antisymmetric_and_every_entry_is_real() {
    let pairs = [
        ("lattices/jax.toml", "observed/numpy.json"),
        ("lattices/array-api.toml", "lattices/jax-strict.toml"),
        (
            "observed/seed_pytorch.json",
            "observed/seed_tensorflow.json",
        ),
    ];
    for (a, b) in pairs {
        let (ia, ib) = (load(a), load(b));
        let d = typejoin::diff(&ia, &ib, false);
        let r = typejoin::diff(&ib, &ia, false);
        assert_eq!(d.entries.len(), r.entries.len(), "{a} {b}");
        let sorted = |mut v: Vec<(String, String)>| {
            v.sort();
            v
        };
        assert_eq!(
            sorted(d.edges_only_in_a.clone()),
            sorted(r.edges_only_in_b.clone())
        );
        assert_eq!(d.only_in_a, r.only_in_b);
        for e in &d.entries {
            let get = |i: &typejoin::Input| {
                let t = i.table();
                t.get(t.index_of(&e.a).unwrap(), t.index_of(&e.b).unwrap())
                    .map(|x| t.name(x).to_string())
            };
            assert_eq!((get(&ia), get(&ib)), (e.left.clone(), e.right.clone()));
            assert_ne!(e.left, e.right);
        }
    }
}

#[test]
fn unreadable_side_is_exit_2() {
    let (code, _) = diff(&["lattices/jax.toml", "tests/data/bad/cycle.toml"]);
    assert_eq!(code, Some(2));
}
