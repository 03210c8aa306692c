#!/usr/bin/env bash
# Exports resnet18 and mobilenet_v2 (Debian's torch/torchvision, random weights with re-estimated
# batch-norm statistics) at opsets 13 and 17, runs them on ref and compares with PyTorch's
# outputs: each must reach a relative L2 error below 1e-4.
# Usage: run_model_tests.sh RUNNER [OUT_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
runner="$1"
if [ ! -x "$runner" ]; then
    echo "run_model_tests.sh: $runner is not built (ninja -C build kiln_onnx_conformance, or build everything)" >&2
    exit 1
fi
out="${2:-$(dirname "$runner")/../torchvision-models}"
if [ ! -f "$out/.exported" ] || [ "$here/export_torchvision.py" -nt "$out/.exported" ]; then
    rm -rf "$out"
    /usr/bin/python3 "$here/export_torchvision.py" "$out" 2>&1 | grep -v -i warning
    touch "$out/.exported"
fi
exec "$runner" --data "$out" --rel-l2 1e-4 -v
