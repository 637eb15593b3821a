#!/usr/bin/env bash
# Builds /tmp/ggml-ref/libggmlref.so: ggml's C reference quantizers (ggml/src/ggml-quants.c) and its
# portable dot products (ggml/src/ggml-cpu/quants.c, the *_generic functions) from the same llama.cpp
# the team anchors on (vendored in the PyPI sdist llama-cpp-python==0.3.36 = ggml-org/llama.cpp@0c1e57098,
# see /work/shared/anchors/llamacpp/build.sh). gen_ggml.py loads it with ctypes to produce golden bytes
# for the formats gguf-py cannot quantize (K-quants, Q8_1, Q8_K) and golden dot products.
# -ffp-contract=off: no fused multiply-add, i.e. plain IEEE float semantics, the same as Rust's.
# -DNDEBUG: as in a Release build (nearest_int asserts on NaN/huge inputs otherwise).
set -euo pipefail
ROOT=${GGML_REF_ROOT:-/tmp/ggml-ref}
VER=0.3.36
mkdir -p "$ROOT"
cd "$ROOT"
if [ ! -f "llama_cpp_python-$VER.tar.gz" ]; then
  pip download --no-binary :all: --no-deps --no-build-isolation "llama-cpp-python==$VER" || true
fi
if [ ! -d ggml ]; then
  tar xzf "llama_cpp_python-$VER.tar.gz" "llama_cpp_python-$VER/vendor/llama.cpp/ggml"
  ln -sfn "llama_cpp_python-$VER/vendor/llama.cpp/ggml" ggml
fi
cat > stubs.c <<'C'
// Just enough of ggml.c for ggml-quants.c and ggml-cpu/quants.c to link.
#include "ggml-impl.h"
#include <stdio.h>
#include <stdlib.h>
float ggml_table_f32_f16[1 << 16];
void ggmlref_init(void) {
    for (int i = 0; i < (1 << 16); ++i) ggml_table_f32_f16[i] = ggml_compute_fp16_to_fp32((ggml_fp16_t) i);
}
void ggml_abort(const char * file, int line, const char * fmt, ...) { fprintf(stderr, "abort %s:%d\n", file, line); abort(); }
size_t ggml_row_size(enum ggml_type type, int64_t ne) { (void) type; (void) ne; abort(); }
size_t ggml_type_size(enum ggml_type type) { (void) type; abort(); }
const char * ggml_type_name(enum ggml_type type) { (void) type; return "?"; }
C
FLAGS="-O2 -DNDEBUG -ffp-contract=off -fPIC -Iggml/include -Iggml/src -Iggml/src/ggml-cpu"
gcc $FLAGS -c ggml/src/ggml-quants.c -o quants_ref.o
gcc $FLAGS -c ggml/src/ggml-cpu/quants.c -o quants_cpu.o
gcc $FLAGS -c stubs.c -o stubs.o
gcc -shared -o libggmlref.so quants_ref.o quants_cpu.o stubs.o -lm
echo "built $ROOT/libggmlref.so"
