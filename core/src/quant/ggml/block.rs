//! The [`Block`] trait and the `ggml_block!` macro that declares a GGML block struct once:
//! `#[repr(C)]`, byte-array fields in ggml's order, and a compile-time check that its size
//! is the one in the [`GgmlType`](crate::quant::GgmlType) table (ggml's `static_assert`).
//!
//! Every field is a byte array (multi-byte scalars are little-endian, as GGUF stores them),
//! so a block has alignment 1 and is read from any, possibly unaligned, byte slice by a
//! plain copy — no `unsafe`, no alignment or endianness assumptions.

use crate::quant::GgmlType;

/// One GGML quantization block, stored exactly as ggml lays it out in memory and in GGUF.
pub trait Block: Copy + Sized + 'static {
    /// The GGML type this block belongs to.
    const TYPE: GgmlType;
    /// Size of one block in bytes (equals `TYPE.block_bytes()`, checked at compile time).
    const BYTES: usize;
    /// An all-zero block.
    const ZERO: Self;
    /// Copies a block out of `bytes` (its first [`Self::BYTES`] bytes; missing bytes read as 0 —
    /// callers hand in exact `chunks_exact` pieces).
    fn read(bytes: &[u8]) -> Self;
    /// Writes the block into the first [`Self::BYTES`] bytes of `out` (bytes past the end of
    /// a shorter `out` are dropped — callers hand in exact pieces).
    fn write(&self, out: &mut [u8]);
}

/// Declares a block struct whose fields are byte arrays, in ggml's field order.
macro_rules! ggml_block {
    (
        $(#[$doc:meta])*
        $name:ident = $ty:ident {
            $( $(#[$fdoc:meta])* $field:ident : $n:expr ),+ $(,)?
        }
    ) => {
        $(#[$doc])*
        #[repr(C)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct $name {
            $( $(#[$fdoc])* pub $field: [u8; $n], )+
        }

        const _: () = assert!(
            core::mem::size_of::<$name>() == $crate::quant::GgmlType::$ty.block_bytes()
        );
        const _: () = assert!(core::mem::align_of::<$name>() == 1);

        impl $crate::quant::ggml::block::Block for $name {
            const TYPE: $crate::quant::GgmlType = $crate::quant::GgmlType::$ty;
            const BYTES: usize = core::mem::size_of::<$name>();
            const ZERO: Self = $name { $( $field: [0; $n], )+ };

            fn read(bytes: &[u8]) -> Self {
                let mut b = Self::ZERO;
                let mut off = 0usize;
                $(
                    if let Some(src) = bytes.get(off..off + $n) {
                        b.$field.copy_from_slice(src);
                    }
                    off += $n;
                )+
                let _ = off;
                b
            }

            fn write(&self, out: &mut [u8]) {
                let mut off = 0usize;
                $(
                    if let Some(dst) = out.get_mut(off..off + $n) {
                        dst.copy_from_slice(&self.$field);
                    }
                    off += $n;
                )+
                let _ = off;
            }
        }
    };
}

pub(crate) use ggml_block;

/// Iterates the blocks of a byte slice whose length is a whole number of blocks
/// (a trailing partial block is ignored; the dispatcher rejects such lengths first).
pub(crate) fn blocks<B: Block>(bytes: &[u8]) -> impl Iterator<Item = B> + '_ {
    bytes.chunks_exact(B::BYTES).map(B::read)
}

/// Quantizes `src` block by block into `dst` with `f` (one `N`-element block → one `B`).
/// Stops at the shorter of the two; the dispatcher has already checked both lengths.
pub(crate) fn quantize_blocks<B: Block, const N: usize>(
    src: &[f32],
    dst: &mut [u8],
    mut f: impl FnMut(&[f32; N]) -> B,
) {
    for (x, y) in src.chunks_exact(N).zip(dst.chunks_exact_mut(B::BYTES)) {
        if let Ok(x) = <&[f32; N]>::try_from(x) {
            f(x).write(y);
        }
    }
}

/// Dequantizes `src` block by block into `dst` with `f` (one `B` → `N` floats).
pub(crate) fn dequantize_blocks<B: Block, const N: usize>(
    src: &[u8],
    dst: &mut [f32],
    mut f: impl FnMut(&B, &mut [f32; N]),
) {
    for (x, y) in src.chunks_exact(B::BYTES).zip(dst.chunks_exact_mut(N)) {
        if let Ok(y) = <&mut [f32; N]>::try_from(y) {
            f(&B::read(x), y);
        }
    }
}

/// Walks two rows of blocks in lockstep (weight block, activation block).
pub(crate) fn zip_blocks<'a, A: Block, B: Block>(
    a: &'a [u8],
    b: &'a [u8],
) -> impl Iterator<Item = (A, B)> + 'a {
    blocks::<A>(a).zip(blocks::<B>(b))
}
