#!/usr/bin/env bash
# The conformance gate cannot pass by finding nothing or by stale lists: the runner must fail on
# an empty data folder, on fewer cases than .case-count, on a listed case that no longer exists,
# and on a listed case failing for another reason than the one listed. A case that must fail is
# made here: test_abs expecting test_neg's output. --write-expected must write the failures
# under the list's header and the comment blocks of the cases that still fail, and drop the rest.
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
cp -r "$data/test_abs" "$tmp/two/"
cp -r "$data/test_abs" "$tmp/two/test_abs_broken"
cp "$data/test_neg/test_data_set_0/output_0.pb" "$tmp/two/test_abs_broken/test_data_set_0/"
"$runner" --data "$tmp/two" --write-expected "$tmp/right.txt" >/dev/null 2>&1
sed 's/# .*/# some other reason/' "$tmp/right.txt" | grep -v '^#' >"$tmp/wrong.txt"
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

{ echo "# the header"; echo; echo "# why abs_broken fails"; grep '^test_abs_broken' "$tmp/right.txt"
  echo "# why abs fails (it passes now)"; echo "test_abs  # old reason"; } >"$tmp/commented.txt"
"$runner" --data "$tmp/two" --expected-failures "$tmp/commented.txt" --write-expected "$tmp/rewritten.txt" >/dev/null 2>&1
{ echo "# the header"; echo; echo "# why abs_broken fails"; grep '^test_abs_broken' "$tmp/right.txt"; } >"$tmp/want.txt"
expect 0 "--write-expected keeps the header and the comments of the cases that still fail" diff "$tmp/want.txt" "$tmp/rewritten.txt"
echo "$((7 - failures)) passed, $failures failed"
[ "$failures" -eq 0 ]
