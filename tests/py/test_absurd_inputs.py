"""Absurd-but-valid inputs from issue #20 that used to end in `internal error` (exit 1:
std::bad_alloc, max_size()) or a hang: each is now refused before any work with exit 2, the
estimate or the bound, and no output (docs/reliability.md, "Limits"). The budgets refuse from
closed-form estimates, so each case ends in well under a second; the subprocess timeout in
run_cli only guards against a return of the hang."""
import pytest

from conftest import REPO, run_cli

TINY = REPO / "configs" / "tiny-4x4.yaml"
V5E8 = REPO / "configs" / "tpu-v5e-8.yaml"
TINY_LM = (REPO / "tests" / "py" / "data" / "tiny-lm.yaml").read_text()

# A GEMM repeated 10^12 times: 128x128 int8 weights x 10^12 = 16,384,000 GB, far past HBM.
REPEAT_1E12 = "name: r\ngemms:\n  - {name: g, m: 128, k: 128, n: 128, repeat: 1000000000000}\n"

CASES = {
    # On one chip the HBM capacity check sees the weights first (128*128 B * 10^12).
    "repeat 1e12, one chip": (TINY, REPEAT_1E12, [], "16384000000032768 B"),
    # On 8 chips: one weight tile per repeat at least, 2 instructions each, with its activation
    # load and store 4; the 8 chips run one workload, whose program is held once (compile_system):
    # 10^12 * 4 = 4 x 10^12 instructions.
    "repeat 1e12, eight chips": (V5E8, REPEAT_1E12, [],
                                 "on 8 chips: compiles to at least 4000000000000 instructions"),
    # A 16M-token bucket (issue: std::bad_alloc) of a model whose max_seq allows it.
    "16M-token bucket": (TINY, TINY_LM.replace("max_seq: 64", "max_seq: 16777216"),
                         ["--bucket", "1x16777216"], "more than --max-instructions 1000000"),
    # 65,536 layers, the most 'layers' allows: 2.36 M instructions (1.18 GB, 12 s) compiled; the
    # estimate (activation loads and stores per tile included) is 1,638,405, past the 1 M default.
    "65,536 layers": (TINY, TINY_LM.replace("layers: 1", "layers: 65536"), ["--bucket", "1x8"],
                      "more than --max-instructions 1000000"),
    # 1,000,000 GEMMs (38 MB of YAML, 4.2 GB in yaml-cpp's nodes): refused by its size, unparsed.
    "1M-entry GEMM list": (TINY, "name: big\ngemms:\n" + "".join(
        f"  - {{name: g{i}, m: 8, k: 8, n: 8}}\n" for i in range(1_000_000)), [],
                           "bytes of YAML, more than --max-yaml-bytes 4194304"),
    # A 1M-layer model is outside the documented range of 'layers'.
    "1M layers": (TINY, TINY_LM.replace("layers: 1", "layers: 1048576"), ["--bucket", "1x8"],
                  "key 'layers': expected an integer in [1, 65536]"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_absurd_input_is_refused_before_the_work(tmp_path, systolic_bin, name):
    config, workload_text, args, expected = CASES[name]
    workload = tmp_path / "w.yaml"
    workload.write_text(workload_text)
    proc = run_cli("run", "-c", config, "-w", workload, *args, "-o", tmp_path / "o", "-q", check=False)
    assert proc.returncode == 2, proc.stderr
    assert expected in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()


def test_the_yaml_size_limit_is_raisable(tmp_path, systolic_bin):
    """--max-yaml-bytes names the limit the message gives; raised, the same file runs."""
    small = tmp_path / "w.yaml"  # larger than the config, which is read under the same limit
    small.write_text((REPO / "traces" / "gemms" / "example.yaml").read_text() + "#" * 100_000 + "\n")
    size = small.stat().st_size
    assert size > 2 * TINY.stat().st_size
    proc = run_cli("run", "-c", TINY, "-w", small, "--max-yaml-bytes", size - 1, "-o", tmp_path / "o", "-q",
                   check=False)
    assert proc.returncode == 2
    assert f"{size} bytes of YAML, more than --max-yaml-bytes {size - 1}" in proc.stderr
    run_cli("run", "-c", TINY, "-w", small, "--max-yaml-bytes", size, "-o", tmp_path / "o", "-q")
