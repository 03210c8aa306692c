#!/usr/bin/env bash
# Sets up, builds and runs every test (CI's command, .ci/run). The plain build (build/) runs every
# ctest test except the unit and C API tests (labels unit and c_api): scripts/sanitize.sh ci runs
# those under ASan and UBSan in its clang build (build-san/), then the loaders' fuzz smoke. So each
# test runs once, and the 5,000 unit tests in two processes rather than ctest's one per test,
# which is what pays for the sanitized build (docs/errors.md, "Sanitizers in CI").
# The last lines are ctest's summary, then the sanitized run's.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
(cd build && ctest --output-on-failure -j"$(nproc)" --timeout 600 -LE '^(unit|c_api)$')
bash scripts/sanitize.sh ci
