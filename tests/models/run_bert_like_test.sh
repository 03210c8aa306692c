#!/usr/bin/env bash
# Exports the BERT-like and GPT-like models (Debian's torch, opset 14) once and runs the gtests
# that check recognize_patterns on them. Usage: run_bert_like_test.sh KILN_TESTS [OUT_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tests="$1"
out="${2:-$(dirname "$tests")/../bert-like-models}"
if [ ! -f "$out/.exported" ] || [ "$here/make_bert_like.py" -nt "$out/.exported" ]; then
    rm -rf "$out"
    /usr/bin/python3 "$here/make_bert_like.py" "$out" 2>&1 | grep -v -i -e warning -e "torch.where" || true
    touch "$out/.exported"
fi
KILN_BERT_LIKE_DIR="$out" exec "$tests" --gtest_filter='recognize_bert_like.*:recognize_gpt_like.*'
