#!/usr/bin/env python3
"""Where a cpu run's time goes between kernels: OpenMP parallel regions and primitive calls.

usage: cpu_regions.py MODEL.onnx [--threads N] [--runs N] [--positions] [--kiln PATH]

Builds bench/cpu_regions.c (an LD_PRELOAD library that times each parallel region oneDNN opens
and each dnnl_primitive_execute kiln makes), runs `kiln perf MODEL --cpu -O --threads N
--runs-only` under it twice (RUNS and 2*RUNS runs, so that the difference is whole runs, not
compilation), and prints per run: the regions and primitive calls, and the sums over the run's
positions of each quantity's median over the runs (microseconds):
  gap         serial time between one region's end and the next one's start (kiln's executor,
              oneDNN's set-up of the next primitive, kernels run on one thread)
  fork        the start call on the calling thread
  late        how long after the start call the other thread enters the region (woken from
              sleep when the gap outlasted its spin)
  join        the end call: waiting for the other thread (imbalance) and the barrier
  work_main, work_worker   each thread's time inside the region
  kiln        from one primitive call's return to the next call (kiln's side of the gap)
--positions also prints each region's medians in run order (position k is the k-th region).
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def build_library():
    out = os.path.join(ROOT, "build", "bench", "cpu_regions.so")
    src = os.path.join(ROOT, "bench", "cpu_regions.c")
    if not os.path.exists(out) or os.path.getmtime(out) < os.path.getmtime(src):
        os.makedirs(os.path.dirname(out), exist_ok=True)
        subprocess.run(["gcc", "-O2", "-shared", "-fPIC", "-fopenmp", src, "-o", out, "-ldl"], check=True)
    return out


def record(kiln, lib, model, threads, runs):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "records.txt")
        env = dict(os.environ, LD_PRELOAD=lib, KILN_REGIONS_OUT=path)
        cmd = [kiln, "perf", model, "--cpu", "-O", "--threads", str(threads), "--runs-only", "-n", str(runs), "--quiet"]
        done = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed:\n{done.stderr}")
        regions, executes = [], []
        with open(path) as f:
            for line in f:
                kind, *values = line.split()
                (regions if kind == "region" else executes).append([float(v) for v in values])
    return regions, executes


def per_position(rows, per_run, runs):
    rows = rows[-per_run * runs:]
    return [[statistics.median(r[i] for r in rows[k::per_run]) for i in range(len(rows[0]))] for k in range(per_run)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--positions", action="store_true")
    ap.add_argument("--kiln", default=os.path.join(ROOT, "build", "kiln"))
    a = ap.parse_args()
    lib = build_library()
    r1, e1 = record(a.kiln, lib, a.model, a.threads, a.runs)
    r2, e2 = record(a.kiln, lib, a.model, a.threads, 2 * a.runs)
    n_regions, n_executes = (len(r2) - len(r1)) // a.runs, (len(e2) - len(e1)) // a.runs
    print(f"per run: {n_regions} parallel regions, {n_executes} primitive calls ({a.threads} threads)")
    if n_executes:
        kiln = sum(p[0] for p in per_position(e2, n_executes, a.runs))
        print(f"  kiln (between primitive calls): {kiln:.1f} us")
    if not n_regions:
        return
    names = ["gap", "fork", "late", "work_main", "work_worker", "join"]
    table = per_position(r2, n_regions, a.runs)
    sums = [sum(row[i] for row in table) for i in range(len(names))]
    print("  " + ", ".join(f"{n} {s:.1f} us" for n, s in zip(names, sums)))
    if a.positions:
        print("position " + " ".join(f"{n:>11}" for n in names))
        for k, row in enumerate(table):
            print(f"{k:8} " + " ".join(f"{v:11.2f}" for v in row))


if __name__ == "__main__":
    main()
