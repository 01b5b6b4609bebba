//! The n×n join table shared by lattices and observed tables, and its JSON rendering.

use crate::numeric::dtype;

/// The most dtypes (nodes) a policy or an observed table may name: the parsers refuse more,
/// at the first dtype past the limit, before any quadratic work. `check` decides a
/// 10,000-dtype policy in seconds (its table takes 200 MB); the commands whose work or output
/// grows faster take fewer ([`crate::order::input::SizeLimit`], docs/limits.md).
pub const MAX_DTYPES: usize = 10_000;

/// `result[a][b]` over `names`, with undefined cells (the library raises / no join).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    pub names: Vec<String>,
    cells: Cells,
}

/// The cells, row by row: a result's index, or the type's maximum for an undefined cell. Two
/// bytes a cell below 65,535 dtypes (a 10,000-dtype table takes 200 MB, not 400), four above.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Cells {
    Narrow(Vec<u16>),
    Wide(Vec<u32>),
}

impl Cells {
    /// Whether indices of `n` dtypes and the undefined marker fit in two bytes.
    fn narrow(n: usize) -> bool {
        n < u16::MAX as usize
    }
}

impl Table {
    /// A table with every cell undefined.
    pub fn new(names: Vec<String>) -> Table {
        let n = names.len();
        let cells = if Cells::narrow(n) {
            Cells::Narrow(vec![u16::MAX; n * n])
        } else {
            Cells::Wide(vec![u32::MAX; n * n])
        };
        Table { names, cells }
    }

    pub fn n(&self) -> usize {
        self.names.len()
    }

    #[inline]
    pub fn get(&self, a: usize, b: usize) -> Option<usize> {
        let i = a * self.names.len() + b;
        match &self.cells {
            Cells::Narrow(c) => (c[i] != u16::MAX).then_some(c[i] as usize),
            Cells::Wide(c) => (c[i] != u32::MAX).then_some(c[i] as usize),
        }
    }

    #[inline]
    pub fn set(&mut self, a: usize, b: usize, v: Option<usize>) {
        let i = a * self.names.len() + b;
        match &mut self.cells {
            Cells::Narrow(c) => c[i] = v.map_or(u16::MAX, |v| v as u16),
            Cells::Wide(c) => c[i] = v.map_or(u32::MAX, |v| v as u32),
        }
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

    /// Every dtype's name, in index order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(String::as_str)
    }

    pub fn undefined_cells(&self) -> usize {
        match &self.cells {
            Cells::Narrow(c) => c.iter().filter(|&&c| c == u16::MAX).count(),
            Cells::Wide(c) => c.iter().filter(|&&c| c == u32::MAX).count(),
        }
    }

    /// The observed-table JSON format (docs/file-formats.md), so a table round-trips through `check`.
    pub fn to_json(&self, name: &str, library: &str, version: &str) -> String {
        self.to_json_with(name, library, version, false, &[])
    }

    /// [`Table::to_json`], saying `"materialised": true` when the cells are the dtypes a
    /// library returns rather than nodes, with n-ary results of three operands as `"triples"`
    /// (docs/file-formats.md).
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Both cell widths hold the same table; two bytes up to 65,534 dtypes.
    #[test]
    fn narrow_and_wide_cells_hold_the_same_table() {
        assert!(Cells::narrow(65_534));
        assert!(!Cells::narrow(65_535));
        let names: Vec<String> = (0..7).map(|i| format!("t{i}")).collect();
        let mut narrow = Table::new(names.clone());
        assert!(matches!(narrow.cells, Cells::Narrow(_)));
        let mut wide = Table {
            names,
            cells: Cells::Wide(vec![u32::MAX; 49]),
        };
        for t in [&mut narrow, &mut wide] {
            for a in 0..7 {
                for b in 0..7 {
                    t.set(a, b, ((a + b) % 3 != 0).then_some((a * b) % 7));
                }
            }
            t.set(6, 6, Some(6));
            t.set(6, 6, None);
        }
        for a in 0..7 {
            for b in 0..7 {
                let want = ((a + b) % 3 != 0 && (a, b) != (6, 6)).then_some((a * b) % 7);
                assert_eq!((narrow.get(a, b), wide.get(a, b)), (want, want), "{a} {b}");
            }
        }
        assert_eq!(narrow.undefined_cells(), 17);
        assert_eq!(wide.undefined_cells(), 17);
    }
}
