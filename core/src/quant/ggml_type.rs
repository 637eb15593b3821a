//! GGML tensor types with their GGUF numbering, block length and block byte size —
//! the one table every GGUF reader, writer and kernel consults.

macro_rules! ggml_types {
    ($( $variant:ident = $id:literal, $name:literal, $block:literal, $bytes:literal; )*) => {
        /// A GGML/GGUF tensor type. Discriminants are GGUF's `ggml_type` numbers.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[cfg_attr(feature = "defmt", derive(defmt::Format))]
        #[repr(u32)]
        #[allow(non_camel_case_types)]
        pub enum GgmlType { $( #[doc = $name] $variant = $id, )* }

        impl GgmlType {
            /// Every type in the table.
            pub const ALL: &'static [GgmlType] = &[$(GgmlType::$variant),*];
            /// ggml's name (`"q4_0"`, `"f16"` …).
            pub const fn name(self) -> &'static str { match self { $(GgmlType::$variant => $name,)* } }
            /// Elements per block (1 for plain types).
            pub const fn block_len(self) -> usize { match self { $(GgmlType::$variant => $block,)* } }
            /// Bytes per block.
            pub const fn block_bytes(self) -> usize { match self { $(GgmlType::$variant => $bytes,)* } }
            /// The GGUF type number.
            pub const fn id(self) -> u32 { self as u32 }
            /// Inverse of [`GgmlType::id`]; `None` for unknown or retired numbers.
            pub const fn from_id(id: u32) -> Option<GgmlType> {
                match id { $($id => Some(GgmlType::$variant),)* _ => None }
            }
        }
    };
}

ggml_types! {
    F32 = 0, "f32", 1, 4;
    F16 = 1, "f16", 1, 2;
    Q4_0 = 2, "q4_0", 32, 18;
    Q4_1 = 3, "q4_1", 32, 20;
    Q5_0 = 6, "q5_0", 32, 22;
    Q5_1 = 7, "q5_1", 32, 24;
    Q8_0 = 8, "q8_0", 32, 34;
    Q8_1 = 9, "q8_1", 32, 36;
    Q2_K = 10, "q2_K", 256, 84;
    Q3_K = 11, "q3_K", 256, 110;
    Q4_K = 12, "q4_K", 256, 144;
    Q5_K = 13, "q5_K", 256, 176;
    Q6_K = 14, "q6_K", 256, 210;
    Q8_K = 15, "q8_K", 256, 292;
    IQ2_XXS = 16, "iq2_xxs", 256, 66;
    IQ2_XS = 17, "iq2_xs", 256, 74;
    IQ3_XXS = 18, "iq3_xxs", 256, 98;
    IQ1_S = 19, "iq1_s", 256, 50;
    IQ4_NL = 20, "iq4_nl", 32, 18;
    IQ3_S = 21, "iq3_s", 256, 110;
    IQ2_S = 22, "iq2_s", 256, 82;
    IQ4_XS = 23, "iq4_xs", 256, 136;
    I8 = 24, "i8", 1, 1;
    I16 = 25, "i16", 1, 2;
    I32 = 26, "i32", 1, 4;
    I64 = 27, "i64", 1, 8;
    F64 = 28, "f64", 1, 8;
    IQ1_M = 29, "iq1_m", 256, 56;
    BF16 = 30, "bf16", 1, 2;
    TQ1_0 = 34, "tq1_0", 256, 54;
    TQ2_0 = 35, "tq2_0", 256, 66;
    MXFP4 = 39, "mxfp4", 32, 17;
    NVFP4 = 40, "nvfp4", 64, 36;
    Q1_0 = 41, "q1_0", 128, 18;
    Q2_0 = 42, "q2_0", 64, 18;
}

impl GgmlType {
    /// Bytes taken by a row of `n` elements, or `None` when `n` is not a whole number of
    /// blocks or the size overflows.
    pub fn row_bytes(self, n: usize) -> Option<usize> {
        if n % self.block_len() != 0 {
            return None;
        }
        (n / self.block_len()).checked_mul(self.block_bytes())
    }
    /// Is this a block-quantized type (as opposed to plain f32/f16/bf16/ints)?
    pub const fn is_quantized(self) -> bool {
        self.block_len() > 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_sizes_are_whole() {
        for t in GgmlType::ALL {
            assert_eq!(GgmlType::from_id(t.id()), Some(*t));
        }
        assert_eq!(GgmlType::from_id(4), None);
        assert_eq!(GgmlType::Q4_0.row_bytes(64), Some(36));
        assert_eq!(GgmlType::Q4_0.row_bytes(33), None);
    }
}
