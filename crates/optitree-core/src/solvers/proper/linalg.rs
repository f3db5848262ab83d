//! The two small dense solves the rule generators need: the null vector of a `g × (g+1)` matrix
//! (the surface through `g` points) and a square solve (the perturbation that moves the defining
//! points to their assigned sides).
//!
//! Invariant: both return `None` instead of a meaningless answer when the system is (numerically)
//! rank deficient; columns are scaled to unit maximum first, so the rank test does not depend on
//! the units of the features.

/// Relative pivot size below which a matrix counts as rank deficient.
const PIVOT_TOL: f64 = 1e-10;

/// Divides every column by its largest magnitude; returns the scales (1 for a zero column).
fn scale_columns(a: &mut [Vec<f64>], cols: usize) -> Vec<f64> {
    let mut scale = vec![1.0; cols];
    for (j, s) in scale.iter_mut().enumerate() {
        let m = a.iter().map(|r| r[j].abs()).fold(0.0, f64::max);
        if m > 0.0 && m.is_finite() {
            *s = m;
            for r in a.iter_mut() {
                r[j] /= m;
            }
        }
    }
    scale
}

/// The null vector of a `rows × (rows + 1)` matrix of full row rank, or `None` when the rank is
/// lower. Full pivoting; the free variable is set to 1 before unscaling.
pub fn null_vector(mut a: Vec<Vec<f64>>) -> Option<Vec<f64>> {
    let rows = a.len();
    let cols = rows + 1;
    let scale = scale_columns(&mut a, cols);
    let mut perm: Vec<usize> = (0..cols).collect();
    for k in 0..rows {
        let (mut pi, mut pj, mut best) = (k, k, 0.0);
        for (i, row) in a.iter().enumerate().skip(k) {
            for (j, v) in row.iter().enumerate().skip(k) {
                if v.abs() > best {
                    (pi, pj, best) = (i, j, v.abs());
                }
            }
        }
        if best.is_nan() || best <= PIVOT_TOL {
            return None;
        }
        a.swap(k, pi);
        for row in a.iter_mut() {
            row.swap(k, pj);
        }
        perm.swap(k, pj);
        for i in k + 1..rows {
            let f = a[i][k] / a[k][k];
            if f != 0.0 {
                let (top, bottom) = a.split_at_mut(i);
                for (x, y) in bottom[0][k..].iter_mut().zip(&top[k][k..]) {
                    *x -= f * y;
                }
            }
        }
    }
    // Back substitution with the last (free) column set to 1.
    let mut u = vec![0.0; cols];
    u[rows] = 1.0;
    for k in (0..rows).rev() {
        let s: f64 = (k + 1..cols).map(|j| a[k][j] * u[j]).sum();
        u[k] = -s / a[k][k];
    }
    let mut out = vec![0.0; cols];
    for (k, &p) in perm.iter().enumerate() {
        out[p] = u[k] / scale[p];
    }
    out.iter().all(|v| v.is_finite()).then_some(out)
}

/// Solves the square system `a · u = rhs`, or `None` when `a` is (numerically) singular.
#[cfg(test)]
pub fn solve(a: Vec<Vec<f64>>, rhs: Vec<f64>) -> Option<Vec<f64>> {
    solve_many(a, vec![rhs]).map(|mut u| u.swap_remove(0))
}

/// Solves `a · u_j = rhs_j` for every right-hand side with one elimination, or `None` when `a`
/// is (numerically) singular.
pub fn solve_many(mut a: Vec<Vec<f64>>, mut rhs: Vec<Vec<f64>>) -> Option<Vec<Vec<f64>>> {
    let n = a.len();
    let scale = scale_columns(&mut a, n);
    for k in 0..n {
        let pi = (k..n).max_by(|&i, &j| a[i][k].abs().total_cmp(&a[j][k].abs()))?;
        if a[pi][k].is_nan() || a[pi][k].abs() <= PIVOT_TOL {
            return None;
        }
        a.swap(k, pi);
        for r in rhs.iter_mut() {
            r.swap(k, pi);
        }
        for i in k + 1..n {
            let f = a[i][k] / a[k][k];
            if f != 0.0 {
                let (top, bottom) = a.split_at_mut(i);
                for (x, y) in bottom[0][k..].iter_mut().zip(&top[k][k..]) {
                    *x -= f * y;
                }
                for r in rhs.iter_mut() {
                    r[i] -= f * r[k];
                }
            }
        }
    }
    let mut out = Vec::with_capacity(rhs.len());
    for r in &rhs {
        let mut u = vec![0.0; n];
        for k in (0..n).rev() {
            let s: f64 = (k + 1..n).map(|j| a[k][j] * u[j]).sum();
            u[k] = (r[k] - s) / a[k][k];
        }
        let u: Vec<f64> = u.iter().zip(&scale).map(|(v, s)| v / s).collect();
        if !u.iter().all(|v| v.is_finite()) {
            return None;
        }
        out.push(u);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_through_two_points() {
        // Points (1, 2) and (3, 6): the line 2x - y = 0, as [w1, w2, b] with w·p - b = 0.
        let u = null_vector(vec![vec![1.0, 2.0, -1.0], vec![3.0, 6.0, -1.0]]).unwrap();
        for p in [[1.0, 2.0], [3.0, 6.0]] {
            assert!((u[0] * p[0] + u[1] * p[1] - u[2]).abs() < 1e-12);
        }
        assert!(u[0].abs() + u[1].abs() > 0.0);
    }

    #[test]
    fn rank_deficient_is_refused() {
        assert!(null_vector(vec![vec![1.0, 2.0, -1.0], vec![1.0, 2.0, -1.0]]).is_none());
        assert!(solve(vec![vec![1.0, 2.0], vec![2.0, 4.0]], vec![1.0, 2.0]).is_none());
    }

    #[test]
    fn square_solve() {
        let u = solve(vec![vec![2.0, 1.0], vec![1.0, 3.0]], vec![3.0, 5.0]).unwrap();
        assert!((u[0] - 0.8).abs() < 1e-12 && (u[1] - 1.4).abs() < 1e-12);
    }
}
