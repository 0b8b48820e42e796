"""Shared fixtures: where the build and the repository are."""
import json
import os
import pathlib
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("SYSTOLIC_BUILD", REPO / "build"))
SYSTOLIC = BUILD / "systolic"


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


def run_report(*args, outdir):
    run_cli("run", *args, "-o", outdir, "-q")
    return json.loads((pathlib.Path(outdir) / "report.json").read_text())
