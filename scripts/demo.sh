#!/usr/bin/env bash
# Sets up, builds and runs the demo on the default target (cpu on a machine without a GPU):
#  1. an MNIST-shaped MLP written in kiln's text IR (random weights), printing its IR and outputs;
#  2. resnet18 exported to ONNX by PyTorch (random weights, calibrated batch norm), optimised by
#     the generic passes (-O: folding, simplification, fusion; the report shows instructions,
#     kernel launches and the memory plan) and compared with PyTorch's own output.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
/usr/bin/python3 scripts/make_mnist_mlp.py build/mnist_mlp.kir
build/kiln run build/mnist_mlp.kir --seed 1
echo
echo "== resnet18 from PyTorch through ONNX =="
[ -f build/demo/resnet18_opset17/model.onnx ] ||
    /usr/bin/python3 tests/models/export_torchvision.py build/demo resnet18 2>&1 | grep -v -i warning
build/kiln run build/demo/resnet18_opset17/model.onnx -O \
    --test-data build/demo/resnet18_opset17/test_data_set_0 --brief
