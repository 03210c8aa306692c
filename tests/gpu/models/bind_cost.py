"""On the GPU machine: what a run of resnet50 (batch 1, fp32, kiln's Python module) costs with its
input and output as torch.cuda tensors bound into the CUDA graph in place (the same tensors every
run, and two sets in turn, which rebinds the graph's kernel parameters each run), as tensors that
are not 256-byte aligned (copied device-to-device instead), and as host arrays. Prints each
median of 200 runs and checks every mode's output against the first.

usage: bind_cost.py WORKDIR   (PYTHONPATH must find kiln; exports resnet50 into WORKDIR)"""
import os, statistics, sys, time

import numpy as np
import torch
import torchvision

import kiln

work = sys.argv[1]
os.makedirs(work, exist_ok=True)
path = os.path.join(work, "resnet50_bind.onnx")
torch.manual_seed(0)
torch.onnx.export(torchvision.models.resnet50().eval(), (torch.randn(1, 3, 224, 224),), path, input_names=["x"],
                  output_names=["y"], opset_version=17, dynamo=False)
p = kiln.parse_onnx(path)
p.compile("gpu")
n = 3 * 224 * 224


def misaligned(shape, numel):   # a view 64 bytes into a buffer: not 256-byte aligned
    return torch.empty(numel + 16, device="cuda")[16:].view(*shape)


x0 = torch.randn(1, 3, 224, 224, device="cuda")
x_host = x0.cpu().numpy()
sets = [(x0, torch.empty(1, 1000, device="cuda")), (x0.clone(), torch.empty(1, 1000, device="cuda"))]
odd = (misaligned((1, 3, 224, 224), n).copy_(x0), misaligned((1, 1000), 1000))
modes = {
    "bound, same tensors": lambda i: p.run({"x": sets[0][0]}, outputs={"y": sets[0][1]}) and sets[0][1],
    "bound, two sets in turn (rebinding each run)": lambda i: p.run({"x": sets[i % 2][0]}, outputs={"y": sets[i % 2][1]}) and sets[i % 2][1],
    "copied, misaligned tensors": lambda i: p.run({"x": odd[0]}, outputs={"y": odd[1]}) and odd[1],
    "host arrays": lambda i: torch.from_numpy(np.asarray(p.run({"x": x_host})["y"])),
}
want = None
for name, run in modes.items():
    for i in range(5):
        run(i)
    times = []
    for i in range(200):
        t0 = time.perf_counter()
        y = run(i)
        times.append((time.perf_counter() - t0) * 1e3)
    got = y.double().cpu()
    want = got if want is None else want
    err = float((got - want).norm() / want.norm())
    print(f"{name}: median {statistics.median(times):.3f} ms, p10 {np.percentile(times, 10):.3f} ms, rel L2 vs the first {err:.1e}")
