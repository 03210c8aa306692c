#!/usr/bin/env python3
"""Per-layer times of the cpu bench's peers, to set beside `kiln perf MODEL --cpu -O --threads N`:
OpenVINO's performance counters (PERF_COUNT) and ONNX Runtime's profiler (enable_profiling), each
the median over --runs runs of every layer that executed (or the minimum, --stat min: on a
machine that other processes share, what a layer takes when nothing preempts it), with the kernel
OpenVINO chose.

    PYTHONPATH=PEERS .venv/bin/python bench/peer_profile.py MODEL.onnx [--threads 2] [--runs 50] [--top 25] [--stat min]
"""
import argparse
import collections
import json
import os
import statistics
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cpu_bench import make_inputs  # noqa: E402  the bench's seeded inputs


def openvino_layers(path, feeds, threads, runs, stat):
    import openvino as ov
    core = ov.Core()
    cm = core.compile_model(path, "CPU", {"INFERENCE_NUM_THREADS": threads, "PERFORMANCE_HINT": "LATENCY",
                                          "NUM_STREAMS": 1, "INFERENCE_PRECISION_HINT": "f32", "PERF_COUNT": True})
    req = cm.create_infer_request()
    for _ in range(10):
        req.infer(feeds)
    times = collections.defaultdict(list)
    kind = {}
    for _ in range(runs):
        req.infer(feeds)
        for p in req.get_profiling_info():
            if p.status == p.Status.EXECUTED:
                times[p.node_name].append(p.real_time.total_seconds() * 1e3)
                kind[p.node_name] = f"{p.node_type} {p.exec_type}"
    return {n: (stat(t), kind[n]) for n, t in times.items()}


def ort_layers(path, feeds, threads, runs, tmp, stat):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.enable_profiling = True
    so.profile_file_prefix = os.path.join(tmp, "ort")
    s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    for _ in range(10 + runs):
        s.run(None, feeds)
    with open(s.end_profiling()) as f:
        events = json.load(f)
    times = collections.defaultdict(list)
    kind = {}
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            name = e["name"][: -len("_kernel_time")]
            times[name].append(e["dur"] / 1e3)
            kind[name] = e["args"].get("op_name", "")
    return {n: (stat(t[-runs:]), kind[n]) for n, t in times.items()}


def show(title, layers, top):
    total = sum(t for t, _ in layers.values())
    print(f"\n{title}: {len(layers)} layers, {total:.3f} ms summed")
    by_kind = collections.Counter()
    for t, k in layers.values():
        by_kind[k] += t
    for k, t in by_kind.most_common():
        print(f"  {t:8.3f} ms  {k}")
    print(f"  slowest {top}:")
    for n, (t, k) in sorted(layers.items(), key=lambda x: -x[1][0])[:top]:
        print(f"  {t:8.3f} ms  {k:40s} {n}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--stat", choices=["median", "min"], default="median")
    a = ap.parse_args()
    stat = statistics.median if a.stat == "median" else min
    with tempfile.TemporaryDirectory() as tmp:
        feeds, _ = make_inputs(a.model, tmp)
        show(f"OpenVINO, {a.threads} threads, {a.stat}", openvino_layers(a.model, feeds, a.threads, a.runs, stat), a.top)
        show(f"ONNX Runtime, {a.threads} threads, {a.stat}", ort_layers(a.model, feeds, a.threads, a.runs, tmp, stat), a.top)


if __name__ == "__main__":
    np.set_printoptions(precision=3)
    main()
