#!/usr/bin/env bash
# The GPU tests, packed here and run on the GPU machine.
#   scripts/gpu-test.sh pack DIR   copies the stripped test binary, libkiln and the op cases into DIR
#                                  (a folder the device tool carries, e.g. /work/main/.gpu-carry)
#   scripts/gpu-test.sh run DIR    on the GPU machine: finds cuDNN in Python's site-packages and the
#                                  CUDA libraries, runs every GPU test; extra args go to the tests
#   scripts/gpu-test.sh models DIR WORK  on the GPU machine: exports resnet50 and BERT with torch and
#                                  checks `kiln run --gpu` against PyTorch (export_and_check.py)
set -euo pipefail
cmd=${1:?usage: gpu-test.sh pack|run DIR}
dir=${2:?usage: gpu-test.sh pack|run DIR}
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
    cp -r "$root/tests/ops/cases" "$dir/tests/ops/"
    cp "$0" "$dir/"
    cp "$root/tests/gpu/models/export_and_check.py" "$dir/"
    du -sh "$dir"
    ;;
run|models)
    dir="$(cd "$dir" && pwd)"
    libs="$dir/lib:/usr/local/cuda/lib64:/usr/local/cuda/lib"
    # cuDNN (and, where /usr/local/cuda lacks them, cuBLASLt and NVRTC) come from the nvidia-*
    # wheels; nvidia.cudnn is a namespace package, so its path, not __file__.
    site=$(python3 -c "import nvidia, os; print(':'.join(os.path.join(p, d, 'lib') for p in nvidia.__path__ for d in sorted(os.listdir(p)) if os.path.isdir(os.path.join(p, d, 'lib'))))" 2>/dev/null || true)
    export LD_LIBRARY_PATH="$libs:$site${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    export KILN_GPU_TEST_DATA="$dir/tests"
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
    if [ "$cmd" = models ]; then
        python3 "$dir/export_and_check.py" "$dir/bin/kiln" "$@"
    else
        "$dir/bin/kiln_gpu_tests" "$@"
    fi
    ;;
*) echo "usage: gpu-test.sh pack|run DIR" >&2; exit 2 ;;
esac
