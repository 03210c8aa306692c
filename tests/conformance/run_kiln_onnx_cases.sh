#!/usr/bin/env bash
# ONNX cases kiln adds to the backend suite, for what it does not cover: com.microsoft contrib
# ops, RNN/GRU/LSTM attribute variants, control flow (nested subgraphs, an If on an input value
# whose branches return different shapes or do not all apply). Expected values come from numpy or
# onnx.reference in the generators. Usage: run_kiln_onnx_cases.sh RUNNER [TARGET] (ref by default)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
runner="$1"
target="${2:-ref}"
out="$(dirname "$runner")/../kiln-onnx-cases-$target"
rm -rf "$out"
for g in contrib rnn control; do
    "$root/.venv/bin/python" "$here/generate_${g}_node_data.py" "$out" > /dev/null 2>&1 ||
        { echo "generate_${g}_node_data.py failed"; exit 1; }
done
exec "$runner" --data "$out" --target "$target"
