"""Constraints and Pareto fronts over sweep results (docs/sweeps.md, "Constraints and the
Pareto front").

    constraints: ["area_mm2 <= 400", "power_w <= 175"]
    pareto: [tokens_per_s:max, area_mm2:min]

A name is a results column: exactly (`area_mm2.total`), as a section's total (`area_mm2` ->
`area_mm2.total`), or as the one column ending in `.NAME` (`tokens_per_s` ->
`efficiency.tokens_per_s`). A point is feasible when it ran and meets every constraint; the
front is the feasible points no other feasible point dominates (no worse in every objective,
better in one). Used by systolic.sweep and callable on any DataFrame of results.
"""

import difflib
import math
import operator
import re

import systolic

__all__ = ["ParetoError", "Constraint", "Objective", "resolve_column", "parse_constraint",
           "parse_objective", "pareto_mask", "annotate"]

_OPS = {"<=": operator.le, ">=": operator.ge, "==": operator.eq, "!=": operator.ne,
        "<": operator.lt, ">": operator.gt}
_CONSTRAINT = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*(<=|>=|==|!=|<|>)\s*(\S+)\s*$")
DIRECTIONS = ("max", "min")


class ParetoError(systolic.InputError):
    """A constraint or objective that cannot be used; the message says which and why."""


def resolve_column(name, columns):
    """The column `name` means, or ParetoError naming the close ones."""
    columns = list(columns)
    if name in columns:
        return name
    if f"{name}.total" in columns:
        return f"{name}.total"
    tails = [c for c in columns if c.endswith("." + name)]
    if len(tails) == 1:
        return tails[0]
    if len(tails) > 1:
        raise ParetoError(f"'{name}' is ambiguous: " + ", ".join(tails) + "; give the whole name")
    # The short names resolve too: a section of a total (area_mm2), a column's last part.
    names = columns + [c[:-len(".total")] for c in columns if c.endswith(".total")]
    names += [c.rsplit(".", 1)[-1] for c in columns]
    close = difflib.get_close_matches(name, list(dict.fromkeys(names)), n=1, cutoff=0.6)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    raise ParetoError(f"no results column '{name}'{hint}: the sweep's metrics and swept keys "
                      f"give {len(columns)} columns (add the metric to `metrics`)")


class Constraint:
    def __init__(self, text, column, op, value):
        self.text, self.column, self.op, self.value = text, column, op, value

    def holds(self, v):
        return v is not None and not _missing(v) and _OPS[self.op](v, self.value)


class Objective:
    def __init__(self, text, column, direction):
        self.text, self.column, self.direction = text, column, direction


def parse_constraint(text, columns):
    """'COLUMN OP NUMBER' with OP one of <= >= < > == !=."""
    m = _CONSTRAINT.match(str(text))
    if not m:
        raise ParetoError(f"constraint '{text}': expected NAME OP NUMBER, e.g. 'area_mm2 <= 400' "
                          f"(OP one of {' '.join(_OPS)})")
    name, op, raw = m.groups()
    try:
        value = float(raw)
    except ValueError:
        raise ParetoError(f"constraint '{text}': expected a number after '{op}', got '{raw}'") from None
    try:
        return Constraint(text, resolve_column(name, columns), op, value)
    except ParetoError as e:
        raise ParetoError(f"constraint '{text}': {e}") from None


def parse_objective(text, columns):
    """'NAME:max' or 'NAME:min'."""
    name, sep, direction = str(text).strip().rpartition(":")
    if not sep or not name:
        raise ParetoError(f"objective '{text}': expected NAME:max or NAME:min, e.g. tokens_per_s:max")
    if direction not in DIRECTIONS:
        close = difflib.get_close_matches(direction, DIRECTIONS, n=1, cutoff=0.5)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        raise ParetoError(f"objective '{text}': direction '{direction}' is not max or min{hint}")
    try:
        return Objective(text, resolve_column(name.strip(), columns), direction)
    except ParetoError as e:
        raise ParetoError(f"objective '{text}': {e}") from None


def parse_objectives(texts, columns):
    if isinstance(texts, str):
        texts = [t for t in texts.split(",") if t.strip()]
    objectives = [parse_objective(t, columns) for t in texts]
    if objectives and not 2 <= len(objectives) <= 3:
        raise ParetoError(f"pareto: expected two or three objectives, got {len(objectives)}")
    if len({o.column for o in objectives}) != len(objectives):
        raise ParetoError("pareto: an objective is listed twice")
    return objectives


def _missing(v):
    return v is None or (isinstance(v, float) and math.isnan(v))


def pareto_mask(points, directions):
    """For each point (a tuple of objective values), whether no other point dominates it.
    directions: 'max' or 'min' per objective. O(n^2), fine for sweeps of thousands."""
    signs = [1.0 if d == "max" else -1.0 for d in directions]
    keyed = [tuple(s * float(v) for s, v in zip(signs, p)) for p in points]
    mask = []
    for i, a in enumerate(keyed):
        dominated = any(all(x >= y for x, y in zip(b, a)) and any(x > y for x, y in zip(b, a))
                        for j, b in enumerate(keyed) if j != i)
        mask.append(not dominated)
    return mask


def annotate(cols, rows, constraints, objectives, group_by=()):
    """(cols, rows) with `feasible` (when there are constraints) and `pareto` (when there are
    objectives) columns added before `seconds`. Rows that did not run are neither. One front
    per group of rows sharing the `group_by` columns (a sweep: the workload and its shape, so
    a decode step's tokens/s is never weighed against a prefill's)."""
    if not constraints and not objectives:
        return cols, rows
    index = {c: i for i, c in enumerate(cols)}
    status = index["status"]
    feasible = []
    for r in rows:
        ok = r[status] == "ok" and all(c.holds(r[index[c.column]]) if c.column in index else False
                                       for c in constraints)
        feasible.append(ok)
    extra, values = [], [[v] for v in feasible] if constraints else [[] for _ in rows]
    if constraints:
        extra.append("feasible")
    if objectives:
        extra.append("pareto")
        groups = {}
        for i, r in enumerate(rows):
            if feasible[i] and all(o.column in index and not _missing(r[index[o.column]])
                                   for o in objectives):
                key = tuple(str(r[index[g]]) for g in group_by if g in index)
                groups.setdefault(key, []).append(i)
        on = set()
        for members in groups.values():
            front = pareto_mask([[rows[i][index[o.column]] for o in objectives] for i in members],
                                [o.direction for o in objectives])
            on |= {i for i, f in zip(members, front) if f}
        for i in range(len(rows)):
            values[i].append(i in on)
    at = index.get("seconds", len(cols))
    return (cols[:at] + extra + cols[at:],
            [r[:at] + v + r[at:] for r, v in zip(rows, values)])
