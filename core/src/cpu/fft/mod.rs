//! CPU kernel of the FFT family: one transform along one axis, over every line of the array
//! in parallel. Complex transforms, real-to-complex (`rfft`: the first `n/2 + 1` outputs) and
//! complex-to-real (`irfft`: the Hermitian spectrum is completed, then transformed back) all
//! run the one forward [`plan::Plan`]; inverses conjugate the input and the output.
//! Plans are cached (a few recent lengths), so repeated transforms skip the twiddle set-up.

pub mod plan;

use super::elementwise::OutPtr;
use crate::array::{Array, Data};
use crate::backend::OutMeta;
use crate::element::Complex64;
use crate::error::{Error, Result};
use crate::ops::fft::FftOp;
use crate::parallel::parallel_for;
use alloc::sync::Arc;
use alloc::vec::Vec;
use plan::{Cx, Plan};

/// How many plans the cache keeps (most recently used first).
const CACHE_SLOTS: usize = 8;

static CACHE: spin::Mutex<Vec<(usize, Arc<Plan<f32>>)>> = spin::Mutex::new(Vec::new());

/// The plan for length `n`, from the cache or freshly made (outside the lock).
fn plan_for(n: usize) -> Result<Arc<Plan<f32>>> {
    {
        let mut c = CACHE.lock();
        if let Some(i) = c.iter().position(|(k, _)| *k == n) {
            let hit = c.remove(i);
            let p = hit.1.clone();
            c.insert(0, hit);
            return Ok(p);
        }
    }
    let p = Arc::new(Plan::new(n)?);
    let mut c = CACHE.lock();
    c.insert(0, (n, p.clone()));
    c.truncate(CACHE_SLOTS);
    Ok(p)
}

/// Per-worker buffers: the plan's scratch and a line buffer of `len` (0: none), or the
/// allocation error, remembered for after the parallel region.
fn worker(plan: &Plan<f32>, len: usize, failed: &spin::Mutex<Option<Error>>) -> Option<(Vec<Cx<f32>>, plan::Scratch<f32>)> {
    let buf = (|| {
        let mut b = Vec::new();
        b.try_reserve_exact(len).map_err(|_| Error::out_of_memory("fft", len * 8))?;
        b.resize(len, Cx::default());
        Ok((b, plan.scratch()?))
    })();
    match buf {
        Ok(v) => Some(v),
        Err(e) => {
            *failed.lock() = Some(e);
            None
        }
    }
}

/// Writes element `i` of the output.
///
/// # Safety
/// `i` is in bounds and no other worker writes it.
#[inline(always)]
unsafe fn put<T>(p: OutPtr<T>, i: usize, v: T) {
    *p.0.add(i) = v;
}

#[inline(always)]
fn cx(z: Complex64) -> Cx<f32> {
    Cx::new(z.re, z.im)
}

/// Evaluates an FFT primitive.
pub fn eval(op: &FftOp, inputs: Vec<Array>, outputs: &[OutMeta]) -> Result<Vec<Data>> {
    const NAME: &str = "fft";
    let (out_shape, out_dtype) = super::out0(outputs, NAME)?.clone();
    let a = super::input(&inputs, 0, NAME)?;
    let out = Data::alloc_for_overwrite(&out_shape, out_dtype, NAME)?;
    let total: usize = out_shape.iter().product();
    let ax = op.axis;
    let in_shape = a.shape().to_vec();
    let (l_in, l_out) = (in_shape[ax], out_shape[ax]);
    let outer: usize = out_shape[..ax].iter().product();
    let inner: usize = out_shape[ax + 1..].iter().product();
    let lines = outer * inner;
    if total == 0 || lines == 0 {
        return Ok(alloc::vec![out]);
    }
    let n = op.n;
    let plan = plan_for(n)?;
    let failed = spin::Mutex::new(None);
    let scale = op.scale.get() as f32;
    let data = a.data()?;
    // Lines per parallel chunk: about 2^15 elements of work each.
    let grain = ((1usize << 15) / n.max(1)).max(1);
    let line = |li: usize| -> (usize, usize) {
        let (o, i) = (li / inner, li % inner);
        (o * l_in * inner + i, o * l_out * inner + i)
    };
    if op.real && !op.inverse {
        let x = data.read::<f32>(&in_shape)?;
        let po = OutPtr(unsafe { out.slice_mut::<Complex64>(total) }.as_mut_ptr());
        parallel_for(lines, grain, &|r| {
            let Some((mut buf, mut s)) = worker(&plan, n, &failed) else { return };
            for li in r {
                let (bi, bo) = line(li);
                for (j, b) in buf.iter_mut().enumerate() {
                    *b = Cx::new(x[bi + j * inner], 0.0);
                }
                plan.forward(&mut buf, &mut s);
                for (j, b) in buf.iter().take(l_out).enumerate() {
                    // SAFETY: each line writes its own output elements.
                    unsafe { put(po, bo + j * inner, Complex64::new(b.re * scale, b.im * scale)) };
                }
            }
        });
    } else if op.real {
        let x = data.read::<Complex64>(&in_shape)?;
        let po = OutPtr(unsafe { out.slice_mut::<f32>(total) }.as_mut_ptr());
        parallel_for(lines, grain, &|r| {
            let Some((mut buf, mut s)) = worker(&plan, n, &failed) else { return };
            for li in r {
                let (bi, bo) = line(li);
                // conj(X) of the Hermitian completion X[n-k] = conj(X[k]).
                for k in 0..l_in.min(n / 2 + 1) {
                    buf[k] = cx(x[bi + k * inner]).conj();
                }
                for k in 1..n.div_ceil(2) {
                    buf[n - k] = cx(x[bi + k * inner]);
                }
                plan.forward(&mut buf, &mut s);
                for (j, b) in buf.iter().enumerate() {
                    // SAFETY: each line writes its own output elements.
                    unsafe { put(po, bo + j * inner, b.re * scale) };
                }
            }
        });
    } else {
        let x = data.read::<Complex64>(&in_shape)?;
        let po = OutPtr(unsafe { out.slice_mut::<Complex64>(total) }.as_mut_ptr());
        let inv = op.inverse;
        let sign = if inv { -1.0f32 } else { 1.0 };
        parallel_for(lines, grain, &|r| {
            let Some((mut buf, mut s)) = worker(&plan, if inner == 1 { 0 } else { n }, &failed) else { return };
            for li in r {
                let (bi, bo) = line(li);
                if inner == 1 {
                    // Contiguous line: transform in place in the output.
                    // SAFETY: lines are disjoint; Complex64 and Cx<f32> are both repr(C) {re, im: f32}.
                    let y = unsafe { core::slice::from_raw_parts_mut(po.chunk(&(bo..bo + n)).as_mut_ptr() as *mut Cx<f32>, n) };
                    for (d, z) in y.iter_mut().zip(&x[bi..bi + n]) {
                        *d = Cx::new(z.re, z.im * sign);
                    }
                    plan.forward(y, &mut s);
                    for d in y.iter_mut() {
                        *d = Cx::new(d.re * scale, d.im * sign * scale);
                    }
                } else {
                    for (j, b) in buf.iter_mut().enumerate() {
                        let z = x[bi + j * inner];
                        *b = Cx::new(z.re, z.im * sign);
                    }
                    plan.forward(&mut buf, &mut s);
                    for (j, b) in buf.iter().enumerate() {
                        // SAFETY: each line writes its own output elements.
                        unsafe { put(po, bo + j * inner, Complex64::new(b.re * scale, b.im * sign * scale)) };
                    }
                }
            }
        });
    }
    match failed.into_inner() {
        Some(e) => Err(e),
        None => Ok(alloc::vec![out]),
    }
}
