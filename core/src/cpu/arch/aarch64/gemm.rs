//! aarch64 NEON f32 GEMM/GEMV kernels: an 8×12 register tile (24 of the 32 q registers
//! accumulate, 3 hold B, 2 hold the 8 values of A used by lane-indexed FMAs), four-row dot
//! products and four-row axpys for GEMV. NEON is part of the aarch64 baseline, so these
//! functions need no run-time feature check.

use super::F32Kernels;
use core::arch::aarch64::*;

/// The NEON kernel set.
pub(crate) static NEON: F32Kernels = F32Kernels {
    mr: 8,
    nr: 12,
    micro: micro_neon,
    dots: dots_neon,
    axpys: axpys_neon,
    widen_f16: widen_f16_scalar,
    dots_f16: None,
    dots_bf16: None,
    pack_t: None,
};

/// `acc[r][j] += b[j] · a[lane]` for the 4 rows whose A values sit in one register.
macro_rules! rows4 {
    ($acc:ident, $base:expr, $a:ident, $b:ident) => {
        for j in 0..3 {
            $acc[$base][j] = vfmaq_laneq_f32::<0>($acc[$base][j], $b[j], $a);
            $acc[$base + 1][j] = vfmaq_laneq_f32::<1>($acc[$base + 1][j], $b[j], $a);
            $acc[$base + 2][j] = vfmaq_laneq_f32::<2>($acc[$base + 2][j], $b[j], $a);
            $acc[$base + 3][j] = vfmaq_laneq_f32::<3>($acc[$base + 3][j], $b[j], $a);
        }
    };
}

/// `C[8×12] = alpha·Σ_p ap[p·8 + r]·bp[p·12 + c] + beta·C` (C not read when beta == 0).
///
/// # Safety
/// `ap` holds `8·kc` and `bp` `12·kc` floats; C rows `r·ldc` for r < 8 hold 12 writable floats.
unsafe fn micro_neon(kc: usize, ap: *const f32, bp: *const f32, c: *mut f32, ldc: usize, alpha: f32, beta: f32) {
    let mut acc = [[vdupq_n_f32(0.0); 3]; 8];
    let (mut a, mut b) = (ap, bp);
    for _ in 0..kc {
        let bv = [vld1q_f32(b), vld1q_f32(b.add(4)), vld1q_f32(b.add(8))];
        let a0 = vld1q_f32(a);
        let a1 = vld1q_f32(a.add(4));
        rows4!(acc, 0, a0, bv);
        rows4!(acc, 4, a1, bv);
        a = a.add(8);
        b = b.add(12);
    }
    for (r, accr) in acc.iter().enumerate() {
        let row = c.add(r * ldc);
        for (j, &v) in accr.iter().enumerate() {
            let mut y = vmulq_n_f32(v, alpha);
            if beta != 0.0 {
                y = vfmaq_n_f32(y, vld1q_f32(row.add(4 * j)), beta);
            }
            vst1q_f32(row.add(4 * j), y);
        }
    }
}

/// `out[j] += Σ_p x[p]·w[j·ld + p]` for j < n, four rows at a time.
///
/// # Safety
/// `x` holds k floats, each row `w + j·ld` holds k floats, `out` holds n.
unsafe fn dots_neon(n: usize, k: usize, w: *const f32, ld: isize, x: *const f32, out: *mut f32) {
    let mut j = 0;
    while j + 4 <= n {
        let rows = [w.offset(j as isize * ld), w.offset((j + 1) as isize * ld), w.offset((j + 2) as isize * ld), w.offset((j + 3) as isize * ld)];
        let mut acc = [[vdupq_n_f32(0.0); 2]; 4];
        let mut p = 0;
        while p + 8 <= k {
            let x0 = vld1q_f32(x.add(p));
            let x1 = vld1q_f32(x.add(p + 4));
            for r in 0..4 {
                acc[r][0] = vfmaq_f32(acc[r][0], vld1q_f32(rows[r].add(p)), x0);
                acc[r][1] = vfmaq_f32(acc[r][1], vld1q_f32(rows[r].add(p + 4)), x1);
            }
            p += 8;
        }
        for r in 0..4 {
            let mut s = vaddvq_f32(vaddq_f32(acc[r][0], acc[r][1]));
            for q in p..k {
                s += *rows[r].add(q) * *x.add(q);
            }
            *out.add(j + r) += s;
        }
        j += 4;
    }
    while j < n {
        let row = w.offset(j as isize * ld);
        let mut acc = vdupq_n_f32(0.0);
        let mut p = 0;
        while p + 4 <= k {
            acc = vfmaq_f32(acc, vld1q_f32(row.add(p)), vld1q_f32(x.add(p)));
            p += 4;
        }
        let mut s = vaddvq_f32(acc);
        for q in p..k {
            s += *row.add(q) * *x.add(q);
        }
        *out.add(j) += s;
        j += 1;
    }
}

/// `y[j] += Σ_p x[p]·w[p·ld + j]` for j < n, streaming four rows of W at a time.
///
/// # Safety
/// `x` holds k floats, each row `w + p·ld` holds n floats, `y` holds n.
unsafe fn axpys_neon(n: usize, k: usize, w: *const f32, ld: isize, x: *const f32, y: *mut f32) {
    let mut p = 0;
    while p + 4 <= k {
        let rows = [w.offset(p as isize * ld), w.offset((p + 1) as isize * ld), w.offset((p + 2) as isize * ld), w.offset((p + 3) as isize * ld)];
        let xv = [*x.add(p), *x.add(p + 1), *x.add(p + 2), *x.add(p + 3)];
        let mut j = 0;
        while j + 4 <= n {
            let mut acc = vld1q_f32(y.add(j));
            for r in 0..4 {
                acc = vfmaq_n_f32(acc, vld1q_f32(rows[r].add(j)), xv[r]);
            }
            vst1q_f32(y.add(j), acc);
            j += 4;
        }
        while j < n {
            let mut s = *y.add(j);
            for r in 0..4 {
                s += xv[r] * *rows[r].add(j);
            }
            *y.add(j) = s;
            j += 1;
        }
        p += 4;
    }
    while p < k {
        let row = w.offset(p as isize * ld);
        let xv = *x.add(p);
        for j in 0..n {
            *y.add(j) += xv * *row.add(j);
        }
        p += 1;
    }
}

/// Widens halves through `half` (stable Rust has no f16 NEON vector type yet).
///
/// # Safety
/// `src` holds n u16, `dst` n f32.
unsafe fn widen_f16_scalar(src: *const u16, dst: *mut f32, n: usize) {
    for i in 0..n {
        *dst.add(i) = half::f16::from_bits(*src.add(i)).to_f32();
    }
}
