"""scripts/plot_serving.py and systolic.serving_plots: PNGs from small pack runs."""
import subprocess
import sys

import pytest

from conftest import REPO, require_python_module, run_cli
from test_serving_cli import BUCKETS, MODEL, TINY, burst_log, coarse_buckets

PNG = b"\x89PNG\r\n\x1a\n"
FIGURES = ["latency_cdf.png", "over_time.png", "waste_per_bucket.png"]


@pytest.fixture(scope="module")
def runs(systolic_bin, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("plots")
    coarse = coarse_buckets(tmp)
    folders = []
    for scheduler in ["continuous", "static"]:
        folders.append(tmp / scheduler)
        run_cli("pack", "-c", TINY, "-m", MODEL, "--requests", burst_log(tmp), "--buckets", BUCKETS,
                "--buckets", coarse, "--scheduler", scheduler, "-o", folders[-1], "-q")
    return tmp, folders


def check_pngs(paths):
    assert [p.name for p in paths] == FIGURES
    for p in paths:
        data = p.read_bytes()
        assert data.startswith(PNG) and len(data) > 10_000  # a drawn figure, not an empty canvas


def test_script_writes_three_nonempty_pngs(runs):
    tmp, folders = runs
    proc = subprocess.run([sys.executable, REPO / "scripts" / "plot_serving.py", *folders, "-o", tmp / "png"],
                          capture_output=True, text=True, check=True)
    paths = [tmp / "png" / line.split("/")[-1] for line in proc.stdout.split()]
    check_pngs(paths)


def test_script_refuses_a_folder_without_report(runs):
    tmp, _ = runs
    proc = subprocess.run([sys.executable, REPO / "scripts" / "plot_serving.py", tmp], capture_output=True, text=True)
    assert proc.returncode != 0 and "expected a folder written by systolic pack" in proc.stderr


def test_python_function_labels_each_configuration(runs):
    require_python_module()  # puts the build's package on sys.path
    from systolic.serving_plots import _configurations, plot_serving
    tmp, folders = runs
    check_pngs(plot_serving(folders, tmp / "py", labels=["cont", "stat"]))
    # Two folders x two bucket sets: four configurations, each with all 40 requests.
    configs = _configurations(folders, ["cont", "stat"])
    assert [c[0] for c in configs] == ["cont/tiny", "cont/coarse", "stat/tiny", "stat/coarse"]
    assert all(len(rows) == 40 for _, rows, _ in configs)
    with pytest.raises(ValueError, match="labels: expected one per folder"):
        plot_serving(folders, tmp / "py", labels=["only one"])
