//! Graph-building operations, one module per family. Each validates its arguments (errors
//! are tagged with the op's name), promotes dtypes, broadcasts, computes the output shape and
//! records a node; nothing is computed until [`crate::eval`].

pub mod binary;
pub mod composite;
pub mod cast;
pub mod creation;
pub mod fast;
pub mod fft;
pub mod fused;
pub mod gather_mm;
pub mod index;
pub mod linalg;
pub mod quantized;
pub mod random;
pub mod reduce;
pub mod shape;
pub mod sort;
pub mod unary;
// ops3: windows, diff, vector products, hadamard, depends
pub mod depends;
pub mod difference;
pub mod hadamard;
pub mod vecprod;
pub mod window;

pub use binary::*;
pub use composite::*;
pub use cast::*;
pub use creation::*;
pub use index::*;
pub use linalg::*;
pub use quantized::*;
pub use gather_mm::{gather_mm, gather_qqmm, qqmm};
pub use fast::{layer_norm, rms_norm, rope, scaled_dot_product_attention, RopeOffset, SdpaMask};
pub use reduce::*;
pub use shape::*;
pub use sort::*;
pub use unary::*;
pub use depends::depends;
pub use difference::diff;
pub use hadamard::hadamard_transform;
pub use vecprod::{cross, vecdot};
pub use window::{bartlett, blackman, hamming, hanning};
// More ops: unique, fast.cross_entropy, segmented_mm, block_masked_mm
pub mod cross_entropy;
pub mod masked_mm;
pub mod unique;
pub mod gated_delta;
pub mod mlxc_ops;
pub use masked_mm::{block_masked_mm, segmented_mm};
pub use unique::unique;
