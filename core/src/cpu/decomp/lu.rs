//! Partial-pivot LU and the inverses built on it (general and triangular), row-major f64.
//! Pivot choice and singularity reporting follow LAPACK's `getrf`/`getri`/`trtri`, which MLX
//! calls: the first largest |entry| pivots, a zero pivot is reported 1-based, not skipped.

use alloc::vec::Vec;

/// Factors the row-major `m × n` matrix `a` in place into unit-lower `L` (below the diagonal)
/// and `U` (on and above it) with `P·A = L·U`. Returns LAPACK's 0-based `ipiv` (row `j` was
/// swapped with row `ipiv[j]` at step `j`) and the 1-based index of the first zero pivot (0: none).
pub fn lu_in_place(a: &mut [f64], m: usize, n: usize) -> (Vec<usize>, usize) {
    let k = m.min(n);
    let mut piv = Vec::with_capacity(k);
    let mut info = 0;
    for j in 0..k {
        let mut p = j;
        let mut best = libm::fabs(a[j * n + j]);
        for i in j + 1..m {
            let v = libm::fabs(a[i * n + j]);
            if v > best {
                best = v;
                p = i;
            }
        }
        piv.push(p);
        if a[p * n + j] == 0.0 {
            if info == 0 {
                info = j + 1;
            }
            continue;
        }
        if p != j {
            for c in 0..n {
                a.swap(j * n + c, p * n + c);
            }
        }
        let (top, rest) = a.split_at_mut((j + 1) * n);
        let pivot_row = &top[j * n..];
        let d = pivot_row[j];
        for row in rest.chunks_exact_mut(n).take(m - j - 1) {
            let l = row[j] / d;
            row[j] = l;
            if l != 0.0 {
                for (x, &u) in row[j + 1..].iter_mut().zip(&pivot_row[j + 1..]) {
                    *x -= l * u;
                }
            }
        }
    }
    (piv, info)
}

/// The inverse of the square `n × n` matrix `a`, or the 1-based index of a zero pivot.
pub fn inverse(a: &[f64], n: usize) -> Result<Vec<f64>, usize> {
    let mut lu = a.to_vec();
    let (piv, info) = lu_in_place(&mut lu, n, n);
    if info != 0 {
        return Err(info);
    }
    // X = U⁻¹ L⁻¹ P: start from P·I, then forward and back substitution by whole rows.
    let mut x = alloc::vec![0.0; n * n];
    let mut perm: Vec<usize> = (0..n).collect();
    for (j, &p) in piv.iter().enumerate() {
        perm.swap(j, p);
    }
    for (i, &p) in perm.iter().enumerate() {
        x[i * n + p] = 1.0;
    }
    for i in 0..n {
        let (done, rest) = x.split_at_mut(i * n);
        let row = &mut rest[..n];
        for k in 0..i {
            let l = lu[i * n + k];
            if l != 0.0 {
                for (r, &v) in row.iter_mut().zip(&done[k * n..(k + 1) * n]) {
                    *r -= l * v;
                }
            }
        }
    }
    for i in (0..n).rev() {
        let (head, tail) = x.split_at_mut((i + 1) * n);
        let row = &mut head[i * n..];
        for k in i + 1..n {
            let u = lu[i * n + k];
            if u != 0.0 {
                for (r, &v) in row.iter_mut().zip(&tail[(k - i - 1) * n..(k - i) * n]) {
                    *r -= u * v;
                }
            }
        }
        let d = lu[i * n + i];
        row.iter_mut().for_each(|r| *r /= d);
    }
    Ok(x)
}

/// The inverse of the triangle (`upper` or lower) of the square matrix `a`; the other triangle
/// is read as zero and comes back zero. As LAPACK's `trtri` (whose status MLX ignores), a zero
/// diagonal entry leaves the triangle as it was.
pub fn tri_inverse(a: &[f64], n: usize, upper: bool) -> Vec<f64> {
    let in_tri = |i: usize, j: usize| if upper { j >= i } else { j <= i };
    let t: Vec<f64> = (0..n * n).map(|q| if in_tri(q / n, q % n) { a[q] } else { 0.0 }).collect();
    if (0..n).any(|i| t[i * n + i] == 0.0) {
        return t;
    }
    let mut x = alloc::vec![0.0; n * n];
    // Row i of X solves row i of T·X = I using the rows of X already known.
    let order: Vec<usize> = if upper { (0..n).rev().collect() } else { (0..n).collect() };
    for &i in &order {
        let mut row = alloc::vec![0.0; n];
        row[i] = 1.0;
        let others: Vec<usize> = if upper { (i + 1..n).collect() } else { (0..i).collect() };
        for k in others {
            let c = t[i * n + k];
            if c != 0.0 {
                for (r, &v) in row.iter_mut().zip(&x[k * n..(k + 1) * n]) {
                    *r -= c * v;
                }
            }
        }
        let d = t[i * n + i];
        for (j, r) in row.iter().enumerate() {
            x[i * n + j] = if in_tri(i, j) { r / d } else { 0.0 };
        }
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lu_pivots_like_getrf() {
        // [[1, 2], [3, 4]]: pivot row 1, L21 = 1/3, U = [[3, 4], [0, 2/3]].
        let mut a = [1.0, 2.0, 3.0, 4.0];
        let (piv, info) = lu_in_place(&mut a, 2, 2);
        assert_eq!((piv, info), (alloc::vec![1, 1], 0));
        assert!((a[2] - 1.0 / 3.0).abs() < 1e-15 && (a[3] - 2.0 / 3.0).abs() < 1e-15);
        assert_eq!(inverse(&[1.0, 2.0, 2.0, 4.0], 2), Err(2));
        let inv = inverse(&[4.0, 7.0, 2.0, 6.0], 2).unwrap();
        let want = [0.6, -0.7, -0.2, 0.4];
        assert!(inv.iter().zip(want).all(|(x, y)| (x - y).abs() < 1e-14));
    }

    #[test]
    fn triangular_inverse() {
        let x = tri_inverse(&[2.0, 9.0, 1.0, 4.0], 2, false);
        let want = [0.5, 0.0, -0.125, 0.25];
        assert!(x.iter().zip(want).all(|(x, y)| (x - y).abs() < 1e-15));
    }
}
