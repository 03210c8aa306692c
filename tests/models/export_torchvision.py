"""Exports torchvision CNNs to ONNX with PyTorch's outputs, as ONNX backend-test folders:
OUT/<model>_opset<N>/model.onnx and test_data_set_0/{input_0,output_0}.pb.
Runs with Debian's interpreter (/usr/bin/python3: python3-torch, python3-torchvision, python3-onnx).
Weights are random (weights=None), but the batch-norm statistics are re-estimated on random
batches first: with untouched statistics the outputs are ~1e-10 and a comparison proves nothing.
Usage: /usr/bin/python3 tests/models/export_torchvision.py OUT [model ...]
"""
import os
import sys

import numpy as np
import onnx
import torch
import torchvision
from onnx import numpy_helper

MODELS = {"resnet18": torchvision.models.resnet18, "mobilenet_v2": torchvision.models.mobilenet_v2}
OPSETS = (13, 17)


def calibrated(make):
    torch.manual_seed(0)
    model = make(weights=None)
    # Cumulative averages (momentum=None) over a few random batches give realistic statistics.
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.reset_running_stats()
            m.momentum = None
    model.train()
    with torch.no_grad():
        for _ in range(4):
            model(torch.randn(8, 3, 224, 224))
    return model.eval()


def export(name, out_dir):
    model = calibrated(MODELS[name])
    x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        y = model(x).numpy()
    for opset in OPSETS:
        d = os.path.join(out_dir, f"{name}_opset{opset}")
        os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
        path = os.path.join(d, "model.onnx")
        torch.onnx.export(model, x, path, opset_version=opset, input_names=["input"], output_names=["logits"])
        onnx.checker.check_model(path)
        for kind, arr, nm in (("input", x.numpy(), "input"), ("output", y, "logits")):
            t = numpy_helper.from_array(np.ascontiguousarray(arr), nm)
            with open(os.path.join(d, "test_data_set_0", f"{kind}_0.pb"), "wb") as f:
                f.write(t.SerializeToString())
        print(f"{d}: logits {y.shape}, |y| mean {np.abs(y).mean():.3g}")


if __name__ == "__main__":
    out = sys.argv[1]
    for name in sys.argv[2:] or MODELS:
        export(name, out)
