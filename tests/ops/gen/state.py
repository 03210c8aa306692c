"""Cases for src/ops/tensor_scatter.cpp and src/ops/linear_attention.cpp, computed with onnx's
reference TensorScatter and LinearAttention."""
import numpy as np
from caselib import case, error_case, rng, shape_only, tensor, write
from onnx_oracle import run_node

r = rng(41)
cases = []
f32 = np.float32


def scatter(name, past_lens, seq, axis=-2, mode="linear", indices=None, dtype=f32):
    past = r.standard_normal(past_lens).astype(dtype)
    a = axis % len(past_lens)
    upd_lens = list(past_lens)
    upd_lens[a] = seq
    upd = r.standard_normal(upd_lens).astype(dtype)
    ins = [past, upd] + ([np.array(indices, np.int64)] if indices is not None else [])
    (y,) = run_node("TensorScatter", ins, opset=24, axis=axis, mode=mode)
    cases.append(case(name, "tensor_scatter", [tensor(x) for x in ins], [tensor(y)], {"axis": axis, "mode": mode}))


scatter("prefill", (2, 3, 6, 4), 3)
scatter("decode_indices", (2, 3, 6, 4), 1, indices=[2, 5])
scatter("axis1_3d", (2, 5, 3), 2, axis=1, indices=[0, 3])
scatter("circular", (3, 4, 2), 3, axis=1, mode="circular", indices=[3, 1, 0])
scatter("f16", (1, 2, 5, 2), 2, indices=[1], dtype=np.float16)
cases.append(error_case("update_too_long", "tensor_scatter", [shape_only("float32", [2, 4, 3]), shape_only("float32", [2, 5, 3])],
                        "expected {2, 4, 3} with dim 1 at most 4", {"axis": 1}))
cases.append(error_case("axis_is_batch", "tensor_scatter", [shape_only("float32", [2, 4]), shape_only("float32", [2, 4])],
                        "is the batch dim", {"axis": 0}))
cases.append(error_case("linear_overflow", "tensor_scatter",
                        [tensor(r.standard_normal((1, 4, 2)).astype(f32)), tensor(r.standard_normal((1, 2, 2)).astype(f32)),
                         tensor(np.array([3], np.int64))],
                        "write_indices[0] = 3: 2 positions from it do not fit in 4", {"axis": 1}))


def lin(name, b, t, hq, hkv, dk, dv, rule, past=True, decay_per_key=False, beta_one=False, scale=0.0, atol=1e-5):
    q = r.standard_normal((b, t, hq * dk)).astype(f32)
    k = r.standard_normal((b, t, hkv * dk)).astype(f32) * 0.5
    v = r.standard_normal((b, t, hkv * dv)).astype(f32)
    s = r.standard_normal((b, hkv, dk, dv)).astype(f32) if past else np.zeros((b, hkv, dk, dv), f32)
    decay = beta = None
    if rule in ("gated", "gated_delta"):
        decay = -r.uniform(0.05, 1.0, (b, t, hkv * dk if decay_per_key else hkv)).astype(f32)
    if rule in ("delta", "gated_delta"):
        beta = r.uniform(0.1, 0.9, (b, t, 1 if beta_one else hkv)).astype(f32)
    y, st = run_node("LinearAttention", [q, k, v, s, decay, beta], n_outputs=2, opset=27, q_num_heads=hq,
                     kv_num_heads=hkv, update_rule=rule, scale=scale)
    ins = [q, k, v, s] + [x for x in (decay, beta) if x is not None]
    cases.append(case(name, "linear_attention", [tensor(x) for x in ins], [tensor(y), tensor(st)],
                      {"q_num_heads": hq, "kv_num_heads": hkv, "update_rule": rule, "scale": scale}, rtol=1e-4, atol=atol))


lin("linear", 2, 3, 2, 2, 4, 3, "linear")
lin("gated_per_head", 1, 4, 2, 2, 3, 2, "gated")
lin("gated_per_key", 2, 2, 2, 1, 3, 4, "gated", decay_per_key=True)
lin("delta_gqa", 1, 3, 4, 2, 2, 3, "delta", scale=0.7)
lin("gated_delta_beta_one", 2, 3, 2, 2, 4, 2, "gated_delta", beta_one=True)
lin("gated_delta_no_past", 1, 5, 3, 1, 2, 2, "gated_delta", past=False)
x = shape_only("float32", [1, 2, 8])
st = shape_only("float32", [1, 2, 4, 4])
cases.append(error_case("gqa_not_multiple", "linear_attention", [shape_only("float32", [1, 2, 12]), x, x, st],
                        "must be a positive multiple of kv_num_heads=2", {"q_num_heads": 3, "kv_num_heads": 2, "update_rule": "linear"}))
cases.append(error_case("state_shape", "linear_attention", [x, x, x, shape_only("float32", [1, 2, 4, 3])],
                        "input 3 (state) is {1, 2, 4, 3}; expected {1, 2, 4, 4}",
                        {"q_num_heads": 2, "kv_num_heads": 2, "update_rule": "linear"}))
cases.append(error_case("missing_beta", "linear_attention", [x, x, x, st], "expected 5",
                        {"q_num_heads": 2, "kv_num_heads": 2, "update_rule": "delta"}))
write("state", cases)
