//! The n×n join table shared by lattices and observed tables, and its text renderings.

use crate::numeric::dtype;

const UNDEF: u32 = u32::MAX;

/// `result[a][b]` over `names`, with undefined cells (the library raises / no join).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    pub names: Vec<String>,
    cells: Vec<u32>,
}

impl Table {
    /// A table with every cell undefined.
    pub fn new(names: Vec<String>) -> Table {
        let n = names.len();
        Table {
            names,
            cells: vec![UNDEF; n * n],
        }
    }

    pub fn n(&self) -> usize {
        self.names.len()
    }

    #[inline]
    pub fn get(&self, a: usize, b: usize) -> Option<usize> {
        let c = self.cells[a * self.names.len() + b];
        (c != UNDEF).then_some(c as usize)
    }

    #[inline]
    pub fn set(&mut self, a: usize, b: usize, v: Option<usize>) {
        let n = self.names.len();
        self.cells[a * n + b] = v.map_or(UNDEF, |v| v as u32);
    }

    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    /// Resolves a name or a catalogue short code (`i8`) to an index.
    pub fn resolve(&self, name: &str) -> Option<usize> {
        self.index_of(name)
            .or_else(|| dtype::canonical_node(name).and_then(|c| self.index_of(&c)))
    }

    pub fn name(&self, i: usize) -> &str {
        &self.names[i]
    }

    pub fn undefined_cells(&self) -> usize {
        self.cells.iter().filter(|&&c| c == UNDEF).count()
    }

    /// The observed-table JSON format of DESIGN.md, so a table round-trips through `check`.
    pub fn to_json(&self, name: &str, library: &str, version: &str) -> String {
        self.to_json_with(name, library, version, false, &[])
    }

    /// [`Table::to_json`], saying `"materialised": true` when the cells are the dtypes a
    /// library returns rather than nodes, with n-ary results of three operands as `"triples"`
    /// (docs/format.md).
    pub fn to_json_with(
        &self,
        name: &str,
        library: &str,
        version: &str,
        materialised: bool,
        triples: &[([usize; 3], Option<usize>)],
    ) -> String {
        use serde_json::{Map, Value, json};
        let mut result = Map::new();
        for a in 0..self.n() {
            let mut row = Map::new();
            for b in 0..self.n() {
                row.insert(
                    self.names[b].clone(),
                    self.get(a, b)
                        .map_or(Value::Null, |r| Value::String(self.names[r].clone())),
                );
            }
            result.insert(self.names[a].clone(), Value::Object(row));
        }
        let mut v = json!({
            "name": name,
            "library": library,
            "version": version,
            "dtypes": self.names,
            "result": result,
        });
        if materialised {
            v["materialised"] = Value::Bool(true);
        }
        if !triples.is_empty() {
            let mut t = Map::new();
            for (ops, r) in triples {
                let key: Vec<&str> = ops.iter().map(|&i| self.names[i].as_str()).collect();
                t.insert(
                    key.join("|"),
                    r.map_or(Value::Null, |r| Value::String(self.names[r].clone())),
                );
            }
            v["triples"] = Value::Object(t);
        }
        let mut s = serde_json::to_string_pretty(&v).expect("a JSON value serialises");
        s.push('\n');
        s
    }
}
