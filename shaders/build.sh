#!/usr/bin/env bash
# Compiles every shader variant to SPIR-V under shaders/spv/ (committed; a test in
# backends/vulkan recompiles and compares). Variants: <name>.f32.spv and <name>.f16.spv; a
# source with the line `// variants: f16` (a float16-only kernel) gets <name>.f16.spv alone.
# Usage: shaders/build.sh [OUTDIR]   (default: shaders/spv)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$here/spv}"
mkdir -p "$out"
for src in "$here"/*.comp; do
  name="$(basename "$src" .comp)"
  if ! grep -qx '// variants: f16' "$src"; then
    glslc --target-env=vulkan1.1 -O -I "$here" "$src" -o "$out/$name.f32.spv"
  fi
  glslc --target-env=vulkan1.1 -O -I "$here" -DF16 "$src" -o "$out/$name.f16.spv"
done
