"""The `systolic` Python module (docs/python.md): many runs in one process give what separate
CLI runs give, bad input raises systolic.InputError with the CLI's message and the interpreter
goes on, and the GIL is released while simulating.

The build is found through $SYSTOLIC_BUILD (default <repo>/build); the module is
<build>/python/systolic."""
import json
import os
import pathlib
import pickle
import subprocess
import threading
import time

import pytest

from conftest import REPO, SYSTOLIC as CLI, require_python_module

systolic = require_python_module()

V4I = REPO / "configs" / "tpu-v4i.yaml"
TINY = REPO / "configs" / "tiny-4x4.yaml"
GPT2 = REPO / "traces" / "gemms" / "gpt2.yaml"
EXAMPLE = REPO / "traces" / "gemms" / "example.yaml"
RESNET = REPO / "traces" / "topologies" / "resnet18.csv"
EXACT = REPO / "tests" / "py" / "data" / "exact.yaml"  # exact model, shape set per test


def cli(*args, check=True):
    if not CLI.exists():
        pytest.skip(f"{CLI} is not built")
    env = dict(os.environ, SC_COPYRIGHT_MESSAGE="DISABLE")
    proc = subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True, env=env,
                          timeout=300)
    if check and proc.returncode != 0:
        raise AssertionError(f"systolic {args} failed ({proc.returncode}): {proc.stderr}")
    return proc


def cli_report(tmp_path, config, workload, overrides=()):
    out = tmp_path / f"cli{len(list(tmp_path.iterdir()))}"
    sets = [a for o in overrides for a in ("--set", o)]
    proc = cli("run", "-c", config, "-w", workload, *sets, "-o", out)
    return json.loads((out / "report.json").read_text()), proc.stdout


def cli_error(*args):
    proc = cli(*args, check=False)
    assert proc.returncode == 2, proc.stderr
    line = proc.stderr.strip()
    assert line.startswith("systolic: error: ")
    return line[len("systolic: error: "):]


CASES = [  # (config, workload, overrides as --set strings, the same as a dict)
    (V4I, GPT2, [], {}),
    (TINY, EXAMPLE, [], {}),  # the exact model: a different chip build in between
    (V4I, GPT2, ["mxu.rows=64", "mxu.dtype=int8"], {"mxu.rows": 64, "mxu.dtype": "int8"}),
    (V4I, RESNET, ["mxu.count=2", "clock_mhz=940.5"], {"mxu": {"count": 2}, "clock_mhz": 940.5}),
]


def test_many_runs_in_one_process_equal_separate_cli_runs(tmp_path):
    expected = [cli_report(tmp_path, c, w, sets) for c, w, sets, _ in CASES]
    # Twice over, interleaved: nothing carries over from one run to the next.
    for _ in range(2):
        for (config, workload, _, overrides), (report, stdout) in zip(CASES, expected):
            cfg = systolic.load_config(str(config), overrides)
            res = systolic.run(cfg, workload=str(workload))
            assert res.to_dict() == report
            # The CLI's summary, then the line naming the files it wrote.
            summary, wrote = stdout.rsplit("wrote: ", 1)
            assert res.summary() == summary and wrote.startswith(str(tmp_path))


def test_result_json_is_the_cli_file(tmp_path):
    out = tmp_path / "cli"
    cli("run", "-c", V4I, "-w", GPT2, "-o", out, "-q")
    res = systolic.run(str(V4I), str(GPT2))
    assert res.to_json() == (out / "report.json").read_text()
    path = res.write(tmp_path / "py")
    assert pathlib.Path(path).read_bytes() == (out / "report.json").read_bytes()


def test_override_forms_and_with_overrides():
    a = systolic.load_config(V4I, {"mxu.rows": 64, "memory.ideal": False})
    b = systolic.load_config(V4I, {"mxu": {"rows": 64}, "memory": {"ideal": False}})
    c = systolic.load_config(V4I, ["mxu.rows=64", "memory.ideal=false"])
    d = systolic.load_config(V4I).with_overrides({"mxu.rows": 64})
    assert a == b == c == d
    assert a.to_dict()["mxu"]["rows"] == 64
    assert a.to_dict() == json.loads(cli("config", "-c", V4I, "--set", "mxu.rows=64").stdout)
    assert d.overrides == ["mxu.rows=64"] and d.path == str(V4I)
    assert pickle.loads(pickle.dumps(a)) == a
    with pytest.raises(TypeError):
        systolic.load_config(V4I, {"mxu.rows": [1, 2]})


@pytest.mark.parametrize("overrides,cli_args", [
    ({"mxu.rowz": 4}, ["--set", "mxu.rowz=4"]),
    ({"mxu.rows": 0}, ["--set", "mxu.rows=0"]),
    ({"mxu.dtype": "int4"}, ["--set", "mxu.dtype=int4"]),
    (["mxu.rows"], ["--set", "mxu.rows"]),
])
def test_bad_config_raises_input_error_with_the_cli_message(overrides, cli_args):
    message = cli_error("run", "-c", V4I, "-w", GPT2, *cli_args, "-o", "/nonexistent/x")
    with pytest.raises(systolic.InputError) as err:
        systolic.load_config(V4I, overrides)
    assert str(err.value) == message
    assert isinstance(err.value, ValueError)
    # The interpreter is fine and the next run works.
    assert systolic.run(systolic.load_config(TINY), EXAMPLE).cycles > 0


def test_bad_files_raise_input_error_with_the_cli_message(tmp_path):
    missing = tmp_path / "nope.yaml"
    assert str(pytest.raises(systolic.InputError, systolic.load_config, missing).value) == \
        cli_error("config", "-c", missing)
    bad = tmp_path / "bad.yaml"
    bad.write_text("gemms:\n  - {name: a, m: 4, k: -1, n: 4}\n")
    with pytest.raises(systolic.InputError) as err:
        systolic.run(systolic.load_config(TINY), bad)
    assert str(err.value) == cli_error("run", "-c", TINY, "-w", bad, "-o", tmp_path / "o")
    assert systolic.run(TINY, EXAMPLE).cycles > 0


def test_gil_is_released_while_simulating(tmp_path):
    # The exact model on a 128x128 array: long enough to see another thread make progress.
    wl = tmp_path / "long.yaml"
    wl.write_text("gemms:\n  - {name: g, m: 98304, k: 128, n: 128}\n")
    cfg = systolic.load_config(EXACT, {"mxu.rows": 128, "mxu.cols": 128})
    ticks = []
    stop = threading.Event()

    def count():
        while not stop.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.002)

    t = threading.Thread(target=count)
    t.start()
    try:
        time.sleep(0.02)
        start = time.monotonic()
        res = systolic.run(cfg, wl)
        end = time.monotonic()
    finally:
        stop.set()
        t.join()
    assert res.cycles > 98304
    assert end - start > 0.15, "the run was too short to tell"
    during = [x for x in ticks if start < x < end]
    # With the GIL held the thread could not tick at all until the run returned.
    assert len(during) >= 0.25 * (end - start) / 0.002, (len(during), end - start)


def test_frames_and_pending_parameters():
    res = systolic.run(V4I, GPT2)
    layers = res.layers
    assert list(layers["name"]) == [l["name"] for l in res.to_dict()["chips"][0]["layers"]]
    assert layers["cycles"].max() <= res.cycles
    assert {"mxu0", "mxu1", "mxu2", "mxu3"} <= set(res.engines["name"])
    assert res.totals["macs"] == int(layers["macs"].sum())
    # A plain run has no per-bucket rows: one sentence says where they come from.
    with pytest.raises(AttributeError, match=r"single run \(systolic.run\).*systolic.pack\("):
        res.buckets
    # A bucket applies to transformer models only, with the CLI's message.
    with pytest.raises(systolic.InputError, match="--bucket applies to transformer model files"):
        systolic.run(V4I, GPT2, bucket="1x1024")
    again = pickle.loads(pickle.dumps(res))
    assert again.to_dict() == res.to_dict() and again.summary() == res.summary()


def test_compile_and_run_a_trace_like_the_cli(tmp_path):
    cfg = systolic.load_config(TINY)
    program = systolic.compile(cfg, EXAMPLE, output=tmp_path / "py.trace")
    d = program.to_dict()
    assert [l["name"] for l in d["layers"]] == ["square", "tall", "narrow"]
    assert program.num_instructions == sum(s["instructions"] for s in d["streams"]) > 0
    cli("compile", "-c", TINY, "-w", EXAMPLE, "-o", tmp_path / "cli.trace")
    assert (tmp_path / "py.trace").read_text() == (tmp_path / "cli.trace").read_text()
    assert program.to_trace() == (tmp_path / "cli.trace").read_text()
    out = tmp_path / "out"
    cli("run", "-c", TINY, "-t", tmp_path / "cli.trace", "-o", out, "-q")
    res = systolic.run(cfg, trace=tmp_path / "cli.trace")
    assert res.to_dict() == json.loads((out / "report.json").read_text())
    assert res.to_dict()["trace"]["compiled_for"]["dtypes"] == {"mxu.dtype": "int8"}
    # Another array than the one it was compiled for: refused with the key and both values.
    with pytest.raises(systolic.InputError, match=r"cli.trace:\d+: compiled for mxu.cols = 4, but the config has 8"):
        systolic.run(systolic.load_config(TINY, {"mxu.cols": 8}), trace=tmp_path / "cli.trace")
    with pytest.raises(systolic.InputError, match="give a workload"):
        systolic.run(cfg)
    with pytest.raises(systolic.InputError, match="give a workload"):
        systolic.run(cfg, EXAMPLE, trace=tmp_path / "cli.trace")


def test_timeline_and_vcd_are_the_cli_s_files(tmp_path):
    # run(timeline=, vcd=) take the CLI's --timeline and --vcd through the same pipeline.
    res = systolic.run(TINY, EXAMPLE, timeline=tmp_path / "py.json", vcd=tmp_path / "py.vcd")
    cli("run", "-c", TINY, "-w", EXAMPLE, "-o", tmp_path / "cli", "-q", "--timeline", tmp_path / "cli.json",
        "--vcd", tmp_path / "cli.vcd")
    assert (tmp_path / "py.json").read_bytes() == (tmp_path / "cli.json").read_bytes()
    assert res.to_json() == (tmp_path / "cli" / "report.json").read_text()
    py_vcd, cli_vcd = (tmp_path / "py.vcd").read_text(), (tmp_path / "cli.vcd").read_text()
    assert "$enddefinitions" in py_vcd
    # The VCD header carries the date; the signals and their values are the same.
    assert py_vcd[py_vcd.index("$enddefinitions"):] == cli_vcd[cli_vcd.index("$enddefinitions"):]


def test_timeline_window_sample_and_limit_are_the_cli_s(tmp_path):
    # run(timeline_window=, timeline_sample=, timeline_limit_mib=) are --timeline-window,
    # --timeline-sample and --timeline-limit: the same file, the same refusals.
    systolic.run(V4I, GPT2, timeline=tmp_path / "py.json", timeline_window="20000:30000", timeline_sample=3)
    cli("run", "-c", V4I, "-w", GPT2, "-o", tmp_path / "cli", "-q", "--timeline", tmp_path / "cli.json",
        "--timeline-window", "20000:30000", "--timeline-sample", "3")
    assert (tmp_path / "py.json").read_bytes() == (tmp_path / "cli.json").read_bytes()
    assert json.loads((tmp_path / "py.json").read_text())["otherData"]["sample_every"] == 3
    for kwargs, message in [({"timeline_sample": 0}, "timeline_sample=0: expected an integer in"),
                            ({"timeline_window": "5:3"}, "B must be greater than A"),
                            ({"timeline_limit_mib": 0.1}, "more than --timeline-limit, 0.1 MiB"),
                            ({"timeline_limit_mib": 0}, "timeline_limit_mib=0: expected a number > 0")]:
        with pytest.raises(systolic.InputError, match=message):
            systolic.run(V4I, GPT2, timeline=tmp_path / "bad.json", **kwargs)
        assert not (tmp_path / "bad.json").exists()
    with pytest.raises(systolic.InputError, match="need timeline="):
        systolic.run(V4I, GPT2, timeline_sample=4)


def test_transformer_model_at_a_bucket_equals_the_cli(tmp_path):
    model = REPO / "traces" / "models" / "bert-base.yaml"
    res = systolic.run(V4I, model, bucket="2x128")
    out = tmp_path / "cli"
    subprocess.run([str(CLI), "run", "-c", str(V4I), "-w", str(model), "--bucket", "2x128",
                    "-o", str(out), "-q"], check=True)
    assert res.to_dict() == json.loads((out / "report.json").read_text())
    decode = systolic.run(V4I, REPO / "traces" / "models" / "gpt2.yaml", bucket="4x512", phase="decode")
    assert decode.to_dict()["workload"]["name"] == "gpt2@decode-4x512"
    # (B, S) as a pair is the same bucket; anything else is one sentence, not a pybind signature.
    assert systolic.run(V4I, model, bucket=(2, 128)).to_dict() == res.to_dict()
    for bad in [(2, 128, 1), 128, (2.0, 128)]:
        with pytest.raises(TypeError, match=r"^bucket: expected 'BxS' \(e.g. '1x128'\) or a \(B, S\) pair") as e:
            systolic.run(V4I, model, bucket=bad)
        assert "incompatible function arguments" not in str(e.value)


def test_pack_equals_the_cli(tmp_path):
    model = REPO / "traces" / "models" / "llama2-7b.yaml"
    log = REPO / "traces" / "requests" / "azure-llm-2023" / "AzureLLMInferenceTrace_code.csv"
    sets = [REPO / "traces" / "buckets" / "llama2-4k.yaml", REPO / "traces" / "buckets" / "llama2-pow2.yaml"]
    # A what-if part: Llama-2-7B and its KV cache do not fit the real v4i's 8 GiB.
    v4i_32g = systolic.load_config(V4I, {"hbm.capacity_bytes": "32 GiB"})
    res = systolic.pack(v4i_32g, model, log, sets, packer="ffd", window_ms=50, overflow="split")
    out = tmp_path / "cli"
    subprocess.run([str(CLI), "pack", "-c", str(V4I), "--set", "hbm.capacity_bytes=32 GiB", "-m", str(model),
                    "--requests", str(log),
                    "--buckets", str(sets[0]), "--buckets", str(sets[1]), "--policy", "ffd",
                    "--window", "50", "--overflow", "split", "-o", str(out), "-q"], check=True)
    assert res.to_dict() == json.loads((out / "report.json").read_text())
    assert list(res.buckets.columns)[:2] == ["phase", "shape"]
    # A replay has no per-layer rows: one sentence names what it has, not a KeyError.
    for section in ("layers", "engines"):
        with pytest.raises(AttributeError, match=rf"^{section}: this Result is a request-log replay .*\.buckets"):
            getattr(res, section)
    assert "static-shape tax against dynamic" in res.summary() and "TTFT" in res.summary()


def test_multichip_runs_from_python_shard_every_mac_and_repeat_bit_for_bit():
    # Llama-2-7B over the 8 chips of a v5e 2x4 torus, twice in one process (a fresh SystemC
    # context each time): the same report, and the chips' MACs add up to the one-chip run's.
    v5e = systolic.load_config(str(REPO / "configs/tpu-v5e-8.yaml"))
    model = str(REPO / "traces/models/llama2-7b.yaml")
    first = systolic.run(v5e, model, bucket="1x256", tp=8).to_dict()
    again = systolic.run(v5e, model, bucket="1x256", tp=8).to_dict()
    assert first == again
    assert len(first["chips"]) == 8 and first["collectives"]
    # One chip with room for all 13.5 GB: a what-if, the real v4i has 8 GiB.
    big_v4i = systolic.load_config(str(REPO / "configs/tpu-v4i.yaml"), {"hbm.capacity_bytes": "16 GiB"})
    single = systolic.run(big_v4i, model, bucket="1x256").to_dict()
    assert first["totals"]["macs"] == single["totals"]["macs"]
    with pytest.raises(systolic.InputError, match="--tp 3"):
        systolic.run(v5e, model, bucket="1x256", tp=3)
