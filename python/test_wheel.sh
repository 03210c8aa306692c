#!/usr/bin/env bash
# The wheel on a clean environment: installs it into a fresh venv outside the tree (its
# dependencies, numpy and the pinned onednn-cpu-gomp, from the package index), then, with nothing
# of the build tree or .venv on any path, compiles a convolution for cpu, runs it, checks it
# against ref and checks that libdnnl.so.3 was loaded from that venv (kiln_lib's rpath
# $ORIGIN/../../.. is the environment's lib/, where onednn-cpu-gomp puts it).
# Usage: python/test_wheel.sh [WHEEL]   (without WHEEL: `pip wheel .` into build-wheel/ first)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
wheel="${1:-}"
if [ -z "$wheel" ]; then
    "$root/.venv/bin/pip" wheel "$root" --no-deps --no-build-isolation -w "$root/build-wheel"
    wheel="$(ls -t "$root"/build-wheel/kiln-*.whl | head -1)"
fi
python="$("$root/.venv/bin/python" -c 'import sys; print(sys._base_executable)')"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$python" -m venv "$tmp/venv"
"$tmp/venv/bin/pip" install -q --disable-pip-version-check "$wheel"
cd "$tmp"
env -u PYTHONPATH -u LD_LIBRARY_PATH "$tmp/venv/bin/python" - "$tmp/venv" <<'EOF'
import os
import sys

import numpy as np

import kiln

venv = os.path.realpath(sys.argv[1])
assert "cpu" in kiln.built_targets(), kiln.built_targets()
program = kiln.parse_text("""module: "main"
x = @param:x -> float_type, {1, 16, 12, 12}
w = @param:w -> float_type, {16, 16, 3, 3}
@0 = convolution[padding={1, 1, 1, 1},stride={1, 1},dilation={1, 1},group=1](x,w)
@1 = relu(@0)
@2 = @return(@1)
""")
rng = np.random.default_rng(0)
inputs = {"x": rng.uniform(-1, 1, (1, 16, 12, 12)).astype(np.float32),
          "w": rng.uniform(-1, 1, (16, 16, 3, 3)).astype(np.float32)}
report = kiln.verify(program, inputs, "cpu")
assert report, report
program.compile("cpu")
out = list(program.run(inputs).values())[0]
assert np.asarray(out).shape == (1, 16, 12, 12)
with open("/proc/self/maps") as maps:
    dnnl = {line.split()[-1] for line in maps if "libdnnl" in line}
assert dnnl and all(os.path.realpath(p).startswith(venv) for p in dnnl), dnnl
print("wheel OK: cpu matches ref; libdnnl from", ", ".join(sorted(dnnl)))
EOF
