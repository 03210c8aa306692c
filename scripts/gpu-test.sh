#!/usr/bin/env bash
# The GPU tests, packed here and run on the GPU machine.
#   scripts/gpu-test.sh pack DIR   copies the stripped test binary, libkiln and the op cases into DIR
#                                  (a folder the device tool carries, e.g. /work/main/.gpu-carry)
#   scripts/gpu-test.sh run DIR    on the GPU machine: finds cuDNN in Python's site-packages and the
#                                  CUDA libraries, runs every GPU test; extra args go to the tests
#   scripts/gpu-test.sh models DIR WORK [MODEL...] [--perf] [--bisect]  on the GPU machine: exports
#                                  resnet50, mobilenet_v3_large, vit_b_16, BERT and GPT-2 with torch and
#                                  checks `kiln run --gpu` against PyTorch and ONNX Runtime, `kiln verify
#                                  --gpu` (export_and_check.py)
#   scripts/gpu-test.sh bench DIR [ARGS]  on the GPU machine: bench/gpu_bench.py with the packed kiln
#                                  (kiln, PyTorch eager and torch.compile on the five models); ARGS go
#                                  to it (docs/performance.md)
#   scripts/gpu-test.sh profile DIR WORK OUTDIR [MODEL...] [--batch 1,64] [-n N] [--extra ARGS]  on
#                                  the GPU machine: exports BERT, GPT-2 and ViT with a symbolic batch
#                                  and writes `kiln perf --gpu -O --fp16` at each batch to OUTDIR
#                                  (profile_transformers.py)
#   scripts/gpu-test.sh pack-io DIR   pack, plus the C API tests, libkiln_api, the Python module and its
#                                  GPU test (needs `ninja kiln_c_api_tests _kiln` first)
#   scripts/gpu-test.sh io DIR     on the GPU machine: caller device pointers through the C API tests
#                                  (c_api_device.*) and torch.cuda tensors through Python (test_gpu.py)
#   scripts/gpu-test.sh sanitize DIR  on the GPU machine: compute-sanitizer memcheck and racecheck
#                                  over every GPU test, each in SANITIZE_SHARDS (6) parallel gtest
#                                  shards with its own log; MEMCHECK_FILTER / RACECHECK_FILTER (gtest
#                                  filters) narrow them, SANITIZE_TIMEOUT bounds each shard
#   scripts/gpu-test.sh bind-cost DIR WORK  on the GPU machine, after `io`: resnet50's run time with
#                                  torch.cuda tensors bound in place, rebound each run, copied, and
#                                  host arrays (bind_cost.py)
#   scripts/gpu-test.sh conformance-pack DIR  pack, plus the ONNX conformance runner, its lists and
#                                  the node cases of the pinned onnx (build/onnx-node-data, compressed)
#   scripts/gpu-test.sh conformance DIR [ARGS]  on the GPU machine: unpacks the ONNX backend node
#                                  cases (or, not packed, generates them with the onnx package there,
#                                  another version with other cases) into DIR/onnx-node-data, runs
#                                  them on the gpu target in KILN_CONFORMANCE_SHARDS (8) parallel
#                                  shards against onnx_expected_failures_gpu.txt, prints each shard's
#                                  findings and the totals; WRITE_EXPECTED=FILE writes the failing
#                                  cases as a new list. ARGS go to kiln_onnx_conformance.
set -euo pipefail
cmd=${1:?usage: gpu-test.sh pack|run|models|bench|pack-io|io|sanitize|bind-cost|conformance-pack|conformance DIR}
dir=${2:?usage: gpu-test.sh pack|run|models|bench|pack-io|io|sanitize|bind-cost|conformance-pack|conformance DIR}
shift 2
case "$cmd" in
pack)
    root="$(cd "$(dirname "$0")/.." && pwd)"
    rm -rf "$dir/bin" "$dir/lib" "$dir/tests"
    mkdir -p "$dir/bin" "$dir/lib" "$dir/tests/ops"
    cp "$root/build/tests/kiln_gpu_tests" "$root/build/kiln" "$dir/bin/"
    cp "$root/build/libkiln.so" "$root/build/libkiln_onnx.so" "$dir/lib/"
    # The ONNX frontend's protobuf libraries (Debian's) and oneDNN (the cpu target's, from .venv),
    # which the GPU machine lacks.
    for l in $(ldd "$root/build/libkiln_onnx.so" "$root/build/libkiln.so" | awk '/onnx|protobuf|absl|dnnl/ {print $3}' | sort -u); do
        cp -L "$l" "$dir/lib/"
    done
    strip --strip-debug "$dir"/bin/* "$dir"/lib/*
    cp "$root/tests/gpu/models/profile_transformers.py" "$dir/"
    cp -r "$root/tests/ops/cases" "$dir/tests/ops/"
    cp "$0" "$dir/"
    cp "$root/tests/gpu/models/export_and_check.py" "$root/tests/gpu/models/count_attention.py" \
       "$root/bench/attention_sdpa.py" "$root/bench/torch_models.py" "$root/bench/gpu_bench.py" "$dir/"
    # torch.compile's kept results (the bench reads and extends the copy there; bring it back).
    [ -f "$root/bench/gpu_torch_compile.json" ] && cp "$root/bench/gpu_torch_compile.json" "$dir/"
    # The device tool carries 64 MiB: oneDNN (53 MB) travels gzipped and is unpacked there.
    gzip -1 -f "$dir"/lib/libdnnl.so.*
    du -sh "$dir"
    ;;
pack-io)
    root="$(cd "$(dirname "$0")/.." && pwd)"
    "$0" pack "$dir"
    cp "$root/build/tests/kiln_c_api_tests" "$dir/bin/"
    cp "$root/build/libkiln_api.so" "$dir/lib/"
    rm -rf "$dir/python" && mkdir -p "$dir/python/kiln"
    cp -L "$root"/build/python/kiln/* "$dir/python/kiln/"
    cp "$root/tests/python/test_gpu.py" "$root/tests/gpu/models/bind_cost.py" "$dir/"
    # The extension's sources and kiln's headers, to build it there for another Python version.
    rm -rf "$dir/src" "$dir/include" && mkdir -p "$dir/python/src"
    cp "$root"/python/src/* "$dir/python/src/"
    cp -r "$root/include" "$dir/"
    (cd "$root" && find src \( -name '*.hpp' -o -name '*.h' \) -exec cp --parents {} "$dir/" \;)
    strip --strip-debug "$dir/bin/kiln_c_api_tests" "$dir/lib/libkiln_api.so" "$dir"/python/kiln/*.so
    du -sh "$dir"
    ;;
run|models|profile|io|sanitize|bind-cost|bench)
    dir="$(cd "$dir" && pwd)"
    # Under a lock: several commands started at once on one DIR would unpack the same file.
    (flock 9; for z in "$dir"/lib/*.gz; do [ -e "$z" ] && gunzip -f "$z"; done; true) 9>"$dir/lib/.unpack.lock"
    libs="$dir/lib:/usr/local/cuda/lib64:/usr/local/cuda/lib"
    # cuDNN (and, where /usr/local/cuda lacks them, cuBLASLt and NVRTC) come from the nvidia-*
    # wheels; nvidia.cudnn is a namespace package, so its path, not __file__.
    site=$(python3 -c "import nvidia, os; print(':'.join(os.path.join(p, d, 'lib') for p in nvidia.__path__ for d in sorted(os.listdir(p)) if os.path.isdir(os.path.join(p, d, 'lib'))))" 2>/dev/null || true)
    export LD_LIBRARY_PATH="$libs:$site${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    export KILN_GPU_TEST_DATA="$dir/tests"
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
    case "$cmd" in
    models) python3 "$dir/export_and_check.py" "$dir/bin/kiln" "$@" ;;
    bench) python3 "$dir/gpu_bench.py" --kiln "$dir/bin/kiln" --cache "$dir/gpu_torch_compile.json" "$@" ;;
    profile) python3 "$dir/profile_transformers.py" "$dir/bin/kiln" "$@" ;;
    bind-cost) PYTHONPATH="$dir/python" python3 "$dir/bind_cost.py" "$@" ;;
    run) "$dir/bin/kiln_gpu_tests" "$@" ;;
    io)
        if ! PYTHONPATH="$dir/python" python3 -c "import kiln" 2>/dev/null; then
            # Another Python version than the build machine's: build the extension here.
            inc=$(python3 -c "import sysconfig; print(sysconfig.get_paths()['include'])")
            pyb=$(python3 -c "import pybind11; print(pybind11.get_include())" 2>/dev/null ||
                  python3 -c "import torch.utils.cpp_extension as c; print(c.include_paths()[0])")
            ext=$(python3 -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
            mkdir -p "$dir/python/obj"
            for f in "$dir"/python/src/*.cpp; do
                g++ -std=c++20 -O1 -fPIC -fvisibility=hidden -I"$dir/src" -I"$dir/include" -I"$inc" -I"$pyb" \
                    -c "$f" -o "$dir/python/obj/$(basename "$f").o" &
            done
            wait
            g++ -shared "$dir"/python/obj/*.o -L"$dir/lib" -lkiln_api -lkiln_onnx -lkiln -Wl,-rpath,"$dir/lib" \
                -o "$dir/python/kiln/_kiln$ext"
        fi
        status=0
        "$dir/bin/kiln_c_api_tests" --gtest_filter='c_api_device.*' || status=1
        PYTHONPATH="$dir/python" python3 "$dir/test_gpu.py" || status=1
        exit $status
        ;;
    sanitize)
        # Every GPU test under each tool, in SANITIZE_SHARDS (default 6) gtest shards per tool run
        # at once (the sanitizers are CPU-bound; the machine has 16 cores); one log per tool and
        # shard under ${OUT:-.}, SANITIZE_TIMEOUT (seconds, default none) bounds each. The exit
        # status says whether any found an error. API errors are not reported: kiln checks every
        # CUDA call itself, and graph_bindings.cpp asks cuFuncGetParamInfo one index past each
        # kernel's last parameter by design (CUDA has no parameter count).
        out=${OUT:-.}
        san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
        shards=${SANITIZE_SHARDS:-6}
        limit=${SANITIZE_TIMEOUT:+timeout $SANITIZE_TIMEOUT}
        pids=()
        for t in memcheck racecheck; do
            filter=$([ $t = memcheck ] && echo "${MEMCHECK_FILTER:-*}" || echo "${RACECHECK_FILTER:-*}")
            for ((k = 0; k < shards; k++)); do
                GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$k $limit "$san" --tool $t --report-api-errors no \
                    --error-exitcode 99 --log-file "$out/$t.$k.log" "$dir/bin/kiln_gpu_tests" --gtest_filter="$filter" \
                    > "$out/$t.$k.out" 2>&1 &
                pids+=($!)
            done
        done
        status=0
        for p in "${pids[@]}"; do wait "$p" || status=1; done
        for t in memcheck racecheck; do
            for ((k = 0; k < shards; k++)); do
                echo "$t shard $k/$shards: $(grep -h 'SUMMARY' "$out/$t.$k.log" | tail -1);" \
                     "$(grep -c '^\[       OK \]' "$out/$t.$k.out") tests passed, $(grep -c '^\[  FAILED  \]' "$out/$t.$k.out") failed;" \
                     "$(tail -1 "$out/$t.$k.out")"
            done
        done
        exit $status
        ;;
    esac
    ;;
conformance-pack)
    "$0" pack "$dir"
    root="$(cd "$(dirname "$0")/.." && pwd)"
    cp "$root/build/tests/kiln_onnx_conformance" "$dir/bin/"
    strip --strip-debug "$dir/bin/kiln_onnx_conformance"
    mkdir -p "$dir/conformance"
    cp "$root"/tests/conformance/{generate_onnx_node_data.py,onnx_skips.txt,onnx_expected_failures_gpu.txt} "$dir/conformance/"
    # The node cases of the pinned onnx (the tests generate them into build/), so that gpu runs the
    # suite ref and cpu run; the GPU machine's onnx is another version with other cases.
    if [ -f "$root/build/onnx-node-data/.case-count" ]; then
        tar czf "$dir/conformance/onnx-node-data.tgz" -C "$root/build" onnx-node-data
    fi
    du -sh "$dir"
    ;;
conformance)
    dir="$(cd "$dir" && pwd)"
    # Under a lock: several commands started at once on one DIR would unpack the same file.
    (flock 9; for z in "$dir"/lib/*.gz; do [ -e "$z" ] && gunzip -f "$z"; done; true) 9>"$dir/lib/.unpack.lock"
    data="$dir/onnx-node-data"
    if [ ! -f "$data/.case-count" ]; then
        if [ -f "$dir/conformance/onnx-node-data.tgz" ]; then
            tar xzf "$dir/conformance/onnx-node-data.tgz" -C "$dir"
        else   # not packed: that machine's onnx package (another version: other cases)
            python3 "$dir/conformance/generate_onnx_node_data.py" "$data"
        fi
    fi
    # The libraries as `run` finds them (cuDNN and friends from the nvidia-* wheels).
    site=$(python3 -c "import nvidia, os; print(':'.join(os.path.join(p, d, 'lib') for p in nvidia.__path__ for d in sorted(os.listdir(p)) if os.path.isdir(os.path.join(p, d, 'lib'))))" 2>/dev/null || true)
    export LD_LIBRARY_PATH="$dir/lib:/usr/local/cuda/lib64:/usr/local/cuda/lib:$site${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    n=${KILN_CONFORMANCE_SHARDS:-8}
    pids=()
    rm -f "$dir"/conformance.*.log "$dir"/failing.*
    for ((k = 0; k < n; k++)); do
        "$dir/bin/kiln_onnx_conformance" --data "$data" --target gpu --shard "$k/$n" \
            --expected-failures "$dir/conformance/onnx_expected_failures_gpu.txt" --skips "$dir/conformance/onnx_skips.txt" \
            ${WRITE_EXPECTED:+--write-expected "$dir/failing.$k"} "$@" > "$dir/conformance.$k.log" 2>&1 &
        pids+=($!)
    done
    rc=0
    for p in "${pids[@]}"; do wait "$p" || rc=1; done
    grep -hvE '^(  |per op|target gpu|[0-9]+ passed|wrote |$)' "$dir"/conformance.*.log || true
    awk '/^[0-9]+ passed, [0-9]+ failed$/ {p += $1; f += $3} /^target gpu:/ {s += $3; e += $5; u += $8}
         END {printf "gpu conformance: %d passed, %d failed (%d expected failures, %d unexpected), %d skipped\n", p, f, e, u, s}' \
        "$dir"/conformance.*.log
    if [ -n "${WRITE_EXPECTED:-}" ]; then
        { echo "# ONNX backend node cases that fail on the gpu target, with the reason. Same policy as ref's list"
          echo "# (onnx_expected_failures.txt): it may only shrink, and a case listed here that passes fails the test."
          cat "$dir"/failing.* | grep -vE '^(#|[[:space:]]*$)' | sort; } > "$WRITE_EXPECTED"
        echo "wrote $(grep -vc '^#' "$WRITE_EXPECTED") expected failures to $WRITE_EXPECTED"
    fi
    exit $rc
    ;;
*) echo "usage: gpu-test.sh pack|run|models|bench|pack-io|io|sanitize|bind-cost|conformance-pack|conformance DIR" >&2; exit 2 ;;
esac
