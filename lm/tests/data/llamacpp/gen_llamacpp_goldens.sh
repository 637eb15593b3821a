#!/usr/bin/env bash
# Regenerates llamacpp_goldens.json: llama.cpp's greedy continuations and last-position
# logits of the default model (SmolLM2-135M-Instruct Q4_1) for a few prompts, the oracle of
# lm/tests/llamacpp_greedy.rs. Needs llama.cpp built by ../shared/anchors/llamacpp/build.sh
# (LLAMA_ROOT, default /tmp/llama) and a Python with numpy (PYTHON, default python3).
#
# The logits come from anchor_eval (token ids in, logits out) rebuilt here with an f32 KV cache:
# llama.cpp's default f16 cache rounds keys and values, which by itself moves this model's
# logits by ~0.15 on average and flips greedy choices at near-ties; ours keeps f32, so the
# like-for-like oracle is llama.cpp with f32 K and V.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=${LLAMA_ROOT:-/tmp/llama}
PY=${PYTHON:-python3}
MODEL=${MODEL:-${MLX_ARM_MODEL_DIR:-$HOME/.cache/mlx-arm/models}/SmolLM2-135M-Instruct.Q4_1.gguf}
ANCHOR_SRC=${ANCHOR_SRC:-$HERE/../../../../../shared/anchors/llamacpp/anchor_eval.cpp}
BIN="$ROOT/anchor-bin/anchor_eval_f32kv"
cd "$ROOT/src"
sed 's/    cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;/&\n    cp.type_k = GGML_TYPE_F32; cp.type_v = GGML_TYPE_F32;/' "$ANCHOR_SRC" > "$ROOT/anchor_eval_f32kv.cpp"
grep -q 'cp.type_k = GGML_TYPE_F32' "$ROOT/anchor_eval_f32kv.cpp"
g++ -std=c++17 -O2 -march=native -Iinclude -Iggml/include "$ROOT/anchor_eval_f32kv.cpp" \
    build/src/libllama.a build/ggml/src/libggml.a build/ggml/src/libggml-cpu.a build/ggml/src/libggml-base.a \
    -fopenmp -lpthread -o "$BIN"
"$PY" "$HERE/gen_llamacpp_goldens.py" "$MODEL" "$ROOT/src/build/bin/llama-tokenize" "$BIN" "$ROOT/src/build/bin/llama-completion" "$HERE/llamacpp_goldens.json"
