"""Exports resnet50 and mobilenet_v3_large (torchvision, random weights, 224x224) to ONNX with a
symbolic batch dim, for `kiln perf MODEL --gpu --fp16 --batch N` at any batch size (the NHWC
convolution timings in docs/gpu.md). usage: export_conv_models.py OUTDIR"""
import os, sys

import torch
import torchvision

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
torch.manual_seed(0)
for name in ("resnet50", "mobilenet_v3_large"):
    model = getattr(torchvision.models, name)(weights=None).eval()
    x = torch.randn(1, 3, 224, 224)
    torch.onnx.export(model, (x,), os.path.join(out, name + ".onnx"), input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}}, opset_version=17, dynamo=False)
    print("exported", name, flush=True)
