#!/usr/bin/env python3
"""The bad-input corpus (docs/reliability.md): malformed variants of every input the CLI reads,
generated from the shipped files, each run through the command that reads it and checked for

  * exit code 2 (never 0, never 1 "internal error", never a crash, never a hang: 60 s timeout);
  * one line on stderr, `systolic: error: ...`, naming the file (or the flag) and a line or key;
  * no output file (the output folder is absent or empty afterwards);
  * with --sanitized: no AddressSanitizer / UndefinedBehaviorSanitizer report.

  scripts/bad_inputs.py [--systolic BUILD/systolic] [--table FILE.md] [--only KIND] [--skip KIND]
                        [--sanitized] [--quiet]

Exit code 0 when every variant behaves, 1 otherwise (the failures are listed).
"""
import argparse
import collections
import concurrent.futures
import functools
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TINY = os.path.join(ROOT, "configs", "tiny-4x4.yaml")
EXAMPLE = os.path.join(ROOT, "traces", "gemms", "example.yaml")
TINY_LM = os.path.join(ROOT, "tests", "py", "data", "tiny-lm.yaml")
TINY_BUCKETS = os.path.join(ROOT, "tests", "py", "data", "tiny-buckets.yaml")
TINY_REQUESTS = os.path.join(ROOT, "tests", "py", "data", "tiny-requests.csv")
RESNET = os.path.join(ROOT, "traces", "topologies", "resnet18.csv")

Variant = collections.namedtuple("Variant", "kind what name text argv")
KEY_LINE = re.compile(r"^(\s*-?\s*)([A-Za-z_][\w.]*)(:\s*)([^#\n]*?)(\s*#.*)?$")
NUMBER = re.compile(r"^[+-]?\d+(\.\d+)?$")


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


# ----------------------------------------------------------------------------- generators

def yaml_variants(text):
    """(what, text) pairs, each malformed whatever the schema: per key line a misspelled key, the
    line given twice, and for a number a word, a hex, a non-finite and a list; whole-file junk."""
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        m = KEY_LINE.match(line.rstrip("\n"))
        if not m or line.lstrip().startswith("#"):
            continue
        lead, key, colon, value, _ = m.groups()
        at = f"line {i + 1} '{key}'"
        swap = lambda new: "".join(lines[:i] + [new + "\n"] + lines[i + 1:])  # noqa: E731
        yield f"{at}: misspelled key", swap(f"{lead}{key}zz{colon}{value}")
        if not lead.strip().startswith("-"):  # a key of a list item's map repeats differently
            yield f"{at}: given twice", "".join(lines[:i + 1] + [line if line.endswith("\n") else line + "\n"]
                                                + lines[i + 1:])
        if NUMBER.match(value):
            for bad in ("abc", "0x10", "1e999", "[1, 2]", "{a: 1}"):
                yield f"{at}: {value} -> {bad}", swap(f"{lead}{key}{colon}{bad}")
    yield "empty file", ""
    yield "a list, not a map", "- a\n- b\n"
    yield "unclosed bracket", text + "\nzz: [1, 2\n"
    yield "binary junk", "\x00\x01\x02\xff\xfe garbage \x7f\n"
    yield "tab indentation", text.replace("\n  ", "\n\t", 1) if "\n  " in text else text + "\n\tx: 1\n"


def csv_variants(text, skip_lines=1):
    """Per data cell of the first two data rows: a word, a negative, empty, a fraction, 2^64;
    an extra and a missing column; whole-file junk."""
    lines = text.splitlines()
    data = [i for i, l in enumerate(lines) if l.strip() and not l.startswith("#")][skip_lines:skip_lines + 2]
    for i in data:
        cells = lines[i].split(",")
        for c, cell in enumerate(cells):
            if not NUMBER.match(cell.strip()):
                continue
            # 2^64 only where an integer is expected (an arrival at 1.8e19 s is absurd but valid).
            bads = ("abc", "-1", "", "1.5x") + (() if "." in cell else ("18446744073709551616",))
            for bad in bads:
                row = cells[:c] + [bad] + cells[c + 1:]
                yield f"line {i + 1} column {c + 1}: {cell.strip()} -> '{bad}'", "\n".join(
                    lines[:i] + [",".join(row)] + lines[i + 1:]) + "\n"
    yield "binary junk", "\x00\x01\xff\xfe\n"


def trace_variants(text):
    """Per key=value field of the first layer, buffer, matmul and dma lines: a word, a negative,
    2^64, a leading zero, empty; a key given twice; an unknown key."""
    lines = text.splitlines()
    picked = {}
    for i, line in enumerate(lines):
        word = line.split(" ", 1)[0] if not line.startswith("  ") else line.split()[0]
        if word in ("layer", "buffer", "matmul", "dma") and word not in picked:
            picked[word] = i
    for word, i in picked.items():
        tokens = lines[i].split(" ")
        for t, token in enumerate(tokens):
            if "=" not in token:
                continue
            key, value = token.split("=", 1)
            if key in ("name", "source", "signal", "wait"):
                continue
            for bad in ("abc", "-1", "18446744073709551616", "0" + value if value.isdigit() and value != "0" else "x1",
                        ""):
                row = tokens[:t] + [f"{key}={bad}"] + tokens[t + 1:]
                yield f"line {i + 1} {word} {key}={value} -> '{bad}'", "\n".join(
                    lines[:i] + [" ".join(row)] + lines[i + 1:]) + "\n"
            yield f"line {i + 1} {word} {key} twice", "\n".join(
                lines[:i] + [lines[i] + " " + token] + lines[i + 1:]) + "\n"
        yield f"line {i + 1} {word}: unknown key", "\n".join(lines[:i] + [lines[i] + " colour=red"] + lines[i + 1:]) + "\n"
    yield "empty file", ""
    yield "binary junk", "\x00\x01\xff\xfe\n"


SET_KEYS = ["mxu.rows", "mxu.cols", "mxu.count", "clock_mhz", "hbm.data_rate_gbps", "sram.vmem_bytes",
            "mxu.dtype", "memory.ideal", "mxu.model", "dma.engines"]


def variants(systolic, work):
    """Every variant, as (kind, what, file name, text, argv). `{f}` in argv is the file."""
    run_tiny = [systolic, "run", "-c", TINY, "-o", "{out}", "-q"]
    for what, text in yaml_variants(read(TINY)):
        yield Variant("chip config", what, "c.yaml", text, [systolic, "run", "-c", "{f}", "-w", EXAMPLE, "-o", "{out}", "-q"])
    for key in SET_KEYS:
        for bad in ("abc", "-1", "[1]", "1e999", "0x10"):
            if key in ("mxu.dtype", "mxu.model") and bad != "abc":
                continue
            yield Variant("--set", f"{key}={bad}", None, None, run_tiny + ["-w", EXAMPLE, "--set", f"{key}={bad}"])
    for what, text in yaml_variants(read(EXAMPLE)):
        yield Variant("GEMM list", what, "w.yaml", text, run_tiny + ["-w", "{f}"])
    for key, value in (("m", "4"), ("k", "4"), ("n", "4")):
        for bad in ("0", "-4", "010", "1e3", "4.5", "9223372036854775808"):
            text = read(EXAMPLE).replace(f"    {key}: {value}\n", f"    {key}: {bad}\n", 1)
            yield Variant("GEMM list", f"{key}: {value} -> {bad}", "w.yaml", text, run_tiny + ["-w", "{f}"])
    for what, text in yaml_variants(read(TINY_LM)):
        yield Variant("model", what, "m.yaml", text, run_tiny + ["-w", "{f}", "--bucket", "1x8"])
    topology = "\n".join(read(RESNET).splitlines()[:4]) + "\n"
    for what, text in csv_variants(topology):
        yield Variant("SCALE-Sim topology", what, "t.csv", text, [systolic, "run", "-o", "{out}", "-q", "-w", "{f}"])
    trace = os.path.join(work, "example.trace")
    subprocess.run([systolic, "compile", "-c", TINY, "-w", EXAMPLE, "-o", trace], check=True)
    for what, text in trace_variants(read(trace)):
        yield Variant("trace", what, "x.trace", text, run_tiny + ["-t", "{f}"])
    pack = [systolic, "pack", "-c", TINY, "-m", TINY_LM, "-o", "{out}", "-q"]
    for what, text in csv_variants(read(TINY_REQUESTS)):
        yield Variant("request log", what, "r.csv", text, pack + ["--buckets", TINY_BUCKETS, "--requests", "{f}"])
    for what, text in yaml_variants(read(TINY_BUCKETS)):
        yield Variant("bucket set", what, "b.yaml", text, pack + ["--requests", TINY_REQUESTS, "--buckets", "{f}"])
    spec = (f"name: s\nconfig: {TINY}\nworkload: {EXAMPLE}\nset:\n  mxu.count: 1\n"
            "grid:\n  mxu.rows: [4, 8]\nmetrics:\n  - totals.cycles\n")
    for what, text in yaml_variants(spec):
        yield Variant("sweep spec", what, "s.yaml", text, [systolic, "sweep", "{f}", "-o", "{out}", "--dry-run", "-q"])
    for kind, argv in (("chip config", run_tiny[:3] + ["{dir}"] + run_tiny[4:] + ["-w", EXAMPLE]),
                       ("GEMM list", run_tiny + ["-w", "{dir}"]), ("trace", run_tiny + ["-t", "{dir}"]),
                       ("bucket set", pack + ["--requests", TINY_REQUESTS, "--buckets", "{dir}"])):
        yield Variant(kind, "a folder, not a file", None, None, argv)


# ----------------------------------------------------------------------------- checks

def outcome(v, systolic, work, sanitized):
    """(ok, note) for one variant."""
    case = tempfile.mkdtemp(dir=work)
    out = os.path.join(case, "out")
    path = os.path.join(case, v.name) if v.name else None
    if path:
        with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(v.text)
    os.makedirs(os.path.join(case, "folder"))
    argv = [a.replace("{f}", path or "").replace("{out}", out).replace("{dir}", os.path.join(case, "folder"))
            for a in v.argv]
    env = dict(os.environ, SC_COPYRIGHT_MESSAGE="DISABLE", SYSTOLIC_SWEEP_PROG="systolic sweep")
    try:
        r = subprocess.run(argv, capture_output=True, text=True, errors="replace", timeout=60, env=env, cwd=case)
    except subprocess.TimeoutExpired:
        return False, "hang (killed after 60 s)"
    err = r.stderr.strip()
    lines = err.splitlines()
    named = (v.name and v.name in err) or (not v.name and ("--set" in err or "folder" in err or "director" in err))
    located = re.search(r":\d+:|'[^']+'|--\w|director|folder|empty|expected", err)
    wrote = os.path.isdir(out) and os.listdir(out)
    if sanitized and re.search(r"runtime error:|AddressSanitizer|LeakSanitizer", err):
        return False, "sanitizer report: " + next(l for l in lines if "error" in l.lower())[:200]
    if r.returncode != 2:
        return False, f"exit {r.returncode}: {lines[-1][:200] if lines else '(no message)'}"
    if len(lines) != 1 or not lines[0].startswith("systolic: error: "):
        return False, f"message is not one line: {err[:200]!r}"
    if not named or not located:
        return False, f"message does not name the file and a line or key: {err[:200]}"
    if wrote:
        return False, f"left output: {os.listdir(out)}"
    return True, lines[0][len("systolic: error: "):].replace(case + "/", "").replace(ROOT + "/", "")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--systolic", default=os.path.join(ROOT, "build", "systolic"))
    parser.add_argument("--table", help="write the outcome table (Markdown) here")
    parser.add_argument("--only", help="only this kind of input, e.g. 'trace'")
    parser.add_argument("--skip", action="append", default=[], help="leave out this kind of input (repeatable)")
    parser.add_argument("--sanitized", action="store_true", help="also fail on a sanitizer report")
    parser.add_argument("--quiet", action="store_true", help="print only failures and the summary")
    parser.add_argument("--jobs", "-j", type=int, default=1, help="variants run at once (default 1)")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="systolic-bad-inputs-")
    rows, failures = [], []
    try:
        chosen = [v for v in variants(os.path.abspath(args.systolic), work)
                  if not (args.only and v.kind != args.only) and v.kind not in args.skip]
        run_one = functools.partial(outcome, systolic=os.path.abspath(args.systolic), work=work,
                                    sanitized=args.sanitized)
        # Each variant is its own process in its own folder: threads only wait on them. map()
        # keeps the corpus order, so the table is the same whatever --jobs is.
        with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
            for v, (ok, note) in zip(chosen, pool.map(run_one, chosen)):
                rows.append((v.kind, v.what, ok, note))
                if not ok:
                    failures.append(rows[-1])
                if not args.quiet or not ok:
                    print(f"{'ok  ' if ok else 'FAIL'} {v.kind}: {v.what}: {note}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    kinds = collections.Counter(r[0] for r in rows)
    print(f"{len(rows)} variants over {len(kinds)} inputs, {len(rows) - len(failures)} refused as they should be, "
          f"{len(failures)} not")
    if args.table:
        with open(args.table, "w", encoding="utf-8") as f:
            f.write("| input | variant | outcome | message (exit 2 unless marked) |\n|---|---|---|---|\n")
            for kind, what, ok, note in rows:
                cell = note.replace("|", "\\|").replace("\n", " ")
                f.write(f"| {kind} | {what.replace('|', '/')} | {'refused' if ok else '**FAIL**'} | {cell} |\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
