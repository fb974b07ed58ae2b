//! Bounded Myers O(ND) diff: the minimal edit script between two slices,
//! returned as the runs of matched pairs, or `None` when it needs more than
//! `max_edits` insertions plus deletions.
//!
//! The bound keeps the cost at O((N + M) · D) with D ≤ `max_edits`, so nearly
//! identical streams stay linear and hopeless ones are abandoned early.

/// `len` matched pairs: `a[a_start + i]` ~ `b[b_start + i]` for `i < len`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatchRun {
    pub a_start: usize,
    pub b_start: usize,
    pub len: usize,
}

impl MatchRun {
    pub fn a_end(&self) -> usize {
        self.a_start + self.len
    }
    pub fn b_end(&self) -> usize {
        self.b_start + self.len
    }
}

/// The matched runs of a minimal edit script from `a` to `b`, in order, or
/// `None` if every script needs more than `max_edits` edits.
pub fn matched_runs<T>(
    a: &[T],
    b: &[T],
    max_edits: usize,
    eq: impl Fn(&T, &T) -> bool,
) -> Option<Vec<MatchRun>> {
    let (n, m) = (a.len() as isize, b.len() as isize);
    if n.abs_diff(m) > max_edits {
        return None;
    }
    let max_d = max_edits.min(a.len() + b.len()) as isize;
    SCRATCH.with_borrow_mut(|scratch| {
        let Scratch { v, trace } = scratch;
        // Furthest x reached on diagonal k = x - y, stored at index k + offset.
        let offset = max_d + 1;
        v.clear();
        v.resize((2 * max_d + 3) as usize, 0);
        // For backtracking, one flat buffer: step d's slice is v[-(d+1)..=d+1]
        // as it was before step d, at trace[d*d + 2*d ..][.. 2*d + 3].
        trace.clear();
        for d in 0..=max_d {
            let lo = (offset - d - 1) as usize;
            let hi = (offset + d + 1) as usize;
            trace.extend_from_slice(&v[lo..=hi]);
            let mut k = -d;
            while k <= d {
                let idx = (k + offset) as usize;
                let mut x = if k == -d || (k != d && v[idx - 1] < v[idx + 1]) {
                    v[idx + 1]
                } else {
                    v[idx - 1] + 1
                };
                let mut y = x - k;
                while x < n && y < m && eq(&a[x as usize], &b[y as usize]) {
                    x += 1;
                    y += 1;
                }
                v[idx] = x;
                if x >= n && y >= m {
                    return Some(backtrack(trace, n, m, d));
                }
                k += 2;
            }
        }
        None
    })
}

/// Per-thread buffers reused across calls: a bounded search that fails
/// touches O(D²) words, and fresh allocations of that size would cost a page
/// fault per 4 KiB on every warp.
#[derive(Default)]
struct Scratch {
    v: Vec<isize>,
    trace: Vec<isize>,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::default();
}

fn backtrack(trace: &[isize], n: isize, m: isize, last_d: isize) -> Vec<MatchRun> {
    let mut runs = Vec::new();
    let (mut x, mut y) = (n, m);
    for d in (0..=last_d).rev() {
        let start = (d * d + 2 * d) as usize;
        let saved = &trace[start..start + (2 * d + 3) as usize];
        // saved[0] is diagonal -(d+1).
        let at = |k: isize| saved[(k + d + 1) as usize];
        let k = x - y;
        let prev_k = if k == -d || (k != d && at(k - 1) < at(k + 1)) {
            k + 1
        } else {
            k - 1
        };
        let prev_x = at(prev_k);
        let prev_y = prev_x - prev_k;
        // The snake that ends at (x, y) starts where the edit from prev lands.
        let (snake_x, snake_y) = if d == 0 {
            (0, 0)
        } else if prev_k == k + 1 {
            (prev_x, prev_y + 1)
        } else {
            (prev_x + 1, prev_y)
        };
        let len = x - snake_x;
        debug_assert_eq!(len, y - snake_y);
        if len > 0 {
            runs.push(MatchRun {
                a_start: snake_x as usize,
                b_start: snake_y as usize,
                len: len as usize,
            });
        }
        x = prev_x;
        y = prev_y;
    }
    runs.reverse();
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edits(a: &[u8], b: &[u8], runs: &[MatchRun]) -> usize {
        let matched: usize = runs.iter().map(|r| r.len).sum();
        a.len() + b.len() - 2 * matched
    }

    fn check_runs(a: &[u8], b: &[u8], runs: &[MatchRun]) {
        let mut last = (0, 0);
        for r in runs {
            assert!(
                r.a_start >= last.0 && r.b_start >= last.1,
                "runs out of order"
            );
            for i in 0..r.len {
                assert_eq!(a[r.a_start + i], b[r.b_start + i]);
            }
            last = (r.a_end(), r.b_end());
        }
    }

    #[test]
    fn identical_is_one_run() {
        let a = b"abcdef";
        let runs = matched_runs(a, a, 4, |x, y| x == y).unwrap();
        assert_eq!(
            runs,
            vec![MatchRun {
                a_start: 0,
                b_start: 0,
                len: 6
            }]
        );
    }

    #[test]
    fn classic_example_is_minimal() {
        let (a, b) = (b"ABCABBA", b"CBABAC");
        let runs = matched_runs(a, b, 20, |x, y| x == y).unwrap();
        check_runs(a, b, &runs);
        assert_eq!(edits(a, b, &runs), 5);
    }

    #[test]
    fn insertion_is_one_gap() {
        let a = b"aaaaXbbbb";
        let b = b"aaaaYYYXbbbb";
        let runs = matched_runs(a, b, 10, |x, y| x == y).unwrap();
        check_runs(a, b, &runs);
        assert_eq!(edits(a, b, &runs), 3);
    }

    #[test]
    fn bound_is_respected() {
        assert!(matched_runs(b"abcd", b"wxyz", 7, |x, y| x == y).is_none());
        assert!(matched_runs(b"abcd", b"wxyz", 8, |x, y| x == y).is_some());
        assert!(matched_runs(b"a", b"abcdefgh", 3, |x, y| x == y).is_none());
    }

    /// Edits of a minimal script: n + m - 2 * LCS, by dynamic programming.
    fn min_edits(a: &[u8], b: &[u8]) -> usize {
        let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
        for i in (0..a.len()).rev() {
            for j in (0..b.len()).rev() {
                lcs[i][j] = if a[i] == b[j] {
                    lcs[i + 1][j + 1] + 1
                } else {
                    lcs[i + 1][j].max(lcs[i][j + 1])
                };
            }
        }
        a.len() + b.len() - 2 * lcs[0][0]
    }

    proptest::proptest! {
        #[test]
        fn scripts_are_valid_and_minimal(
            a in proptest::collection::vec(0u8..4, 0..40),
            b in proptest::collection::vec(0u8..4, 0..40),
            bound in 0usize..90,
        ) {
            let best = min_edits(&a, &b);
            match matched_runs(&a, &b, bound, |x, y| x == y) {
                Some(runs) => {
                    check_runs(&a, &b, &runs);
                    proptest::prop_assert_eq!(edits(&a, &b, &runs), best);
                }
                None => proptest::prop_assert!(best > bound),
            }
        }
    }

    #[test]
    fn empty_sides() {
        assert_eq!(matched_runs::<u8>(&[], &[], 0, |x, y| x == y), Some(vec![]));
        assert_eq!(matched_runs(b"", b"ab", 2, |x, y| x == y), Some(vec![]));
        assert_eq!(matched_runs(b"ab", b"", 2, |x, y| x == y), Some(vec![]));
    }
}
