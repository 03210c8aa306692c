#!/usr/bin/env bash
# One command: installs the pinned peers (bench/requirements.txt) into .venv, builds kiln, and runs
# bench/cpu_bench.py (kiln cpu vs ONNX Runtime and OpenVINO). Arguments go to cpu_bench.py.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || bash scripts/setup.sh
.venv/bin/pip install -q --disable-pip-version-check -r bench/requirements.txt
ninja -C build -j"$(nproc)" kiln >/dev/null
exec .venv/bin/python bench/cpu_bench.py "$@"
