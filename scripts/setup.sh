#!/usr/bin/env bash
# Installs everything kiln's build, demo and tests need on Debian 12. Idempotent: safe to rerun.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake ninja-build ccache git pkg-config
          libgtest-dev libgmock-dev libbenchmark-dev
          libonnx-dev libprotobuf-dev protobuf-compiler
          python3 python3-venv python3-numpy python3-dev pybind11-dev valgrind
          python3-torch python3-torchvision python3-onnx python3-pytest
          clang libclang-rt-dev libomp-dev)   # the sanitized build and the fuzzers (scripts/sanitize.sh)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    sudo_cmd=""
    [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
    echo "setup: installing ${missing[*]}"
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}"
fi

# Python tools (test-case generation, conformance) live in one pinned virtual environment.
if [ ! -x .venv/bin/python ]; then
    /usr/bin/python3 -m venv .venv
fi
if ! cmp -s requirements.txt .venv/.requirements.installed 2>/dev/null; then
    .venv/bin/pip install -q --disable-pip-version-check -r requirements.txt
    cp requirements.txt .venv/.requirements.installed
fi
echo "setup: done"
