#!/usr/bin/env bash
# Guest instructions per matmul of the aarch64 GGUF kernels under qemu-user (no aarch64
# hardware here: a proxy, not a timing). For each type, level and path: one run with
# --iters 0 (setup only) and one with --iters $ITERS; prints (difference / ITERS) per weight
# byte and per FLOP. Results: docs/BENCHMARKS.md "aarch64 quantized matmul under qemu".
#   bash scripts/qemu-insn/run.sh            # M=1 (decode GEMV) and M=8 (GEMM tile)
# Env: N (weight rows, 1024), K (4096), ITERS (2), TYPES, MS, LEVELS (level:path pairs),
# QEMU_CPU (max; e.g. max,sve-default-vector-length=32 for 256-bit SVE).
set -euo pipefail
cd "$(dirname "$0")/../.."
TARGET=aarch64-unknown-linux-gnu
N=${N:-1024} K=${K:-4096} ITERS=${ITERS:-2}
TYPES=${TYPES:-"q4_0 q4_1 q8_0 q4_k q6_k"} MS=${MS:-"1 8"}
LEVELS=${LEVELS:-"portable:dot neon:dot neon:prepared dotprod:dot dotprod:prepared"} QEMU_CPU=${QEMU_CPU:-max}
PLUGIN=target/qemu-insn/libinsn.so
mkdir -p "$(dirname "$PLUGIN")"
gcc -O2 -shared -fPIC -o "$PLUGIN" scripts/qemu-insn/insn.c
nice -n 19 cargo build -q -p mlx-arm-core --release --target $TARGET --example ggml_insn_count
BIN=target/$TARGET/release/examples/ggml_insn_count
count() { # args... -> instructions
  local f; f=$(mktemp)
  QEMU_CPU=$QEMU_CPU nice -n 19 qemu-aarch64 -L /usr/aarch64-linux-gnu -E LD_LIBRARY_PATH=/usr/aarch64-linux-gnu/lib \
    -plugin "$PLUGIN,outfile=$f" "$BIN" "$@" >/dev/null
  awk '{print $2}' "$f"; rm -f "$f"
}
printf '%-5s %2s %-9s %-9s %14s %10s %10s %7s\n' type m level path insns/matmul insn/wbyte insn/flop vs-port
for ty in $TYPES; do
  for m in $MS; do
    base=""
    for lp in $LEVELS; do
      level=${lp%%:*} path=${lp##*:}
      a=(--type "$ty" --level "$level" --path "$path" --m "$m" --n "$N" --k "$K")
      c0=$(count "${a[@]}" --iters 0); c1=$(count "${a[@]}" --iters "$ITERS")
      per=$(( (c1 - c0) / ITERS ))
      [ -z "$base" ] && base=$per
      awk -v t="$ty" -v m="$m" -v l="$level" -v p="$path" -v per="$per" -v n="$N" -v k="$K" -v ty="$ty" -v base="$base" 'BEGIN{
        bpe = (ty=="q4_0")?18/32:(ty=="q4_1")?20/32:(ty=="q8_0")?34/32:(ty=="q4_k")?144/256:(ty=="q5_k")?176/256:(ty=="q2_k")?84/256:(ty=="q3_k")?110/256:210/256;
        printf "%-5s %2d %-9s %-9s %14d %10.3f %10.4f %6.2fx\n", t, m, l, p, per, per/(n*k*bpe), per/(2*m*n*k), base/per }'
    done
  done
done
