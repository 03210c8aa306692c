"""Cases for src/ops/col2im.cpp, computed with a numpy loop: every column element added at its
image position."""
import itertools

import numpy as np
from caselib import case, error_case, rng, shape_only, tensor, write

r = rng(18)
cases = []


def col2im(x, image, block, dilations, pads, strides):
    nd = len(image)
    n, cb, length = x.shape
    c = cb // int(np.prod(block))
    pos = [(image[d] + pads[d] + pads[d + nd] - dilations[d] * (block[d] - 1) - 1) // strides[d] + 1
           for d in range(nd)]
    assert int(np.prod(pos)) == length
    y = np.zeros((n, c, *image), np.float64)
    cols = x.reshape(n, c, *block, *pos).astype(np.float64)
    for b in itertools.product(*[range(k) for k in block]):
        for p in itertools.product(*[range(k) for k in pos]):
            at = [p[d] * strides[d] - pads[d] + b[d] * dilations[d] for d in range(nd)]
            if all(0 <= at[d] < image[d] for d in range(nd)):
                y[(slice(None), slice(None), *at)] += cols[(slice(None), slice(None), *b, *p)]
    return y.astype(x.dtype)


def add(name, channels, image, block, dilations=None, pads=None, strides=None, batch=1, dtype=np.float32):
    nd = len(image)
    dl, pd, st = dilations or [1] * nd, pads or [0] * (2 * nd), strides or [1] * nd
    pos = [(image[d] + pd[d] + pd[d + nd] - dl[d] * (block[d] - 1) - 1) // st[d] + 1 for d in range(nd)]
    x = (r.standard_normal((batch, channels * int(np.prod(block)), int(np.prod(pos)))) * 4).astype(dtype)
    attrs = {"image_shape": image, "block_shape": block}
    for k, v in [("dilations", dilations), ("pads", pads), ("strides", strides)]:
        if v is not None:
            attrs[k] = v
    cases.append(case(name, "col2im", [tensor(x)], [tensor(col2im(x, image, block, dl, pd, st))], attrs))


add("2d_basic", 1, [5, 5], [1, 5])
add("2d_overlap", 2, [4, 5], [2, 3], batch=2)
add("2d_strides", 1, [5, 5], [3, 3], strides=[2, 2])
add("2d_dilations", 1, [6, 6], [2, 2], dilations=[1, 5])
add("2d_pads", 1, [5, 5], [1, 5], pads=[0, 1, 0, 1])
add("2d_all", 2, [6, 7], [2, 3], dilations=[2, 1], pads=[1, 0, 2, 1], strides=[2, 3])
add("1d", 3, [8], [3], strides=[2], pads=[1, 1])
add("3d", 2, [3, 4, 5], [1, 1, 5])
add("3d_overlap", 1, [3, 3, 4], [2, 2, 2])
add("f64", 1, [4, 4], [2, 2], dtype=np.float64)
add("f16", 1, [3, 4], [2, 2], dtype=np.float16)
add("int32", 2, [4, 4], [2, 2], strides=[2, 1], dtype=np.int32)

f = "float32"
a = {"image_shape": [5, 5], "block_shape": [1, 5]}
cases.append(error_case("wrong_positions", "col2im", [shape_only(f, [1, 5, 4])], "input dim 2 is 4; expected 5", a))
cases.append(error_case("not_block_multiple", "col2im", [shape_only(f, [1, 6, 5])],
                        "input dim 1 is 6; expected a multiple of the block size 5", a))
cases.append(error_case("block_rank", "col2im", [shape_only(f, [1, 5, 5])], "block_shape has 1 values; expected 2",
                        {"image_shape": [5, 5], "block_shape": [5]}))
cases.append(error_case("bad_pads", "col2im", [shape_only(f, [1, 5, 5])], "pads has 2 values; expected 4",
                        dict(a, pads=[1, 1])))
cases.append(error_case("block_too_big", "col2im", [shape_only(f, [1, 6, 1])], "does not fit the padded image",
                        {"image_shape": [2, 2], "block_shape": [1, 6]}))
cases.append(error_case("zero_stride", "col2im", [shape_only(f, [1, 5, 5])], "strides must be >= 1",
                        dict(a, strides=[0, 1])))
cases.append(error_case("rank2_input", "col2im", [shape_only(f, [5, 5])], "input 0 has 2 dims", a))
write("col2im", cases)
