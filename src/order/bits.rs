//! A dense square bit matrix: row `i` is a set of column indices. The closure and the law
//! checks are word-parallel over these rows.

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BitMatrix {
    n: usize,
    words: usize,
    data: Vec<u64>,
}

impl BitMatrix {
    pub fn new(n: usize) -> BitMatrix {
        let words = n.div_ceil(64).max(1);
        BitMatrix {
            n,
            words,
            data: vec![0; n * words],
        }
    }

    pub fn len(&self) -> usize {
        self.n
    }

    #[inline]
    pub fn row(&self, i: usize) -> &[u64] {
        &self.data[i * self.words..(i + 1) * self.words]
    }

    #[inline]
    pub fn get(&self, i: usize, j: usize) -> bool {
        self.data[i * self.words + j / 64] >> (j % 64) & 1 == 1
    }

    #[inline]
    pub fn set(&mut self, i: usize, j: usize) {
        self.data[i * self.words + j / 64] |= 1 << (j % 64);
    }

    /// `row(dst) |= row(src)`.
    pub fn or_row_into(&mut self, dst: usize, src: usize) {
        if dst == src {
            return;
        }
        let w = self.words;
        let (d, s) = if dst < src {
            let (lo, hi) = self.data.split_at_mut(src * w);
            (&mut lo[dst * w..dst * w + w], &hi[..w])
        } else {
            let (lo, hi) = self.data.split_at_mut(dst * w);
            (&mut hi[..w], &lo[src * w..src * w + w])
        };
        for (x, y) in d.iter_mut().zip(s) {
            *x |= *y;
        }
    }
}

/// Index of the lowest set bit of `a & b`, if any.
#[inline]
pub fn first_common(a: &[u64], b: &[u64]) -> Option<usize> {
    for (k, (x, y)) in a.iter().zip(b).enumerate() {
        let w = x & y;
        if w != 0 {
            return Some(k * 64 + w.trailing_zeros() as usize);
        }
    }
    None
}

/// Whether `a & b ⊆ c`.
#[inline]
pub fn meet_subset(a: &[u64], b: &[u64], c: &[u64]) -> bool {
    a.iter().zip(b).zip(c).all(|((x, y), z)| x & y & !z == 0)
}

/// Whether `a ⊆ b`.
#[inline]
pub fn subset(a: &[u64], b: &[u64]) -> bool {
    a.iter().zip(b).all(|(x, y)| x & !y == 0)
}

/// Iterates the set bits of a row.
pub fn ones(row: &[u64]) -> impl Iterator<Item = usize> + '_ {
    row.iter().enumerate().flat_map(|(k, &w)| {
        let mut w = w;
        std::iter::from_fn(move || {
            if w == 0 {
                None
            } else {
                let t = w.trailing_zeros() as usize;
                w &= w - 1;
                Some(k * 64 + t)
            }
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_get_or_and_iterate() {
        let mut m = BitMatrix::new(130);
        m.set(0, 3);
        m.set(0, 129);
        m.set(2, 64);
        m.or_row_into(2, 0);
        assert_eq!(ones(m.row(2)).collect::<Vec<_>>(), vec![3, 64, 129]);
        m.or_row_into(0, 2);
        assert_eq!(ones(m.row(0)).collect::<Vec<_>>(), vec![3, 64, 129]);
        assert!(m.get(0, 64) && !m.get(1, 64));
        assert_eq!(first_common(m.row(0), m.row(2)), Some(3));
        assert_eq!(first_common(m.row(0), m.row(1)), None);
        assert!(subset(m.row(1), m.row(0)));
        assert!(meet_subset(m.row(0), m.row(2), m.row(2)));
    }
}
