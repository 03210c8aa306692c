#!/usr/bin/env bash
# Sets up, builds and runs every test, then the sanitized subset and the fuzz smoke
# (scripts/sanitize.sh ci: a clang ASan+UBSan build of its own). The last line is the sanitized
# run's summary ("sanitized (ci): N tests passed, ...; fuzz smoke: ... clean"); ctest's is above it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
(cd build && ctest --output-on-failure -j"$(nproc)" --timeout 600)
bash scripts/sanitize.sh ci
