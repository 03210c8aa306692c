#!/usr/bin/env python3
"""kiln's gpu target against PyTorch eager and torch.compile on the same GPU, in one run: the five
models of torch_models.py (resnet50, mobilenet_v3_large, vit_b_16, BertModel and GPT2Model at
sequence 128) exported to ONNX at each batch size, in fp16 (kiln --fp16, torch .half()) and fp32
(no TF32 on either side). Every runtime is timed with CUDA events: warm-up runs, then --runs runs,
each on one of 4 sets of fresh random inputs in turn, each bracketed by its own events and
followed by a synchronisation (the latency of one inference on an idle GPU); the median is
reported with p10 and p90. kiln through its CLI (`kiln perf --gpu`: CUDA events around the CUDA
graph's replay, input and output copies not included, as PyTorch's inputs are on the GPU
already), PyTorch through its API. Prints a Markdown table and writes JSON.

kiln's compile time: cold (`kiln compile` with an empty XDG_CACHE_HOME, in-process and process
wall time) and warm (perf's compile in the cache the cold compile filled). FLOPs per item: torch's
FlopCounterMode over one forward of the model at that batch. "% of peak": the model's FLOPs at
kiln's latency against the fp16 dense GEMM peak, measured here as torch.matmul on 8192^3 fp16
(or --peak-tflops).

torch.compile takes minutes per model (max-autotune): its results are kept in --cache (by model,
batch, dtype, device, mode and torch version) and measured again only with --recompile. Each
compile runs in a worker process bounded by --deadline, so that a long one is given up, not the
whole run. kiln and eager are always measured in the run.

    bench/gpu_bench.py --kiln build/kiln [--models resnet50,...] [--configs fp16:1,fp16:64,fp32:1,fp32:64]
        [--runs 100] [--compile-mode max-autotune] [--recompile] [--no-compile] [--deadline S] [--profile]
        [--out FILE]
On the GPU machine: scripts/gpu-test.sh pack DIR here, then `bash DIR/gpu-test.sh bench DIR [ARGS]`.
"""
import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_models import MODELS, build, export_model, random_inputs

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DTYPES = {"fp16": torch.float16, "fp32": torch.float32}
INPUT_SETS = 4


def spread(ms):
    ms = sorted(ms)
    pick = lambda q: ms[min(len(ms) - 1, max(0, int(np.ceil(q * len(ms))) - 1))]   # nearest rank, as kiln perf
    return {"median": pick(0.5), "p10": pick(0.1), "p90": pick(0.9), "min": ms[0], "runs": len(ms)}


def time_torch(fn, sets, runs, warmup):
    """Each run on the next input set, bracketed by its own CUDA events, then synchronised."""
    with torch.inference_mode():
        for i in range(warmup):
            fn(*sets[i % len(sets)])
        torch.cuda.synchronize()
        ts = []
        for i in range(runs):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn(*sets[i % len(sets)])
            end.record()
            end.synchronize()
            ts.append(start.elapsed_time(end))
    return spread(ts)


def quietly(log, fn):
    """fn() with the process's stdout and stderr in `log`: a failed TorchScript export prints the
    whole traced graph (thousands of lines) before the bench falls back to dynamo."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    with open(log, "a") as f:
        os.dup2(f.fileno(), 1)
        os.dup2(f.fileno(), 2)
        try:
            return fn()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            for fd, old in ((1, saved[0]), (2, saved[1])):
                os.dup2(old, fd)
                os.close(old)


def torch_module(name, batch, dtype):
    m, _, _, _ = build(name, batch)
    return m.to("cuda", DTYPES[dtype]).eval()


def input_sets(name, m, batch, dtype):
    g = torch.Generator(device="cuda").manual_seed(1)
    return [random_inputs(name, m, batch, "cuda", DTYPES[dtype], g) for _ in range(INPUT_SETS)]


def count_flops(name, batch):
    """FLOPs of one forward at `batch` (FlopCounterMode: matmuls, convolutions, attention)."""
    from torch.utils.flop_counter import FlopCounterMode
    m = torch_module(name, batch, "fp32")
    args = input_sets(name, m, batch, "fp32")[0]
    with torch.inference_mode(), FlopCounterMode(display=False) as fc:
        m(*args)
    return fc.get_total_flops()


def gemm_peak_tflops():
    n = 8192
    a, b = torch.randn(n, n, device="cuda", dtype=torch.float16), torch.randn(n, n, device="cuda", dtype=torch.float16)
    t = time_torch(lambda x, y: x @ y, [(a, b)], 30, 5)
    return 2 * n ** 3 / (t["median"] * 1e-3) / 1e12


def kiln_compile_cold(kiln, path, dtype, cache):
    """`kiln compile` into an empty kernel cache: its report's compile time and the process wall time."""
    subprocess.run(["rm", "-rf", cache], check=True)
    flags = ["--fp16"] if dtype == "fp16" else []
    t0 = time.time()
    p = subprocess.run([kiln, "compile", path, "--gpu", "-O", *flags, "--time-passes", "--brief", "-o", os.devnull],
                       capture_output=True, text=True, env=dict(os.environ, XDG_CACHE_HOME=cache))
    wall = time.time() - t0
    log = p.stdout + p.stderr
    if p.returncode != 0:
        raise RuntimeError(f"kiln compile failed: {log[-3000:]}")
    ms = float(re.search(r"Compiled for gpu \(.*?\) in ([0-9.]+) ms", log).group(1))
    return {"compile_ms": ms, "wall_s": round(wall, 3), "report": log.strip().splitlines()[:40]}


def run_perf(kiln, path, dtype, batch, files, cache, tmp, args):
    out = os.path.join(tmp, "perf.json")
    flags = ["--fp16"] if dtype == "fp16" else []
    # Token ids come random from kiln (fresh per input set); BERT's mask is given (padded).
    given = [a for n, f in files.items() if n == "attention_mask" for a in ("--input", f"{n}={f}")]
    p = subprocess.run([kiln, "perf", path, "--gpu", "-O", *flags, "--batch", str(batch), "--input-sets", str(INPUT_SETS),
                        "--quiet", "--json", out, *args, *given], capture_output=True, text=True,
                       env=dict(os.environ, XDG_CACHE_HOME=cache))
    if p.returncode != 0:
        raise RuntimeError(f"kiln perf failed: {(p.stdout + p.stderr)[-3000:]}")
    return json.load(open(out))


def kiln_profile(kiln, path, dtype, batch, files, cache, tmp):
    """Where kiln's time goes: perf's per-instruction times (each instruction synchronised, so their
    sum exceeds the graph replay's time by the launch gaps), by op and the slowest instructions."""
    r = run_perf(kiln, path, dtype, batch, files, cache, tmp, ["-n", "10", "--warmup", "2"])
    ins = [(i["ms"], i["instruction"]) for i in r["instructions"] if i["ms"] > 0]
    total = sum(ms for ms, _ in ins)
    by_op = {}
    for ms, line in ins:
        op = re.match(r"\S+ = ([\w@]+)", line)
        by_op[op.group(1) if op else "?"] = by_op.get(op.group(1) if op else "?", 0) + ms
    top = lambda pairs: [{"what": w[:200], "ms": ms, "share": ms / total} for ms, w in sorted(pairs, reverse=True)[:15]]
    return {"instructions_ms": total, "graph_ms": r["device_ms"]["median"] if r["device_ms"] else None,
            "by_op": top([(ms, op) for op, ms in by_op.items()]), "slowest": top(ins)}


def kiln_perf(kiln, path, dtype, batch, files, cache, runs, warmup, tmp):
    """`kiln perf --gpu` in the warm cache: device-clock timings and the (warm) compile report."""
    r = run_perf(kiln, path, dtype, batch, files, cache, tmp,
                 ["-n", str(runs), "--warmup", str(warmup), "--runs-only"])
    if r["device_ms"] is None:
        raise RuntimeError("kiln perf reported no device time (the program did not run as one CUDA graph)")
    d = r["device_ms"]
    return {"median": d["median"], "p10": d["p10"], "p90": d["p90"], "min": d["min"], "runs": r["iterations"],
            "host_median": r["run_ms"]["median"], "warm_compile_ms": r["compile"]["total_ms"],
            "warm_kernels": r["compile"]["kernels"], "warm_cache_hits": r["compile"]["cache_hits"]}


def compile_worker(a):
    """In a worker process: torch.compile one model and time it; prints one JSON line."""
    name, batch, dtype = a.worker.split(":")
    batch = int(batch)
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    m = torch_module(name, batch, dtype)
    sets = input_sets(name, m, batch, dtype)
    c = torch.compile(m, mode=a.compile_mode)
    t0 = time.time()
    with torch.inference_mode():
        c(*sets[0])   # compiles (max-autotune: tunes every GEMM and convolution)
        torch.cuda.synchronize()
    compile_s = time.time() - t0
    r = time_torch(c, sets, a.runs, a.warmup)
    r["compile_s"] = round(compile_s, 1)
    print("RESULT " + json.dumps(r), flush=True)


def torch_compile(a, name, batch, dtype, budget):
    """torch.compile's timing through a worker, given up after `budget` seconds."""
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", f"{name}:{batch}:{dtype}", "--compile-mode",
           a.compile_mode, "--runs", str(a.runs), "--warmup", str(a.warmup)]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=budget)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)   # its autotuning subprocesses too
        p.communicate()
        return {"error": f"not finished within {budget:.0f} s"}
    m = re.search(r"^RESULT (.*)$", out, re.M)
    if p.returncode != 0 or not m:
        return {"error": out.strip()[-1500:]}
    return json.loads(m.group(1))


def cache_key(name, batch, dtype, device, mode):
    return f"{name}|{batch}|{dtype}|{device}|{mode}|torch {torch.__version__}"


def fmt(v, digits=2):
    return "-" if v is None else f"{v:.{digits}f}"


def print_table(rows, meta):
    print(f"{meta['device']}, torch {meta['torch']}, CUDA {meta['cuda']}; median of {meta['runs']} CUDA-event timed runs "
          f"after {meta['warmup']} warm-up runs, {INPUT_SETS} sets of random inputs in turn; fp16 GEMM peak "
          f"{meta['peak_tflops']:.0f} TFLOP/s ({meta['peak_source']}); torch.compile mode {meta['compile_mode']}\n")
    print("| model | dtype | batch | kiln (ms) | eager (ms) | torch.compile (ms) | kiln items/s | eager items/s | "
          "torch.compile items/s | kiln / eager | kiln / torch.compile | kiln % of fp16 peak | kiln compile cold / warm (s) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        k, e, c = (r.get(x, {}).get("median") for x in ("kiln", "eager", "torch_compile"))
        ips = lambda ms: None if not ms else r["batch"] * 1000 / ms
        ratio = lambda x, y: None if not x or not y else x / y
        pct = None if not k else 100 * r["flops"] / (k * 1e-3) / (meta["peak_tflops"] * 1e12)
        cached = " (cached)" if r.get("torch_compile", {}).get("cached") else ""
        cold, warm = r.get("kiln_cold", {}).get("compile_ms"), r.get("kiln", {}).get("warm_compile_ms")
        compile_s = "-" if cold is None else f"{cold / 1000:.2f} / {fmt(warm and warm / 1000)}"
        print(f"| {r['model']} | {r['dtype']} | {r['batch']} | {fmt(k, 3)} | {fmt(e, 3)} | {fmt(c, 3)}{cached} | "
              f"{fmt(ips(k), 0)} | {fmt(ips(e), 0)} | {fmt(ips(c), 0)} | {fmt(ratio(k, e))} | {fmt(ratio(k, c))} | "
              f"{fmt(pct, 1)} | {compile_s} |")
    errors = [(r["model"], r["dtype"], r["batch"], side, r[side]["error"]) for r in rows
              for side in ("kiln", "eager", "torch_compile", "kiln_cold", "kiln_profile") if "error" in r.get(side, {})]
    for model, dtype, batch, side, err in errors:
        print(f"\n{model} {dtype} batch {batch}, {side}: {err.splitlines()[-1] if err else ''}")
    # The profile of the row where kiln is furthest behind eager.
    profiled = [r for r in rows if "instructions_ms" in r.get("kiln_profile", {}) and
                r.get("eager", {}).get("median") and r.get("kiln", {}).get("median")]
    if profiled:
        r = max(profiled, key=lambda r: r["kiln"]["median"] / r["eager"]["median"])
        p = r["kiln_profile"]
        print(f"\nWhere kiln's time goes in {r['model']} {r['dtype']} batch {r['batch']} (kiln / eager "
              f"{r['kiln']['median'] / r['eager']['median']:.2f}; kiln perf per instruction, each synchronised: "
              f"{p['instructions_ms']:.3f} ms in all, the graph replay {fmt(p['graph_ms'], 3)} ms)\n")
        for title, key in (("op", "by_op"), ("instruction", "slowest")):
            print(f"| {title} | ms | share |\n|---|---|---|")
            for e in p[key][:10]:
                print(f"| {e['what'][:120].replace('|', '/')} | {e['ms']:.3f} | {100 * e['share']:.1f}% |")
            print()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kiln", default=os.path.join(ROOT, "build", "kiln"))
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--configs", default="fp16:1,fp16:64,fp32:1,fp32:64", help="DTYPE:BATCH pairs, comma-separated")
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--compile-mode", default="max-autotune")
    ap.add_argument("--recompile", action="store_true", help="measure torch.compile again even where --cache has it")
    ap.add_argument("--no-compile", action="store_true", help="measure no torch.compile (the cached results are still shown)")
    ap.add_argument("--cache", default=os.path.join(ROOT, "bench", "gpu_torch_compile.json"))
    ap.add_argument("--deadline", type=float, default=0, help="seconds after the start to stop starting torch.compile "
                    "measurements and give up the one running (0: none)")
    ap.add_argument("--peak-tflops", type=float, default=0, help="the fp16 dense GEMM peak (default: measured)")
    ap.add_argument("--profile", action="store_true", help="also time kiln per instruction (10 runs) and print where "
                    "the time goes in the row furthest behind eager")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "bench", "gpu_bench.json"))
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        return compile_worker(a)
    if a.runs < 50:
        sys.exit("--runs must be >= 50")
    if not torch.cuda.is_available():
        sys.exit("gpu_bench.py needs a CUDA GPU")
    # float32 means float32 on both sides (kiln uses TF32 only with --allow-tf32).
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    start = time.time()
    configs = []
    for c in a.configs.split(","):
        dtype, batch = c.split(":")
        if dtype not in DTYPES:
            sys.exit(f"--configs {c}: the dtype is fp16 or fp32")
        configs.append((dtype, int(batch)))
    device = torch.cuda.get_device_name()
    meta = {"device": device, "torch": torch.__version__, "cuda": torch.version.cuda, "runs": a.runs, "warmup": a.warmup,
            "compile_mode": a.compile_mode, "input_sets": INPUT_SETS}
    meta["peak_tflops"], meta["peak_source"] = ((a.peak_tflops, "given") if a.peak_tflops else
                                                (gemm_peak_tflops(), "measured: torch.matmul 8192^3 fp16, median"))
    cache = json.load(open(a.cache)) if os.path.exists(a.cache) else {}
    rows = []

    def dump():
        os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
        json.dump({"meta": meta, "rows": rows}, open(a.out, "w"), indent=1)

    with tempfile.TemporaryDirectory() as tmp:
        kernel_cache = os.path.join(tmp, "kernel-cache")
        # kiln and eager on every model and config, then torch.compile where the cache lacks it.
        for name in a.models.split(","):
            for batch in sorted({b for _, b in configs}):
                try:
                    path, files, _, info = quietly(os.path.join(tmp, "export.log"), lambda: export_model(name, tmp, batch))
                    flops = count_flops(name, batch)
                except Exception as e:
                    for dtype in [d for d, b in configs if b == batch]:
                        rows.append({"model": name, "dtype": dtype, "batch": batch, "flops": 0,
                                     "kiln": {"error": f"export: {type(e).__name__}: {str(e)[:1500]}"}})
                    continue
                for dtype in [d for d, b in configs if b == batch]:
                    row = {"model": name, "dtype": dtype, "batch": batch, "flops": flops, "exporter": info["exporter"]}
                    for side, measure in (
                            ("kiln_cold", lambda: kiln_compile_cold(a.kiln, path, dtype, kernel_cache)),
                            ("kiln", lambda: kiln_perf(a.kiln, path, dtype, batch, files, kernel_cache, a.runs, a.warmup, tmp)),
                            ("eager", lambda: eager(name, batch, dtype, a)),
                            ("kiln_profile", lambda: kiln_profile(a.kiln, path, dtype, batch, files, kernel_cache, tmp)
                             if a.profile else {})):
                        try:
                            row[side] = measure()
                        except Exception as e:
                            row[side] = {"error": f"{type(e).__name__}: {str(e)[:3000]}"}
                    print(f"{name} {dtype} batch {batch}: kiln {row['kiln'].get('median')} ms, eager "
                          f"{row['eager'].get('median')} ms", file=sys.stderr, flush=True)
                    rows.append(row)
                    dump()
                torch.cuda.empty_cache()
        # fp16 first: the bar is on fp16.
        for row in sorted(rows, key=lambda r: r["dtype"] != "fp16"):
            key = cache_key(row["model"], row["batch"], row["dtype"], device, a.compile_mode)
            if key in cache and not a.recompile:
                row["torch_compile"] = dict(cache[key], cached=True)
                continue
            left = a.deadline - (time.time() - start) if a.deadline else 3600
            if a.no_compile or left < 30:
                continue
            r = torch_compile(a, row["model"], row["batch"], row["dtype"], left)
            row["torch_compile"] = r
            print(f"{row['model']} {row['dtype']} batch {row['batch']}: torch.compile {r.get('median')} ms "
                  f"(compiled in {r.get('compile_s')} s)", file=sys.stderr, flush=True)
            if "error" not in r:
                cache[key] = dict(r, measured=time.strftime("%Y-%m-%d"))
                with open(a.cache, "w") as f:
                    json.dump(cache, f, indent=1, sort_keys=True)
            dump()
    dump()
    print_table(rows, meta)
    print(f"\nJSON: {a.out}; torch.compile cache: {a.cache}")


def eager(name, batch, dtype, a):
    m = torch_module(name, batch, dtype)
    r = time_torch(m, input_sets(name, m, batch, dtype), a.runs, a.warmup)
    del m
    return r


if __name__ == "__main__":
    main()
