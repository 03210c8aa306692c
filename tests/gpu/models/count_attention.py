"""On the GPU machine (transformers installed): exports BertModel and GPT2Model (default configs,
eager attention, sequence 128, random weights) with the TorchScript and the dynamo exporter, as
export_and_check.py does, compiles each with `kiln compile --gpu -O --fp16` and prints how many
attention ops and softmaxes the compiled program has: one attention per layer and no softmax
left means recognize_attention found every layer's softmax(Q·Kᵀ)·V.

usage: python3 count_attention.py KILN_BINARY WORKDIR
"""
import os, subprocess, sys

import torch

kiln, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)


class LastHidden(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, *args):
        return self.m(**dict(zip(["input_ids", "attention_mask"], args))).last_hidden_state


def models():
    from transformers import BertConfig, BertModel, GPT2Config, GPT2Model
    ids = torch.randint(0, 1000, (1, 128))
    mask = torch.ones(1, 128, dtype=torch.int64)
    mask[:, -16:] = 0
    yield "bert", BertModel(BertConfig(attn_implementation="eager")), (ids, mask)
    yield "gpt2", GPT2Model(GPT2Config(attn_implementation="eager", use_cache=False)), (ids,)


for name, m, args in models():
    for exporter, kwargs in (("torchscript", dict(opset_version=17, dynamo=False)),
                             ("dynamo", dict(opset_version=18, dynamo=True, external_data=False))):
        path = os.path.join(work, f"{name}_{exporter}.onnx")
        try:
            torch.onnx.export(LastHidden(m.eval()), args, path, input_names=["input_ids", "attention_mask"][:len(args)],
                              output_names=["y"], **kwargs)
        except Exception as e:
            print(f"{name} {exporter}: export failed: {str(e)[:300]}")
            continue
        p = subprocess.run([kiln, "compile", path, "--gpu", "-O", "--fp16"], capture_output=True, text=True)
        ir = p.stdout
        print(f"{name} {exporter}: rc {p.returncode}, {m.config.num_hidden_layers if hasattr(m.config, 'num_hidden_layers') else m.config.n_layer} layers, "
              f"attention ops {ir.count(' = attention[')}, softmax left {ir.count(' = softmax[')}, "
              f"flash-eligible fp16 attention {sum(1 for l in ir.splitlines() if ' = attention[' in l and 'half_type' in l)}"
              + ("" if p.returncode == 0 else f"\n{p.stderr[-800:]}"), flush=True)
