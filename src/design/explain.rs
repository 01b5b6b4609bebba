//! `typejoin explain`: why `a ∨ b` is what it is.

use std::collections::VecDeque;

use crate::Input;
use crate::order::lattice::{Join, Lattice};
use crate::policy::table::Table;

/// Explains the join of two dtypes, or both association orders of three.
pub fn explain(input: &Input, operands: &[usize]) -> String {
    let t = input.table();
    let mut out = String::new();
    match input {
        Input::Policy { lattice, .. } => match operands {
            [a, b] => out += &explain_pair(lattice, *a, *b),
            [a, b, c] => {
                out += &explain_pair(lattice, *a, *b);
                out.push('\n');
                out += &explain_pair(lattice, *b, *c);
                out.push('\n');
                out += &association(t, *a, *b, *c);
                let n = t.names.as_slice();
                let rt = lattice.result_type(&[*a, *b, *c]);
                out += &format!(
                    "result_type({}, {}, {}) = {} (least common upper bound of all three)\n",
                    n[*a],
                    n[*b],
                    n[*c],
                    describe(t, rt.as_ref())
                );
            }
            _ => {}
        },
        Input::Observed(o) => match operands {
            [a, b] => out += &explain_table_pair(&o.table, *a, *b),
            [a, b, c] => {
                out += &explain_table_pair(&o.table, *a, *b);
                out.push('\n');
                out += &explain_table_pair(&o.table, *b, *c);
                out.push('\n');
                out += &association(t, *a, *b, *c);
            }
            _ => {}
        },
    }
    out
}

fn describe(t: &Table, j: Option<&Join>) -> String {
    match j {
        Some(Join::Unique(x)) => t.name(*x).to_string(),
        Some(Join::NoUpperBound) | None => "undefined (no common upper bound)".into(),
        Some(Join::Ambiguous(c)) => format!(
            "ambiguous ({})",
            c.iter().map(|&x| t.name(x)).collect::<Vec<_>>().join(", ")
        ),
    }
}

fn list(names: &[String], xs: &[usize]) -> String {
    if xs.is_empty() {
        "(none)".into()
    } else {
        xs.iter()
            .map(|&x| names[x].as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Shortest promotion path from `a` to `b` in the DAG.
pub fn path(l: &Lattice, a: usize, b: usize) -> Option<Vec<usize>> {
    let mut prev = vec![usize::MAX; l.n()];
    let mut queue = VecDeque::from([a]);
    prev[a] = a;
    while let Some(u) = queue.pop_front() {
        if u == b {
            let mut p = vec![b];
            let mut cur = b;
            while cur != a {
                cur = prev[cur];
                p.push(cur);
            }
            p.reverse();
            return Some(p);
        }
        for v in l.successors(u) {
            if prev[v] == usize::MAX {
                prev[v] = u;
                queue.push_back(v);
            }
        }
    }
    None
}

fn explain_pair(l: &Lattice, a: usize, b: usize) -> String {
    let names = l.names();
    let ua = l.upper_bounds(a);
    let ub = l.upper_bounds(b);
    let common: Vec<usize> = ua.iter().copied().filter(|x| ub.contains(x)).collect();
    let j = l.join(a, b);
    let mut out = format!(
        "{} ∨ {} = {}\n",
        names[a],
        names[b],
        match &j {
            Join::Unique(x) => names[*x].clone(),
            Join::NoUpperBound => "undefined".into(),
            Join::Ambiguous(c) => format!("ambiguous: {}", list(names, c)),
        }
    );
    out += &format!("  upper bounds of {:<11} {}\n", names[a], list(names, &ua));
    out += &format!("  upper bounds of {:<11} {}\n", names[b], list(names, &ub));
    out += &format!("  common upper bounds:        {}\n", list(names, &common));
    match &j {
        Join::Unique(x) => {
            out += &format!("  least of them:              {}\n", names[*x]);
            for from in [a, b] {
                if let Some(p) = path(l, from, *x) {
                    let steps: Vec<&str> = p.iter().map(|&i| names[i].as_str()).collect();
                    out += &format!("  path: {}\n", steps.join(" → "));
                }
            }
        }
        Join::NoUpperBound => {
            out += if l.partial() {
                "  no common upper bound: an intended promotion error (the policy is partial)\n"
            } else {
                "  no common upper bound, and the policy is not partial: this breaks the lattice\n"
            };
        }
        Join::Ambiguous(c) => {
            out += &format!(
                "  minimal common upper bounds {} are incomparable: no least one, so this is not a lattice\n",
                list(names, c)
            );
            for &x in c {
                for from in [a, b] {
                    if let Some(p) = path(l, from, x) {
                        let steps: Vec<&str> = p.iter().map(|&i| names[i].as_str()).collect();
                        out += &format!("  path: {}\n", steps.join(" → "));
                    }
                }
            }
        }
    }
    out
}

fn explain_table_pair(t: &Table, a: usize, b: usize) -> String {
    let n = t.n();
    let show = |x: Option<usize>| {
        x.map_or("undefined (the library raises)".to_string(), |v| {
            t.name(v).to_string()
        })
    };
    let up = |x: usize| -> Vec<usize> { (0..n).filter(|&y| t.get(x, y) == Some(y)).collect() };
    let (ua, ub) = (up(a), up(b));
    let common: Vec<usize> = ua.iter().copied().filter(|x| ub.contains(x)).collect();
    let least = common
        .iter()
        .copied()
        .find(|&m| common.iter().all(|&c| t.get(m, c) == Some(c)));
    let mut out = format!("{} ∨ {} = {}\n", t.name(a), t.name(b), show(t.get(a, b)));
    if t.get(a, b) != t.get(b, a) {
        out += &format!(
            "  but {} ∨ {} = {}\n",
            t.name(b),
            t.name(a),
            show(t.get(b, a))
        );
    }
    out += "  (order induced by the table: x ≤ y iff x ∨ y = y)\n";
    out += &format!(
        "  upper bounds of {:<11} {}\n",
        t.name(a),
        list(&t.names, &ua)
    );
    out += &format!(
        "  upper bounds of {:<11} {}\n",
        t.name(b),
        list(&t.names, &ub)
    );
    out += &format!(
        "  common upper bounds:        {}\n",
        list(&t.names, &common)
    );
    out += &format!(
        "  least of them:              {}\n",
        least.map_or("(none)".to_string(), |x| t.name(x).to_string())
    );
    if t.get(a, b) != least {
        out += "  the table's result is not the least upper bound of its own order\n";
    }
    out
}

fn association(t: &Table, a: usize, b: usize, c: usize) -> String {
    let (an, bn, cn) = (t.name(a), t.name(b), t.name(c));
    let s = |x: Option<usize>| x.map_or("undefined".to_string(), |v| t.name(v).to_string());
    let ab = t.get(a, b);
    let bc = t.get(b, c);
    let l = ab.and_then(|x| t.get(x, c));
    let r = bc.and_then(|y| t.get(a, y));
    let mut out = format!("({an} ∨ {bn}) ∨ {cn} = {} ∨ {cn} = {}\n", s(ab), s(l));
    out += &format!("{an} ∨ ({bn} ∨ {cn}) = {an} ∨ {} = {}\n", s(bc), s(r));
    out += if l == r {
        "both association orders agree\n"
    } else {
        "the association orders disagree: this triple breaks associativity\n"
    };
    out
}
