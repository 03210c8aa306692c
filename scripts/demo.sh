#!/usr/bin/env bash
# Sets up, builds and runs the demo: an MNIST-shaped MLP in kiln's text IR, run on the ref target.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
/usr/bin/python3 scripts/make_mnist_mlp.py build/mnist_mlp.kir
build/kiln run build/mnist_mlp.kir --seed 1
