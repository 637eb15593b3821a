//! MLX's random numbers, bit-identical with MLX 0.32 on the Linux CPU backend.
//!
//! Pure kernels over one key: [`threefry`] (key, the threefry2x32 hash, `bits`, `split`) and
//! [`samplers`] (uniform, normal, truncated_normal, gumbel, laplace, bernoulli, randint,
//! categorical, permutation), each returning a `Vec` of its element type. The array layer
//! wraps them as `mx.random.*`. See `docs/RANDOM.md` for the scheme and what is bit-exact.
//!
//! Bit-identity of `normal`, `truncated_normal`, `gumbel` and `laplace` needs glibc's
//! `logf`/`log1pf`, which the `std` feature provides on Linux; see [`fmath`].

pub mod float;
pub mod fmath;
pub mod int;
pub mod samplers;
pub mod threefry;

pub use float::RandFloat;
pub use int::RandInt;
pub use samplers::{
    bernoulli, categorical, gumbel, laplace, normal, permutation, randint, truncated_normal, uniform, Logits,
};
pub use threefry::{bits, bits_bytes, bits_words, key, split, split2, threefry2x32, Key};
