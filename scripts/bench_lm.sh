#!/usr/bin/env bash
# Side-by-side language-model speed: `mlx-arm bench` and llama.cpp's `llama-bench` on the same
# GGUF with the same threads, in one run. Prints pp128 / tg64 tok/s of both and their ratio,
# our time to first token for a 32-token prompt beside llama.cpp's time for the same prompt
# (32 / its pp32 tok/s), and our peak RSS against the file size plus the KV cache.
#
# Usage: bash scripts/bench_lm.sh [-t THREADS] [-r REPS] [-m MODEL.gguf ...]
#   THREADS  default 2 (several: -t "2 16")
#   REPS     repetitions per figure (default 5; medians are reported)
#   MODEL    default: the model scripts/setup.sh installs
# Environment:
#   MLX_ARM     the mlx-arm binary (default target/release/mlx-arm, built if absent)
#   LLAMA_BENCH llama-bench (default $LLAMA_ROOT/src/build/bin/llama-bench, LLAMA_ROOT=/tmp/llama;
#               built with $LLAMA_ANCHORS/build.sh if absent, LLAMA_ANCHORS=/work/shared/anchors/llamacpp)
# llama-bench runs with its defaults (f16 KV cache, flash attention auto, mmap), as the anchor
# figures in /work/shared/anchors/llamacpp were measured.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
THREADS=2; REPS=5; MODELS=()
while getopts "t:r:m:" o; do
  case $o in
    t) THREADS=$OPTARG ;;
    r) REPS=$OPTARG ;;
    m) MODELS+=("$OPTARG") ;;
    *) sed -n '2,16p' "$0"; exit 2 ;;
  esac
done
[ ${#MODELS[@]} -gt 0 ] || MODELS=("${MLX_ARM_MODEL_DIR:-$HOME/.cache/mlx-arm/models}/SmolLM2-135M-Instruct.Q4_1.gguf")

MLX=${MLX_ARM:-$ROOT/target/release/mlx-arm}
if [ ! -x "$MLX" ]; then
  (cd "$ROOT" && cargo build --release -p mlx-arm-cli)
fi
LLAMA_ROOT=${LLAMA_ROOT:-/tmp/llama}
LB=${LLAMA_BENCH:-$LLAMA_ROOT/src/build/bin/llama-bench}
if [ ! -x "$LB" ]; then
  ANCH=${LLAMA_ANCHORS:-/work/shared/anchors/llamacpp}
  echo "llama-bench not found at $LB: building llama.cpp with $ANCH/build.sh (needs cmake: apt-get install cmake)" >&2
  LLAMA_ROOT=$LLAMA_ROOT bash "$ANCH/build.sh" >&2
fi

# Mean tok/s of one llama-bench test (jsonl has avg_ts per test).
llama_ts() { # model threads "-p P -n N"
  # shellcheck disable=SC2086
  "$LB" -m "$1" -t "$2" $3 -r "$REPS" -o jsonl 2>/dev/null | python3 -c \
    'import sys, json; print("%.1f" % [json.loads(l)["avg_ts"] for l in sys.stdin if l.strip()][-1])'
}

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; $(date -u +%FT%TZ)"
printf '| model | threads | test | mlx-arm | llama.cpp | ratio |\n|---|---:|---|---:|---:|---:|\n'
for M in "${MODELS[@]}"; do
  name=$(basename "$M")
  for T in $THREADS; do
    ours=$("$MLX" bench -m "$M" -t "$T" -p 128 -n 64 -r "$REPS" --ttft-tokens 32)
    pp=$(awk -F'|' '$5 ~ /pp128/ {gsub(/ /,"",$6); print $6}' <<<"$ours")
    tg=$(awk -F'|' '$5 ~ /tg64/ {gsub(/ /,"",$6); print $6}' <<<"$ours")
    ttft=$(sed -n 's/^time to first token, 32-token prompt: \([0-9.]*\) ms.*/\1/p' <<<"$ours")
    rss=$(sed -n 's/^peak RSS: //p' <<<"$ours")
    lpp=$(llama_ts "$M" "$T" "-p 128 -n 0")
    ltg=$(llama_ts "$M" "$T" "-p 0 -n 64")
    lpp32=$(llama_ts "$M" "$T" "-p 32 -n 0")
    lttft=$(python3 -c "print('%.1f' % (32e3 / $lpp32))")
    ratio() { python3 -c "print('%.2fx' % ($1 / $2))"; }
    echo "| $name | $T | pp128 tok/s | $pp | $lpp | $(ratio "$pp" "$lpp") |"
    echo "| $name | $T | tg64 tok/s | $tg | $ltg | $(ratio "$tg" "$ltg") |"
    echo "| $name | $T | first token, 32-token prompt (ms) | $ttft | $lttft (32 / pp32) | $(ratio "$lttft" "$ttft") |"
    echo "| $name | $T | peak RSS (mlx-arm) | $rss | | |"
  done
done
