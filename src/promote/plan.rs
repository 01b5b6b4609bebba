//! What a generated promotion module holds, by node, before it is written or built: one plan
//! for each kind of input (a verified lattice policy, a lattice a measured table extends, a
//! measured library table). `output::codegen` writes a plan as Rust source (`src/generated/`);
//! [`Plan::build`] makes the same `Generated` at run time, for a policy that was never
//! generated (a file given to `typejoin run --policy`, a Python `Policy`). One plan, two
//! forms: `tests/it/codegen.rs` checks that every shipped module is what its plan builds.

use crate::numeric::dtype::DType;
use crate::numeric::op::{Kinds, OpId, Semantics};
use crate::order::lattice::JoinTable;
use crate::policy::kernels::Loop;
use crate::policy::nary::NaryRule;
use crate::policy::spec::Policy;

use super::{Generated, LoopSearch, MIXED, Nary, RULE, UNDEFINED};

/// What a generated module holds, by node, before it is written: one writer for both kinds
/// of input (a verified lattice policy, a measured library table).
pub struct Plan {
    pub(crate) name: String,
    /// The module's doc line after the policy's name.
    pub(crate) about: String,
    pub(crate) dtypes: Vec<String>,
    /// `a ∨ b` by `a * n + b`.
    pub(crate) join: Vec<Option<usize>>,
    pub(crate) materialise: Vec<Option<usize>>,
    pub(crate) true_divide: Vec<Option<usize>>,
    pub(crate) sum_lowest: Option<usize>,
    pub(crate) sum_lowest_unsigned: Option<usize>,
    /// (op, kinds), (op, node), (op, kinds).
    pub(crate) op_kinds: Vec<(String, Kinds)>,
    pub(crate) op_bool_result: Vec<(String, usize)>,
    pub(crate) op_operand_kinds: Vec<(String, Kinds)>,
    /// (op, the dtypes beside which it refuses a Python bool).
    pub(crate) op_python_bool_refused: Vec<(String, Vec<DType>)>,
    pub(crate) op_join_kinds: Vec<(String, Kinds)>,
    pub(crate) op_python_int_as: Vec<(String, usize)>,
    pub(crate) canonical: Vec<(DType, DType)>,
    pub(crate) semantics: Semantics,
    /// (op, each pair's loop).
    pub(crate) loops: Vec<(&'static str, Vec<Loop>)>,
    /// (op, each computation node's loop: refused or the rule).
    pub(crate) dtype_loops: Vec<(&'static str, Vec<Loop>)>,
    pub(crate) sum_acc: Vec<Loop>,
    /// The declared n-ary rule, over the module's nodes (`None`: a fold).
    pub(crate) nary: Option<crate::policy::nary::NaryRule>,
    /// NumPy's legacy loop search, over the module's nodes.
    pub(crate) search: Option<crate::policy::kernels::LoopSearch>,
}

/// What an integer or bool node's `true_divide` becomes under `policy`'s rule.
fn true_divide_of(policy: &Policy, dtypes: &[String]) -> Vec<Option<usize>> {
    let td = policy.ops.iter().find(|r| r.op == "true_divide");
    dtypes
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let base = d.split('@').next().unwrap_or(d);
            let integral = matches!(
                crate::numeric::dtype::kind(base),
                crate::numeric::dtype::Kind::Bool
                    | crate::numeric::dtype::Kind::Signed
                    | crate::numeric::dtype::Kind::Unsigned
            ) || d == "i*";
            td.filter(|_| integral).and_then(|r| {
                r.integer_result_of
                    .iter()
                    .find(|(f, _)| *f == i)
                    .map(|(_, t)| *t)
                    .or(r.integer_result)
            })
        })
        .collect()
}

pub fn lattice(policy: &Policy, joins: &JoinTable) -> Plan {
    let n = policy.dtypes.len();
    let rule = |op: &str, f: &dyn Fn(&crate::policy::spec::OpRule) -> Option<usize>| {
        policy.ops.iter().find(|r| r.op == op).and_then(f)
    };
    // true_divide: each integer or bool join's result (an exception, or the default).
    let true_divide = true_divide_of(policy, &policy.dtypes);
    let canonical = policy
        .canonical
        .iter()
        .filter_map(|&(f, t)| {
            Some((
                DType::named(&policy.dtypes[f])?,
                DType::named(&policy.dtypes[t])?,
            ))
        })
        .collect();
    Plan {
        name: policy.name.clone(),
        about: format!(
            "{}, generated from a lattice whose laws hold",
            policy
                .summary
                .as_deref()
                .map_or(String::new(), |x| format!(": {}", x.trim_end_matches('.')))
        ),
        dtypes: policy.dtypes.clone(),
        join: (0..n * n).map(|k| joins.table.get(k / n, k % n)).collect(),
        materialise: (0..n).map(|i| policy.materialise(i)).collect(),
        true_divide,
        sum_lowest: rule("sum", &|r| r.lowest),
        sum_lowest_unsigned: rule("sum", &|r| r.lowest_unsigned),
        op_kinds: policy
            .ops
            .iter()
            .filter_map(|r| Some((r.op.clone(), r.kinds?)))
            .collect(),
        op_bool_result: policy
            .ops
            .iter()
            .filter_map(|r| Some((r.op.clone(), r.bool_result?)))
            .collect(),
        op_operand_kinds: policy
            .ops
            .iter()
            .filter_map(|r| Some((r.op.clone(), r.operand_kinds?)))
            .collect(),
        op_python_bool_refused: policy
            .ops
            .iter()
            .filter(|r| !r.python_bool_refused_with.is_empty())
            .map(|r| {
                let dtypes = r.python_bool_refused_with.iter();
                let named = dtypes.filter_map(|&i| DType::named(&policy.dtypes[i]));
                (r.op.clone(), named.collect())
            })
            .collect(),
        op_join_kinds: policy
            .ops
            .iter()
            .filter_map(|r| Some((r.op.clone(), r.join_kinds?)))
            .collect(),
        op_python_int_as: policy
            .ops
            .iter()
            .filter_map(|r| Some((r.op.clone(), r.python_int_as?)))
            .collect(),
        canonical,
        semantics: policy.kernels,
        loops: Vec::new(),
        dtype_loops: Vec::new(),
        sum_acc: Vec::new(),
        nary: None,
        search: None,
    }
}

/// The laws a checked table breaks, one phrase each (`not associative (1334 triples)`).
fn broken_laws(report: &crate::laws::Report) -> Vec<String> {
    report
        .laws
        .iter()
        .filter(|l| l.status == crate::laws::Status::Violated)
        .map(|l| {
            format!(
                "not {} ({}{} {})",
                l.law.title(),
                if l.exact { "" } else { "at least " },
                l.count,
                if matches!(
                    l.law,
                    crate::laws::Law::Associativity
                        | crate::laws::Law::DefinednessAssociativity
                        | crate::laws::Law::NaryFold
                ) {
                    "triples"
                } else {
                    "pairs"
                }
            )
        })
        .collect()
}

/// The module of a verified lattice policy that a measured table extends (`"kernels":
/// {"extends": …, "dtypes": […]}`): the lattice's nodes, joins and rules unchanged, then the
/// table's added dtypes with their measured pairs, each op's measured refusals and `sum`'s
/// accumulators. The module's doc names the table and the laws it breaks. `Err` (a sentence)
/// where the table contradicts the lattice on the lattice's own pairs, or a measured result
/// is a dtype the module does not have.
pub fn extended(
    policy: &Policy,
    joins: &JoinTable,
    observed: &crate::policy::observed::Observed,
    report: &crate::laws::Report,
    table: &str,
) -> Result<Plan, String> {
    let kernels = observed
        .kernels
        .as_ref()
        .filter(|k| k.extends.as_deref() == Some(policy.name.as_str()))
        .ok_or_else(|| format!("{} does not extend the {} policy", table, policy.name))?;
    let mut plan = lattice(policy, joins);
    let base = plan.dtypes.len();
    let t = &observed.table;
    let named = |dtypes: &[String], name: &str| dtypes.iter().position(|d| d == name);
    // Each table node's node in the module: the lattice's of its name. A name the lattice
    // folds into another node (a Python bool and a zero-dim bool are its `bool`) gets a node of
    // its own, whose pairs with the lattice's nodes are those of the node it folds into (a
    // bool tensor does not promote with a float8 one; a Python bool does). Then the added
    // dtypes.
    let lattice_names = plan.dtypes.clone();
    let folded = |name: &str| -> Option<usize> {
        if named(&lattice_names, name).is_some() {
            return None;
        }
        if name == "b*" {
            return named(&lattice_names, "bool");
        }
        let (b, cat) = name.split_once('@')?;
        (cat == "0d").then(|| named(&lattice_names, b)).flatten()
    };
    let mut lattice_of: Vec<Option<usize>> = (0..base).map(Some).collect();
    for i in 0..t.n() {
        if let Some(l) = folded(t.name(i)) {
            plan.dtypes.push(t.name(i).to_string());
            lattice_of.push(Some(l));
        }
    }
    let aliases = plan.dtypes.len();
    for &i in &kernels.dtypes {
        plan.dtypes.push(t.name(i).to_string());
        lattice_of.push(None);
    }
    let node_of: Vec<Option<usize>> = (0..t.n()).map(|i| named(&plan.dtypes, t.name(i))).collect();
    let n = plan.dtypes.len();
    let (names, mats) = (plan.dtypes.clone(), plan.materialise.clone());
    let table_of: Vec<usize> = (0..n)
        .map(|u| node_of.iter().position(|&m| m == Some(u)))
        .collect::<Option<_>>()
        .ok_or_else(|| format!("{} lacks a dtype of the {} policy", table, policy.name))?;
    let dim = |u: usize| names[u].split('@').next().unwrap_or_default().to_string();
    let concrete = |u: usize| -> Option<String> { mats[u].map(|m| names[m].clone()) };
    let mut join = vec![None; n * n];
    let mut contradictions = Vec::new();
    for a in 0..n {
        for b in 0..n {
            // A measured cell is a materialised dtype (the table may name it by a node).
            let measured = t.get(table_of[a], table_of[b]).map(|r| {
                let m = observed
                    .materialised
                    .as_ref()
                    .and_then(|m| m[r])
                    .unwrap_or(r);
                t.name(m).split('@').next().unwrap_or_default().to_string()
            });
            if let (Some(la), Some(lb)) = (lattice_of[a], lattice_of[b]) {
                let lattice = plan.join[la * base + lb];
                if lattice.and_then(concrete) != measured {
                    contradictions.push(format!(
                        "{} ∨ {}: the lattice gives {}, the table {}",
                        names[a],
                        names[b],
                        lattice.and_then(concrete).as_deref().unwrap_or("none"),
                        measured.as_deref().unwrap_or("none")
                    ));
                }
                join[a * n + b] = lattice;
                continue;
            }
            // An added pair's result keeps an operand's node when it is that operand's dtype
            // (`uint16@0d ∨ uint16@0d` stays zero-dim), the dimensioned one first.
            join[a * n + b] = match measured {
                None => None,
                Some(r) => Some(
                    [a, b]
                        .into_iter()
                        .filter(|&u| dim(u) == r)
                        .min_by_key(|&u| names[u].contains('@'))
                        .or_else(|| named(&names, &r))
                        .ok_or_else(|| {
                            format!(
                                "{} ∨ {} is {r}, which the {} module does not have",
                                names[a], names[b], policy.name
                            )
                        })?,
                ),
            };
        }
    }
    if !contradictions.is_empty() {
        let shown = contradictions.len().min(3);
        return Err(format!(
            "{} contradicts the {} lattice on {} of its pairs: {}",
            table,
            policy.name,
            contradictions.len(),
            contradictions[..shown].join("; ")
        ));
    }
    plan.join = join;
    for (u, lattice) in lattice_of.iter().enumerate().skip(base) {
        let m = match lattice {
            Some(l) => mats[*l],
            None => Some(named(&names, &dim(u)).unwrap_or(u)),
        };
        plan.materialise.push(m);
    }
    plan.true_divide = true_divide_of(policy, &plan.dtypes);
    // The table's n-ary rule over the module's nodes: PyTorch's, category by category, is the
    // lattice's join on the lattice's nodes and raises where the added dtypes do not promote.
    plan.nary = match &observed.nary {
        Some(NaryRule::Torch(kinds)) => Some(NaryRule::Torch(
            table_of.iter().map(|&i| kinds[i]).collect(),
        )),
        Some(NaryRule::Numpy(classes)) => Some(NaryRule::Numpy(
            table_of.iter().map(|&i| classes[i]).collect(),
        )),
        None => None,
    };
    let module_node = |i: usize| node_of[i].expect("loops name the module's dtypes");
    let in_module = |i: usize| node_of[i].is_some();
    let map_loop = |l: Loop| match l {
        Loop::In(c) => node_of[c].map_or(Loop::Rule, Loop::In),
        Loop::Mixed(x, y) => match (node_of[x], node_of[y]) {
            (Some(x), Some(y)) => Loop::Mixed(x, y),
            _ => Loop::Rule,
        },
        l => l,
    };
    plan.loops = kernels
        .loops
        .iter()
        .map(|(op, cells)| {
            let mut table = vec![Loop::Rule; n * n];
            for &((a, b), l) in cells {
                if in_module(a) && in_module(b) {
                    table[module_node(a) * n + module_node(b)] = map_loop(l);
                }
            }
            (op.name(), table)
        })
        .collect();
    plan.dtype_loops = dtype_refusals(kernels, n, |a| in_module(a).then(|| module_node(a)));
    if kernels.sum.iter().any(Option::is_some) {
        plan.sum_acc = vec![Loop::Rule; n];
        for (i, acc) in kernels.sum.iter().enumerate() {
            if let (Some(u), Some(l)) = (node_of[i], acc) {
                plan.sum_acc[u] = map_loop(*l);
            }
        }
    }
    let added: Vec<&str> = plan.dtypes[aliases..]
        .iter()
        .filter(|d| !d.contains('@'))
        .map(String::as_str)
        .collect();
    let breaks = broken_laws(report);
    plan.about += &format!(
        ".\n//!\n//! Extended by the measured table {} with {} dtypes beyond the lattice ({}), their \
         pairs, and what the library has no kernel for{}",
        table,
        added.len(),
        added.join(", "),
        if breaks.is_empty() {
            String::new()
        } else {
            format!(
                ". The measured table (all {} of its operands) is not a lattice: {}. The \
                 lattice's laws hold on its own nodes; the kernels run the added dtypes as the \
                 library does",
                t.n(),
                breaks.join("; ")
            )
        }
    );
    Ok(plan)
}

/// The module of a measured library's table that declares what its library computes in
/// (`"kernels"`): its pairs as measured, its n-ary rule, each op's measured loops and `sum`'s
/// accumulators. The module's doc lists every law `report` (the table's check) finds broken:
/// the kernels run the library as it is, and the module says it is not a lattice. `None` when
/// the table has no `kernels`.
pub fn table(
    observed: &crate::policy::observed::Observed,
    report: &crate::laws::Report,
) -> Option<Plan> {
    let kernels = observed.kernels.as_ref().filter(|k| k.extends.is_none())?;
    let breaks = broken_laws(report);
    let t = &observed.table;
    let n = t.n();
    let dtypes: Vec<String> = (0..n).map(|i| t.name(i).to_string()).collect();
    let weak = |i: usize| crate::numeric::dtype::is_weak(&dtypes[i]);
    let join: Vec<Option<usize>> = (0..n * n).map(|k| t.get(k / n, k % n)).collect();
    let loops = kernels
        .loops
        .iter()
        .map(|(op, cells)| {
            // A cast's cells are the op's own rule but where the table refuses them.
            let mut table: Vec<Loop> = join
                .iter()
                .map(|j| match j {
                    Some(j) if *op != crate::numeric::op::OpId::ASTYPE => Loop::In(*j),
                    _ => Loop::Rule,
                })
                .collect();
            for &((a, b), l) in cells {
                table[a * n + b] = l;
            }
            (op.name(), table)
        })
        .collect();
    let about = if breaks.is_empty() {
        ", generated from the library's measured table (its laws hold)".to_string()
    } else {
        format!(
            ", generated from the library's measured table, which is not a lattice: {}. The \
             kernels run the library as it is",
            breaks.join("; ")
        )
    };
    let plan = Plan {
        // The policy is the library's: `--policy numpy`.
        name: observed.policy_name().to_string(),
        about,
        join,
        // A measured cell is a concrete dtype: a weak node only stands for a Python scalar,
        // unless the table says what its library computes it in (TensorFlow's weak tensors).
        materialise: (0..n)
            .map(|i| kernels.weak_dtype(i).or((!weak(i)).then_some(i)))
            .collect(),
        true_divide: vec![None; n],
        sum_lowest: None,
        sum_lowest_unsigned: None,
        op_kinds: Vec::new(),
        op_bool_result: Vec::new(),
        op_operand_kinds: Vec::new(),
        op_python_bool_refused: Vec::new(),
        op_join_kinds: Vec::new(),
        op_python_int_as: Vec::new(),
        canonical: Vec::new(),
        semantics: kernels.conventions,
        loops,
        dtype_loops: dtype_refusals(kernels, n, Some),
        sum_acc: kernels
            .sum
            .iter()
            .map(|l| l.unwrap_or(Loop::Rule))
            .collect(),
        nary: observed.nary.clone(),
        search: kernels.search.clone(),
        dtypes,
    };
    Some(plan)
}

/// Each unary op's and `clip`'s table over a module of `n` nodes: `Refused` where the measured
/// table says the library has no kernel for a dtype (`node` places a table dtype in the
/// module), the op's own rule elsewhere.
fn dtype_refusals(
    kernels: &crate::policy::kernels::Kernels,
    n: usize,
    node: impl Fn(usize) -> Option<usize>,
) -> Vec<(&'static str, Vec<Loop>)> {
    kernels
        .dtype_loops
        .iter()
        .map(|(op, cells)| {
            let mut table = vec![Loop::Rule; n];
            for &(a, l) in cells {
                if let (Some(m), Loop::Refused) = (node(a), l) {
                    table[m] = Loop::Refused;
                }
            }
            (op.name(), table)
        })
        .collect()
}

impl Plan {
    /// The policy's `Generated`, built at run time and kept for the life of the process (its
    /// tables are leaked: a few kilobytes a policy; callers build each policy once). `source`
    /// is the file it was read from. The same tables `output::codegen` writes for this plan.
    pub fn build(&self, source: &str) -> &'static Generated {
        fn leak<T>(v: Vec<T>) -> &'static [T] {
            Vec::leak(v)
        }
        fn text(s: &str) -> &'static str {
            String::leak(s.to_string())
        }
        let u8_or_u = |i: Option<usize>| i.map_or(UNDEFINED, |i| i as u8);
        let node = |name: &str| self.dtypes.iter().position(|d| d == name);
        let op_id = |op: &str| OpId::of(op);
        let cell = |l: Loop| match l {
            Loop::Refused => UNDEFINED,
            Loop::Mixed(..) => MIXED,
            Loop::Rule => RULE,
            Loop::In(c) => c as u8,
        };
        let mut array_node = [UNDEFINED; DType::COUNT];
        let mut zero_dim_node = [UNDEFINED; DType::COUNT];
        for d in DType::all() {
            array_node[d.id()] = u8_or_u(node(d.name()));
            zero_dim_node[d.id()] =
                u8_or_u(node(&format!("{}@0d", d.name())).or_else(|| node(d.name())));
        }
        let scalar_node = [["b*", "bool"], ["i*", "i*"], ["f*", "f*"], ["c*", "c*"]]
            .map(|[w, d]| u8_or_u(node(w).or_else(|| node(d))));
        let generated = Generated {
            name: text(&self.name),
            source: text(source),
            dtypes: leak(self.dtypes.iter().map(|d| text(d)).collect()),
            join: leak(self.join.iter().map(|&j| u8_or_u(j)).collect()),
            materialise: leak(self.materialise.iter().map(|&m| u8_or_u(m)).collect()),
            true_divide: leak(self.true_divide.iter().map(|&m| u8_or_u(m)).collect()),
            sum_lowest: self.sum_lowest.map(|i| i as u8),
            sum_lowest_unsigned: self.sum_lowest_unsigned.map(|i| i as u8),
            node_dtype: leak(self.dtypes.iter().map(|d| DType::named(d)).collect()),
            array_node,
            zero_dim_node,
            scalar_node,
            op_kinds: leak(self.op_kinds.iter().map(|(o, k)| (op_id(o), *k)).collect()),
            op_bool_result: leak(
                self.op_bool_result
                    .iter()
                    .map(|(o, b)| (op_id(o), *b as u8))
                    .collect(),
            ),
            op_operand_kinds: leak(
                self.op_operand_kinds
                    .iter()
                    .map(|(o, k)| (op_id(o), *k))
                    .collect(),
            ),
            op_python_bool_refused: leak(
                self.op_python_bool_refused
                    .iter()
                    .map(|(o, d)| (op_id(o), leak(d.clone())))
                    .collect(),
            ),
            op_join_kinds: leak(
                self.op_join_kinds
                    .iter()
                    .map(|(o, k)| (op_id(o), *k))
                    .collect(),
            ),
            op_python_int_as: leak(
                self.op_python_int_as
                    .iter()
                    .map(|(o, b)| (op_id(o), *b as u8))
                    .collect(),
            ),
            canonical: leak(self.canonical.clone()),
            semantics: self.semantics,
            loops: leak(
                self.loops
                    .iter()
                    .map(|(o, t)| (op_id(o), leak(t.iter().map(|&l| cell(l)).collect())))
                    .collect(),
            ),
            dtype_loops: leak(
                self.dtype_loops
                    .iter()
                    .map(|(o, t)| (op_id(o), leak(t.iter().map(|&l| cell(l)).collect())))
                    .collect(),
            ),
            sum_acc: leak(self.sum_acc.iter().map(|&l| cell(l)).collect()),
            nary: match &self.nary {
                None => Nary::Fold,
                Some(NaryRule::Torch(kinds)) => Nary::Torch(leak(kinds.clone())),
                Some(NaryRule::Numpy(classes)) => Nary::Numpy(leak(classes.clone())),
            },
            search: self.search.as_ref().map(|s| LoopSearch {
                ops: leak(
                    s.ops
                        .iter()
                        .map(|(o, l)| (*o, leak(l.iter().map(|&i| i as u8).collect())))
                        .collect(),
                ),
                safe: leak(
                    s.safe
                        .iter()
                        .map(|l| leak(l.iter().map(|&i| i as u8).collect()))
                        .collect(),
                ),
            }),
        };
        Box::leak(Box::new(generated))
    }
}
