#!/usr/bin/env bash
# mlx-arm: THE full test command (what .ci/run runs after scripts/setup.sh).
#
# Runs every test section in turn, keeps going after a failure, and ends with a per-section
# PASS/FAIL/SKIPPED summary and a last line "N passed, N failed"; exits non-zero if any failed.
# Parts of the project that do not exist yet are SKIPPED loudly. A missing tool is SKIPPED
# loudly on a developer machine, but is a FAILURE under CI=true (scripts/setup.sh installs it).
#
# Environment:
#   CARGO_TARGET_DIR  cargo's target dir (default: the workspace's target/)
#   TEST_PROFILE      cargo profile for the test builds: dev (default) or release
#   MLX_ARM_VENV      Python venv made by scripts/setup.sh (default: <repo>/.venv)
#   CI                "true" turns missing tools into failures
#   TEST_ONLY         extended regex: run only the sections whose name matches (e.g. 'aarch64')
# Exported to the section scripts (tests/c/run.sh, examples/firmware-*/run.sh, ...):
#   MLX_ARM_ROOT, MLX_ARM_TARGET_DIR, MLX_ARM_PROFILE, MLX_ARM_PROFILE_DIR, MLX_ARM_PYTHON
set -uo pipefail

# rustup installs cargo/rustc here; a non-login root shell may not have it on PATH yet.
if [ -d "$HOME/.cargo/bin" ] && [[ ":$PATH:" != *":$HOME/.cargo/bin:"* ]]; then PATH="$HOME/.cargo/bin:$PATH"; fi
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO_ROOT"

TEST_PROFILE="${TEST_PROFILE:-dev}"
case "$TEST_PROFILE" in
  dev) PROFILE_DIR=debug; PROFILE_ARGS=() ;;
  release) PROFILE_DIR=release; PROFILE_ARGS=(--release) ;;
  *) echo "TEST_PROFILE must be dev or release, got '$TEST_PROFILE'" >&2; exit 2 ;;
esac
TARGET_DIR="${CARGO_TARGET_DIR:-$REPO_ROOT/target}"
VENV="${MLX_ARM_VENV:-$REPO_ROOT/.venv}"
IS_CI=false
[ "${CI:-}" = true ] && IS_CI=true
CORE_PKG=mlx-arm-core
AARCH64=aarch64-unknown-linux-gnu
# Same runner as .cargo/config.toml, for the SVE probe.
QEMU_USER=(qemu-aarch64 -L /usr/aarch64-linux-gnu -E LD_LIBRARY_PATH=/usr/aarch64-linux-gnu/lib)

if [ -x "$VENV/bin/python" ]; then PYTHON="$VENV/bin/python"; else PYTHON=""; fi
export MLX_ARM_ROOT="$REPO_ROOT" MLX_ARM_TARGET_DIR="$TARGET_DIR" MLX_ARM_PROFILE="$TEST_PROFILE" \
  MLX_ARM_PROFILE_DIR="$PROFILE_DIR" MLX_ARM_PYTHON="$PYTHON"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

STATE_DIR="$(mktemp -d)"
trap 'rm -rf "$STATE_DIR"' EXIT
TOTAL_START=$SECONDS
NAMES=() RESULTS=() TIMES=() NOTES=()

# --- helpers used inside sections (each section runs in a subshell with `set -e`) ----------------

# skip "reason": end the current section as SKIPPED, with a line nobody can miss.
skip() {
  printf '%s\n' "$1" >"$STATE_DIR/skip"
  printf '\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n'
  printf '!!! SKIPPED: %s (%s)\n' "$CURRENT" "$1"
  printf '!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n'
  exit 0
}

# fail "reason": end the current section as FAILED with a reason.
fail() {
  printf '%s\n' "$1" >"$STATE_DIR/fail"
  printf '!!! FAIL: %s (%s)\n' "$CURRENT" "$1" >&2
  exit 1
}

# need_tool cmd-or-path...: every tool here is installed by scripts/setup.sh, so a missing one is a
# failure under CI and a loud skip elsewhere.
need_tool() {
  local t missing=()
  for t in "$@"; do
    if [[ "$t" == /* ]]; then [ -e "$t" ] || missing+=("$t"); else command -v "$t" >/dev/null 2>&1 || missing+=("$t"); fi
  done
  [ "${#missing[@]}" -eq 0 ] && return 0
  missing_dep "tool(s) ${missing[*]}"
}

# need_target triple...: rustup targets installed by scripts/setup.sh (same CI/skip rule).
need_target() {
  local t installed missing=()
  installed="$(rustup target list --installed 2>/dev/null || true)"
  for t in "$@"; do grep -qx "$t" <<<"$installed" || missing+=("$t"); done
  [ "${#missing[@]}" -eq 0 ] && return 0
  missing_dep "rustup target(s) ${missing[*]}"
}

missing_dep() {
  if $IS_CI; then fail "missing $1 under CI=true (scripts/setup.sh should have installed it)"; fi
  skip "missing $1; run scripts/setup.sh"
}

# run_section "name" function [args...]
run_section() {
  local name="$1"; shift
  local start=$SECONDS rc result note=""
  if [ -n "${TEST_ONLY:-}" ] && ! grep -Eq -- "$TEST_ONLY" <<<"$name"; then return 0; fi
  rm -f "$STATE_DIR/skip" "$STATE_DIR/fail"
  printf '\n'
  printf '=%.0s' {1..78}; printf '\n'
  printf '=== [%d] %s\n' "$((${#NAMES[@]} + 1))" "$name"
  printf '=%.0s' {1..78}; printf '\n'
  ( set -e; CURRENT="$name"; "$@" )
  rc=$?
  if [ -f "$STATE_DIR/skip" ]; then
    result=SKIPPED; note="$(cat "$STATE_DIR/skip")"
  elif [ "$rc" -eq 0 ]; then
    result=PASS
  else
    result=FAIL
    if [ -f "$STATE_DIR/fail" ]; then note="$(cat "$STATE_DIR/fail")"; else note="exit code $rc"; fi
  fi
  NAMES+=("$name"); RESULTS+=("$result"); TIMES+=("$((SECONDS - start))"); NOTES+=("$note")
  printf '=== %s: %s in %ss%s\n' "$result" "$name" "$((SECONDS - start))" "${note:+ ($note)}"
}

# Package name of a crate directory (empty if it has no Cargo.toml).
crate_name() {
  [ -f "$1/Cargo.toml" ] || return 0
  sed -n '/^\[package\]/,/^\[/{s/^name *= *"\([^"]*\)".*/\1/p}' "$1/Cargo.toml" | head -n1
}

# Backend crates get their own sections (device checks, clearer summary), so the host section
# leaves them out.
BACKENDS=(vulkan opencl openblas)
HOST_EXCLUDES=()
for b in "${BACKENDS[@]}"; do
  n="$(crate_name "backends/$b")"
  [ -n "$n" ] && HOST_EXCLUDES+=(--exclude "$n")
done
# The headers' cbindgen check runs in the C API section: in the workspace build its cbindgen would
# change the hash of the core (see capi/header-check/Cargo.toml) and cost every other section a
# core build of its own.
HOST_EXCLUDES+=(--exclude mlx-arm-header-check)

# --- sections --------------------------------------------------------------------------------------

sec_host() {
  need_tool cargo
  cargo test --workspace --no-fail-fast "${HOST_EXCLUDES[@]}" "${PROFILE_ARGS[@]}"
}

# Build the core's aarch64 tests once, plus a tiny static probe that reads the SVE vector length
# with `rdvl` (an SVE instruction), so every qemu run below can prove which length it got.
AARCH64_BUILD_OK="$STATE_DIR/aarch64-build-ok"
PROBE="$TARGET_DIR/ci-sve-probe/sve-vl"
sec_aarch64_build() {
  need_tool aarch64-linux-gnu-gcc qemu-aarch64
  need_target "$AARCH64"
  mkdir -p "$(dirname "$PROBE")"
  cat >"$PROBE.c" <<'EOF'
/* Prints the SVE vector length in bits; traps (SIGILL) on a CPU without SVE. */
#include <stdio.h>
int main(void) {
  unsigned long bytes;
  __asm__ volatile("rdvl %0, #1" : "=r"(bytes));
  printf("%lu\n", bytes * 8);
  return 0;
}
EOF
  aarch64-linux-gnu-gcc -O2 -march=armv8.2-a+sve -static -o "$PROBE" "$PROBE.c"
  cargo test -p "$CORE_PKG" --target "$AARCH64" --tests "${PROFILE_ARGS[@]}" --no-run
  touch "$AARCH64_BUILD_OK"
}

# The test binaries that run every ISA level's kernels (the rest of the suite does not depend on
# the vector length).
AARCH64_KERNEL_TESTS=(--test ggml_gemm --test ggml_simd --test ggml_quant --test affine_qmm --test mlx_fp_qmm --test vecmath)
AARCH64_KERNEL_TESTS_QUICK=(--test ggml_simd --test ggml_quant --test affine_qmm --test mlx_fp_qmm --test vecmath)
AARCH64_ARCH_DIR=core/src/cpu/arch/aarch64

# Whether any aarch64 kernel is SVE code (a target feature, SVE assembly or an SVE C file), i.e.
# whether results can depend on the vector length.
aarch64_has_sve_code() {
  grep -rqE 'enable *= *"[^"]*sve|\b(whilelo|rdvl|ptrue|cntw)\b|arm_sve\.h' "$AARCH64_ARCH_DIR" 2>/dev/null
}

# Test binaries known to run longest under qemu: started first so the pool below ends together.
QEMU_LONG_FIRST=(ggml_gemm mlx_arm_core gemm_threads ggml_quant affine_qmm linalg)
# Binaries whose table splits into processes (MLX_ARM_TEST_SHARD=s/n, core/tests/common/levels.rs):
# ggml_gemm alone ran ~200 s at each qemu CPU, longer than all the others together; as two
# processes one half still ran ~130 s while the other ended at ~80 s, so it runs as three.
declare -A QEMU_SHARDS=([ggml_gemm]=3)

# run_tests_in_parallel JOBS CRATE-DIR cargo-test-args...: builds the test binaries, then runs
# them JOBS at a time, each in a process of its own under the aarch64 runner. qemu-user runs a
# test binary's (mostly one) thread on one core, and `cargo test` runs binaries one after another,
# so a 2-core machine sat half idle; a process per binary also keeps each one's global state (the
# forced ISA level) its own. Each binary's output is printed whole when it ends; a failure fails.
run_tests_in_parallel() {
  local jobs="$1" dir="$2"; shift 2
  local logs="$STATE_DIR/par" bins=() ordered=() b long failed=0
  mkdir -p "$logs"
  # Built with cargo's own messages first; the JSON pass after it only lists the binaries.
  cargo test "$@" --no-run
  cargo test "$@" --no-run --message-format=json >"$logs/build.json"
  mapfile -t bins < <(grep -o '"executable":"[^"]*"' "$logs/build.json" | sed 's/^"executable":"//; s/"$//')
  [ "${#bins[@]}" -gt 0 ] || fail "no test binaries built"
  for long in "${QEMU_LONG_FIRST[@]}"; do
    for b in "${bins[@]}"; do [[ "$(basename "$b")" == "$long"-* ]] && ordered+=("$b"); done
  done
  for b in "${bins[@]}"; do [[ " ${ordered[*]} " == *" $b "* ]] || ordered+=("$b"); done
  # One job per binary, "path|s/n" per shard of a sharded one.
  local jobs_list=() n s
  for b in "${ordered[@]}"; do
    n="${QEMU_SHARDS[$(basename "$b" | sed 's/-[0-9a-f]*$//')]:-}"
    if [ -z "$n" ]; then jobs_list+=("$b|"); continue; fi
    for ((s = 0; s < n; s++)); do jobs_list+=("$b|$s/$n"); done
  done
  # xargs runs each job from the crate's directory (as cargo does) and prints its whole log
  # when it ends; the exit status says whether any failed.
  printf '%s\n' "${jobs_list[@]}" | xargs -P "$jobs" -I{} bash -c '
    b="${1%|*}"; shard="${1##*|}"; dir="$2"; shift 2
    name="$(basename "$b")${shard:+ (shard $shard)}"; log="$(mktemp)"
    start=$SECONDS
    if (cd "$dir" && env ${shard:+MLX_ARM_TEST_SHARD=$shard} "$@" "$b" >"$log" 2>&1); then r=ok; else r=FAILED; fi
    { echo "--- $name: $r in $((SECONDS - start))s"; cat "$log"; } | grep -vE "^test .* \.\.\. ok$"
    rm -f "$log"
    [ "$r" = ok ]' _ {} "$dir" "${QEMU_USER[@]}" || failed=1
  [ "$failed" -eq 0 ] || fail "test binaries failed (see '--- ...: FAILED' above)"
}

# sec_aarch64_run QEMU_CPU expected-VL-bits|none [kernels]
sec_aarch64_run() {
  local cpu="$1" want="$2" scope="${3:-all}" got
  need_tool qemu-aarch64
  [ -f "$AARCH64_BUILD_OK" ] || fail "aarch64 build section failed"
  export QEMU_CPU="$cpu"
  if [ "$want" = none ]; then
    if got="$("${QEMU_USER[@]}" "$PROBE" 2>/dev/null)"; then
      fail "QEMU_CPU=$cpu should have no SVE but rdvl gave $got bits"
    fi
    echo "SVE probe: QEMU_CPU=$cpu has no SVE (rdvl traps), NEON-only run"
  else
    got="$("${QEMU_USER[@]}" "$PROBE")" || fail "SVE probe failed under QEMU_CPU=$cpu"
    [ "$got" = "$want" ] || fail "QEMU_CPU=$cpu gave SVE VL $got bits, expected $want"
    echo "SVE probe: QEMU_CPU=$cpu -> rdvl says VL = $got bits"
    # The kernel tests' level loops start at dotprod here: portable and NEON run the same
    # instructions as in the cortex-a72 run, which covers them (core/tests/common/levels.rs).
    export MLX_ARM_TEST_ISA_FROM=dotprod
    echo "NOTE: kernel tests loop over ISA levels from dotprod up here (portable and NEON: cortex-a72 run)"
  fi
  if [ "$scope" = kernels ]; then
    # Only the kernel tests run at this length; the whole suite runs at 128 bits and on the
    # NEON-only CPU.
    local tests=("${AARCH64_KERNEL_TESTS[@]}")
    if ! aarch64_has_sve_code; then
      # No kernel reads the vector length yet (the Sve level runs the dotprod kernels), so the
      # long GEMM table here would repeat SVE 128's run instruction for instruction: skip it
      # until SVE code lands (the check above turns it back on by itself).
      tests=("${AARCH64_KERNEL_TESTS_QUICK[@]}")
      echo "NOTE: no SVE code in $AARCH64_ARCH_DIR: ggml_gemm runs at SVE 128 and on cortex-a72 only"
    fi
    echo "NOTE: kernel tests only at this vector length (${tests[*]}); full suite at SVE 128 and cortex-a72"
    run_tests_in_parallel 2 core -p "$CORE_PKG" --target "$AARCH64" "${tests[@]}" "${PROFILE_ARGS[@]}"
    return
  fi
  run_tests_in_parallel 2 core -p "$CORE_PKG" --target "$AARCH64" --tests "${PROFILE_ARGS[@]}"
}

sec_nostd() {
  local target="$1"
  need_target "$target"
  # Release builds: the firmware sections link this same build instead of making their own.
  cargo build -p "$CORE_PKG" --no-default-features --target "$target" --release
  # The language-model crate runs on firmware too.
  cargo build -p mlx-arm-lm --no-default-features --target "$target" --release
  # The C library as firmware links it: a no_std staticlib over the bare-metal hooks.
  cargo build -p mlx-arm-capi --no-default-features --features bare-metal --target "$target" --release
  [ -f "$TARGET_DIR/$target/release/libmlx_arm.a" ] || fail "no libmlx_arm.a for $target"
}

sec_c_tests() {
  # The headers against the Rust signatures (cbindgen), then the C programs.
  cargo test -p mlx-arm-header-check --no-fail-fast "${PROFILE_ARGS[@]}"
  if [ -f tests/c/run.sh ]; then
    need_tool gcc make valgrind
    # The same C programs cross-built for aarch64 and run under qemu-user, when the tools exist.
    if command -v aarch64-linux-gnu-gcc >/dev/null && command -v qemu-aarch64 >/dev/null; then
      MLX_ARM_C_AARCH64=1 bash tests/c/run.sh
    else
      bash tests/c/run.sh
    fi
  elif [ -f tests/c/Makefile ]; then
    need_tool gcc make valgrind
    make -C tests/c test
  else
    skip "tests/c/run.sh or tests/c/Makefile not written yet"
  fi
}

sec_python() {
  if ! compgen -G 'tests/python/test_*.py' >/dev/null && ! compgen -G 'tests/python/*_test.py' >/dev/null; then
    skip "no tests/python/test_*.py yet"
  fi
  if [ -z "$PYTHON" ]; then need_tool "$VENV/bin/python"; fi
  "$PYTHON" -c 'import pytest, numpy, cffi, setuptools, wheel' 2>/dev/null \
    || { $IS_CI && fail "pytest/numpy/cffi/wheel missing from $VENV"; skip "pytest/numpy/cffi/wheel missing from $VENV; run scripts/setup.sh"; }
  # Install python-cffi (mlx.core over libmlx_arm) into the venv: builds the cdylib with this
  # profile and target dir; --no-build-isolation keeps it offline (setuptools+wheel from the venv).
  MLX_ARM_CARGO_PROFILE="$TEST_PROFILE" CARGO_TARGET_DIR="$TARGET_DIR" \
    "$PYTHON" -m pip install -q --no-build-isolation --no-deps ./python-cffi
  "$PYTHON" -m pytest -q tests/python || return
  # The same package in cffi's ABI mode (its fallback where no C compiler built the API-mode
  # module): the tests of the cffi layer itself (calls, callbacks, buffers, indexing).
  MLX_ARM_CFFI=abi "$PYTHON" -m pytest -q tests/python/test_binding_fast.py tests/python/test_callgen.py \
    tests/python/test_indexing_fast.py tests/python/test_grad.py tests/python/test_buffer.py
}

sec_backend() {
  local b="$1" name
  name="$(crate_name "backends/$b")"
  [ -n "$name" ] || skip "backends/$b crate not written yet"
  case "$b" in
    vulkan) need_tool glslc /usr/share/vulkan/icd.d/lvp_icd.x86_64.json ;;
    opencl) need_tool /etc/OpenCL/vendors/pocl.icd ;;
    openblas) need_tool pkg-config
      pkg-config --exists openblas || missing_dep "libopenblas-dev (pkg-config finds no openblas)" ;;
  esac
  # A workspace member: reuses the host section's build (its own manifest if it is not one).
  if grep -q "\"backends/$b\"" Cargo.toml; then
    cargo test -p "$name" --no-fail-fast "${PROFILE_ARGS[@]}"
  else
    cargo test --manifest-path "backends/$b/Cargo.toml" --no-fail-fast "${PROFILE_ARGS[@]}"
  fi
}

# backends/openblas cross-built for aarch64 against Debian's multiarch libopenblas-dev:arm64
# (setup.sh adds the arm64 dpkg architecture for it) and run under qemu-user (cortex-a72).
# pkg-config is pointed at the arm64 .pc file; the runner adds the arm64 library dirs (OpenBLAS,
# libgfortran) after the cross glibc, which stays first (see .cargo/config.toml).
ARM64_LIBDIR=/usr/lib/aarch64-linux-gnu
sec_openblas_aarch64() {
  local name
  name="$(crate_name backends/openblas)"
  [ -n "$name" ] || skip "backends/openblas crate not written yet"
  need_tool aarch64-linux-gnu-gcc qemu-aarch64
  need_target "$AARCH64"
  # Not a CI failure: setup.sh installs it when the mirror has arm64 lists, and warns if not.
  [ -f "$ARM64_LIBDIR/pkgconfig/openblas.pc" ] \
    || skip "libopenblas-dev:arm64 is not installed (needs 'dpkg --add-architecture arm64' + apt-get update; scripts/setup.sh tries both and warned if it could not)"
  PKG_CONFIG_ALLOW_CROSS=1 PKG_CONFIG_LIBDIR="$ARM64_LIBDIR/pkgconfig" QEMU_CPU=cortex-a72 \
    CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="${QEMU_USER[*]}:$ARM64_LIBDIR/openblas-pthread:$ARM64_LIBDIR" \
    cargo test -p "$name" --target "$AARCH64" --no-fail-fast "${PROFILE_ARGS[@]}"
}

sec_firmware() {
  local dir="$1"
  [ -f "$dir/run.sh" ] || skip "$dir/run.sh not written yet"
  case "$dir" in
    # The language model on firmware is checked against the aarch64 Linux CLI under qemu-user.
    *aarch64-lm*) need_tool aarch64-linux-gnu-gcc aarch64-linux-gnu-size qemu-system-aarch64 qemu-aarch64
      need_target aarch64-unknown-none aarch64-unknown-linux-gnu ;;
    *aarch64*) need_tool aarch64-linux-gnu-gcc aarch64-linux-gnu-size qemu-system-aarch64; need_target aarch64-unknown-none ;;
    *) need_tool arm-none-eabi-gcc arm-none-eabi-size qemu-system-arm; need_target thumbv7em-none-eabihf ;;
  esac
  # Exit 77 (automake's "skipped"): something the example needs that setup.sh installs is
  # missing (the default model, for firmware-aarch64-lm); run.sh has said what.
  local rc=0
  bash "$dir/run.sh" || rc=$?
  [ "$rc" -eq 77 ] && missing_dep "what $dir/run.sh needs (see its message above)"
  return "$rc"
}

sec_windows() {
  [ -f tests/windows/run.sh ] || skip "tests/windows/run.sh (x86_64-pc-windows-gnu under wine) not written yet"
  need_tool x86_64-w64-mingw32-gcc /usr/lib/wine/wine64
  need_target x86_64-pc-windows-gnu
  bash tests/windows/run.sh
}

# Fuzz targets (fuzz/, cargo-fuzz on nightly): build them, then run each for FUZZ_SECONDS
# (default 10) on a fresh corpus seeded by fuzz/make_seeds.py. They build into
# $TARGET_DIR/x86_64-unknown-linux-gnu (cargo-fuzz always names the triple, so the
# instrumented build never mixes with the host build in $TARGET_DIR/debug). A crash, an allocation over
# 512 MB or an input slower than 10 s fails the section; reproducers are kept under
# $TARGET_DIR/fuzz-artifacts (replay: cargo +nightly fuzz run <target> <file>).
sec_fuzz() {
  [ -f fuzz/Cargo.toml ] || skip "fuzz/ not written yet"
  need_tool python3
  rustup toolchain list 2>/dev/null | grep -q '^nightly' || missing_dep "rust nightly toolchain"
  cargo fuzz --version >/dev/null 2>&1 || missing_dep "cargo-fuzz"
  local secs="${FUZZ_SECONDS:-10}" work="$STATE_DIR/fuzz" arts="$TARGET_DIR/fuzz-artifacts" t failed=()
  # Built at opt-level 1 here: the instrumented build is one of CI's longest compiles, and -O1
  # takes ~20% less CPU for it (measured cold: 249 vs 308 s) while running 40-85% of -O3's
  # executions per second, enough for a bounded 10-second smoke run. No debug info either: a crash
  # report still names the functions, and its reproducer replays with full line info outside CI.
  # Long runs outside CI keep fuzz/Cargo.toml's release profile.
  local fz=(env CARGO_PROFILE_RELEASE_OPT_LEVEL=1 CARGO_PROFILE_RELEASE_DEBUG=0 cargo +nightly fuzz)
  python3 fuzz/make_seeds.py "$work/seeds"
  "${fz[@]}" build --target-dir "$TARGET_DIR"
  mkdir -p "$arts"
  # Each libFuzzer run is one thread: two targets at a time keep both of CI's cores busy.
  local targets
  targets="$("${fz[@]}" list)"
  for t in $targets; do mkdir -p "$work/corpus/$t"; done
  export FUZZ_WORK="$work" FUZZ_ARTS="$arts" FUZZ_SECS="$secs" FUZZ_TARGET_DIR="$TARGET_DIR"
  # shellcheck disable=SC2016 # expanded by the inner shell
  printf '%s\n' $targets | xargs -P 2 -I{} bash -c '
    t="$1"; shift
    if "$@" run --target-dir "$FUZZ_TARGET_DIR" "$t" "$FUZZ_WORK/corpus/$t" "$FUZZ_WORK/seeds/$t" -- \
        -max_total_time="$FUZZ_SECS" -malloc_limit_mb=512 -timeout=10 -print_final_stats=1 \
        -artifact_prefix="$FUZZ_ARTS/$t-" >"$FUZZ_WORK/$t.log" 2>&1; then
      echo "--- fuzz $t for ${FUZZ_SECS}s: $(grep -E "^stat::number_of_executed_units" "$FUZZ_WORK/$t.log")"
    else
      echo "--- fuzz $t for ${FUZZ_SECS}s: FAILED"; tail -n 40 "$FUZZ_WORK/$t.log"; touch "$FUZZ_WORK/$t.failed"
    fi' _ {} "${fz[@]}"
  for t in $targets; do [ ! -f "$work/$t.failed" ] || failed+=("$t"); done
  [ "${#failed[@]}" -eq 0 ] || fail "fuzz target(s) crashed: ${failed[*]} (reproducers in $arts)"
}

# --- run -------------------------------------------------------------------------------------------

echo "mlx-arm tests: profile=$TEST_PROFILE target-dir=$TARGET_DIR CI=$IS_CI"
rustc --version 2>/dev/null || true
command -v qemu-aarch64 >/dev/null && qemu-aarch64 --version | head -n1

run_section "host: cargo test --workspace" sec_host
run_section "aarch64: build core tests + SVE probe" sec_aarch64_build
run_section "aarch64 qemu: SVE 128-bit" sec_aarch64_run "max,sve-default-vector-length=16" 128
run_section "aarch64 qemu: SVE 256-bit (kernel tests)" sec_aarch64_run "max,sve-default-vector-length=32" 256 kernels
run_section "aarch64 qemu: SVE 512-bit (kernel tests)" sec_aarch64_run "max,sve-default-vector-length=64" 512 kernels
run_section "aarch64 qemu: cortex-a72 (NEON, no SVE)" sec_aarch64_run "cortex-a72" none
run_section "no_std: aarch64-unknown-none" sec_nostd aarch64-unknown-none
run_section "no_std: thumbv7em-none-eabihf" sec_nostd thumbv7em-none-eabihf
run_section "C API tests (tests/c)" sec_c_tests
run_section "Python tests (tests/python)" sec_python
for b in "${BACKENDS[@]}"; do
  run_section "backend: $b (backends/$b)" sec_backend "$b"
done
run_section "backend: openblas aarch64 qemu (backends/openblas)" sec_openblas_aarch64
FIRMWARE_DIRS=(examples/firmware-aarch64)
for d in examples/firmware-*/; do
  d="${d%/}"
  [ -d "$d" ] && [ "$d" != examples/firmware-aarch64 ] && FIRMWARE_DIRS+=("$d")
done
for d in "${FIRMWARE_DIRS[@]}"; do
  run_section "firmware: $d" sec_firmware "$d"
done
run_section "windows: x86_64-pc-windows-gnu under wine" sec_windows
run_section "fuzz: cargo-fuzz targets (fuzz/)" sec_fuzz

# --- summary ---------------------------------------------------------------------------------------
passed=0 failed=0 skipped=0
printf '\n'; printf '=%.0s' {1..78}; printf '\n=== SUMMARY (total %ss)\n' "$((SECONDS - TOTAL_START))"
for i in "${!NAMES[@]}"; do
  printf '%-8s %5ss  %s%s\n' "${RESULTS[$i]}" "${TIMES[$i]}" "${NAMES[$i]}" "${NOTES[$i]:+  -- ${NOTES[$i]}}"
  case "${RESULTS[$i]}" in
    PASS) passed=$((passed + 1)) ;;
    FAIL) failed=$((failed + 1)) ;;
    SKIPPED) skipped=$((skipped + 1)) ;;
  esac
done
[ "$skipped" -gt 0 ] && echo "($skipped section(s) SKIPPED)"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
