#!/usr/bin/env bash
# The sanitized tests and the fuzz smoke: one clang build in build-san/ with ASan and UBSan (every
# UBSan report is fatal, leaks are errors) serves the unit tests, the driver tests, the C API
# tests and the loaders' fuzzers (KILN_FUZZ: the same sanitizers plus libFuzzer's coverage), so
# CI pays for one extra build. A first configure compiles at -O1 with line tables only (the
# sanitizers' advice, and the fastest build that still gives file:line stacks); an existing
# build-san/ keeps its flags.
# Usage: scripts/sanitize.sh ci|all [FUZZ_SECONDS]
#   ci:  what the README's test command runs (scripts/test.sh): the unit and driver tests
#        (kiln_tests without the model tests) and the C API tests, each binary in one process,
#        kiln_tests in two shards side by side; then each fuzzer for FUZZ_SECONDS (default 60)
#        from the repository's seed corpus with a fixed seed (scripts/fuzz.sh).
#   all: the same tests, then every other ctest test of the sanitized build (the ONNX node
#        suites on ref and cpu, the models, the C example), then the fuzz smoke.
# The last line says what ran and how it ended; the exit status is non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-}"
fuzz_seconds="${2:-60}"
case "$mode" in ci | all) ;; *) echo "usage: scripts/sanitize.sh ci|all [FUZZ_SECONDS]" >&2; exit 2 ;; esac

flags=()
[ -f build-san/CMakeCache.txt ] || flags=(-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG"
                                         -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG")
cmake -S . -B build-san -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      "${flags[@]}" -DKILN_SANITIZE=ON -DKILN_FUZZ=ON -DKILN_BUILD_PYTHON=OFF -DKILN_ENABLE_CUDA=OFF >/dev/null
fuzzers=(onnx text_ir saved_program npy onnx_tensor json)
targets=(kiln kiln_tests kiln_c_api_tests "${fuzzers[@]/#/fuzz_}")
[ "$mode" = all ] && targets=(all)
ninja -C build-san ${KILN_BUILD_JOBS:+-j"$KILN_BUILD_JOBS"} "${targets[@]}"

export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# The model tests need the models that ctest's script tests export first (`all` runs them there).
model_tests="fuse_models.*:model_precision.*:model_memory_plan.*:recognize_bert_like.*:recognize_gpt_like.*"
failed=() passed=0
# record NAME STATUS: counts the passed tests of build-san/NAME.log, or records the failure.
record() {
    local log="build-san/$1.log"
    if [ "$2" = 0 ] && grep -q "^\[  PASSED  \]" "$log"; then
        passed=$((passed + $(sed -n 's/^\[  PASSED  \] \([0-9]*\) tests\?\.$/\1/p' "$log" | tail -1)))
    else
        failed+=("$1 (see $log)")
        grep -E "^\[  FAILED  \]|ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error|SUMMARY" "$log" | head -20 || true
    fi
}
unit=(build-san/tests/kiln_tests --gtest_filter="-$model_tests")
GTEST_TOTAL_SHARDS=2 GTEST_SHARD_INDEX=0 "${unit[@]}" >build-san/unit_shard0.log 2>&1 &
pid=$!
s1=0 s0=0
GTEST_TOTAL_SHARDS=2 GTEST_SHARD_INDEX=1 "${unit[@]}" >build-san/unit_shard1.log 2>&1 || s1=$?
wait "$pid" || s0=$?
record unit_shard0 "$s0"
record unit_shard1 "$s1"
s=0
build-san/tests/kiln_c_api_tests >build-san/c_api.log 2>&1 || s=$?
record c_api "$s"
tests_line="$passed tests passed"
if [ "$mode" = all ]; then
    (cd build-san && ctest -j"$(nproc)" --timeout 3600 --output-on-failure -LE '^(unit|c_api)$') | tee build-san/ctest.log | tail -15
    grep -q "100% tests passed" build-san/ctest.log || failed+=("ctest (see build-san/ctest.log)")
    tests_line+=", ctest: $(grep -E "tests passed" build-san/ctest.log | tail -1)"
fi
if [ "${#failed[@]}" -gt 0 ]; then
    echo "sanitized ($mode): FAILED: ${failed[*]}; $tests_line"
    exit 1
fi

status=0
KILN_FUZZ_BUILD=build-san bash scripts/fuzz.sh all "$fuzz_seconds" | tee build-san/fuzz.log || status=$?
echo "sanitized ($mode): $tests_line, no sanitizer report; $(grep -E "^fuzz smoke:" build-san/fuzz.log | tail -1)"
exit "$status"
