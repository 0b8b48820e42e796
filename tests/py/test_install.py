"""`cmake --install` makes a tool: `systolic` on PATH and the Python package where Debian's
python3 finds it; an interpreter that cannot use the package says so at import (issue #17)."""
import json
import os
import subprocess

import pytest

from conftest import BUILD, REPO, require_python_module

require_python_module()

ENV = {**os.environ, "SC_COPYRIGHT_MESSAGE": "DISABLE"}


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    prefix = tmp_path_factory.mktemp("prefix")
    subprocess.run(["cmake", "--install", str(BUILD), "--prefix", str(prefix)], check=True,
                   capture_output=True, text=True)
    return prefix


def site(prefix):
    return prefix / "lib" / "python3" / "dist-packages"


def test_installed_command_runs_like_the_built_one(prefix, tmp_path):
    args = ["run", "-c", REPO / "configs" / "tiny-4x4.yaml", "-w", REPO / "traces" / "gemms" / "example.yaml", "-q"]
    for exe, out in ((prefix / "bin" / "systolic", tmp_path / "installed"), (BUILD / "systolic", tmp_path / "built")):
        subprocess.run([str(exe), *map(str, args), "-o", str(out)], check=True, env=ENV, cwd=tmp_path)
    installed = json.loads((tmp_path / "installed" / "report.json").read_text())
    built = json.loads((tmp_path / "built" / "report.json").read_text())
    assert installed == built


def test_installed_sweep_finds_the_installed_package(prefix, tmp_path):
    # No build tree beside the installed executable: the package must come from <prefix>/lib.
    assert not (prefix / "bin" / "python").exists()
    proc = subprocess.run([str(prefix / "bin" / "systolic"), "sweep", "--help"], env=ENV, cwd=tmp_path,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "usage" in proc.stdout.lower()


def test_package_imports_from_the_install_with_debians_python(prefix, tmp_path):
    env = {**ENV, "PYTHONPATH": str(site(prefix))}
    code = "import systolic, sys; print(systolic.__file__)"
    proc = subprocess.run(["/usr/bin/python3", "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().startswith(str(site(prefix)))


def test_an_interpreter_without_pandas_fails_at_import_in_one_sentence(prefix, tmp_path):
    # -S: no site directories, so numpy and pandas (Debian's dist-packages) are missing, as in
    # a pyenv or venv python3; the package itself is still on PYTHONPATH.
    env = {**ENV, "PYTHONPATH": str(site(prefix))}
    proc = subprocess.run(["/usr/bin/python3", "-S", "-c", "import systolic"], env=env, cwd=tmp_path,
                          capture_output=True, text=True)
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: systolic was built for /usr/bin/python3 and needs numpy")
    assert last.endswith("run it with /usr/bin/python3")
