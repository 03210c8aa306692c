"""Exports two small transformers to ONNX at opset 14, where LayerNorm and GELU have no ONNX op
and come out decomposed (ReduceMean, Sub, Pow, Sqrt, Div; Erf or Tanh), and attention is written
out (MatMul, scale, mask, Softmax, MatMul): what recognize_patterns must find again.
- bert_like_opset14.onnx: a post-LN encoder, 2 layers, hidden 64, 4 heads, sequence 16, an
  additive attention mask input, erf GELU.
- gpt_like_opset14.onnx: a pre-LN decoder, 2 layers and a final LayerNorm, a fused qkv projection
  split in three, a causal mask applied with torch.where and the float32 lowest value (as GPT-2
  does), tanh GELU.
Random weights. Runs with Debian's interpreter (/usr/bin/python3: python3-torch, python3-onnx).
Usage: /usr/bin/python3 tests/models/make_bert_like.py OUT_DIR
"""
import math
import os
import sys

import onnx
import torch
from torch import nn

HIDDEN, HEADS, SEQ, LAYERS, FFN = 64, 4, 16, 2, 128


class SelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.q = nn.Linear(HIDDEN, HIDDEN)
        self.k = nn.Linear(HIDDEN, HIDDEN)
        self.v = nn.Linear(HIDDEN, HIDDEN)
        self.out = nn.Linear(HIDDEN, HIDDEN)
        self.head_size = HIDDEN // HEADS

    def heads(self, x):   # [B, S, H*D] -> [B, H, S, D]
        b, s, _ = x.shape
        return x.reshape(b, s, HEADS, self.head_size).transpose(1, 2)

    def forward(self, x, mask):
        q, k, v = self.heads(self.q(x)), self.heads(self.k(x)), self.heads(self.v(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_size)
        probs = torch.softmax(scores + mask, dim=-1)
        ctx = torch.matmul(probs, v).transpose(1, 2)
        return self.out(ctx.reshape(x.shape[0], x.shape[1], HIDDEN))


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = SelfAttention()
        self.ln1 = nn.LayerNorm(HIDDEN, eps=1e-12)
        self.ff1 = nn.Linear(HIDDEN, FFN)
        self.ff2 = nn.Linear(FFN, HIDDEN)
        self.ln2 = nn.LayerNorm(HIDDEN, eps=1e-12)

    def forward(self, x, mask):
        x = self.ln1(x + self.attn(x, mask))
        return self.ln2(x + self.ff2(nn.functional.gelu(self.ff1(x))))


class CausalSelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(HIDDEN, 3 * HIDDEN)
        self.out = nn.Linear(HIDDEN, HIDDEN)
        self.head_size = HIDDEN // HEADS
        self.register_buffer("causal", torch.tril(torch.ones(SEQ, SEQ, dtype=torch.bool)).view(1, 1, SEQ, SEQ))

    def heads(self, x):
        b, s, _ = x.shape
        return x.reshape(b, s, HEADS, self.head_size).transpose(1, 2)

    def forward(self, x):
        q, k, v = (self.heads(t) for t in self.qkv(x).split(HIDDEN, dim=2))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_size)
        s = x.shape[1]
        scores = torch.where(self.causal[:, :, :s, :s], scores, torch.tensor(torch.finfo(scores.dtype).min))
        ctx = torch.matmul(torch.softmax(scores, dim=-1), v).transpose(1, 2)
        return self.out(ctx.reshape(x.shape[0], s, HIDDEN))


class DecoderLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(HIDDEN)
        self.attn = CausalSelfAttention()
        self.ln2 = nn.LayerNorm(HIDDEN)
        self.ff1 = nn.Linear(HIDDEN, FFN)
        self.ff2 = nn.Linear(FFN, HIDDEN)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.ff2(nn.functional.gelu(self.ff1(self.ln2(x)), approximate="tanh"))


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(DecoderLayer() for _ in range(LAYERS))
        self.ln = nn.LayerNorm(HIDDEN)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.ln(x)


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(Layer() for _ in range(LAYERS))

    def forward(self, x, mask):
        for layer in self.layers:
            x = layer(x, mask)
        return x


def randomize_layer_norms(model):
    # Weights other than ones and zeros, so a dropped scale or bias shows in the outputs.
    for m in model.modules():
        if isinstance(m, nn.LayerNorm):
            nn.init.normal_(m.weight, 1.0, 0.2)
            nn.init.normal_(m.bias, 0.0, 0.2)
    return model


def export(model, args, names, path):
    torch.onnx.export(model, args, path, opset_version=14, input_names=names, output_names=["y"])
    onnx.checker.check_model(path)


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    torch.manual_seed(0)
    x = torch.randn(1, SEQ, HIDDEN)
    export(randomize_layer_norms(Encoder().eval()), (x, torch.zeros(1, 1, 1, SEQ)), ["x", "mask"],
           os.path.join(out_dir, "bert_like_opset14.onnx"))
    export(randomize_layer_norms(Decoder().eval()), (x,), ["x"], os.path.join(out_dir, "gpt_like_opset14.onnx"))


if __name__ == "__main__":
    main(sys.argv[1])
