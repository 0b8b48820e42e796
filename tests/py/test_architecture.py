"""The dependency rule (docs/architecture.md), checked on the source tree itself.

Layers: cli/python -> sim -> models. Inside each, folders depend on each other without a
cycle. The test reads every #include "..." of the project; it needs no build.
"""
import os
import re
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
FRONT_ENDS = ("sim/cli", "sim/python")


def sources():
    for top in ("models", "sim"):
        for path in sorted((ROOT / top).rglob("*")):
            if path.suffix in (".hpp", ".cpp"):
                yield path.relative_to(ROOT).as_posix()


def folder(path):
    """The folder a file belongs to: its directory (sim/workload/transformer, models/mxu)."""
    return os.path.dirname(path)


def includes():
    """(file, included project file) for every project include."""
    for src in sources():
        text = (ROOT / src).read_text(encoding="utf-8")
        for target in INCLUDE.findall(text):
            if target.startswith(("models/", "sim/")):
                yield src, target


def layer(path):
    if path.startswith(FRONT_ENDS):
        return 2
    return 1 if path.startswith("sim/") else 0


def against_the_direction(edges):
    bad = []
    for src, target in edges:
        if layer(target) > layer(src):
            bad.append(f"{src} includes {target} (a {['model', 'sim', 'front end'][layer(target)]} file)")
        elif layer(src) == 2 and folder(src) != folder(target) and layer(target) == 2:
            bad.append(f"{src} includes {target} (front ends do not include each other)")
    return bad


def folder_cycles(edges):
    """Strongly connected components with more than one folder (Tarjan)."""
    graph = defaultdict(set)
    for src, target in edges:
        a, b = folder(src), folder(target)
        if a != b:
            graph[a].add(b)
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(list(graph)):
        if v not in index:
            visit(v)
    return found


def test_includes_exist():
    missing = [f"{src} includes {t}" for src, t in includes() if not (ROOT / t).is_file()]
    assert not missing, "\n".join(missing)


def test_dependencies_flow_one_way():
    bad = against_the_direction(includes())
    assert not bad, "includes against cli/python -> sim -> models:\n" + "\n".join(bad)


def test_no_include_cycle_between_folders():
    cycles = folder_cycles(list(includes()))
    assert not cycles, "folders that depend on each other: " + "; ".join(" <-> ".join(c) for c in cycles)


# The checks themselves, on made-up trees: each must be able to fail.
def test_checks_catch_a_wrong_way_include_and_a_cycle():
    assert against_the_direction([("models/mxu/a.hpp", "sim/config/config.hpp")])
    assert against_the_direction([("sim/compile/a.cpp", "sim/cli/commands.hpp")])
    assert not against_the_direction([("sim/cli/a.cpp", "models/mxu/b.hpp")])
    assert folder_cycles([("models/a/x.hpp", "models/b/y.hpp"), ("models/b/y.hpp", "models/a/z.hpp")])
    assert not folder_cycles([("models/a/x.hpp", "models/b/y.hpp")])
