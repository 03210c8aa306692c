"""The five models of the GPU benchmark (bench/gpu_bench.py) and of the GPU model check
(tests/gpu/models/export_and_check.py), built with the local torch (random weights, default
configs) and exported to ONNX:

  torchvision: resnet50, mobilenet_v3_large, vit_b_16 (224x224)
  transformers: BertModel, GPT2Model (sequence 128, eager attention; BERT's mask pads its last 16
                tokens). Each model is exported with the TorchScript exporter, or with dynamo where
                ONNX Runtime on the TorchScript export does not match PyTorch (the traced masking
                code of transformers 5 exports wrongly with padding), keeping the closer one.
"""
import os

import numpy as np
import torch

MODELS = ("resnet50", "mobilenet_v3_large", "vit_b_16", "bert", "gpt2")
SEQUENCE = 128
PADDED = 16   # BERT's mask pads the last 16 tokens of each sequence


def rel_l2(got, want):
    got, want = got.astype(np.float64), want.astype(np.float64)
    return float(np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-30))


def ort_vs_torch(path, feeds, want):
    import onnxruntime as ort
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    return rel_l2(sess.run(None, feeds)[0], want)


def export(module, args, path, input_names, output_names, want=None):
    """The TorchScript exporter (opset 17), else torch's dynamo exporter (opset 18). With `want`
    (PyTorch's output), the export whose ONNX Runtime output is closer to it is kept: the traced
    masking code of transformers can export wrongly, and then kiln would be checked against it.
    Returns which exporter was kept and each one's error against `want`."""
    module = module.eval()   # a wrapper module is in training mode until told: dropout would stay
    feeds = {n: a.numpy() for n, a in zip(input_names, args)}
    tried = {}
    for name, kwargs in (("torchscript", dict(opset_version=17, dynamo=False)),
                         ("dynamo", dict(opset_version=18, dynamo=True, external_data=False))):
        candidate = path + "." + name
        try:
            torch.onnx.export(module, args, candidate, input_names=input_names, output_names=output_names, **kwargs)
        except Exception as e:
            print(f"the {name} exporter failed:", str(e)[:500], flush=True)
            continue
        tried[name] = ort_vs_torch(candidate, feeds, want) if want is not None else 0.0
        if tried[name] < 1e-4:
            break
    if not tried:
        raise RuntimeError("both exporters failed")
    best = min(tried, key=tried.get)
    os.replace(path + "." + best, path)
    return {"exporter": best, "ort_vs_torch_by_exporter": tried}


class LastHidden(torch.nn.Module):   # positional inputs for the exporter, one output
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, *args):
        names = ["input_ids", "attention_mask"][:len(args)]
        return self.m(**dict(zip(names, args))).last_hidden_state


def vision_module(name):
    import torchvision
    torch.manual_seed(0)
    m = getattr(torchvision.models, name)().eval()
    if name == "vit_b_16":   # torchvision zero-initialises ViT's head: the output would be all zeros
        torch.nn.init.normal_(m.heads.head.weight, std=0.05)
    if name == "mobilenet_v3_large":
        # With its initial running statistics (mean 0, variance 1) every batch norm is the identity
        # and the random network shrinks its activations to logits of RMS ~2.5e-10, below float16's
        # range: the fp16 check would compare underflowed zeros. Statistics from random batches (one
        # cumulative pass in training mode) normalise each layer as trained weights would, and the
        # head is scaled so the logits have RMS ~1.
        for mod in m.modules():
            if isinstance(mod, torch.nn.BatchNorm2d):
                mod.reset_running_stats()
                mod.momentum = None
        with torch.no_grad():
            m.train()(torch.randn(8, 3, 224, 224))
            m.eval()
            rms = m(torch.randn(4, 3, 224, 224)).pow(2).mean().sqrt()
            m.classifier[-1].weight /= rms
            m.classifier[-1].bias /= rms
    return m


def bert_mask(batch):
    mask = torch.ones(batch, SEQUENCE, dtype=torch.int64)
    mask[:, -PADDED:] = 0
    return mask


def build(name, batch=1):
    """The model (eval mode, float32, on the CPU, positional inputs, one output), its inputs'
    names and example inputs of `batch` items, and its output's name."""
    if name in ("resnet50", "mobilenet_v3_large", "vit_b_16"):
        m = vision_module(name)
        return m, ["x"], [torch.randn(batch, 3, 224, 224)], "y"
    if name == "bert":
        from transformers import BertConfig, BertModel
        torch.manual_seed(0)
        m = BertModel(BertConfig(attn_implementation="eager")).eval()
        ids = torch.randint(0, m.config.vocab_size, (batch, SEQUENCE))
        return LastHidden(m).eval(), ["input_ids", "attention_mask"], [ids, bert_mask(batch)], "last_hidden_state"
    if name == "gpt2":
        from transformers import GPT2Config, GPT2Model
        torch.manual_seed(0)
        m = GPT2Model(GPT2Config(attn_implementation="eager", use_cache=False)).eval()
        ids = torch.randint(0, m.config.vocab_size, (batch, SEQUENCE))
        return LastHidden(m).eval(), ["input_ids"], [ids], "last_hidden_state"
    raise ValueError(f"unknown model {name} (models: {', '.join(MODELS)})")


def random_inputs(name, module, batch, device, dtype, generator):
    """Fresh inputs of the model's kinds on `device`: images uniform in [-1, 1] in `dtype`, token
    ids uniform over the vocabulary, BERT's padded mask."""
    if name in ("resnet50", "mobilenet_v3_large", "vit_b_16"):
        return [torch.rand(batch, 3, 224, 224, device=device, generator=generator).mul_(2).sub_(1).to(dtype)]
    vocab = module.m.config.vocab_size
    ids = torch.randint(0, vocab, (batch, SEQUENCE), device=device, generator=generator)
    return [ids, bert_mask(batch).to(device)] if name == "bert" else [ids]


def export_model(name, work, batch=1):
    """Exports the model at `batch` to WORK/NAME.onnx (NAME_bB.onnx for B > 1), checked against
    PyTorch's output through ONNX Runtime. Returns the path, each input saved as .npy by name,
    PyTorch's float32 output (on the CPU) and the exporter's record."""
    m, names, args, output = build(name, batch)
    tag = name if batch == 1 else f"{name}_b{batch}"
    path = os.path.join(work, tag + ".onnx")
    with torch.no_grad():
        want = m(*args).numpy()
    info = export(m, tuple(args), path, names, [output], want)
    files = {}
    for n, a in zip(names, args):
        files[n] = os.path.join(work, f"{tag}_{n}.npy")
        np.save(files[n], a.numpy())
    return path, files, want, info
