"""On the GPU machine: exports the five models of bench/torch_models.py (random weights, default
configs) to ONNX at batch 1, and checks `kiln run --gpu -O` against PyTorch (float32 on the CPU) in fp32
(relative L2 error < 1e-3) and with --fp16 (< 1e-2), and against ONNX Runtime on the same file
(to tell an export difference from a kiln one); `kiln verify MODEL --gpu -O` must pass. Times
resnet50's compile cold (empty kernel cache) and warm.

  torchvision: resnet50, mobilenet_v3_large, vit_b_16; transformers: BertModel, GPT2Model
  (torch_models.py says how each is built and exported; gpu-test.sh pack puts it beside this file)

usage: export_and_check.py KILN_BINARY WORKDIR [MODEL...] [--perf] [--bisect] [--phases] [--deadline S]
  --perf    kiln perf --gpu on resnet50 with and without the CUDA graph (KILN_GPU_GRAPHS=0)
  --bisect  kiln verify --bisect --gpu on mobilenet_v3_large in fp16 (finds the first instruction
            whose value diverges from ref's, if any), then again with tolerances of 1e-7 that fp16
            cannot meet, so that the search runs
  --phases  where the wall time of `kiln run --gpu -O` (and with --fp16) goes, for each model
            (process start, the ONNX load, then each line of the run with its time)
  --deadline S  stop waiting for the verifies (they run on ref, single-threaded, in the background
            while the rest goes on) S seconds after the start, recording those not finished
Writes WORKDIR/models.json after each model and prints one SUMMARY line.
"""
import json, os, pty, re, struct, subprocess, sys, time

import numpy as np

# torch_models.py: beside this file where gpu-test.sh packs both, else in the repository's bench/.
here = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [here, os.path.join(here, "..", "..", "..", "bench")]
from torch_models import MODELS, export_model, rel_l2

start = time.time()
kiln, work = sys.argv[1], sys.argv[2]
args = sys.argv[3:]
deadline = float(args.pop(args.index("--deadline") + 1)) if "--deadline" in args else 1e9
flags = {a for a in args if a.startswith("--")}
which = [a for a in args if not a.startswith("--")] or list(MODELS)
os.makedirs(work, exist_ok=True)
results = {}


def sh(args, cache=None, timeout=300):
    env = dict(os.environ, XDG_CACHE_HOME=cache) if cache else None
    t0 = time.time()
    p = subprocess.run(args, capture_output=True, text=True, env=env, timeout=timeout)
    return p.returncode, p.stdout + p.stderr, time.time() - t0


def input_flags(inputs):
    return [a for name, path in inputs.items() for a in ("--input", f"{name}={path}")]


def run_kiln(tag, model, inputs, cache, extra=()):
    out = os.path.join(work, tag + "_out")
    rc, log, wall = sh([kiln, "run", model, "--gpu", "-O", "--save-outputs", out, *input_flags(inputs), *extra], cache)
    if rc != 0:
        return None, log, wall
    return np.load(os.path.join(out, sorted(os.listdir(out))[0])), log, wall


def fnv64(data):   # the saved-program container's checksum (src/tools/saved_program.cpp)
    data = bytes(data) + b"\0" * (-len(data) % 8)
    h = 0xcbf29ce484222325
    for (w,) in struct.iter_unpack("<Q", data):
        h = ((h ^ w) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def without_library_plans(path, out):
    """A copy of a saved program without its "gpu library plans" blob, as programs were saved before
    they kept the plans: its section entry leaves the header, whose JSON is padded with spaces to its
    old length (the sections stay where they are), and the header checksum is recomputed."""
    data = bytearray(open(path, "rb").read())
    n = int.from_bytes(data[16:24], "little")
    header = json.loads(bytes(data[32:32 + n]))
    header["sections"] = [x for x in header["sections"] if not (x["kind"] == "blob" and x["name"] == "gpu library plans")]
    text = json.dumps(header).encode()
    text += b" " * (n - len(text))
    data[32:32 + n] = text
    data[24:32] = fnv64(text).to_bytes(8, "little")
    open(out, "wb").write(data)


def timed_lines(cmd, env=None):
    """Runs cmd on a pseudo-terminal (kiln's output is then line-buffered, and its compile progress
    shows) and returns its exit status, wall time and each line with the seconds since the start."""
    t0 = time.time()
    pid, fd = pty.fork()
    if pid == 0:
        os.execvpe(cmd[0], cmd, env or dict(os.environ))
    lines, buf = [], b""
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:
            break
        if not data:
            break
        buf += data
        *done, buf = re.split(rb"[\r\n]+", buf)
        lines += [(round(time.time() - t0, 3), d.decode(errors="replace").strip()) for d in done if d.strip()]
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), round(time.time() - t0, 3), lines


def phases(tag, model, inputs, cache):
    """Where the wall time of `kiln run --gpu -O` goes: the process start alone, loading the ONNX file
    (`kiln compile --ref`, no passes, no CUDA), and the run's lines as they appear (the compile report
    gives the compile, `Time:` the runs; what follows it is the exit)."""
    env = dict(os.environ, XDG_CACHE_HOME=cache)
    r = {"help_wall_s": timed_lines([kiln, "--help"])[1],
         "ref_load_wall_s": timed_lines([kiln, "compile", model, "--ref"])[1]}
    keep = r"Compiled|executable built|kernels|library plans|Running on|Time:|error|^\[|convert_precision"
    for key, extra in (("run", ()), ("run_fp16", ("--fp16", "--time-passes"))):
        rc, wall, lines = timed_lines([kiln, "run", model, "--gpu", "-O", "--runs", "1", *extra, *input_flags(inputs)], env)
        r[key] = {"rc": rc, "wall_s": wall, "first_line_s": lines[0][0] if lines else None,
                  "lines": [f"{t:7.3f} {l[:150]}" for t, l in lines if re.search(keep, l)][-24:]}
    return r


def compile_times(model, tag):
    cache = os.path.join(work, tag + "_compile_cache")
    subprocess.run(["rm", "-rf", cache])
    times = []
    for attempt in ("cold", "warm"):
        rc, log, wall = sh([kiln, "compile", model, "--gpu", "-O", "-o", os.path.join(work, tag + ".kiln")], cache)
        report = [l.strip() for l in log.splitlines() if re.search(r"Compiled|kernels|error", l)][:4]
        times.append({"attempt": attempt, "wall_s": round(wall, 3), "rc": rc, "report": report})
    # The saved program runs without compiling: its report says where the kernels came from.
    # With its library plans, and without them (the cuBLASLt and cuDNN heuristics asked again).
    saved = os.path.join(work, tag + ".kiln")
    without_library_plans(saved, os.path.join(work, tag + "_no_plans.kiln"))
    for attempt, path in (("saved program", saved), ("saved program without library plans", os.path.join(work, tag + "_no_plans.kiln"))):
        rc, log, wall = sh([kiln, "run", path, "--gpu", "--runs", "1"], os.path.join(work, tag + "_empty_cache"))
        times.append({"attempt": attempt, "wall_s": round(wall, 3), "rc": rc,
                      "report": [l.strip() for l in log.splitlines() if re.search(r"kernels|built|plans|Time:|error", l)][:6]})
    return times


def check(tag, model, inputs, want):
    entry = dict(exporters.get(model, {}))
    entry["output_rms"] = float(np.sqrt(np.mean(want.astype(np.float64) ** 2)))   # fp16 needs > ~1e-4
    cache = os.path.join(work, tag + "_cache")
    try:   # the exported file on ONNX Runtime
        import onnxruntime as ort
        sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
        ort_out = sess.run(None, {k: np.load(v) for k, v in inputs.items()})[0]
        entry["ort_vs_torch"] = rel_l2(ort_out, want)
    except Exception as e:
        ort_out = None
        entry["ort_error"] = str(e)[:300]
    for precision, extra, bar in (("fp32", (), 1e-3), ("fp16", ("--fp16",), 1e-2)):
        got, log, wall = run_kiln(f"{tag}_{precision}", model, inputs, cache, extra)
        if got is None:
            entry[f"{precision}_error"] = log[-2000:]
            continue
        entry[f"{precision}_vs_torch"] = rel_l2(got, want)
        entry[f"{precision}_pass"] = entry[f"{precision}_vs_torch"] < bar
        if ort_out is not None:
            entry[f"{precision}_vs_ort"] = rel_l2(got, ort_out)
        entry[f"{precision}_run_wall_s"] = round(wall, 2)
    # ref's side of verify takes minutes on the transformers: it runs in the background.
    log = open(os.path.join(work, tag + "_verify.log"), "w")
    verify_starts[tag] = time.time()
    verifies[tag] = subprocess.Popen([kiln, "verify", model, "--gpu", "-O", *input_flags(inputs)], stdout=log,
                                     stderr=subprocess.STDOUT, env=dict(os.environ, XDG_CACHE_HOME=cache))
    if tag == "resnet50":
        entry["compile"] = compile_times(model, tag)
    if "--phases" in flags:
        entry["phases"] = phases(tag, model, inputs, cache)
    results[tag] = entry
    print(tag, json.dumps(entry, indent=1), flush=True)
    dump()


verifies, verify_starts, verify_ends = {}, {}, {}


def note_finished_verifies():   # when each background verify ended, polled between the steps
    for tag, p in verifies.items():
        if tag not in verify_ends and p.poll() is not None:
            verify_ends[tag] = time.time()


def collect_verifies():
    for tag, p in verifies.items():
        note_finished_verifies()
        try:
            p.wait(timeout=max(1, deadline - (time.time() - start)))
            log = open(os.path.join(work, tag + "_verify.log")).read()
            results[tag]["verify_rc"] = p.returncode
            results[tag]["verify_wall_s"] = round(verify_ends.get(tag, time.time()) - verify_starts[tag], 1)
            results[tag]["verify"] = [l.strip() for l in log.splitlines() if re.search(r"PASS|FAIL|RMS|error", l)][-4:]
        except subprocess.TimeoutExpired:
            p.kill()
            results[tag]["verify"] = f"not finished {deadline:.0f} s after the start"


def dump():
    json.dump(results, open(os.path.join(work, "models.json"), "w"), indent=1)


exporters = {}


def exported(tag):
    path, inputs, want, info = export_model(tag, work)
    exporters[path] = info
    return path, inputs, want


made = {}
for tag in which:
    try:
        made[tag] = exported(tag)
        check(tag, *made[tag])
        note_finished_verifies()
    except Exception as e:   # an export failure is recorded, the other models still run
        results[tag] = {"error": f"{type(e).__name__}: {str(e)[:1500]}"}
        print(tag, "error:", results[tag]["error"], flush=True)

if "--perf" in flags and "resnet50" in made:
    model, inputs, _ = made["resnet50"]
    perf = {}
    for label, graphs in (("graph", "1"), ("no_graph", "0")):
        env = dict(os.environ, KILN_GPU_GRAPHS=graphs, XDG_CACHE_HOME=os.path.join(work, "resnet50_cache"))
        p = subprocess.run([kiln, "perf", model, "--gpu", "-O", "-n", "100", *input_flags(inputs)],
                           capture_output=True, text=True, env=env, timeout=300)
        perf[label] = [l.strip() for l in (p.stdout + p.stderr).splitlines()
                       if re.search(r"(?i)total|median|mean|min|rate|error", l)][:8]
    results["resnet50_perf"] = perf
    print("perf", json.dumps(perf, indent=1), flush=True)

if "--bisect" in flags and "mobilenet_v3_large" in made:
    model, inputs, _ = made["mobilenet_v3_large"]
    # fp16 passes verify, so the first bisect has nothing to search; with tolerances fp16 cannot
    # meet, the second searches the prefix programs on the GPU and names the first instruction.
    for key, tight in (("mobilenet_bisect", ()), ("mobilenet_bisect_tight", ("--rms-tol", "1e-7", "--atol", "1e-7", "--rtol", "1e-7"))):
        rc, log, wall = sh([kiln, "verify", model, "--gpu", "-O", "--fp16", "--bisect", *tight, *input_flags(inputs)],
                           os.path.join(work, "mobilenet_v3_large_cache"), 600)
        results[key] = {"rc": rc, "wall_s": round(wall, 1), "tail": log.splitlines()[-14:]}
        print(key, json.dumps(results[key], indent=1), flush=True)

collect_verifies()
dump()
keys = ("ort_vs_torch", "fp32_vs_torch", "fp16_vs_torch", "fp32_vs_ort", "verify_rc", "error", "fp32_error", "fp16_error")
print("SUMMARY", json.dumps({k: {f: (v[f][:200] if isinstance(v[f], str) else v[f]) for f in keys if f in v}
                             for k, v in results.items() if isinstance(v, dict)}))
