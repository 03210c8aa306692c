#!/usr/bin/env bash
# Configures and builds kiln into build/ (Ninja, ccache when present). Extra args go to cmake;
# KILN_BUILD_JOBS limits ninja's parallel jobs.
set -euo pipefail
cd "$(dirname "$0")/.."
# The gpu target builds wherever the CUDA toolkit is (CI compiles it without a GPU).
cuda=()
[ -d /usr/local/cuda ] && cuda=(-DKILN_ENABLE_CUDA=ON)
cmake -S . -B build -G Ninja "${cuda[@]}" "$@" >/dev/null
ninja -C build ${KILN_BUILD_JOBS:+-j"$KILN_BUILD_JOBS"}
