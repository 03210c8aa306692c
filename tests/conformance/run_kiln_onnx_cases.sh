#!/usr/bin/env bash
# ONNX cases kiln adds to the backend suite, for what it does not cover: com.microsoft contrib
# ops, RNN/GRU/LSTM attribute variants, nested control flow. Expected values come from numpy in
# the generators. Usage: run_kiln_onnx_cases.sh RUNNER
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
runner="$1"
out="$(dirname "$runner")/../kiln-onnx-cases"
rm -rf "$out"
for g in contrib rnn control; do
    "$root/.venv/bin/python" "$here/generate_${g}_node_data.py" "$out" > /dev/null 2>&1 ||
        { echo "generate_${g}_node_data.py failed"; exit 1; }
done
exec "$runner" --data "$out"
