//! `typejoin._native`: the Rust side of the Python package. It only converts: Python values in,
//! one typejoin library call, Python values (or the library's own JSON and text renderings)
//! out. The Python layer (`python/typejoin/`) builds the public API on it.

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use typejoin::{Input, LoadError, render::ReportOptions};

mod gil;
mod kernels;
mod memo;
mod placed;
mod vectorcall;

/// The `typejoin` command line, the binary's own code (src/cli), compiled in.
#[allow(dead_code)]
#[path = "../../src/cli/mod.rs"]
mod cli;

/// Runs the `typejoin` command line on `argv` (its first element the program's name), as the
/// binary does: its output on this process's stdout and stderr, its exit code returned
/// (`python -m typejoin`, the wheel's `typejoin` script). The GIL is released meanwhile.
#[pyfunction]
fn cli_main(py: Python<'_>, argv: Vec<String>) -> u8 {
    use clap::Parser;
    match cli::Cli::try_parse_from(argv) {
        Ok(parsed) => py.detach(|| cli::run_code(parsed)),
        Err(e) => {
            // Help and --version go to stdout with 0, usage errors to stderr with 2.
            let _ = e.print();
            e.exit_code() as u8
        }
    }
}

pyo3::create_exception!(
    typejoin,
    PolicyError,
    PyValueError,
    "A policy file or observed table that cannot be read: `.path`, `.line`, `.column` locate \
     the first problem, `str()` is the CLI's message (every problem, with help)."
);

pyo3::create_exception!(
    typejoin,
    KernelError,
    PyValueError,
    "A reference kernel refused its operands: `.kind` is the runner's error kind (promotion, \
     overflow, unsupported, zero-division, input); an array that cannot be allocated raises \
     MemoryError instead."
);

/// The shipped policies, embedded: (name, file, text), the file as the repository names it.
/// `numpy` and `tensorflow-safe` are library tables (a library's measured promotion with its
/// own n-ary rule or kernels, docs/policy-kinds.md), not lattices.
macro_rules! shipped {
    ($($name:literal => $path:literal),* $(,)?) => {
        [$(($name, $path, include_str!(concat!("../../", $path)))),*]
    };
}
const SHIPPED: [(&str, &str, &str); 10] = shipped![
    "array-api" => "lattices/array-api.toml",
    "numpy" => "observed/numpy_result_type.json",
    "jax" => "lattices/jax.toml",
    "jax-strict" => "lattices/jax-strict.toml",
    "jax-x32" => "lattices/jax-x32.toml",
    "python" => "lattices/python.toml",
    "tensorflow" => "lattices/tensorflow.toml",
    "tensorflow-safe" => "observed/tensorflow_safe.json",
    "torch" => "lattices/torch.toml",
    "torch-float64" => "lattices/torch-float64.toml",
];

fn policy_error(py: Python<'_>, e: &LoadError) -> PyErr {
    let err = PolicyError::new_err(e.render(false));
    if let Some(d) = e.diagnostics.first() {
        let value = err.value(py);
        let _ = value.setattr("path", d.path.clone());
        let _ = value.setattr("line", d.line);
        let _ = value.setattr("column", d.col);
        let _ = value.setattr("help", d.help.clone());
        let _ = value.setattr(
            "messages",
            e.diagnostics
                .iter()
                .map(|d| d.message.clone())
                .collect::<Vec<_>>(),
        );
    }
    err
}

/// A parsed policy or observed table.
#[pyclass(module = "typejoin._native", frozen)]
struct Loaded {
    input: Input,
    /// What the reference kernels run for it (`typejoin::generate`), built on the first kernel
    /// call that names it as `policy=` and kept for the process.
    generated: std::sync::OnceLock<&'static typejoin::Generated>,
}

impl Loaded {
    /// The generated policy of this one (its laws checked once, its tables built once).
    fn generated(&self, py: Python<'_>) -> PyResult<&'static typejoin::Generated> {
        if let Some(g) = self.generated.get() {
            return Ok(g);
        }
        let g = py
            .detach(|| typejoin::generate(&self.input))
            .map_err(|e| policy_error(py, &e))?;
        Ok(self.generated.get_or_init(|| g))
    }

    fn policy(&self, what: &str) -> PyResult<&typejoin::Policy> {
        match &self.input {
            Input::Policy { policy, .. } => Ok(policy),
            Input::Observed(_) => Err(PyValueError::new_err(format!(
                "{what} needs a policy (a .toml): an observed table has no formats or edges"
            ))),
        }
    }
}

#[pymethods]
impl Loaded {
    /// "policy" or "table".
    #[getter]
    fn kind(&self) -> &'static str {
        match self.input {
            Input::Policy { .. } => "policy",
            Input::Observed(_) => "table",
        }
    }

    /// A table's declared n-ary rule (`"numpy"`), `None` for a fold or a policy.
    #[getter]
    fn nary_rule(&self) -> Option<&'static str> {
        match &self.input {
            Input::Observed(o) => o.nary.as_ref().map(|r| r.name()),
            Input::Policy { .. } => None,
        }
    }

    #[getter]
    fn name(&self) -> String {
        self.input.name().to_string()
    }

    /// Every node, in table order (dtypes, weak types, category nodes).
    #[getter]
    fn nodes(&self) -> Vec<String> {
        self.input.table().names.clone()
    }

    /// The laws (exhaustive engine) and lints: (the `check --format json` entry, the human
    /// report).
    fn check(&self, py: Python<'_>, witnesses: usize) -> PyResult<(String, String)> {
        let o = ReportOptions {
            witnesses,
            verbose: true,
            color: false,
        };
        let opts = typejoin::CheckConfig {
            witnesses,
            ..typejoin::CheckConfig::with(typejoin::Engine::Exhaustive)
        };
        let checked = py
            .detach(|| typejoin::check(&self.input, opts))
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        let json = typejoin::render::json_file(&checked, o).to_string();
        Ok((json, typejoin::render::human(&checked, o)))
    }

    /// (node, dtype, error) of the n-ary result of `operands` (names, `i*`, `int8@0d`, …);
    /// `values[i]`: operand `i` was passed as a value (an array, a scalar), not a dtype, which
    /// a table's declared n-ary rule tells apart (NumPy's `np.result_type`).
    #[pyo3(signature = (operands, values = Vec::new()))]
    fn result_type(
        &self,
        operands: Vec<String>,
        values: Vec<bool>,
    ) -> PyResult<(Option<String>, Option<String>, Option<String>)> {
        match typejoin::result_type_with(&self.input, &operands, &values) {
            Ok(r) => Ok((r.node, r.dtype, r.error)),
            Err(e) => Err(PyValueError::new_err(match e.suggestion {
                Some(s) => format!(
                    "`{}` is not an operand of `{}`; did you mean `{s}`?",
                    e.operand,
                    self.input.name()
                ),
                None => format!(
                    "`{}` is not an operand of `{}`",
                    e.operand,
                    self.input.name()
                ),
            })),
        }
    }

    /// (names, rows): every cell of the join table, `None` where there is no join; with
    /// `materialise`, nodes as the dtype the library returns.
    fn table(&self, materialise: bool) -> (Vec<String>, Vec<Vec<Option<String>>>) {
        let owned = materialise.then(|| self.input.materialised_table());
        let t = owned.as_ref().unwrap_or_else(|| self.input.table());
        let rows = (0..t.n())
            .map(|a| {
                (0..t.n())
                    .map(|b| t.get(a, b).map(|j| t.name(j).to_string()))
                    .collect()
            })
            .collect();
        (t.names.clone(), rows)
    }

    /// (same, text, json) of where `self` and `other` disagree.
    fn diff(&self, other: &Loaded, materialise: bool) -> (bool, String, String) {
        let d = typejoin::diff(&self.input, &other.input, materialise);
        (
            d.same(),
            typejoin::render::diff::text(&d),
            typejoin::render::diff::json(&d),
        )
    }

    /// (json, text) of what every edge and join does to values (`typejoin safety`).
    fn safety(&self, py: Python<'_>) -> PyResult<(String, String)> {
        let policy = self.policy("safety")?;
        let Input::Policy { joins, .. } = &self.input else {
            unreachable!("a policy")
        };
        let conversions =
            py.detach(|| typejoin::analyse(policy, &joins.table, typejoin::SafetyEngine::Search));
        Ok((
            typejoin::render::safety::json(policy.name(), &conversions),
            typejoin::render::safety::text(&conversions),
        ))
    }

    /// (json, text) of where a new dtype `name` can go (`typejoin suggest`).
    #[pyo3(signature = (name, format_of=None, max_degree=2, top=5))]
    fn suggest(
        &self,
        py: Python<'_>,
        name: &str,
        format_of: Option<&str>,
        max_degree: usize,
        top: usize,
    ) -> PyResult<(String, String)> {
        let policy = self.policy("suggest")?;
        let name = typejoin::canonical(name).unwrap_or(name);
        let decl = format_of
            .map(typejoin::suggest::parse_format)
            .transpose()
            .map_err(|e| PyValueError::new_err(format!("format_of: {e}")))?;
        let options = typejoin::suggest::Options { max_degree, top };
        let s = py
            .detach(|| typejoin::suggest::suggest(policy, name, decl.as_ref(), options))
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok((
            typejoin::render::suggest::json(&s),
            typejoin::render::suggest::text(&s),
        ))
    }

    /// (json, text, repaired table JSON, repaired policy TOML where the dtypes are the
    /// catalogue's) of the fewest changes that make the join table a lattice (`typejoin repair`).
    #[pyo3(signature = (partial=false, keep=Vec::new(), lossy_cost=1, timeout_ms=120_000))]
    fn repair(
        &self,
        py: Python<'_>,
        partial: bool,
        keep: Vec<(String, String)>,
        lossy_cost: u64,
        timeout_ms: u32,
    ) -> PyResult<(String, String, String, Option<String>)> {
        let idx = |x: &str| {
            self.input.resolve(x).ok_or_else(|| {
                PyValueError::new_err(format!(
                    "keep: `{x}` is not a dtype of {}",
                    self.input.path()
                ))
            })
        };
        let keep = keep
            .iter()
            .map(|(a, b)| Ok((idx(a)?, idx(b)?)))
            .collect::<PyResult<Vec<_>>>()?;
        if lossy_cost == 0 {
            return Err(PyValueError::new_err("lossy_cost: at least 1"));
        }
        let opts = typejoin::repair::Options {
            partial,
            keep,
            lossy_cost,
            timeout_ms,
        };
        let r = py
            .detach(|| typejoin::repair::repair(&self.input, &opts))
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok((
            typejoin::render::repair::json(&r),
            typejoin::render::repair::text(&r),
            r.table.to_json(&format!("{}-repaired", r.name), "", ""),
            r.policy.clone(),
        ))
    }

    /// The Hasse diagram as DOT (a policy's edges styled by safety class; a table's violations
    /// marked).
    fn dot(&self) -> String {
        use typejoin::render::dot;
        match &self.input {
            Input::Policy {
                policy, lattice, ..
            } => dot::to_dot(&dot::diagram(
                policy,
                lattice,
                None,
                typejoin::SafetyEngine::Search,
            )),
            Input::Observed(o) => {
                let report = self.input.check(typejoin::CheckOptions::default());
                dot::to_dot(&dot::table_diagram(&o.name, &o.table, &report))
            }
        }
    }
}

/// Parses a policy (`.toml`) or an observed table (`.json`, by content) from its text.
#[pyfunction]
fn parse(py: Python<'_>, path: &str, text: &str) -> PyResult<Loaded> {
    Input::parse(path, text)
        .map(|input| Loaded {
            input,
            generated: std::sync::OnceLock::new(),
        })
        .map_err(|e| policy_error(py, &e))
}

/// (json, text, policy TOML when one is found) of `typejoin synth` on a requirements file's text.
#[pyfunction]
#[pyo3(signature = (path, text, timeout_ms=120_000))]
fn synth(
    py: Python<'_>,
    path: &str,
    text: &str,
    timeout_ms: u32,
) -> PyResult<(String, String, Option<String>)> {
    use typejoin::synthesis::{Synthesis, synthesize};
    let req = typejoin::parse_requirements(path, text).map_err(|e| policy_error(py, &e))?;
    let s = py
        .detach(|| synthesize(&req, timeout_ms))
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let policy = match &s {
        Synthesis::Found(f) => Some(f.policy.clone()),
        Synthesis::Conflict(_) => None,
    };
    Ok((
        typejoin::render::synthesis::json(&s),
        typejoin::render::synthesis::text(&s),
        policy,
    ))
}

/// The shipped policies: (name, file text).
#[pyfunction]
fn shipped() -> Vec<(&'static str, &'static str, &'static str)> {
    SHIPPED.to_vec()
}

/// The names of the generated policies the reference kernels run (`typejoin::GENERATED`).
#[pyfunction]
fn generated_policies() -> Vec<&'static str> {
    typejoin::GENERATED.iter().map(|p| p.name).collect()
}

/// DOT text rendered by Graphviz's `dot` (`svg` or `png`).
#[pyfunction]
fn render(py: Python<'_>, dot: &str, format: &str) -> PyResult<Vec<u8>> {
    py.detach(|| typejoin::render::dot::render(dot, format))
        .map_err(PyRuntimeError::new_err)
}

/// The ops of the reference kernels from the op catalogue, as (name, arity): `unary`,
/// `binary`, `cast`, `reduction`, `ternary` or `select`.
#[pyfunction]
fn kernel_ops() -> Vec<(&'static str, &'static str)> {
    use typejoin::op::Arity;
    typejoin::op::CATALOGUE
        .iter()
        .filter(|o| o.kernel)
        .map(|o| {
            let arity = match o.arity {
                Arity::Unary => "unary",
                Arity::Binary => "binary",
                Arity::Cast => "cast",
                Arity::Reduction => "reduction",
                Arity::Ternary => "ternary",
                Arity::Select => "select",
            };
            (o.name, arity)
        })
        .collect()
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Loaded>()?;
    m.add_class::<memo::JoinMemo>()?;
    m.add_class::<memo::ResultTypeMemo>()?;
    m.add_function(wrap_pyfunction!(parse, m)?)?;
    m.add_function(wrap_pyfunction!(cli_main, m)?)?;
    m.add_function(wrap_pyfunction!(shipped, m)?)?;
    m.add_function(wrap_pyfunction!(generated_policies, m)?)?;
    m.add_function(wrap_pyfunction!(synth, m)?)?;
    m.add_function(wrap_pyfunction!(render, m)?)?;
    m.add_function(wrap_pyfunction!(kernel_ops, m)?)?;
    m.add_function(wrap_pyfunction!(kernels::call, m)?)?;
    m.add_function(wrap_pyfunction!(kernels::kernel, m)?)?;
    m.add("PolicyError", m.py().get_type::<PolicyError>())?;
    m.add("KernelError", m.py().get_type::<KernelError>())?;
    Ok(())
}
