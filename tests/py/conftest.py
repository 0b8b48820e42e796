"""Shared fixtures: where the build and the repository are."""
import functools
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile

import pytest


def pytest_configure(config):
    # Debian's dask/distributed starts tornado's loop the deprecated way; the warning is theirs,
    # not ours, and would hide one of ours in the summary.
    config.addinivalue_line(
        "filterwarnings", "ignore:make_current is deprecated:DeprecationWarning:tornado.*")


REPO = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("SYSTOLIC_BUILD", REPO / "build")).resolve()  # a relative path would make test_docs' build/ symlink point at itself
SYSTOLIC = BUILD / "systolic"
PYDIR = BUILD / "python"  # the importable `systolic` package of the build


def require_python_module():
    """Imports the build's `systolic` module, or skips the calling test module when it is not
    built (call at module level)."""
    if not (PYDIR / "systolic" / "__init__.py").exists():
        pytest.skip(f"the systolic Python module is not built in {PYDIR} (needs pybind11-dev; "
                    f"set SYSTOLIC_BUILD to another build dir)", allow_module_level=True)
    if str(PYDIR) not in sys.path:
        sys.path.insert(0, str(PYDIR))
    import systolic
    return systolic


@pytest.fixture(scope="session")
def systolic_bin():
    if not SYSTOLIC.exists():
        pytest.skip(f"{SYSTOLIC} is not built: run ./scripts/test.sh")
    return SYSTOLIC


def run_cli(*args, check=True, cwd=None):
    """Runs the systolic binary; returns the CompletedProcess (text mode)."""
    env = dict(os.environ, SC_COPYRIGHT_MESSAGE="DISABLE")
    proc = subprocess.run([str(SYSTOLIC), *map(str, args)], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=600)
    if check and proc.returncode != 0:
        raise AssertionError(f"systolic {' '.join(map(str, args))} failed "
                             f"({proc.returncode}):\n{proc.stderr}")
    return proc


def assert_refused(proc, message, *unwritten):
    """What a bad input gets (docs/reliability.md): exit 2, an error containing `message`, and
    none of `unwritten` (the outputs the command would have written) on disk."""
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr, proc.stderr
    for path in unwritten:
        assert not pathlib.Path(path).exists(), f"{path} was written"


def run_report(*args, outdir):
    run_cli("run", *args, "-o", outdir, "-q")
    return json.loads((pathlib.Path(outdir) / "report.json").read_text())


@functools.lru_cache(maxsize=None)
def compiled_header(config, *args):
    """The header `systolic compile` writes for `config` (and --set args): its lines before the
    'chip' line, which a hand-written trace for that config starts with."""
    with tempfile.TemporaryDirectory() as tmp:
        trace = pathlib.Path(tmp) / "header.trace"
        run_cli("compile", "-c", config, "-w", REPO / "traces" / "gemms" / "example.yaml", *args, "-o", trace)
        lines = trace.read_text().splitlines()
    return tuple(lines[:next(i for i, line in enumerate(lines) if line.startswith("chip "))])


def model_with(tmp_path, preset, **keys):
    """A model file from traces/models with some top-level (or moe:) keys replaced, e.g.
    fewer layers so the run stays short."""
    text = (REPO / "traces" / "models" / preset).read_text()
    for key, value in keys.items():
        text, n = re.subn(rf"^(\s*{key}:\s*)\S+", rf"\g<1>{value}", text, flags=re.M)
        assert n == 1, f"{key} not found once in {preset}"
    path = tmp_path / preset
    path.write_text(text)
    return path
