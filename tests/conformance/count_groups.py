"""Counts the ONNX backend node cases by group from a conformance run's verbose log (the runner
with -v prints "pass NAME", "FAIL NAME: ..." or "expected failure NAME: ..." per case; skipped
cases print nothing and are counted from onnx_skips.txt against the data folder).
Usage: count_groups.py DATA_DIR LOG [LOG...]   (one column per log, e.g. before and after)
"""
import os
import re
import sys

# First match wins; the order puts the narrow groups before the broad ones.
GROUPS = [
    ("losses", r"test_(nllloss|sce)_.*"),
    ("sequences and optionals", r"test_(sequence|optional|split_to_sequence|concat_from_sequence|identity_(opt|sequence)|if_opt|if_seq|loop\d+_seq).*"),
    ("strings", r"test_(string|strnorm|regex|tfidf|label_encoder|cast_.*STRING|castlike_.*STRING).*"),
    ("control flow", r"test_(if|loop|scan)\d*(_.*)?"),
    ("ai.onnx.ml", r"test_ai_onnx_ml_.*"),
    ("function bodies (_expanded)", r".*_expanded(_ver\d+)?"),
    ("other operators", r".*"),
]


def group_of(name):
    return next(g for g, pattern in GROUPS if re.fullmatch(pattern, name))


def read_skips():
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "onnx_skips.txt")) as f:
        lines = (line.split("#", 1)[0].strip() for line in f)
        return [re.compile(p) for p in lines if p]


def counts(log, names, skips):
    """group -> [passed, failed, skipped]"""
    result = {}
    with open(log) as f:
        for line in f:
            m = re.match(r"(pass|FAIL|expected failure) (\S+?):?( |$)", line)
            if m:
                result[m.group(2)] = "passed" if m.group(1) == "pass" else "failed"
    table = {g: [0, 0, 0] for g, _ in GROUPS}
    for name in names:
        row = table[group_of(name)]
        if any(s.fullmatch(name) for s in skips):
            row[2] += 1
        elif result.get(name) == "passed":
            row[0] += 1
        else:
            row[1] += 1
    return table


def main():
    data, logs = sys.argv[1], sys.argv[2:]
    names = sorted(d for d in os.listdir(data) if os.path.exists(os.path.join(data, d, "model.onnx")))
    skips = read_skips()
    tables = [counts(log, names, skips) for log in logs]
    print("| group | cases | " + " | ".join(f"{os.path.basename(log)}: passed / failed / skipped" for log in logs) + " |")
    print("|---|---:|" + "---:|" * len(logs))
    for g, _ in GROUPS + [("total", None)]:
        cells = []
        for t in tables:
            row = [sum(r[i] for r in t.values()) for i in range(3)] if g == "total" else t[g]
            cells.append(" / ".join(str(v) for v in row))
        size = sum(tables[0][g]) if g != "total" else len(names)
        print(f"| {g} | {size} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
