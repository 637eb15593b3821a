//! CPU kernels of the random family: each reads its key (input 0), calls the bit-exact slice
//! kernel of [`crate::random`] for the output's dtype and element count, and stores the
//! samples row-major.

use crate::array::{Array, Data};
use crate::backend::OutMeta;
use crate::dtype::DType;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::ops::random::RandomOp;
use crate::random::samplers::{self, Logits};
use crate::random::threefry::{self, Key};
use crate::random::RandInt;
use alloc::vec::Vec;
use half::{bf16, f16};

/// Runs `$e` (a sampler generic over `$T`) for the output's float dtype and stores it.
macro_rules! by_float {
    ($name:expr, $shape:expr, $dtype:expr, $T:ident => $e:expr) => {
        match $dtype {
            DType::Float32 => {
                type $T = f32;
                store($shape, $e?)
            }
            DType::Float16 => {
                type $T = f16;
                store($shape, $e?)
            }
            DType::Bfloat16 => {
                type $T = bf16;
                store($shape, $e?)
            }
            d => bad_dtype($name, d),
        }
    };
}

/// Evaluates a random primitive.
pub fn eval(op: &RandomOp, inputs: Vec<Array>, outputs: &[OutMeta]) -> Result<Vec<Data>> {
    let name = op.name();
    let (shape, dtype) = super::out0(outputs, name)?;
    let n: usize = crate::shape::checked_size(shape, name)?;
    let key = read_key(super::input(&inputs, 0, name)?)?;
    let out = match op {
        RandomOp::Bits => match dtype {
            DType::Uint32 => store(shape, threefry::bits_words(key, n)?),
            DType::Uint16 => {
                let v = threefry::bits(key, n, 2)?;
                store(shape, v.into_iter().map(|x| x as u16).collect::<Vec<_>>())
            }
            DType::Uint8 => store(shape, threefry::bits_bytes(key, n)?),
            d => bad_dtype(name, *d),
        },
        RandomOp::Uniform { low, high } => {
            let (lo, hi) = (low.get(), high.get());
            by_float!(name, shape, *dtype, T => samplers::uniform::<T>(key, lo, hi, n))
        }
        RandomOp::Normal { loc, scale } => {
            let (l, s) = (loc.map(|v| v.get()), scale.map(|v| v.get()));
            by_float!(name, shape, *dtype, T => samplers::normal::<T>(key, n, l, s))
        }
        RandomOp::TruncatedNormal { lower, upper } => {
            let (lo, hi) = (lower.get(), upper.get());
            by_float!(name, shape, *dtype, T => samplers::truncated_normal::<T>(key, lo, hi, n))
        }
        RandomOp::Gumbel => by_float!(name, shape, *dtype, T => samplers::gumbel::<T>(key, n)),
        RandomOp::Laplace { loc, scale } => {
            let (l, s) = (loc.get(), scale.get());
            by_float!(name, shape, *dtype, T => samplers::laplace::<T>(key, n, l, s))
        }
        RandomOp::Bernoulli => {
            let p = super::input(&inputs, 1, name)?;
            let pd = p.data()?;
            let pv = pd.read::<f32>(p.shape())?;
            store(shape, samplers::bernoulli(key, &pv, n)?)
        }
        RandomOp::Randint { low, high } => randint(name, shape, *dtype, key, *low, *high, n),
        RandomOp::CategoricalInverseCdf => {
            let x = super::input(&inputs, 1, name)?;
            let xd = x.data()?;
            let xv = xd.read::<f32>(x.shape())?;
            let classes = xv.len();
            store(shape, samplers::categorical(key, &xv, Logits::Vector { classes }, Some(n))?)
        }
        RandomOp::Permutation => store(shape, samplers::permutation(key, n)?),
    };
    out.map(|d| alloc::vec![d])
}

/// The two words of a `uint32` `(2,)` key array.
fn read_key(k: &Array) -> Result<Key> {
    if k.dtype() != DType::Uint32 || k.shape() != [2] {
        return Err(Error::runtime("bits", "The key must be a uint32 array of shape (2)."));
    }
    let d = k.data()?;
    let w = d.read::<u32>(&[2])?;
    Ok([w[0], w[1]])
}

fn bad_dtype(op: &'static str, d: DType) -> Result<Data> {
    Err(Error::unsupported(op, alloc::format!("{op} does not produce {d}.")))
}

/// A fresh row-major buffer holding `v` (whose length is the shape's size).
fn store<T: Element>(shape: &[usize], v: Vec<T>) -> Result<Data> {
    let d = Data::alloc_for_overwrite(shape, T::DTYPE, "random")?;
    let n: usize = shape.iter().product();
    if v.len() != n {
        return Err(Error::runtime("random", "The sampler returned the wrong number of elements."));
    }
    // SAFETY: a fresh buffer of n elements of T, uniquely ours.
    unsafe { d.slice_mut::<T>(n) }.copy_from_slice(&v);
    Ok(d)
}

fn randint(op: &'static str, shape: &[usize], dtype: DType, key: Key, lo: i32, hi: i32, n: usize) -> Result<Data> {
    fn go<I: RandInt + Element>(shape: &[usize], key: Key, lo: i32, hi: i32, n: usize) -> Result<Data> {
        store(shape, samplers::randint::<I>(key, lo, hi, n)?)
    }
    match dtype {
        DType::Bool => go::<bool>(shape, key, lo, hi, n),
        DType::Int8 => go::<i8>(shape, key, lo, hi, n),
        DType::Int16 => go::<i16>(shape, key, lo, hi, n),
        DType::Int32 => go::<i32>(shape, key, lo, hi, n),
        DType::Int64 => go::<i64>(shape, key, lo, hi, n),
        DType::Uint8 => go::<u8>(shape, key, lo, hi, n),
        DType::Uint16 => go::<u16>(shape, key, lo, hi, n),
        DType::Uint32 => go::<u32>(shape, key, lo, hi, n),
        DType::Uint64 => go::<u64>(shape, key, lo, hi, n),
        d => bad_dtype(op, d),
    }
}
