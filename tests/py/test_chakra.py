"""Chakra execution traces (run --chakra DIR; docs/workloads.md, "ASTRA-sim and Chakra execution
traces"), read back with python3-protobuf through the schema the build compiled
(third_party/chakra/et_def.proto): one file per chip, one node per layer-table entry of the
compiled program, and dependency edges that the program's own semaphores allow."""
import shlex
import sys

import pytest

from conftest import BUILD, REPO, run_cli

TINY = REPO / "configs" / "tiny-4x4.yaml"


@pytest.fixture(scope="module")
def pb():
    generated = BUILD / "chakra"
    if not (generated / "et_def_pb2.py").exists():
        pytest.skip(f"{generated}/et_def_pb2.py is not built")
    sys.path.insert(0, str(generated))
    import et_def_pb2
    return et_def_pb2


def read_et(path, pb):
    """GlobalMetadata and the nodes of one file: messages each preceded by its length as a
    varint (Chakra's protolib.encodeMessage)."""
    data, pos, messages = path.read_bytes(), 0, []
    while pos < len(data):
        size = shift = 0
        while True:
            byte = data[pos]
            pos += 1
            size |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                break
        messages.append(data[pos:pos + size])
        pos += size
    assert pos == len(data)
    meta = pb.GlobalMetadata.FromString(messages[0])
    return meta, [pb.Node.FromString(m) for m in messages[1:]]


def program(trace_path):
    """The compiled trace's layer table [(index, name, kind)], per semaphore the layers whose
    instructions signal it and those whose instructions wait on it, and its messages to other
    chips [(layer, to, semaphore of the receiver)]."""
    layers, signals, waits, sends = [], {}, {}, []
    for line in trace_path.read_text().splitlines():
        tokens = shlex.split(line, comments=True)
        if not tokens:
            continue
        fields = dict(t.split("=", 1) for t in tokens[1:] if "=" in t and not t.startswith(("wait=", "signal=")))
        if tokens[0] == "layer":
            layers.append((int(tokens[1]), fields["name"], fields["kind"]))
        elif "layer" in fields:
            layer = int(fields["layer"])
            for t in tokens[1:]:
                if t.startswith("signal="):
                    signals.setdefault(t[7:], set()).add(layer)
                elif t.startswith("wait="):
                    waits.setdefault(t[5:].split(">=")[0], set()).add(layer)
                elif t.startswith("msg="):
                    to, _, sem = t[4:].split(",")[:3]
                    sends.append((layer, int(to), sem))
    return layers, signals, waits, sends


def check_edges_follow_semaphores(nodes, signals, waits):
    """Every edge p -> j: some instruction of j waits on a semaphore an instruction of p signals."""
    for node in nodes:
        for parent in node.data_deps:
            assert any(parent in signals.get(s, ()) and node.id in w for s, w in waits.items()), (parent, node.id)


def attrs(node):
    return {a.name: getattr(a, a.WhichOneof("value")) for a in node.attr}


def test_one_chip_gemm_chain(systolic_bin, tmp_path, pb):
    wl = tmp_path / "chain.yaml"
    wl.write_text("gemms:\n" + "".join(f"  - {{name: g{i}, m: {m}, k: 8, n: 8}}\n" for i, m in enumerate([8, 16, 4, 12])))
    trace = tmp_path / "chain.trace"
    run_cli("compile", "-c", TINY, "-w", wl, "-o", trace)
    proc = run_cli("run", "-c", TINY, "-w", wl, "-o", tmp_path / "o", "--chakra", tmp_path / "et")
    assert f"{tmp_path / 'et' / 'chain.0.et'}" in proc.stdout
    assert sorted(p.name for p in (tmp_path / "et").iterdir()) == ["chain.0.et"]
    meta, nodes = read_et(tmp_path / "et" / "chain.0.et", pb)
    assert meta.version == "1.0.0"
    layers, signals, waits, _ = program(trace)
    # One COMP node per entry of the layer table, in its order, named as it.
    assert [(n.id, n.name) for n in nodes] == [(i, name) for i, name, _ in layers] == [(i, f"g{i}") for i in range(4)]
    assert all(n.type == pb.COMP_NODE for n in nodes)
    # A chain of GEMMs: each one's loads wait for the stores of the one before.
    for n in nodes[1:]:
        assert n.id - 1 in n.data_deps
    assert not nodes[0].data_deps
    check_edges_follow_semaphores(nodes, signals, waits)
    # The node's time and work match the report's layer.
    report = __import__("json").loads((tmp_path / "o" / "report.json").read_text())
    for n, layer in zip(nodes, report["chips"][0]["layers"]):
        a = attrs(n)
        assert a["cycles"] == layer["cycles"] and a["num_ops"] == 2 * layer["macs"]
        assert a["tensor_size"] == layer["hbm_bytes_read"] + layer["hbm_bytes_written"]
        assert a["is_cpu_op"] is False and a["kind"] == "matmul"
        assert n.duration_micros == int(layer["cycles"] / report["config"]["clock_mhz"] + 0.5)


def test_two_chips_with_an_all_reduce(systolic_bin, tmp_path, pb):
    wl = tmp_path / "tp.yaml"
    wl.write_text("gemms:\n  - {name: up, m: 16, k: 8, n: 8}\n"
                  "  - {name: sum, collective: all_reduce, bytes: 4 KiB, dtype: int8}\n"
                  "  - {name: down, m: 16, k: 8, n: 4}\n")
    ring = ["--set", "ici.topology=ring", "--set", "ici.dims=2", "--set", "ici.algorithm=ring"]
    run_cli("run", "-c", TINY, *ring, "-w", wl, "-o", tmp_path / "o", "-q", "--chakra", tmp_path / "et")
    assert sorted(p.name for p in (tmp_path / "et").iterdir()) == ["tp.0.et", "tp.1.et"]
    programs = []
    for chip in range(2):
        trace = tmp_path / f"tp{chip}.trace"
        run_cli("compile", "-c", TINY, *ring, "-w", wl, "--chip", chip, "-o", trace)
        programs.append(program(trace))
    for chip, (layers, signals, waits, _) in enumerate(programs):
        # The other chip's messages signal this chip's semaphores when they land.
        for layer, to, sem in programs[1 - chip][3]:
            if to == chip:
                signals.setdefault(sem, set()).add(layer)
        _, nodes = read_et(tmp_path / "et" / f"tp.{chip}.et", pb)
        assert [(n.id, n.name) for n in nodes] == [(i, name) for i, name, _ in layers] == [(0, "up"), (1, "sum"), (2, "down")]
        assert [n.type for n in nodes] == [pb.COMP_NODE, pb.COMM_COLL_NODE, pb.COMP_NODE]
        coll = attrs(nodes[1])
        assert (coll["comm_type"], coll["comm_size"]) == (pb.ALL_REDUCE, 4096)
        # The all-reduce sends what `up` stored; `down` loads what the all-reduce delivered.
        assert list(nodes[1].data_deps) == [0] and 1 in nodes[2].data_deps
        check_edges_follow_semaphores(nodes, signals, waits)


def test_an_unwritable_folder_is_refused_before_the_run(systolic_bin, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    proc = run_cli("run", "-c", TINY, "-w", REPO / "traces" / "gemms" / "example.yaml", "-o", tmp_path / "o",
                   "--chakra", blocker / "et", check=False)
    assert proc.returncode == 2 and "cannot write" in proc.stderr
    assert not (tmp_path / "o").exists()
