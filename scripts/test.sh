#!/usr/bin/env bash
# Sets up, builds and runs every test. The last line is ctest's summary.
# The sanitized subset and the fuzz smoke (scripts/sanitize.sh ci, a clang ASan+UBSan build of its
# own) pass on main but are not in it yet: their cold build would take CI to about 45 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
cd build
ctest --output-on-failure -j"$(nproc)" --timeout 600
