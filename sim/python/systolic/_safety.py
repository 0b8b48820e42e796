"""Input and output safety for the Python entry points (docs/reliability.md).

Kept apart from the sweep's logic so that sweep.py only calls it:
  * strict_compose_load: yaml.compose and yaml.safe_load with a loader that refuses a key
    given twice in a map (PyYAML keeps the last one silently, so two `grid:` keys would drop
    an axis) and reads integers as decimal only.
  * check_point_count: a sweep's points are counted before they are expanded.
  * check_overrides: a spec's `set:` is checked against the config once, before any point.
  * check_name: a name from a spec becomes a folder under out/sweeps/, so it must be one plain
    path component ("../../escape" would write outside).
  * die_with_parent: a pool worker asks the kernel to end it when its parent dies, so killing
    the sweep process does not leave workers simulating for minutes.
"""
import ctypes
import functools
import signal
import sys


@functools.lru_cache(maxsize=None)
def strict_loader():
    """A yaml.SafeLoader subclass that refuses a key given twice, naming the lines of both, and
    reads only decimal integers as numbers (YAML 1.1 would read 0x10 as 16, 010 as 8 and 1:30
    as 90; here they stay strings, which a number key then refuses). Built on first use: pool
    workers import this module and need no yaml."""
    import re

    import yaml

    def construct_mapping(loader, node):
        seen = {}
        for key_node, _ in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                continue  # a list or map as a key: the reader after us refuses it
            if key_node.value in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key '{key_node.value}' (first on line "
                    f"{seen[key_node.value] + 1})", key_node.start_mark)
            seen[key_node.value] = key_node.start_mark.line
        return yaml.SafeLoader.construct_mapping(loader, node)

    class StrictLoader(yaml.SafeLoader):
        pass

    StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, construct_mapping)
    int_tag = "tag:yaml.org,2002:int"
    StrictLoader.yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != int_tag]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
    StrictLoader.add_implicit_resolver(int_tag, re.compile(r"^[-+]?(0|[1-9][0-9]*)$"), list("-+0123456789"))
    return StrictLoader


def strict_compose_load(text):
    """(node, data) of a YAML text through strict_loader(). Every error is a yaml.YAMLError
    with a problem_mark (a character YAML does not allow gets the line it is on)."""
    import yaml

    loader = strict_loader()
    try:
        return yaml.compose(text, Loader=loader), yaml.load(text, Loader=loader)  # noqa: S506
    except yaml.reader.ReaderError as e:
        line = text.count("\n", 0, e.position)
        raise yaml.MarkedYAMLError(
            problem=f"character {e.character!r} is not allowed in YAML",
            problem_mark=yaml.Mark("<spec>", e.position, line, 0, None, None)) from None


# Points a sweep may have before it is refused (--max-points). Every point is resolved (its
# config loaded) before the first runs, and the sweep bench runs 133 points/s on 2 cores
# (docs/performance.md), so 100,000 points are ~15 minutes of work.
MAX_POINTS = 100_000


def check_point_count(spec, error, limit=MAX_POINTS):
    """Raises error(...) when `spec` has more points than `limit`, counted before expanding."""
    count = len(spec.workloads) * max(1, len(spec.cases))
    for values in spec.grid.values():
        count *= len(values)
    if count > limit:
        raise error(f"{spec.source}: {count} points (workloads x list x grid), more than "
                    f"--max-points {limit}; raise it, or split the sweep")


def check_overrides(config, overrides, error):
    """Raises error(message) when `overrides`, applied to the config at path `config`, are
    refused: a `set:` value every point would fail on is a bad spec (exit 2), not a sweep of
    failed points."""
    import systolic

    try:
        systolic.load_config(config, overrides)
    except systolic.InputError as e:
        raise error(f"'set': {e}") from None


def one_line(message):
    """A message on one line (PyYAML's errors span several)."""
    return " ".join(str(message).split())


def check_name(name):
    """The problem with `name` as one folder name, or None when it is fine."""
    if name in (".", "..") or "/" in name or "\\" in name or "\0" in name:
        return f"expected a plain name (no '/', not '.' or '..'), got {name!r}"
    return None


_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def die_with_parent():
    """Linux: SIGTERM this process when the parent that started it exits (prctl(2),
    PR_SET_PDEATHSIG). Elsewhere a no-op: the pool then stops its workers at the next point."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        return
