"""Cases for src/ops/attention.cpp (scaled dot-product attention on [batch, heads, seq, head_size]
tensors: grouped-query heads, bool or additive masks, causal with an offset, softcap), computed
with numpy in float64 and rounded once to the element type."""
import ml_dtypes
import numpy as np
from caselib import case, error_case, rng, shape_only, tensor, write

r = rng(23)
cases = []
NEG_INF = -np.inf


def attention(q, k, v, mask=None, scale=0.0, is_causal=False, causal_offset=0, softcap=0.0):
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    group = q.shape[1] // k.shape[1]
    k = np.repeat(k, group, axis=1)
    v = np.repeat(v, group, axis=1)
    sq, skv = q.shape[2], k.shape[2]
    if skv == 0:
        return np.zeros(q.shape[:3] + v.shape[3:])
    # scale and softcap are float32 attributes.
    scale, softcap = float(np.float32(scale)), float(np.float32(softcap))
    s = (q @ np.swapaxes(k, -1, -2)) * (scale if scale else 1 / np.sqrt(q.shape[3]))
    if softcap > 0:
        s = softcap * np.tanh(s / softcap)
    bias = np.zeros((sq, skv))
    if mask is not None:
        bias = bias + (np.where(mask, 0.0, NEG_INF) if mask.dtype == np.bool_ else mask.astype(np.float64))
    if is_causal:
        i = np.arange(sq)[:, None]
        j = np.arange(skv)[None, :]
        bias = bias + np.where(j <= i + causal_offset, 0.0, NEG_INF)
    logits = s + bias
    top = np.max(logits, axis=-1, keepdims=True)
    empty = np.isneginf(np.max(np.broadcast_to(bias, logits.shape), axis=-1, keepdims=True)) | np.isneginf(top)
    e = np.exp(logits - np.where(empty, 0.0, top))
    p = np.where(empty, 0.0, e / np.where(empty, 1.0, np.sum(e, axis=-1, keepdims=True)))
    return p @ v


def qkv(b, hq, hkv, sq, skv, d, dv, dt=np.float32):
    return (r.standard_normal((b, hq, sq, d)).astype(dt), r.standard_normal((b, hkv, skv, d)).astype(dt),
            r.standard_normal((b, hkv, skv, dv)).astype(dt))


def add(name, q, k, v, mask=None, **attrs):
    inputs = [q, k, v] + ([] if mask is None else [mask])
    y = attention(q, k, v, mask, **attrs).astype(q.dtype)
    cases.append(case(name, "attention", [tensor(x) for x in inputs], [tensor(y)], attrs))


add("attention_basic", *qkv(2, 2, 2, 3, 5, 4, 3))
add("attention_self", *qkv(1, 2, 2, 4, 4, 8, 8))
add("attention_scale", *qkv(1, 2, 2, 3, 4, 4, 4), scale=0.1)
add("attention_gqa", *qkv(1, 4, 2, 3, 5, 4, 2))
add("attention_mqa", *qkv(2, 3, 1, 2, 4, 4, 3))
add("attention_causal", *qkv(1, 2, 2, 4, 4, 4, 3), is_causal=True)
add("attention_causal_top_left", *qkv(1, 1, 1, 3, 5, 4, 2), is_causal=True)
add("attention_causal_offset", *qkv(1, 2, 1, 3, 6, 4, 2), is_causal=True, causal_offset=3)
# A negative offset leaves the first query without keys: its row is zero.
add("attention_causal_negative_offset", *qkv(1, 1, 1, 3, 3, 4, 2), is_causal=True, causal_offset=-1)
add("attention_softcap", *qkv(1, 2, 2, 3, 4, 4, 4), softcap=0.5)
add("attention_f16", *qkv(1, 2, 1, 3, 4, 8, 4, np.float16), is_causal=True)
add("attention_bf16", *qkv(1, 2, 2, 2, 3, 4, 4, ml_dtypes.bfloat16))
# Large scores: the row maximum is subtracted before exp, so nothing overflows.
add("attention_large_scores", *(x * 30 for x in qkv(1, 1, 1, 3, 4, 4, 2)))
add("attention_f64", *qkv(2, 2, 2, 2, 3, 4, 5, np.float64), scale=0.3, softcap=2.0)

bool_mask = r.random((3, 5)) > 0.3
bool_mask[1, :] = False   # a fully masked row gives zeros
add("attention_bool_mask", *qkv(1, 2, 2, 3, 5, 4, 3), mask=bool_mask)
add("attention_bool_mask_causal", *qkv(2, 2, 2, 3, 5, 4, 3), mask=r.random((2, 1, 3, 5)) > 0.2, is_causal=True)
add("attention_float_mask_4d", *qkv(2, 2, 2, 3, 4, 4, 3), mask=r.standard_normal((2, 2, 3, 4)).astype(np.float32))
neg_mask = r.standard_normal((1, 3, 4)).astype(np.float32)
neg_mask[:, :, 2] = NEG_INF
add("attention_float_mask_neg_inf", *qkv(2, 1, 1, 3, 4, 4, 3), mask=neg_mask, softcap=1.0)
add("attention_mask_1d", *qkv(1, 2, 2, 2, 4, 4, 3), mask=np.array([True, False, True, True]))
add("attention_mask_causal_offset", *qkv(1, 2, 2, 2, 5, 4, 3),
    mask=r.standard_normal((2, 5)).astype(np.float32), is_causal=True, causal_offset=2)
add("attention_no_keys", *qkv(1, 1, 1, 2, 0, 4, 3))

f32 = "float32"
sh = lambda *lens, t=f32: shape_only(t, lens)  # noqa: E731
cases += [
    error_case("attention_heads_not_multiple", "attention", [sh(1, 3, 2, 4), sh(1, 2, 3, 4), sh(1, 2, 3, 4)],
               "q has 3 heads, not a multiple of k's 2 heads"),
    error_case("attention_head_size", "attention", [sh(1, 2, 2, 4), sh(1, 2, 3, 5), sh(1, 2, 3, 4)],
               "q head size is 4 but k head size is 5"),
    error_case("attention_kv_keys", "attention", [sh(1, 2, 2, 4), sh(1, 2, 3, 4), sh(1, 2, 4, 4)],
               "k has 3 keys but v has 4"),
    error_case("attention_kv_heads", "attention", [sh(1, 2, 2, 4), sh(1, 2, 3, 4), sh(1, 1, 3, 4)],
               "k has 2 heads but v has 1"),
    error_case("attention_batch", "attention", [sh(2, 2, 2, 4), sh(1, 2, 3, 4), sh(1, 2, 3, 4)],
               "batch sizes differ"),
    error_case("attention_rank3", "attention", [sh(2, 8), sh(1, 2, 3, 4), sh(1, 2, 3, 4)],
               "input 0 has 2 dims"),
    error_case("attention_int", "attention", [sh(1, 1, 2, 4, t="int32")] * 3, "expected a float type"),
    error_case("attention_mixed_types", "attention", [sh(1, 1, 2, 4), sh(1, 1, 2, 4, t="float16"), sh(1, 1, 2, 4)],
               "inputs must have the same type"),
    error_case("attention_mask_type", "attention", [sh(1, 1, 2, 4)] * 3 + [sh(2, 2, t="int32")],
               "input 3 (mask) is int32_type; expected bool or float_type"),
    error_case("attention_mask_shape", "attention", [sh(1, 1, 2, 4)] * 3 + [sh(3, 2)],
               "input 3 (mask) {3, 2} does not broadcast to the scores {1, 1, 2, 2}"),
    error_case("attention_mask_rank", "attention", [sh(1, 1, 2, 4)] * 3 + [sh(1, 1, 1, 2, 2)],
               "input 3 (mask) has 5 dims"),
    error_case("attention_negative_softcap", "attention", [sh(1, 1, 2, 4)] * 3, "softcap=-1",
               {"softcap": -1.0}),
    error_case("attention_two_inputs", "attention", [sh(1, 1, 2, 4)] * 2, "expected 3 to 4 inputs, got 2"),
]

write("attention", cases)
