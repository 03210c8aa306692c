"""Cases for src/ops/nonmax_suppression.cpp, computed with onnx's reference evaluator (ONNX
NonMaxSuppression); the optional inputs are left off from the end, as kiln's op takes them."""
import numpy as np
from caselib import case, error_case, rng, shape_only, tensor, write
from onnx_oracle import run_node

r = rng(11)
cases = []


def add(name, boxes, scores, *limits, center_point_box=False):
    """limits: max_output_boxes_per_class, iou_threshold, score_threshold (a prefix of them)."""
    ins = [boxes, scores]
    for v, t in zip(limits, [np.int64, boxes.dtype, boxes.dtype]):
        ins.append(np.array([v], t))
    # The reference needs iou_threshold; ONNX's default for it is 0.
    full = ins + [np.array([0], boxes.dtype)] if len(ins) == 3 else ins
    (y,) = run_node("NonMaxSuppression", full, center_point_box=int(center_point_box))
    y = np.asarray(y, np.int64).reshape(-1, 3)
    cases.append(case(name, "nonmax_suppression", [tensor(x) for x in ins], [tensor(y)],
                      {"center_point_box": center_point_box}))


def corner_boxes(b, n, dtype=np.float32):
    lo = r.uniform(0, 8, (b, n, 2))
    size = r.uniform(1, 4, (b, n, 2))
    boxes = np.concatenate([lo, lo + size], axis=-1)
    return boxes.astype(dtype)


def scores(b, c, n, dtype=np.float32):
    return r.uniform(0, 1, (b, c, n)).astype(dtype)


bx = corner_boxes(2, 8)
sc = scores(2, 3, 8)
add("corners_iou_half", bx, sc, 5, 0.5)
add("corners_iou_low", bx, sc, 8, 0.1)
add("corners_score_threshold", bx, sc, 8, 0.4, 0.5)
add("limit_output", bx, sc, 2, 0.7)
add("max_output_zero", bx, sc, 0, 0.5)


def add_none_kept(name, *ins):
    """The reference fails where nothing can be kept (a negative or absent limit): no rows."""
    cases.append(case(name, "nonmax_suppression", [tensor(x) for x in ins], [tensor(np.zeros((0, 3), np.int64))],
                      {"center_point_box": False}))


add_none_kept("max_output_negative", bx, sc, np.array([-3], np.int64), np.array([0.5], np.float32))
add_none_kept("no_limits_keeps_none", bx, sc)
add("default_iou_zero", bx, sc, 4)
flipped = bx[..., [2, 3, 0, 1]]  # corners given max first
add("flipped_corners", flipped, sc, 5, 0.3)
centers = np.concatenate([bx[..., :2] + (bx[..., 2:] - bx[..., :2]) / 2, bx[..., 2:] - bx[..., :2]], axis=-1)
add("center_point_box", centers[..., [1, 0, 3, 2]].astype(np.float32), sc, 5, 0.3, center_point_box=True)

same = np.tile(np.array([[0, 0, 1, 1]], np.float32), (1, 6, 1))
add("identical_boxes", same, scores(1, 1, 6), 6, 0.5)
add("tied_scores", bx[:1], np.full((1, 2, 8), 0.5, np.float32), 8, 0.2)
boundary = np.array([[[0, 0, 1, 1], [0.5, 0.5, 1.5, 1.5]]], np.float32)
add("iou_at_threshold_kept", boundary, np.array([[[0.9, 0.8]]], np.float32), 3, np.float32(1 / 7), 0.0)
add("zero_area_box", np.array([[[0, 0, 1, 1], [0, 0, 0, 1], [0, 0, 1, 1]]], np.float32),
    np.array([[[0.9, 0.8, 0.7]]], np.float32), 3, 0.5)
add("f64", corner_boxes(1, 6, np.float64), scores(1, 2, 6, np.float64), 3, 0.4, 0.2)
add("f16", corner_boxes(1, 6, np.float16), scores(1, 2, 6, np.float16), 3, 0.4)
add("no_boxes", np.zeros((1, 0, 4), np.float32), np.zeros((1, 2, 0), np.float32), 3, 0.4)

f = "float32"
op = "nonmax_suppression"
cases.append(error_case("boxes_last_dim", op, [shape_only(f, [1, 3, 5]), shape_only(f, [1, 1, 3])],
                        "boxes' last dim is 5; expected 4"))
cases.append(error_case("scores_mismatch", op, [shape_only(f, [1, 3, 4]), shape_only(f, [1, 1, 4])],
                        "do not match boxes"))
cases.append(error_case("int_boxes", op, [shape_only("int32", [1, 3, 4]), shape_only(f, [1, 1, 3])],
                        "expected a float type"))
cases.append(error_case("float_max_output", op,
                        [shape_only(f, [1, 3, 4]), shape_only(f, [1, 1, 3]), shape_only(f, [1])],
                        "expected an integer type"))
cases.append(error_case("two_element_threshold", op,
                        [shape_only(f, [1, 3, 4]), shape_only(f, [1, 1, 3]), shape_only("int64", [1]),
                         shape_only(f, [2])], "input 3 has 2 elements; expected one"))
write("nonmax_suppression", cases)
