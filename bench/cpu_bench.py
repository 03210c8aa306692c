#!/usr/bin/env python3
"""kiln's cpu target against ONNX Runtime and OpenVINO (CPU), same models, same input, same thread
count, in one run. Each runtime: warm-up runs, then --runs timed runs; the median is reported.
kiln is timed by `kiln perf` (its whole-run timings, same .npy input), the peers through their
Python APIs. Prints a Markdown table and writes JSON.

    bench/cpu_bench.sh [--runs 50] [--rounds 3] [--threads 1,2] [--models resnet18,mobilenet_v2,encoder,decoder] [--out FILE]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KILN = os.path.join(ROOT, "build", "kiln")


def model_path(name, tmp):
    if name in ("encoder", "decoder"):
        path = os.path.join(tmp, f"{name}.onnx")
        subprocess.run([sys.executable, os.path.join(ROOT, "bench", f"make_{name}_onnx.py"), path, "--layers", "4",
                        "--seq", "128", "--batch", "1"], check=True, stdout=subprocess.DEVNULL)
        import onnx
        m = onnx.load(path)
        m.ir_version = min(m.ir_version, 10)   # ONNX Runtime 1.31 reads IR versions up to 13
        onnx.save(m, path)
        return path
    path = os.path.join(ROOT, "build", "torchvision-models", f"{name}_opset17", "model.onnx")
    if not os.path.exists(path):
        sys.exit(f"{path} is missing: run tests/models/run_model_tests.sh (ctest -R torchvision_models_ref) first")
    return path


def make_inputs(path, tmp):
    import onnx
    m = onnx.load(path, load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    rng = np.random.default_rng(0)
    feeds = {}
    for inp in m.graph.input:
        if inp.name in inits:
            continue
        t = inp.type.tensor_type
        dims = [d.dim_value if d.dim_value > 0 else 1 for d in t.shape.dim]
        dtype = onnx.helper.tensor_dtype_to_np_dtype(t.elem_type)
        if np.issubdtype(dtype, np.floating):
            feeds[inp.name] = rng.uniform(-1, 1, dims).astype(dtype)
        else:
            feeds[inp.name] = np.ones(dims, dtype=dtype)
    files = []
    for name, v in feeds.items():
        f = os.path.join(tmp, f"input_{len(files)}.npy")
        np.save(f, v)
        files.append((name, f))
    return feeds, files


def time_calls(fn, runs, warmup):
    for _ in range(warmup):
        fn()
    ts = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ts)


def bench_kiln(path, files, threads, runs):
    common = [path, "--cpu", "-O", "--threads", str(threads)]
    t0 = time.perf_counter()
    out = subprocess.run([KILN, "compile", *common], capture_output=True, text=True)
    wall = (time.perf_counter() - t0) * 1e3
    if out.returncode != 0:
        raise RuntimeError(out.stderr)
    compile_ms = float(re.search(r"Compiled for cpu \(.*?\) in ([0-9.]+) ms", out.stderr + out.stdout).group(1))
    placement = re.findall(r"runs on (.*)", out.stdout + out.stderr)
    for name, f in files:
        common += ["--input", f"{name}={f}"]
    out = subprocess.run([KILN, "perf", *common, "-n", str(runs), "--quiet"], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr)
    median = float(re.search(r"median ([0-9.]+)ms", out.stdout + out.stderr).group(1))
    return median, compile_ms, wall, placement


def ort_runner(path, feeds, threads):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    return lambda: s.run(None, feeds)


def openvino_runner(path, feeds, threads):
    import openvino as ov
    core = ov.Core()
    cm = core.compile_model(path, "CPU", {"INFERENCE_NUM_THREADS": threads, "PERFORMANCE_HINT": "LATENCY",
                                          "NUM_STREAMS": 1, "INFERENCE_PRECISION_HINT": "f32"})
    req = cm.create_infer_request()
    return lambda: req.infer(feeds)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--models", default="resnet18,mobilenet_v2,encoder,decoder")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "bench", "cpu_bench.json"))
    # Rounds of (kiln, ORT, OpenVINO) one after the other, each of --runs runs; a runtime's time is
    # the median of its rounds' medians, so that load from other processes that comes and goes
    # falls on all three alike rather than on whichever ran during it.
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    if a.runs < 30:
        sys.exit("--runs must be >= 30")
    rows = []
    load_start = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        for model in a.models.split(","):
            path = model_path(model, tmp)
            feeds, files = make_inputs(path, tmp)
            for threads in [int(t) for t in a.threads.split(",")]:
                ort_run, ov_run = ort_runner(path, feeds, threads), openvino_runner(path, feeds, threads)
                ks, os_, vs = [], [], []
                for _ in range(a.rounds):
                    k, compile_ms, compile_wall, placement = bench_kiln(path, files, threads, a.runs)
                    ks.append(k)
                    os_.append(time_calls(ort_run, a.runs, a.warmup))
                    vs.append(time_calls(ov_run, a.runs, a.warmup))
                k, o, v = statistics.median(ks), statistics.median(os_), statistics.median(vs)
                rows.append({"model": model, "threads": threads, "kiln_ms": k, "ort_ms": o, "openvino_ms": v,
                             "kiln_compile_ms": compile_ms, "kiln_compile_wall_ms": compile_wall,
                             "kiln_placement": placement, "load_average": os.getloadavg()[0]})
                print(f"{model} threads={threads}: kiln {k:.2f} ms, ORT {o:.2f} ms, OpenVINO {v:.2f} ms", file=sys.stderr)
    import onnxruntime, openvino
    meta = {"cpu": open("/proc/cpuinfo").read().split("model name")[1].split("\n")[0].strip(": \t"),
            "cores": os.cpu_count(), "runs": a.runs, "warmup": a.warmup, "rounds": a.rounds,
            "onnxruntime": onnxruntime.__version__, "openvino": openvino.__version__.split("-")[0],
            # Other processes on the same cores move every time: the 1-minute load average before
            # the first model and after the last (and per row, after it, in rows).
            "load_average": [load_start[0], os.getloadavg()[0]]}
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1)
    print(f"{meta['cpu']}, {meta['cores']} cores; median of {a.rounds} rounds' medians of {a.runs} runs after "
          f"{a.warmup} warm-up runs; "
          f"ONNX Runtime {meta['onnxruntime']}, OpenVINO {meta['openvino']}; load average "
          f"{meta['load_average'][0]:.1f} before, {meta['load_average'][1]:.1f} after\n")
    print("| model | threads | kiln cpu (ms) | ONNX Runtime (ms) | OpenVINO (ms) | kiln / ORT | kiln / OpenVINO | kiln compile (ms) | load |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['model']} | {r['threads']} | {r['kiln_ms']:.2f} | {r['ort_ms']:.2f} | {r['openvino_ms']:.2f} | "
              f"{r['kiln_ms'] / r['ort_ms']:.2f} | {r['kiln_ms'] / r['openvino_ms']:.2f} | {r['kiln_compile_ms']:.0f} | "
              f"{r['load_average']:.1f} |")
    print(f"\nJSON: {a.out}")


if __name__ == "__main__":
    main()
