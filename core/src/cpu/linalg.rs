//! CPU kernels of the linalg family. Matmul and addmm hand each batch's strided matrices
//! straight to [`super::gemm`] (no copies of transposed or broadcast views); convolution
//! lowers to im2col + the same GEMM, one image and group at a time so the column buffer stays
//! bounded. Real floats accumulate in f32 (f16/bf16/f32) or f64; complex64 runs a direct loop.

use super::elementwise::OutPtr;
use super::gemm::{gemm, Acc, GemmIn, MatMut, MatRef};
use super::math::Real;
use crate::array::{for_each_strided, Array, Data};
use crate::backend::OutMeta;
use crate::dtype::DType;
use crate::element::{Complex64, Element};
use crate::error::{Error, Result};
use crate::ops::linalg::{ConvParams, LinalgOp};
use crate::parallel::parallel_for;
use alloc::vec::Vec;

/// Evaluates a linalg primitive.
pub fn eval(op: &LinalgOp, inputs: Vec<Array>, outputs: &[OutMeta]) -> Result<Vec<Data>> {
    let name = op.name();
    let (shape, dtype) = super::out0(outputs, name)?.clone();
    let a = super::input(&inputs, 0, name)?;
    match op {
        LinalgOp::SingularValues => return Ok(alloc::vec![singular_values(a, &shape, dtype)?]),
        LinalgOp::Matmul | LinalgOp::AddMM { .. } | LinalgOp::Conv(_) => {}
        _ => return super::decomp::eval(op, a, outputs),
    }
    let b = super::input(&inputs, 1, name)?;
    let out = match op {
        LinalgOp::Matmul => product(name, a, b, None, 1.0, 0.0, &shape, dtype)?,
        LinalgOp::AddMM { alpha, beta } => {
            let c = super::input(&inputs, 2, name)?;
            product(name, a, b, Some(c), alpha.get(), beta.get(), &shape, dtype)?
        }
        LinalgOp::Conv(p) => conv(p, a, b, &shape, dtype)?,
        _ => return Err(Error::runtime(name, "Handled above.")),
    };
    Ok(alloc::vec![out])
}

/// Per batch matrix of `a` (real or complex64), its singular values (f64 Jacobi), stored in
/// `dtype` (float32 for complex64 input).
fn singular_values(a: &Array, shape: &[usize], dtype: crate::DType) -> Result<Data> {
    let nd = a.ndim();
    let (m, n) = (a.shape()[nd - 2], a.shape()[nd - 1]);
    let out = Data::alloc(shape, dtype, "svd")?;
    let k = m.min(n);
    let count: usize = shape.iter().product();
    let mut s_all = Vec::with_capacity(count);
    if k > 0 && a.dtype() == crate::DType::Complex64 {
        let v: Vec<super::decomp::eig::C> = a
            .to_vec::<crate::element::Complex64>()?
            .iter()
            .map(|z| super::decomp::eig::C::new(z.re as f64, z.im as f64))
            .collect();
        for mat in v.chunks_exact(m * n) {
            s_all.extend(super::svd::singular_values(mat, m, n));
        }
    } else if k > 0 {
        let v = crate::ops::astype(a, crate::DType::Float64)?.to_vec::<f64>()?;
        for mat in v.chunks_exact(m * n) {
            s_all.extend(super::svd::singular_values(mat, m, n));
        }
    }
    crate::dispatch_float!(dtype, T => {
        use crate::element::{Element, Value};
        // SAFETY: fresh buffer of `count` elements of the output dtype.
        for (o, &s) in unsafe { out.slice_mut::<T>(count) }.iter_mut().zip(&s_all) {
            *o = T::from_value(Value::F(s));
        }
    }, else return Err(crate::Error::unsupported("svd", "Unsupported dtype.")));
    Ok(out)
}

/// Element offsets of each batch matrix of a view whose last two axes are the matrix.
fn batch_offsets(d: &Data, shape: &[usize]) -> Vec<isize> {
    let nb = shape.len() - 2;
    let mut v = Vec::new();
    for_each_strided(&shape[..nb], &d.strides[..nb], &mut |o| v.push(o));
    v
}

/// Threads across batch items when each product is too small to split by rows.
const SMALL_PRODUCT: usize = 1 << 18;

/// `out = alpha·a@b + beta·c` over the batch dims (`a`, `b`, `c` already share them).
#[allow(clippy::too_many_arguments)]
fn product(name: &'static str, a: &Array, b: &Array, c: Option<&Array>, alpha: f64, beta: f64, shape: &[usize], dtype: DType) -> Result<Data> {
    let nd = shape.len();
    if nd < 2 || a.ndim() != nd || b.ndim() != nd {
        return Err(Error::runtime(name, "Matrix product inputs must share the output's rank."));
    }
    // Every element is written below (beta = 0 products overwrite C without reading it, as
    // BLAS does; the complex loop writes each one), so a reused block is not zero-filled: on
    // one thread that memset cost 0.2-0.25 ms of a 1.8 ms 16-thread 1024^3 product.
    let out = Data::alloc_for_overwrite(shape, dtype, name)?;
    match dtype {
        DType::Float32 => real::<f32, f32>(a, b, c, alpha as f32, beta as f32, shape, &out)?,
        DType::Float16 => real::<half::f16, f32>(a, b, c, alpha as f32, beta as f32, shape, &out)?,
        DType::Bfloat16 => real::<half::bf16, f32>(a, b, c, alpha as f32, beta as f32, shape, &out)?,
        DType::Float64 => real::<f64, f64>(a, b, c, alpha, beta, shape, &out)?,
        DType::Complex64 => complex(a, b, shape, &out)?,
        d => return Err(Error::unsupported(name, alloc::format!("{name} does not support {d}."))),
    }
    Ok(out)
}

fn real<T, A>(a: &Array, b: &Array, c: Option<&Array>, alpha: A, beta: A, shape: &[usize], out: &Data) -> Result<()>
where
    T: Real<Acc = A> + GemmIn<A>,
    A: Acc,
{
    let nd = shape.len();
    let (m, n) = (shape[nd - 2], shape[nd - 1]);
    let k = a.shape()[nd - 1];
    let n_out: usize = shape.iter().product();
    if n_out == 0 {
        return Ok(());
    }
    let (ad, bd) = (a.data()?, b.data()?);
    let (ao, bo) = (batch_offsets(&ad, a.shape()), batch_offsets(&bd, b.shape()));
    // Accumulate into the output itself when it is the accumulator type, else into a temp.
    let direct = core::mem::size_of::<T>() == core::mem::size_of::<A>();
    // The temp is left uninitialized: the GEMM writes every accumulator (beta = 0 does not
    // read C) before `narrow_out` reads them. Zero-filling it (`calloc` of a block the
    // allocator reuses is a memset on this thread) cost 0.24 ms of a 2 ms 16-thread f16
    // 1024^3 product; fresh pages are still first touched by the GEMM's threads.
    let mut temp: Vec<A> = if direct { Vec::new() } else { Vec::with_capacity(n_out) };
    let acc_ptr: *mut A = if direct { out.buf.as_mut_ptr() as *mut A } else { temp.as_mut_ptr() };
    let beta = match c {
        Some(c) => {
            let cv = c.data()?.read::<T>(shape)?.into_owned();
            for (i, &y) in cv.iter().enumerate().take(n_out) {
                // SAFETY: acc_ptr covers n_out accumulators (fresh output or temp's capacity).
                unsafe { acc_ptr.add(i).write(y.load()) };
            }
            beta
        }
        None => A::ZERO,
    };
    let pa = ad.buf.as_ptr().wrapping_add(ad.offset) as *const T;
    let pb = bd.buf.as_ptr().wrapping_add(bd.offset) as *const T;
    let (ars, acs) = (ad.strides[nd - 2], ad.strides[nd - 1]);
    let (brs, bcs) = (bd.strides[nd - 2], bd.strides[nd - 1]);
    let (pa, pb, pc) = (OutPtr(pa as *mut T), OutPtr(pb as *mut T), OutPtr(acc_ptr));
    let run = |i: usize, par: bool| {
        // Capture the wrappers whole (they are Sync), not their raw-pointer fields.
        let (pa, pb, pc) = (&pa, &pb, &pc);
        // SAFETY: the views were validated when built; each batch item owns m·n outputs.
        unsafe {
            let am = MatRef::new(pa.0.offset(ao[i]) as *const T, ars, acs);
            let bm = MatRef::new(pb.0.offset(bo[i]) as *const T, brs, bcs);
            let cm = MatMut::new(pc.0.add(i * m * n), n);
            gemm(m, n, k, alpha, am, bm, beta, cm, par);
        }
    };
    let batches = ao.len();
    if batches > 1 && m.saturating_mul(n).saturating_mul(k) < SMALL_PRODUCT {
        parallel_for(batches, 1, &|r| r.for_each(|i| run(i, false)));
    } else {
        (0..batches).for_each(|i| run(i, true));
    }
    if !direct {
        // SAFETY: the products above wrote all n_out accumulators of the capacity.
        unsafe { temp.set_len(n_out) };
        narrow_out::<T, A>(&temp, out);
    }
    Ok(())
}

/// Elements per work item when narrowing an f32 product into an f16/bf16 output.
const NARROW_CHUNK: usize = 1 << 14;

/// `out = temp` rounded to T (f16/bf16; round to nearest even), over the pool in chunks with
/// the astype slice kernel (F16C where present). One thread rounding a 1024² product element
/// by element took longer than a sixteen-thread GEMM computing it.
fn narrow_out<T: Real<Acc = A>, A: Acc>(temp: &[A], out: &Data) {
    let n = temp.len();
    // SAFETY: fresh output buffer of n elements of T.
    let o = OutPtr(unsafe { out.slice_mut::<T>(n) }.as_mut_ptr());
    let narrow = (core::mem::size_of::<A>() == 4).then(|| super::cast::kernel(crate::DType::Float32, T::DTYPE));
    parallel_for(n.div_ceil(NARROW_CHUNK), 4, &|r| {
        let o = &o;
        let (j0, j1) = (r.start * NARROW_CHUNK, (r.end * NARROW_CHUNK).min(n));
        // SAFETY: elements j0..j1 of the output belong to this range alone.
        let y = unsafe { core::slice::from_raw_parts_mut(o.0.add(j0), j1 - j0) };
        match narrow {
            // SAFETY: A is f32 here (4 bytes, an accumulator); y holds j1 - j0 elements of T.
            Some(kern) => unsafe {
                let x = core::slice::from_raw_parts(temp.as_ptr().add(j0) as *const u8, (j1 - j0) * 4);
                let yb = core::slice::from_raw_parts_mut(y.as_mut_ptr() as *mut u8, core::mem::size_of_val(y));
                kern(yb, Some(x))
            },
            None => y.iter_mut().zip(&temp[j0..j1]).for_each(|(y, &x)| *y = T::from_acc(x)),
        }
    });
}

/// complex64 products: a direct loop (MLX supports them; they are rare in models).
fn complex(a: &Array, b: &Array, shape: &[usize], out: &Data) -> Result<()> {
    let nd = shape.len();
    let (m, n) = (shape[nd - 2], shape[nd - 1]);
    let k = a.shape()[nd - 1];
    let av = a.data()?.read::<Complex64>(a.shape())?.into_owned();
    let bv = b.data()?.read::<Complex64>(b.shape())?.into_owned();
    let n_out: usize = shape.iter().product();
    // SAFETY: fresh output buffer.
    let o = unsafe { out.slice_mut::<Complex64>(n_out) };
    let batches = n_out.checked_div(m * n).unwrap_or(0);
    for bi in 0..batches {
        let (ab, bb) = (&av[bi * m * k..(bi + 1) * m * k], &bv[bi * k * n..(bi + 1) * k * n]);
        for i in 0..m {
            for j in 0..n {
                let (mut re, mut im) = (0f32, 0f32);
                for p in 0..k {
                    let (x, y) = (ab[i * k + p], bb[p * n + j]);
                    re += x.re * y.re - x.im * y.im;
                    im += x.re * y.im + x.im * y.re;
                }
                o[bi * m * n + i * n + j] = Complex64::new(re, im);
            }
        }
    }
    Ok(())
}

fn conv(p: &ConvParams, x: &Array, w: &Array, shape: &[usize], dtype: DType) -> Result<Data> {
    const OP: &str = "conv";
    let out = Data::alloc(shape, dtype, OP)?;
    match dtype {
        DType::Float32 => conv_real::<f32, f32>(p, x, w, shape, &out)?,
        DType::Float16 => conv_real::<half::f16, f32>(p, x, w, shape, &out)?,
        DType::Bfloat16 => conv_real::<half::bf16, f32>(p, x, w, shape, &out)?,
        DType::Float64 => conv_real::<f64, f64>(p, x, w, shape, &out)?,
        d => return Err(Error::unsupported(OP, alloc::format!("Convolution does not support {d}."))),
    }
    Ok(out)
}

/// im2col + GEMM. Column `(taps, c)` of row `(out position)` holds the input element that
/// kernel tap meets (zero in padding or between dilated input elements); the weight, laid out
/// `[C_out, taps…, C_in/groups]`, is then exactly the transposed B of that GEMM.
fn conv_real<T, A>(p: &ConvParams, x: &Array, w: &Array, shape: &[usize], out: &Data) -> Result<()>
where
    T: Real<Acc = A> + GemmIn<A> + Element,
    A: Acc + GemmIn<A>,
{
    const OP: &str = "conv";
    let sd = shape.len() - 2;
    let (xs, ws) = (x.shape(), w.shape());
    if xs.len() != sd + 2 || ws.len() != sd + 2 || p.stride.len() != sd || p.groups == 0 {
        return Err(Error::runtime(OP, "Convolution inputs do not match their parameters."));
    }
    let n_out: usize = shape.iter().product();
    if n_out == 0 {
        return Ok(());
    }
    let (nb, cin, cout) = (xs[0], xs[sd + 1], ws[0]);
    let g = p.groups;
    let (cg, og) = (cin / g, cout / g);
    let in_sp = &xs[1..=sd];
    let k_sp = &ws[1..=sd];
    let out_sp = &shape[1..=sd];
    let taps: usize = k_sp.iter().product();
    let kcols = taps * cg;
    let rows: usize = out_sp.iter().product();
    let xv = x.data()?.read::<T>(xs)?.into_owned();
    let wv: Vec<A> = w.data()?.read::<T>(ws)?.iter().map(|v| v.load()).collect();
    let direct = core::mem::size_of::<T>() == core::mem::size_of::<A>();
    let mut temp: Vec<A> = Vec::new();
    let acc: *mut A = if direct {
        out.buf.as_mut_ptr() as *mut A
    } else {
        temp.resize(n_out, A::ZERO);
        temp.as_mut_ptr()
    };
    let in_img: usize = in_sp.iter().product::<usize>() * cin;
    let mut col: Vec<A> = alloc::vec![A::ZERO; rows * kcols];
    let mut opos = alloc::vec![0usize; sd];
    let mut obase = alloc::vec![0isize; sd];
    // Offset of every kernel tap from its window's origin (flipped, dilated), computed once:
    // the column fill below is the kernel's hot loop (one tap per element when C_in/groups = 1).
    let mut toff = alloc::vec![0isize; taps * sd];
    let mut tpos = alloc::vec![0usize; sd];
    for t in 0..taps {
        unravel(t, k_sp, &mut tpos);
        for i in 0..sd {
            let k = if p.flip { k_sp[i] - 1 - tpos[i] } else { tpos[i] };
            toff[t * sd + i] = (k * p.kernel_dilation[i]) as isize;
        }
    }
    // Without groups, input dilation, flip or last-axis kernel dilation, the taps along the
    // last spatial axis read consecutive input elements (all channels): copy them as runs.
    let runs = g == 1 && !p.flip && p.input_dilation.iter().all(|&d| d == 1) && p.kernel_dilation[sd - 1] == 1;
    for img in 0..nb {
        let xi = &xv[img * in_img..(img + 1) * in_img];
        for gi in 0..g {
            // Fill the column matrix for this image and group.
            for r in 0..rows {
                unravel(r, out_sp, &mut opos);
                for (i, o) in obase.iter_mut().enumerate() {
                    *o = (opos[i] * p.stride[i]) as isize - p.pad_lo[i] as isize;
                }
                let row = &mut col[r * kcols..(r + 1) * kcols];
                if runs {
                    fill_runs(row, xi, &obase, &toff, in_sp, k_sp[sd - 1], cin);
                    continue;
                }
                for t in 0..taps {
                    let dst = &mut row[t * cg..(t + 1) * cg];
                    match source(&obase, &toff[t * sd..(t + 1) * sd], &p.input_dilation, in_sp) {
                        Some(base) => {
                            let src = &xi[base * cin + gi * cg..base * cin + (gi + 1) * cg];
                            for (d, &s) in dst.iter_mut().zip(src) {
                                *d = s.load();
                            }
                        }
                        None => dst.iter_mut().for_each(|d| *d = A::ZERO),
                    }
                }
            }
            if og == 1 {
                // One output channel per group (depthwise, `convolve`): a matrix-vector product.
                let wg = &wv[gi * kcols..(gi + 1) * kcols];
                for r in 0..rows {
                    // SAFETY: img·rows·cout + r·cout + gi < nb·rows·cout = n_out, acc's length.
                    unsafe { *acc.add(img * rows * cout + r * cout + gi) = dot(&col[r * kcols..(r + 1) * kcols], wg) };
                }
                continue;
            }
            // SAFETY: col is rows×kcols; the weight group is og×kcols read transposed; the
            // output block rows×og at column offset gi·og with row stride cout is ours alone.
            unsafe {
                let am = MatRef::new(col.as_ptr(), kcols as isize, 1);
                let bm = MatRef::new(wv.as_ptr().add(gi * og * kcols), 1, kcols as isize);
                let cm = MatMut::new(acc.add(img * rows * cout + gi * og), cout);
                gemm(rows, og, kcols, A::ONE, am, bm, A::ZERO, cm, true);
            }
        }
    }
    if !direct {
        // SAFETY: fresh output buffer of n_out elements of T.
        let o = unsafe { out.slice_mut::<T>(n_out) };
        for (y, &v) in o.iter_mut().zip(&temp) {
            *y = T::from_acc(v);
        }
    }
    Ok(())
}

/// One column-matrix row when taps along the last axis are consecutive input elements (see
/// `runs` in `conv_real`): for each position of the outer kernel axes, the `kl·cin` values
/// starting at the window's last-axis origin, zero where they fall in padding.
fn fill_runs<T, A>(row: &mut [A], xi: &[T], obase: &[isize], toff: &[isize], in_sp: &[usize], kl: usize, cin: usize)
where
    T: Real<Acc = A> + GemmIn<A> + Element,
    A: Acc + GemmIn<A>,
{
    let sd = in_sp.len();
    let last = sd - 1;
    let n = in_sp[last] as isize;
    for (to, dst) in row.chunks_exact_mut(kl * cin).enumerate() {
        // Offsets of this run's first tap (its last-axis offset is 0: no flip, no dilation).
        let off = &toff[to * kl * sd..(to * kl + 1) * sd];
        let mut flat = 0usize;
        let mut inside = true;
        for i in 0..last {
            let pos = obase[i] + off[i];
            if pos < 0 || pos >= in_sp[i] as isize {
                inside = false;
                break;
            }
            flat = flat * in_sp[i] + pos as usize;
        }
        let start = obase[last] + off[last];
        let (j0, j1) = if inside {
            let j0 = (-start).clamp(0, kl as isize) as usize;
            (j0, ((n - start).clamp(0, kl as isize) as usize).max(j0))
        } else {
            (0, 0)
        };
        dst[..j0 * cin].fill(A::ZERO);
        dst[j1 * cin..].fill(A::ZERO);
        if j1 > j0 {
            let s0 = (flat * in_sp[last] + (start + j0 as isize) as usize) * cin;
            for (d, &s) in dst[j0 * cin..j1 * cin].iter_mut().zip(&xi[s0..s0 + (j1 - j0) * cin]) {
                *d = s.load();
            }
        }
    }
}

/// `Σ a[i]·b[i]` with eight independent partial sums, so the loop vectorizes (the GEMM's
/// packing costs more than it saves when B has a single column).
fn dot<A: Acc>(a: &[A], b: &[A]) -> A {
    let mut s = [A::ZERO; 8];
    let n8 = a.len() / 8 * 8;
    for (ca, cb) in a[..n8].chunks_exact(8).zip(b[..n8].chunks_exact(8)) {
        for k in 0..8 {
            s[k] = s[k] + ca[k] * cb[k];
        }
    }
    let mut t = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
    for (&x, &y) in a[n8..].iter().zip(&b[n8..]) {
        t = t + x * y;
    }
    t
}

/// Row-major multi-index of `i` in `dims`.
fn unravel(mut i: usize, dims: &[usize], idx: &mut [usize]) {
    for (d, x) in dims.iter().zip(idx.iter_mut()).rev() {
        *x = i % d;
        i /= d;
    }
}

/// The flat spatial index of the input element that the kernel tap at offset `toff` meets in
/// the window whose origin (in padded, dilated input coordinates) is `obase`, or None where it
/// falls in padding or between dilated input elements.
fn source(obase: &[isize], toff: &[isize], input_dilation: &[usize], in_sp: &[usize]) -> Option<usize> {
    let mut flat = 0usize;
    for i in 0..in_sp.len() {
        let pos = obase[i] + toff[i];
        if pos < 0 {
            return None;
        }
        let pos = pos as usize;
        let d = input_dilation[i];
        let src = if d == 1 {
            pos
        } else if pos % d == 0 {
            pos / d
        } else {
            return None;
        };
        if src >= in_sp[i] {
            return None;
        }
        flat = flat * in_sp[i] + src;
    }
    Some(flat)
}
