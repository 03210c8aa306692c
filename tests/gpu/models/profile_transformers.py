"""On the GPU machine: where the time of the transformers goes. Exports BertModel, GPT2Model
(sequence 128, eager attention) and torchvision's vit_b_16 with random weights, the batch dim
symbolic, and runs `kiln perf --gpu -O --fp16 --batch B` on each at each batch size: the full
report (every instruction of main with its time, the summary by op, the compile report) goes to
OUTDIR/<model>_b<B>.txt, and one line per run (total time, rate, kernel count) is printed.

usage: profile_transformers.py KILN_BINARY WORKDIR OUTDIR [MODEL...] [--batch 1,64] [-n 30] [--extra "ARGS"]
  --extra  more kiln perf options (e.g. "--exhaustive-tune"); repeat the run with other ones
           by calling the script again with another OUTDIR
"""
import os, re, subprocess, sys, time
from concurrent.futures import ProcessPoolExecutor

import torch

args = sys.argv[1:]


def option(name, default):
    if name in args:
        i = args.index(name)
        value = args[i + 1]
        del args[i:i + 2]
        return value
    return default


batches = [int(b) for b in option("--batch", "1,64").split(",")]
runs = option("-n", "30")
extra = option("--extra", "").split()
kiln, work, out = args[:3]
which = args[3:] or ["bert", "gpt2", "vit_b_16"]
os.makedirs(work, exist_ok=True)
os.makedirs(out, exist_ok=True)


class LastHidden(torch.nn.Module):   # positional inputs for the exporter, one output
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, input_ids, attention_mask=None):
        return self.m(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state


def model(name):
    torch.manual_seed(0)
    if name == "bert":
        from transformers import BertConfig, BertModel
        m = LastHidden(BertModel(BertConfig(attn_implementation="eager")))
        return m, (torch.randint(0, 30000, (2, 128)), torch.ones(2, 128, dtype=torch.int64)), ["input_ids", "attention_mask"]
    if name == "gpt2":
        from transformers import GPT2Config, GPT2Model
        m = LastHidden(GPT2Model(GPT2Config(attn_implementation="eager", use_cache=False)))
        return m, (torch.randint(0, 50000, (2, 128)),), ["input_ids"]
    import torchvision
    return getattr(torchvision.models, name)(), (torch.randn(2, 3, 224, 224),), ["x"]


def export(name):
    """The TorchScript exporter with the batch dim symbolic; dynamo's where it fails."""
    path = os.path.join(work, name + ".onnx")
    if os.path.exists(path):
        return path, "kept"
    m, inputs, names = model(name)
    m = m.eval()
    t0 = time.time()
    try:
        torch.onnx.export(m, inputs, path, input_names=names, output_names=["y"], opset_version=17, dynamo=False,
                          dynamic_axes={n: {0: "batch"} for n in names + ["y"]})
        how = "torchscript"
    except Exception as e:
        print(name, "torchscript export failed:", str(e)[:300], flush=True)
        batch = torch.export.Dim("batch", min=1, max=1024)
        torch.onnx.export(m, inputs, path, input_names=names, output_names=["y"], opset_version=18, dynamo=True,
                          external_data=False, dynamic_shapes=tuple({0: batch} for _ in inputs))
        how = "dynamo"
    return path, f"{how}, {time.time() - t0:.1f} s"


with ProcessPoolExecutor(len(which)) as pool:
    paths = dict(zip(which, pool.map(export, which)))
for name, (path, how) in paths.items():
    print(name, "exported:", how, flush=True)
    for b in batches:
        t0 = time.time()
        p = subprocess.run([kiln, "perf", path, "--gpu", "-O", "--fp16", "--batch", str(b), "-n", runs, *extra],
                           capture_output=True, text=True, env=dict(os.environ, XDG_CACHE_HOME=os.path.join(work, "cache")))
        log = p.stdout + p.stderr
        open(os.path.join(out, f"{name}_b{b}.txt"), "w").write(log)
        pick = [l.strip() for l in log.splitlines() if re.match(r"\s*(Rate|Total time|Total instructions|kernels|library plans|Compiled|exhaustive tune)", l)]
        print(f"{name} batch {b}: rc {p.returncode}, {time.time() - t0:.1f} s;", " | ".join(pick)[:600], flush=True)
        if p.returncode != 0:
            print(log[-1500:], flush=True)
