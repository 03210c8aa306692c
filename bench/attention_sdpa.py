"""On the GPU machine: times torch's scaled_dot_product_attention (the backend torch picks: flash,
memory-efficient or cuDNN) and the eager matmul-softmax-matmul on the attention shapes of BERT
(additive padding mask), GPT-2 (causal) and ViT (197 tokens) at batch 1 and 64, 12 heads of 64,
in float16 and bfloat16: the peers of kiln's flash-attention kernel, whose own times come from
the GPU tests' benchmark mode (KILN_FLASH_BENCH=1 kiln_gpu_tests
--gtest_filter=gpu_flash_attention_bench.*). CUDA-event timing, the median of 100 runs after 10
of warm-up. Prints a Markdown table.

usage: python3 bench/attention_sdpa.py
"""
import torch
import torch.nn.functional as F

PEAK = 989.4   # H100 SXM dense float16/bfloat16 tensor-core TFLOP/s
SHAPES = [  # name, batch, sequence, mask, causal
    ("bert_b1", 1, 128, True, False), ("bert_b64", 64, 128, True, False),
    ("gpt2_b1", 1, 128, False, True), ("gpt2_b64", 64, 128, False, True),
    ("vit_b1", 1, 197, False, False), ("vit_b64", 64, 197, False, False),
]
HEADS, HEAD = 12, 64


def median_ms(fn):
    for _ in range(10):
        fn()
    times = []
    for _ in range(100):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b))
    return sorted(times)[len(times) // 2]


def eager(q, k, v, mask, causal):
    s = (q @ k.transpose(-1, -2)) * HEAD ** -0.5
    if mask is not None:
        s = s + mask
    if causal:
        n = s.shape[-1]
        s = s.masked_fill(torch.ones(n, n, dtype=torch.bool, device=s.device).triu(1), float("-inf"))
    return torch.softmax(s.float(), -1).to(q.dtype) @ v


def main():
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}")
    print("| shape | type | sdpa (us) | eager (us) | sdpa TFLOP/s | % of fp16 peak |\n|---|---|---:|---:|---:|---:|")
    for name, b, s, masked, causal in SHAPES:
        for dt in (torch.float16, torch.bfloat16):
            q, k, v = (torch.randn(b, HEADS, s, HEAD, device="cuda", dtype=dt) for _ in range(3))
            mask = None
            if masked:   # BERT's padding: the last 16 keys of each sequence dropped
                mask = torch.zeros(b, 1, 1, s, device="cuda", dtype=dt)
                mask[..., s - 16:] = -10000.0
            sdpa = median_ms(lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal))
            eag = median_ms(lambda: eager(q, k, v, mask, causal))
            pairs = s * (s + 1) / 2 if causal else s * s
            flops = 2 * b * HEADS * pairs * 2 * HEAD
            tf = flops / (sdpa * 1e-3) / 1e12
            print(f"| {name} | {'fp16' if dt == torch.float16 else 'bf16'} | {sdpa * 1e3:.1f} | {eag * 1e3:.1f} | "
                  f"{tf:.1f} | {tf / PEAK * 100:.1f}% |")


if __name__ == "__main__":
    main()
