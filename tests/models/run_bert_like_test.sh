#!/usr/bin/env bash
# Exports the BERT-like encoder (Debian's torch, opset 14) once and runs the gtest that checks
# recognize_patterns on it. Usage: run_bert_like_test.sh KILN_TESTS [OUT_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tests="$1"
out="${2:-$(dirname "$tests")/../bert-like-model}"
model="$out/bert_like_opset14.onnx"
if [ ! -f "$model" ] || [ "$here/make_bert_like.py" -nt "$model" ]; then
    mkdir -p "$out"
    /usr/bin/python3 "$here/make_bert_like.py" "$model" 2>&1 | grep -v -i warning || true
fi
KILN_BERT_LIKE_ONNX="$model" exec "$tests" --gtest_filter='recognize_bert_like.*'
