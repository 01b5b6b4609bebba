//! Synthetic promotion DAGs for benchmarks and property tests.

/// A small deterministic PRNG (xorshift64*), so generated lattices are reproducible.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// The product of two chains (`rows × cols` nodes): a total lattice, every join unique.
/// Node `r * cols + c` promotes to `(r+1, c)` and `(r, c+1)`.
pub fn grid(rows: usize, cols: usize) -> (Vec<String>, Vec<(usize, usize)>) {
    let names = (0..rows * cols).map(|i| format!("t{i}")).collect();
    let mut edges = Vec::new();
    for r in 0..rows {
        for c in 0..cols {
            let i = r * cols + c;
            if r + 1 < rows {
                edges.push((i, i + cols));
            }
            if c + 1 < cols {
                edges.push((i, i + 1));
            }
        }
    }
    (names, edges)
}
