//! `mx.random`: keys, the global key sequence and the samplers, as graph ops.
//!
//! Each sampler validates its arguments the way MLX 0.32 does (same messages), resolves its
//! key (an explicit `uint32` array of shape `(2,)`, or the next key of the global sequence)
//! and records one [`RandomOp`] whose CPU kernel (`cpu/random.rs`) calls the bit-exact slice
//! kernels of [`crate::random`]. Where MLX composes ordinary ops around the draw (array-valued
//! bounds of `uniform`, array `loc`/`scale` or float64 in `normal`, float64 `laplace`, the
//! Gumbel-max path of `categorical`, `permutation` of an array), this module composes the
//! same ops in the same order, so the results stay bit-identical. See `docs/RANDOM.md`.
//!
//! Scalar floats are `f64` in [`Param`] (rounded like MLX: through float32 except for
//! float64 samples) and `f32` where MLX's C++ API takes a `float`; randint bounds are `i32`
//! (a Python int that fits int32). Not available: array-valued bounds of `randint` and
//! `truncated_normal`, complex64 `normal`, float64 `p` in `bernoulli`, float64 logits on the
//! inverse-CDF path of `categorical`, and `multivariate_normal` (these return `Unsupported`
//! where the signature can express them).

mod multivariate;
pub use multivariate::multivariate_normal;

use alloc::vec::Vec;

use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops;
use crate::primitive::Primitive;
use crate::random::threefry::{self, Key};
use crate::shape::{broadcast_shapes, checked_size};

/// An `f32` parameter stored by bit pattern so the op can derive `Eq` and `Hash`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct F32(pub u32);

impl F32 {
    /// Wraps a value.
    pub fn new(v: f32) -> Self {
        F32(v.to_bits())
    }
    /// The value.
    pub fn get(self) -> f32 {
        f32::from_bits(self.0)
    }
}

/// The random family's primitives. Input 0 is always the key (`uint32`, shape `(2,)`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum RandomOp {
    /// `bits(shape, width)`: raw draws as uint8 / uint16 / uint32 (by the output dtype).
    Bits,
    /// `uniform(low, high)` in the output dtype (f32, f16, bf16).
    Uniform {
        /// Lower bound (cast to the dtype first).
        low: F32,
        /// Upper bound.
        high: F32,
    },
    /// `normal(loc, scale)` in the output dtype (f32, f16, bf16).
    Normal {
        /// Optional offset.
        loc: Option<F32>,
        /// Optional scale.
        scale: Option<F32>,
    },
    /// `truncated_normal(lower, upper)` in the output dtype (f32, f16, bf16).
    TruncatedNormal {
        /// Lower bound.
        lower: F32,
        /// Upper bound.
        upper: F32,
    },
    /// `gumbel()` in the output dtype (f32, f16, bf16).
    Gumbel,
    /// `laplace(loc, scale)` in the output dtype (f32, f16, bf16).
    Laplace {
        /// Location.
        loc: F32,
        /// Scale.
        scale: F32,
    },
    /// `bernoulli(p)`: input 1 is `p` as float32, of one element or the output's shape.
    Bernoulli,
    /// `randint(low, high)` into an integer or bool dtype.
    Randint {
        /// Lower bound (inclusive).
        low: i32,
        /// Upper bound (exclusive).
        high: i32,
    },
    /// MLX 0.32's inverse-CDF `categorical` for one distribution: input 1 is the float32
    /// logits, flattened; the output (uint32) has any shape.
    CategoricalInverseCdf,
    /// `permutation(n)`: output uint32 `(n,)`.
    Permutation,
}

impl RandomOp {
    /// The op's name.
    pub fn name(&self) -> &'static str {
        match self {
            RandomOp::Bits => "bits",
            RandomOp::Uniform { .. } => "uniform",
            RandomOp::Normal { .. } => "normal",
            RandomOp::TruncatedNormal { .. } => "truncated_normal",
            RandomOp::Gumbel => "gumbel",
            RandomOp::Laplace { .. } => "laplace",
            RandomOp::Bernoulli => "bernoulli",
            RandomOp::Randint { .. } => "randint",
            RandomOp::CategoricalInverseCdf => "categorical",
            RandomOp::Permutation => "permutation",
        }
    }
}

/// A sampler parameter: a scalar (a Python float) or an array (broadcast like MLX).
#[derive(Clone, Debug)]
pub enum Param {
    /// A scalar. MLX turns it into the sample dtype the way its `array(double, dtype)` does:
    /// exactly for float64, through float32 for the other dtypes.
    Scalar(f64),
    /// An array of any real dtype.
    Array(Array),
}

impl From<f32> for Param {
    fn from(v: f32) -> Self {
        Param::Scalar(f64::from(v))
    }
}
impl From<f64> for Param {
    fn from(v: f64) -> Self {
        Param::Scalar(v)
    }
}
impl From<Array> for Param {
    fn from(a: Array) -> Self {
        Param::Array(a)
    }
}
impl From<&Array> for Param {
    fn from(a: &Array) -> Self {
        Param::Array(a.clone())
    }
}

impl Param {
    /// The parameter as an array of `dtype`.
    fn to_array(&self, dtype: DType) -> Result<Array> {
        match self {
            Param::Scalar(v) => scalar_array(*v, dtype),
            Param::Array(a) => ops::astype(a, dtype),
        }
    }
}

/// A 0-d array of a real float `dtype` holding `v` as MLX's `array(double, dtype)` stores it:
/// exact in float64, rounded to float32 first otherwise (half types convert from float).
fn scalar_array(v: f64, dtype: DType) -> Result<Array> {
    if dtype == DType::Float64 {
        Array::scalar(v)
    } else {
        ops::astype(&Array::scalar(v as f32)?, dtype)
    }
}

/// A shape the way MLX prints it: `(2,3)`, `(2)`, `()`.
fn fmt_shape(shape: &[usize]) -> alloc::string::String {
    let mut s = alloc::string::String::from("(");
    for (i, d) in shape.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push_str(&alloc::format!("{d}"));
    }
    s.push(')');
    s
}

// ---- keys and the global key sequence -------------------------------------------------------

/// `mx.random.key(seed)`: a `uint32` array `[seed >> 32, seed & 0xffffffff]`.
pub fn key(seed: u64) -> Result<Array> {
    key_array(threefry::key(seed))
}

fn key_array(k: Key) -> Result<Array> {
    Array::from_slice(&k, &[2])
}

/// The global key sequence: MLX keeps one per thread, seeded from the clock (milliseconds
/// since the epoch, read once per process). With `std` we do the same; without `std` there is
/// no clock and one process-wide sequence starts from `key(0)` unless [`seed`] is called.
mod state {
    use crate::random::threefry::{self, Key};

    #[cfg(feature = "std")]
    fn time_seed() -> u64 {
        static SEED: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
        *SEED.get_or_init(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_millis() as u64)
                .unwrap_or(0)
        })
    }

    #[cfg(feature = "std")]
    std::thread_local! {
        static STATE: core::cell::Cell<Option<Key>> = const { core::cell::Cell::new(None) };
    }

    /// Sets the calling thread's sequence to `key(s)`.
    #[cfg(feature = "std")]
    pub fn seed(s: u64) {
        STATE.with(|c| c.set(Some(threefry::key(s))));
    }

    /// `state, sub = split(state)`; returns `sub`.
    #[cfg(feature = "std")]
    pub fn next() -> Key {
        STATE.with(|c| {
            let cur = c.get().unwrap_or_else(|| threefry::key(time_seed()));
            let [keep, sub] = threefry::split2(cur);
            c.set(Some(keep));
            sub
        })
    }

    #[cfg(not(feature = "std"))]
    static STATE: spin::Mutex<Option<Key>> = spin::Mutex::new(None);

    /// Sets the sequence to `key(s)`.
    #[cfg(not(feature = "std"))]
    pub fn seed(s: u64) {
        *STATE.lock() = Some(threefry::key(s));
    }

    /// `state, sub = split(state)`; returns `sub`.
    #[cfg(not(feature = "std"))]
    pub fn next() -> Key {
        let mut st = STATE.lock();
        let cur = st.unwrap_or_else(|| threefry::key(0));
        let [keep, sub] = threefry::split2(cur);
        *st = Some(keep);
        sub
    }
}

/// `mx.random.seed(s)`: restarts the global key sequence at `key(s)` (the calling thread's,
/// with `std`).
pub fn seed(s: u64) {
    state::seed(s)
}

/// The next key of the global sequence (what a sampler called without a key uses).
pub fn next_key() -> Result<Array> {
    key_array(state::next())
}

/// The key to draw with: `key` after MLX's checks, or the next global key. Called after the
/// sampler's own checks, so a rejected call does not advance the sequence (as in MLX).
fn resolve_key(key: Option<&Array>) -> Result<Array> {
    match key {
        None => next_key(),
        Some(k) => {
            if k.dtype() != DType::Uint32 {
                return Err(Error::invalid(
                    "bits",
                    alloc::format!("Expected key type uint32 but received {}.", k.dtype()),
                ));
            }
            if k.shape() != [2] {
                return Err(Error::invalid(
                    "bits",
                    alloc::format!("Expected key shape (2) but received {}.", fmt_shape(k.shape())),
                ));
            }
            Ok(k.clone())
        }
    }
}

fn record(op: RandomOp, inputs: Vec<Array>, shape: &[usize], dtype: DType) -> Result<Array> {
    checked_size(shape, op.name())?;
    Ok(Array::from_op(Primitive::Random(op), inputs, shape.to_vec(), dtype))
}

/// `bits(shape, width, key)` (MLX's C++ `random::bits`): uint8, uint16 or uint32 draws for
/// width 1, 2 or 4.
pub fn bits(shape: &[usize], width: usize, key: Option<&Array>) -> Result<Array> {
    let dtype = match width {
        1 => DType::Uint8,
        2 => DType::Uint16,
        4 => DType::Uint32,
        _ => {
            return Err(Error::invalid("bits", alloc::format!("Bit width must be in {{1, 2, 4}} but got {width}.")))
        }
    };
    let k = resolve_key(key)?;
    record(RandomOp::Bits, alloc::vec![k], shape, dtype)
}

/// `mx.random.split(key, num)`: `num` new keys, a uint32 array of shape `(num, 2)`.
pub fn split(key: &Array, num: usize) -> Result<Array> {
    let k = resolve_key(Some(key))?;
    let n = num.checked_mul(2).ok_or_else(|| Error::invalid("split", "Too many keys."))?;
    let flat = record(RandomOp::Bits, alloc::vec![k], &[n], DType::Uint32)?;
    ops::reshape(&flat, &[num as isize, 2])
}

// ---- samplers ---------------------------------------------------------------------------------

/// f32, f16 and bf16: the dtypes the kernels sample into directly.
fn kernel_float(dtype: DType) -> bool {
    matches!(dtype, DType::Float32 | DType::Float16 | DType::Bfloat16)
}

/// MLX's `uniform` dtype checks (also behind `gumbel` and `truncated_normal`).
fn check_uniform_dtype(dtype: DType) -> Result<()> {
    if !dtype.is_float() {
        return Err(Error::invalid("uniform", "Can only generate uniform numbers with real floating point type."));
    }
    if !kernel_float(dtype) {
        // MLX raises this when it evaluates (its uniform kernel has no float64 path).
        return Err(Error::runtime("uniform", "Unsupported type."));
    }
    Ok(())
}

/// `mx.random.uniform(low, high, shape, dtype, key)`: `low`/`high` are scalars or arrays that
/// broadcast to `shape`.
pub fn uniform(low: impl Into<Param>, high: impl Into<Param>, shape: &[usize], dtype: DType, key: Option<&Array>) -> Result<Array> {
    check_uniform_dtype(dtype)?;
    match (low.into(), high.into()) {
        (Param::Scalar(lo), Param::Scalar(hi)) => {
            let k = resolve_key(key)?;
            let (lo, hi) = (F32::new(lo as f32), F32::new(hi as f32));
            record(RandomOp::Uniform { low: lo, high: hi }, alloc::vec![k], shape, dtype)
        }
        (lo, hi) => {
            // MLX: range = hi - lo in dtype; out = range * u + lo.
            let lo = lo.to_array(dtype)?;
            let hi = hi.to_array(dtype)?;
            let range = ops::subtract(&hi, &lo)?;
            let out_shape = broadcast_shapes(shape, range.shape(), "broadcast_shapes")?;
            if out_shape != shape {
                return Err(Error::invalid(
                    "uniform",
                    alloc::format!(
                        "Cannot generate random values of shape {} from broadcasted shape {}.",
                        fmt_shape(shape),
                        fmt_shape(&out_shape)
                    ),
                ));
            }
            let k = resolve_key(key)?;
            // uniform(0, 1) in dtype is exactly MLX's clamped `u` cast to dtype.
            let u = record(RandomOp::Uniform { low: F32::new(0.0), high: F32::new(1.0) }, alloc::vec![k], shape, dtype)?;
            ops::add(&ops::multiply(&range, &u)?, &lo)
        }
    }
}

/// `nextafter(-1.0f, 0.0f)`, the lower end of the draws behind `normal`.
const NEG_BELOW_ONE: f32 = -0.999_999_94;

/// `mx.random.normal(shape, dtype, loc, scale, key)`. `loc`/`scale` are optional scalars or
/// arrays (which broadcast with `shape`, as MLX's composition does).
pub fn normal(shape: &[usize], dtype: DType, loc: Option<Param>, scale: Option<Param>, key: Option<&Array>) -> Result<Array> {
    if !(dtype.is_float() || dtype == DType::Complex64) {
        return Err(Error::invalid("normal", "Only floating point and complex64 types are supported."));
    }
    if dtype == DType::Complex64 {
        return complex_normal(shape, loc, scale, key);
    }
    let scalar = |p: &Option<Param>| match p {
        None => Some(None),
        Some(Param::Scalar(v)) => Some(Some(F32::new(*v as f32))),
        Some(Param::Array(_)) => None,
    };
    if kernel_float(dtype) {
        if let (Some(l), Some(s)) = (scalar(&loc), scalar(&scale)) {
            let k = resolve_key(key)?;
            return record(RandomOp::Normal { loc: l, scale: s }, alloc::vec![k], shape, dtype);
        }
    }
    // MLX's composition: sqrt2[*scale] * dtype(erfinv(u_f32)) [+ loc].
    let mut factor = scalar_array(core::f64::consts::SQRT_2, dtype)?;
    if let Some(s) = &scale {
        factor = ops::multiply(&factor, &s.to_array(dtype)?)?;
    }
    let loc = loc.map(|l| l.to_array(dtype)).transpose()?;
    let k = resolve_key(key)?;
    let u = record(
        RandomOp::Uniform { low: F32::new(NEG_BELOW_ONE), high: F32::new(1.0) },
        alloc::vec![k],
        shape,
        DType::Float32,
    )?;
    let e = ops::astype(&ops::erfinv(&u)?, dtype)?;
    let out = ops::multiply(&factor, &e)?;
    match loc {
        Some(l) => ops::add(&l, &out),
        None => Ok(out),
    }
}

/// MLX's `complex_normal`: `shape + (2,)` draws of `erfinv(u)` (no √2: each part has
/// variance ½) viewed as complex64, then `scale * z` and `loc + z` with `loc`/`scale` taken as
/// they come (complex or real; a Python scalar becomes a complex64 scalar, as MLX's binding
/// makes it).
fn complex_normal(shape: &[usize], loc: Option<Param>, scale: Option<Param>, key: Option<&Array>) -> Result<Array> {
    let as_array = |p: Param| match p {
        Param::Scalar(v) => ops::astype(&Array::scalar(v as f32)?, DType::Complex64),
        Param::Array(a) => Ok(a),
    };
    let scale = scale.map(as_array).transpose()?;
    let loc = loc.map(as_array).transpose()?;
    let mut shape2 = shape.to_vec();
    shape2.push(2);
    let k = resolve_key(key)?;
    let u = record(
        RandomOp::Uniform { low: F32::new(NEG_BELOW_ONE), high: F32::new(1.0) },
        alloc::vec![k],
        &shape2,
        DType::Float32,
    )?;
    let z = ops::squeeze(&ops::view(&ops::erfinv(&u)?, DType::Complex64)?, Some(&[-1]))?;
    let z = match scale {
        Some(s) => ops::multiply(&s, &z)?,
        None => z,
    };
    match loc {
        Some(l) => ops::add(&l, &z),
        None => Ok(z),
    }
}

/// `mx.random.truncated_normal(lower, upper, shape, dtype, key)` with array bounds (MLX's
/// signature): 0-d bounds use the sampling kernel; any other bounds compose MLX's ops in
/// MLX's order (`erf` of the bounds over √2, a uniform between them, `√2·erfinv`, clipped),
/// so the samples stay bit-identical. `shape` `None` is the bounds' broadcast shape.
pub fn truncated_normal_bounds(
    lower: &Array,
    upper: &Array,
    shape: Option<&[usize]>,
    dtype: DType,
    key: Option<&Array>,
) -> Result<Array> {
    const OP: &str = "trunc_normal";
    if !dtype.is_float() {
        return Err(Error::invalid(OP, "trunc_normal only accepts floating point dtypes."));
    }
    let bshape = broadcast_shapes(lower.shape(), upper.shape(), "broadcast_shapes")?;
    let shape = shape.map(<[usize]>::to_vec).unwrap_or(bshape);
    if lower.ndim() == 0 && upper.ndim() == 0 && lower.dtype().is_float() && upper.dtype().is_float() && kernel_float(dtype) {
        let lo = ops::astype(lower, DType::Float32)?.to_vec::<f32>()?;
        let hi = ops::astype(upper, DType::Float32)?.to_vec::<f32>()?;
        return truncated_normal(lo[0], hi[0], Some(&shape), dtype, key);
    }
    check_uniform_dtype(dtype)?;
    let sqrt2 = scalar_array(core::f64::consts::SQRT_2, dtype)?;
    let lower_t = ops::astype(lower, dtype)?;
    let upper_t = ops::astype(upper, dtype)?;
    let a = ops::erf(&ops::divide(&lower_t, &sqrt2)?)?;
    let b = ops::erf(&ops::divide(&upper_t, &sqrt2)?)?;
    let u = uniform(a, b, &shape, dtype, key)?;
    let out = ops::multiply(&sqrt2, &ops::erfinv(&u)?)?;
    ops::maximum(&ops::minimum(&upper_t, &out)?, &lower_t)
}

/// `mx.random.truncated_normal(lower, upper, shape, dtype, key)` with scalar bounds; `shape`
/// `None` is the bounds' broadcast shape, `()`.
pub fn truncated_normal(lower: f32, upper: f32, shape: Option<&[usize]>, dtype: DType, key: Option<&Array>) -> Result<Array> {
    if !dtype.is_float() {
        return Err(Error::invalid("trunc_normal", "trunc_normal only accepts floating point dtypes."));
    }
    check_uniform_dtype(dtype)?;
    let k = resolve_key(key)?;
    let op = RandomOp::TruncatedNormal { lower: F32::new(lower), upper: F32::new(upper) };
    record(op, alloc::vec![k], shape.unwrap_or(&[]), dtype)
}

/// `mx.random.gumbel(shape, dtype, key)`.
pub fn gumbel(shape: &[usize], dtype: DType, key: Option<&Array>) -> Result<Array> {
    check_uniform_dtype(dtype)?;
    let k = resolve_key(key)?;
    record(RandomOp::Gumbel, alloc::vec![k], shape, dtype)
}

/// `mx.random.laplace(shape, dtype, loc, scale, key)` with scalar `loc`/`scale` (MLX takes
/// Python floats only).
pub fn laplace(shape: &[usize], dtype: DType, loc: f32, scale: f32, key: Option<&Array>) -> Result<Array> {
    if !dtype.is_float() {
        return Err(Error::invalid("laplace", "Only real floating point types are supported."));
    }
    let k = resolve_key(key)?;
    if kernel_float(dtype) {
        return record(RandomOp::Laplace { loc: F32::new(loc), scale: F32::new(scale) }, alloc::vec![k], shape, dtype);
    }
    // float64: MLX draws u in f32 on (-1, 1), casts it, and computes
    // sign(u) * log1p(-|u|), the scale and the offset in the dtype.
    let u = record(
        RandomOp::Uniform { low: F32::new(NEG_BELOW_ONE), high: F32::new(1.0) },
        alloc::vec![k],
        shape,
        DType::Float32,
    )?;
    let u = ops::astype(&u, dtype)?;
    let mut out = ops::multiply(&ops::sign(&u)?, &ops::log1p(&ops::negative(&ops::abs(&u)?)?)?)?;
    if scale != 1.0 {
        out = ops::multiply(&scalar_array(f64::from(scale), dtype)?, &out)?;
    }
    if loc != 0.0 {
        out = ops::add(&scalar_array(f64::from(loc), dtype)?, &out)?;
    }
    Ok(out)
}

/// `mx.random.bernoulli(p, shape, key)`: `p` a scalar or a float array (float64 `p` is not
/// supported); `shape` `None` is `p`'s shape.
pub fn bernoulli(p: impl Into<Param>, shape: Option<&[usize]>, key: Option<&Array>) -> Result<Array> {
    let p = match p.into() {
        Param::Scalar(v) => Array::scalar(v as f32)?,
        Param::Array(a) => a,
    };
    if !p.dtype().is_float() {
        return Err(Error::invalid("bernoulli", "bernoulli probability `p` must be a float type."));
    }
    if p.dtype() == DType::Float64 {
        return Err(Error::unsupported("bernoulli", "float64 `p` is not implemented."));
    }
    let shape = match shape {
        None => p.shape().to_vec(),
        Some(s) => {
            let b = broadcast_shapes(p.shape(), s, "broadcast_shapes")?;
            if b != s {
                return Err(Error::invalid("bernoulli", "shape of `p` is incompatible with argument `shape`."));
            }
            s.to_vec()
        }
    };
    let p32 = ops::astype(&p, DType::Float32)?;
    let p32 = if p32.size() == 1 { ops::reshape(&p32, &[])? } else { ops::broadcast_to(&p32, &shape)? };
    let k = resolve_key(key)?;
    record(RandomOp::Bernoulli, alloc::vec![k, p32], &shape, DType::Bool)
}

/// `mx.random.randint(low, high, shape, dtype, key)` with int32 scalar bounds; `dtype` is
/// an integer type or bool. MLX 0.32 semantics: `low >= high` gives `low` everywhere.
pub fn randint(low: i32, high: i32, shape: &[usize], dtype: DType, key: Option<&Array>) -> Result<Array> {
    if !(dtype.is_integer() || dtype == DType::Bool) {
        return Err(Error::invalid("randint", "randint only accepts integer dtypes and bool."));
    }
    let k = resolve_key(key)?;
    record(RandomOp::Randint { low, high }, alloc::vec![k], shape, dtype)
}

/// `mx.random.randint(low, high, shape, dtype, key)` with array bounds (MLX's signature):
/// 0-d integer bounds that fit int32 use the sampling kernel; any other bounds (broadcast
/// arrays, 64-bit values, float bounds) compose MLX's ops in MLX's order — a float32 uniform
/// between the bounds, `floor`, the cast, then the clamp to `[low, high - 1]` — so the
/// samples stay bit-identical.
pub fn randint_bounds(low: &Array, high: &Array, shape: &[usize], dtype: DType, key: Option<&Array>) -> Result<Array> {
    if !(dtype.is_integer() || dtype == DType::Bool) {
        return Err(Error::invalid("randint", "randint only accepts integer dtypes and bool."));
    }
    let int32_scalar = |a: &Array| -> Result<Option<i32>> {
        if a.ndim() != 0 || !a.dtype().is_integer() {
            return Ok(None);
        }
        let v = ops::astype(a, DType::Int64)?.to_vec::<i64>()?;
        Ok(i32::try_from(v[0]).ok())
    };
    if let (Some(lo), Some(hi)) = (int32_scalar(low)?, int32_scalar(high)?) {
        return randint(lo, hi, shape, dtype, key);
    }
    let u = uniform(low, high, shape, DType::Float32, key)?;
    let out = ops::astype(&ops::floor(&u)?, dtype)?;
    let one = ops::astype(&Array::scalar(1i32)?, high.dtype())?;
    let hi = ops::astype(&ops::subtract(high, &one)?, dtype)?;
    ops::maximum(&ops::minimum(&out, &hi)?, &ops::astype(low, dtype)?)
}

/// `mx.random.categorical(logits, axis, shape, num_samples, key)`: uint32 category indices.
///
/// At most one of `shape` and `num_samples`. With `num_samples` the output is the logits'
/// shape without `axis`, plus `(num_samples,)`; with `shape` it is `shape` (which must
/// broadcast with the logits' shape without `axis`); otherwise the logits' shape without
/// `axis`. MLX 0.32 uses the inverse CDF when the logits hold one distribution and the output
/// is not 0-d, and Gumbel-max (`argmax(gumbel + logits)`) otherwise; both are reproduced.
pub fn categorical(
    logits: &Array,
    axis: isize,
    shape: Option<&[usize]>,
    num_samples: Option<usize>,
    key: Option<&Array>,
) -> Result<Array> {
    const OP: &str = "categorical";
    if shape.is_some() && num_samples.is_some() {
        return Err(Error::invalid(OP, "At most one of shape or num_samples can be specified."));
    }
    let nd = logits.ndim();
    let ax = {
        let n = nd as isize;
        let a = if axis < 0 { axis + n } else { axis };
        if a < 0 || a >= n {
            return Err(Error::index(OP, alloc::format!("Invalid axis {axis} for logits with {nd} dimensions.")));
        }
        a as usize
    };
    let classes = logits.shape()[ax];
    let mut reduced = logits.shape().to_vec();
    reduced.remove(ax);
    // (logits as they broadcast against the noise, output shape, axis of the classes in the noise)
    let (lg, out_shape, offset) = match (shape, num_samples) {
        (_, Some(ns)) => {
            let mut s = reduced.clone();
            s.push(ns);
            (ops::expand_dims(logits, &[-1])?, s, ax)
        }
        (Some(s), None) => {
            if broadcast_shapes(s, &reduced, "broadcast_shapes")? != s {
                return Err(Error::invalid(OP, "Requested shape does not broadcast with logits."));
            }
            // s.len() >= nd - 1 here, so the offset is not negative.
            (logits.clone(), s.to_vec(), ax + s.len() + 1 - nd)
        }
        (None, None) => (logits.clone(), reduced.clone(), ax),
    };
    if classes == 0 {
        return Err(Error::invalid("argmax", "Cannot argmax reduce zero size array."));
    }
    if logits.size() == classes && !out_shape.is_empty() {
        if logits.dtype() == DType::Float64 || logits.dtype() == DType::Complex64 {
            return Err(Error::unsupported(OP, "Only real logits of up to 32 bits are implemented."));
        }
        let flat = ops::reshape(&ops::astype(logits, DType::Float32)?, &[classes as isize])?;
        let k = resolve_key(key)?;
        return record(RandomOp::CategoricalInverseCdf, alloc::vec![k, flat], &out_shape, DType::Uint32);
    }
    let mut gshape = out_shape.clone();
    gshape.insert(offset, classes);
    let g = gumbel(&gshape, DType::Float32, key)?;
    ops::argmax(&ops::add(&g, &lg)?, Some(offset as isize), false)
}

/// `mx.random.permutation(n)`: a random permutation of `0..n` as uint32.
pub fn permutation_n(n: usize, key: Option<&Array>) -> Result<Array> {
    let k = resolve_key(key)?;
    record(RandomOp::Permutation, alloc::vec![k], &[n], DType::Uint32)
}

/// `mx.random.permutation(x, axis)`: `x` with its entries along `axis` randomly permuted.
pub fn permutation(x: &Array, axis: isize, key: Option<&Array>) -> Result<Array> {
    let nd = x.ndim() as isize;
    let a = if axis < 0 { axis + nd } else { axis };
    if a < 0 || a >= nd {
        return Err(Error::index("permutation", "SmallVector out of range."));
    }
    let perm = permutation_n(x.shape()[a as usize], key)?;
    ops::take(x, &perm, Some(a))
}
