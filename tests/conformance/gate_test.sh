#!/usr/bin/env bash
# The conformance gate cannot pass by finding nothing or by stale lists: the runner must fail on
# an empty data folder, on fewer cases than .case-count, on a listed case that no longer exists,
# and on a listed case failing for another reason than the one listed.
# Usage: gate_test.sh RUNNER NODE_DATA_DIR
set -uo pipefail
runner="$1"
data="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
failures=0
expect() {   # expect STATUS DESCRIPTION COMMAND...
    local want="$1" what="$2"
    shift 2
    "$@" >"$tmp/out" 2>&1
    local got=$?
    if [ "$got" -ne "$want" ]; then
        echo "FAIL: $what: exit $got, expected $want"
        cat "$tmp/out"
        failures=$((failures + 1))
    else
        echo "ok: $what"
    fi
}
mkdir -p "$tmp/empty" "$tmp/two"
cp -r "$data/test_abs" "$data/test_resize_downsample_scales_linear_align_corners" "$tmp/two/"
echo "test_resize_downsample_scales_linear_align_corners  # $(grep '^test_resize_downsample_scales_linear_align_corners ' "$(dirname "$0")/onnx_expected_failures.txt" | sed 's/^[^#]*# //')" >"$tmp/right.txt"
echo "test_resize_downsample_scales_linear_align_corners  # some other reason" >"$tmp/wrong.txt"
cp "$tmp/right.txt" "$tmp/missing.txt"
echo "test_no_such_case  # gone" >>"$tmp/missing.txt"

expect 0 "two cases, the failure listed with its reason" "$runner" --data "$tmp/two" --expected-failures "$tmp/right.txt"
expect 1 "an empty data folder" "$runner" --data "$tmp/empty"
echo 3 >"$tmp/two/.case-count"
expect 1 "fewer cases than .case-count" "$runner" --data "$tmp/two" --expected-failures "$tmp/right.txt"
echo 2 >"$tmp/two/.case-count"
expect 1 "a listed case that does not exist" "$runner" --data "$tmp/two" --expected-failures "$tmp/missing.txt"
expect 1 "a listed case failing for another reason" "$runner" --data "$tmp/two" --expected-failures "$tmp/wrong.txt"
expect 1 "a failing case not listed" "$runner" --data "$tmp/two"
echo "$((6 - failures)) passed, $failures failed"
[ "$failures" -eq 0 ]
