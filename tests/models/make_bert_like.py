"""Exports a small BERT-like encoder to ONNX at opset 14, where LayerNorm and GELU have no ONNX op
and come out decomposed (ReduceMean, Sub, Pow, Sqrt, Div; Erf), and attention is written out
(MatMul, Div by sqrt(d), mask Add, Softmax, MatMul): what recognize_patterns must find again.
2 layers, hidden 64, 4 heads, sequence 16, an additive attention mask input, random weights.
Runs with Debian's interpreter (/usr/bin/python3: python3-torch, python3-onnx).
Usage: /usr/bin/python3 tests/models/make_bert_like.py OUT.onnx
"""
import math
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


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(Layer() for _ in range(LAYERS))

    def forward(self, x, mask):
        for layer in self.layers:
            x = layer(x, mask)
        return x


def main(path):
    torch.manual_seed(0)
    model = Encoder().eval()
    # LayerNorm weights other than ones and zeros, so a dropped scale or bias shows in the outputs.
    for m in model.modules():
        if isinstance(m, nn.LayerNorm):
            nn.init.normal_(m.weight, 1.0, 0.2)
            nn.init.normal_(m.bias, 0.0, 0.2)
    x = torch.randn(1, SEQ, HIDDEN)
    mask = torch.zeros(1, 1, 1, SEQ)
    torch.onnx.export(model, (x, mask), path, opset_version=14, input_names=["x", "mask"],
                      output_names=["y"])
    onnx.checker.check_model(path)


if __name__ == "__main__":
    main(sys.argv[1])
