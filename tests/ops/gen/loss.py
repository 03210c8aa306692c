"""Cases for src/ops/loss.cpp (nll_loss), computed with onnx's reference NegativeLogLikelihoodLoss. Its
reference averages over every element when ignore_index is -1 and no weight is given, unlike the
spec (mean over the targets not ignored), so that combination is left out here."""
import numpy as np
from caselib import case, error_case, rng, shape_only, tensor, write
from onnx_oracle import run_node

r = rng(31)
cases = []


def add(name, lens, dtype=np.float32, weight=False, reduction="mean", ignore_index=None, rtol=None, atol=None):
    x = r.standard_normal(lens).astype(dtype)
    t_lens = (lens[0],) + tuple(lens[2:])
    t = r.integers(0, lens[1], t_lens).astype(np.int64)
    if ignore_index is not None:
        t.reshape(-1)[::3] = ignore_index   # every third target ignored
    w = r.uniform(0.2, 2.0, lens[1]).astype(dtype) if weight else None
    attrs = {"reduction": reduction}
    if ignore_index is not None:
        attrs["ignore_index"] = ignore_index
    (y,) = run_node("NegativeLogLikelihoodLoss", [x, t, w], **attrs)
    ins = [tensor(x), tensor(t)] + ([tensor(w)] if weight else [])
    kiln_attrs = {"reduction": reduction, "has_ignore_index": ignore_index is not None,
                  "ignore_index": ignore_index or 0}
    cases.append(case(name, "nll_loss", ins, [tensor(y.astype(dtype))], kiln_attrs, rtol=rtol, atol=atol))


add("nc_mean", (5, 4))
add("nc_sum", (5, 4), reduction="sum")
add("nc_none", (5, 4), reduction="none")
add("ncd_mean_weight", (3, 5, 2, 3), weight=True)
add("ncd_none_weight", (3, 5, 2), weight=True, reduction="none")
add("ncd_sum_weight_ignore", (2, 4, 3, 2), weight=True, reduction="sum", ignore_index=2)
add("ncd_mean_weight_ignore_negative", (2, 3, 5), weight=True, ignore_index=-1)
add("ncd_mean_ignore", (2, 3, 5), ignore_index=1)
add("ncd_mean_weight_ignore_outside", (3, 4, 4), weight=True, ignore_index=10)
add("f64_mean_weight", (4, 6, 2), dtype=np.float64, weight=True)
add("f16_sum", (4, 3, 2), dtype=np.float16, reduction="sum", rtol=1e-2, atol=1e-2)

x = shape_only("float32", [2, 3, 4])
cases.append(error_case("target_shape", "nll_loss", [x, shape_only("int64", [2, 3])],
                        "expected {2, 4} (input 0 without its class dim 1)"))
cases.append(error_case("target_float", "nll_loss", [x, shape_only("float32", [2, 4])], "expected int32 or int64"))
cases.append(error_case("weight_len", "nll_loss", [x, shape_only("int64", [2, 4]), shape_only("float32", [4])],
                        "input 2 (weight) is {4}; expected {3}"))
cases.append(error_case("bad_reduction", "nll_loss", [x, shape_only("int64", [2, 4])], "expected 'none', 'mean' or 'sum'",
                        {"reduction": "max"}))
cases.append(error_case("rank1", "nll_loss", [shape_only("float32", [3]), shape_only("int64", [])], "input 0 has 1 dims"))
cases.append(error_case("target_out_of_range", "nll_loss",
                        [tensor(r.standard_normal((2, 3)).astype(np.float32)), tensor(np.array([1, 3], np.int64))],
                        "target 3 at element 1 is outside the 3 classes [0, 3)", {"reduction": "sum"}))
write("loss", cases)
