"""Writes the ONNX backend node test cases (model.onnx + test_data_set_N/{input,output}_K.pb)
from the case generators of the pinned onnx package. onnx 1.23.2's wheel ships the generators but
not the generated data, so kiln generates it once into a cache folder.
Usage: .venv/bin/python tests/conformance/generate_onnx_node_data.py OUT_DIR
"""
import os
import shutil
import sys

import numpy as np
from onnx import TensorProto, numpy_helper
from onnx.backend.test.case import node


def write_value(path, value, value_info):
    t = value_info.type
    if t.HasField("sequence_type"):
        proto = numpy_helper.from_list(value, value_info.name)
    elif t.HasField("optional_type"):
        proto = numpy_helper.from_optional(value, value_info.name)
    elif t.HasField("map_type"):
        proto = numpy_helper.from_dict(value, value_info.name)
    elif isinstance(value, TensorProto):
        proto = value
    else:
        proto = numpy_helper.from_array(np.asarray(value), value_info.name)
    with open(path, "wb") as f:
        f.write(proto.SerializeToString())


def main(out):
    os.makedirs(out, exist_ok=True)
    cases = node.collect_testcases(None)
    for case in cases:
        d = os.path.join(out, case.name)
        if os.path.exists(d):
            shutil.rmtree(d)
        os.makedirs(d)
        with open(os.path.join(d, "model.onnx"), "wb") as f:
            f.write(case.model.SerializeToString())
        for i, (inputs, outputs) in enumerate(case.data_sets):
            ds = os.path.join(d, f"test_data_set_{i}")
            os.makedirs(ds)
            for j, v in enumerate(inputs):
                write_value(os.path.join(ds, f"input_{j}.pb"), v, case.model.graph.input[j])
            for j, v in enumerate(outputs):
                write_value(os.path.join(ds, f"output_{j}.pb"), v, case.model.graph.output[j])
    # The runner fails when it finds fewer cases than this (a broken or partial generation).
    with open(os.path.join(out, ".case-count"), "w") as f:
        f.write(f"{len(cases)}\n")
    print(f"{len(cases)} node cases written to {out}")


if __name__ == "__main__":
    main(sys.argv[1])
