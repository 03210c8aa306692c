#!/usr/bin/env bash
# Runs the ONNX backend node tests of the pinned onnx package through kiln. The cases are
# generated once from onnx's case generators into build/onnx-node-data (10 s).
# Usage: run_onnx_conformance.sh [RUNNER] [--target ref|cpu] [--filter SUBSTR] [-v]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
runner="${1:-$root/build/tests/kiln_onnx_conformance}"
[ $# -gt 0 ] && shift
data="${KILN_ONNX_NODE_DATA:-$root/build/onnx-node-data}"
stamp="$data/.generated-by"
want="$(grep '^onnx==' "$root/requirements.txt")"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ] || [ ! -f "$data/.case-count" ]; then
    rm -rf "$data"
    "$root/.venv/bin/python" "$here/generate_onnx_node_data.py" "$data" 2>/dev/null
    echo "$want" > "$stamp"
fi
# Each target has its own expected-failures list (onnx_expected_failures_TARGET.txt; ref's has no suffix).
list="$here/onnx_expected_failures.txt"
args=("$@")
for ((i = 0; i + 1 < ${#args[@]}; i++)); do
    if [ "${args[$i]}" = "--target" ] && [ "${args[$((i + 1))]}" != "ref" ]; then
        list="$here/onnx_expected_failures_${args[$((i + 1))]}.txt"
    fi
done
exec "$runner" --data "$data" --expected-failures "$list" --skips "$here/onnx_skips.txt" "$@"
