#!/usr/bin/env bash
# Builds the loaders' fuzzers (clang, libFuzzer, ASan+UBSan) into build-fuzz/ and runs one.
# Usage: scripts/fuzz.sh NAME SECONDS [libFuzzer options...]
#   NAME: onnx, text_ir, saved_program, npy, onnx_tensor or json; `all` runs each for SECONDS.
# The corpus grows in build-fuzz/corpus/NAME, seeded from the test models and programs in the
# repository; findings (crash-*, leak-*, timeout-*) land in build-fuzz/findings/NAME. A finding
# becomes a regression test before it is fixed. Every run starts from seed 1 (-seed=1), so a run
# of the same corpus is repeatable. The last line reads "fuzz smoke: N of M fuzzers clean (...)"
# or names the fuzzers that found something; the exit status is 1 then.
# KILN_FUZZ_BUILD=DIR uses a build configured elsewhere (scripts/sanitize.sh's build-san/).
set -euo pipefail
cd "$(dirname "$0")/.."
name="${1:?usage: scripts/fuzz.sh NAME SECONDS}"
seconds="${2:?usage: scripts/fuzz.sh NAME SECONDS}"
shift 2
names=(onnx text_ir saved_program npy onnx_tensor json)
[ "$name" = all ] || names=("$name")
build="${KILN_FUZZ_BUILD:-build-fuzz}"
if [ "$build" = build-fuzz ]; then
    cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
          -DKILN_FUZZ=ON -DKILN_BUILD_TESTS=OFF -DKILN_BUILD_PYTHON=OFF -DKILN_ENABLE_CUDA=OFF >/dev/null
fi
ninja -C "$build" kiln "${names[@]/#/fuzz_}"   # kiln compiles the saved programs of the seed corpus

# seed NAME DIR: the repository's files of that kind (and the ONNX node suite's, when the tests
# generated it into build/onnx-node-data) into DIR; saved programs are compiled from the .kir files.
seed() {
    local i=0
    case "$1" in
    onnx) { find tests -name '*.onnx' -size -2M; find build/onnx-node-data -name model.onnx -size -64k 2>/dev/null || true; } ;;
    text_ir) find tests -name '*.kir' ;;
    saved_program)
        for f in $(find tests -name '*.kir'); do
            "$build"/kiln compile "$f" -O -o "$2/$((i += 1)).kiln" --quiet >/dev/null 2>&1 || true
        done ;;
    npy) find tests -name '*.npy' ;;
    onnx_tensor) { find tests -name '*.pb' -size -16k; find build/onnx-node-data -name '*.pb' -size -16k 2>/dev/null || true; } ;;
    json) find tests -name '*.json' -size -64k ;;   # small ones: a smoke runs more of them
    esac | sed -n 1,400p | while read -r f; do cp "$f" "$2/$((i += 1))_$(basename "$f")" 2>/dev/null || true; done
}
clean=() found=()
for n in "${names[@]}"; do
    corpus="$build/corpus/$n" findings="$build/findings/$n"
    mkdir -p "$corpus" "$findings"
    [ -n "$(ls -A "$corpus")" ] || seed "$n" "$corpus"
    dict=()
    [ -f "tests/fuzz/$n.dict" ] && dict=(-dict="tests/fuzz/$n.dict")
    echo "== fuzz_$n for $seconds s (corpus $(ls "$corpus" | wc -l) files)"
    log="$build/findings/$n.log"
    status=0
    ASAN_OPTIONS=detect_leaks=1 "$build"/tests/fuzz/fuzz_"$n" "$corpus" "${dict[@]}" -artifact_prefix="$findings/" \
        -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 -seed=1 -print_final_stats=1 "$@" >"$log" 2>&1 || status=$?
    grep -E "^#[0-9]+.*(DONE|NEW|REDUCE)|stat::|ERROR|SUMMARY|Test unit written|==[0-9]+==" "$log" | tail -15 || true
    runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
    cov="$(sed -nE 's/^#[0-9]+[[:space:]]+DONE[[:space:]]+cov: ([0-9]+).*/\1/p' "$log" | tail -1)"
    if [ "$status" = 0 ]; then clean+=("$n ${runs:-0} runs, cov ${cov:-?}"); else found+=("$n (exit $status, see $log)"); fi
done
summary="$(IFS=';'; echo "${clean[*]}" | sed 's/;/; /g')"
if [ "${#found[@]}" -gt 0 ]; then
    echo "fuzz smoke: ${#found[@]} of ${#names[@]} fuzzers found something: ${found[*]}"
    exit 1
fi
echo "fuzz smoke: ${#clean[@]} of ${#names[@]} fuzzers ran ${seconds} s each ($summary), clean"
