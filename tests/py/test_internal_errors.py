"""Every path that can end in `systolic: internal error` (exit 1), walked (issue #20,
docs/reliability.md "Internal errors"). The CLI turns an InputError into exit 2 and anything
else that escapes a command into exit 1 (sim/cli/main.cpp), so the paths to exit 1 are the other
exceptions the code throws, the library calls that throw on bad text (std::sto*), and the
catch-alls. test_every_path_is_accounted_for finds them all in sim/ and models/ and fails on
one this table does not classify, so a new one has to be argued here:

  converted  its exception is caught by the named reader and rethrown as an InputError with the
             file and line (the probe gets exit 2);
  guarded    an input check refuses, before it, everything that would reach it (the probe feeds
             the input that would, and gets the check's exit 2);
  bounded    the text it parses was checked to fit first (digits only, a length that fits);
  invariant  it depends on no input: a program's own consistency (a registry filled twice, an
             engine handed another engine's stream, a conservation law), a resource failure of
             the machine (zlib or libcsv out of memory), or SystemC's own VCD output;
  rethrow    a catch-all that removes a temporary file (or marks a shared slot) and rethrows what
             it caught;
  deferred   a catch-all in a shape simulated ahead of the serving replay (shape_workers.cpp): the
             shape is simulated again in the replay's own process when the replay asks for it,
             which then meets the error itself; nothing escapes there.
"""
import pathlib
import re

import pytest

from conftest import REPO, run_cli

TINY = REPO / "configs" / "tiny-4x4.yaml"
EXAMPLE = REPO / "traces" / "gemms" / "example.yaml"
TINY_LM = (REPO / "tests" / "py" / "data" / "tiny-lm.yaml").read_text()

# What can escape to main's catch-all: a standard exception thrown by hand, a std::sto* call, a
# catch of everything, an abort or an assert.
SITE = re.compile(r"throw std::\w+|catch \(\.\.\.\)|catch \(const std::exception|std::sto(?:i|l|ll|ul|ull|f|d|ld)\("
                  r"|\bexit\(1\)|std::abort\(|\bassert\(")

CONFIG_VALIDATE = "guarded: the config schema runs the same validate() and refuses (sim/config/schema.cpp)"
ENGINE_STREAM = "guarded: the trace reader refuses an opcode on another engine's stream ('opcode ... cannot run on')"
TOO_LONG = ("guarded: a request longer than every bucket is rejected before packing (outcome rejected, "
            "reason prompt-exceeds-prefill)")
SERVING = ("invariant: the serving replay's own bookkeeping (requests left but none can run, conservation); "
           "every request's shape fits a bucket first (pack refuses one that fits none)")

# file -> {a fragment of the line: verdict and why}.
SITES = {
    "models/area/pe_area.cpp": {"pe_um2_at_45nm": "guarded: mxu.dtype takes only MXU types"},
    "models/common/clock.hpp": {
        "simulated-time range":
            "guarded: compile's check_cycle_range, and check_matmul_cycle_range for a trace (budget.cpp)",
    },
    "models/common/config_issue.hpp": {"validate()": CONFIG_VALIDATE},
    "models/common/names.hpp": {"name_table": "invariant: a name table out of enum order, found at start-up"},
    "models/common/registry.hpp": {"registered twice": "invariant: two implementations of one name, at start-up"},
    "models/engine/wake_order.cpp": {
        "a wait must end after now":
            "invariant: Engine::sleep returns at once for 0 ps, so every wait it hands on ends later",
    },
    "models/system/symmetry.cpp": {
        "a link no message crosses has no image":
            "invariant: a symmetry is kept only when every message's link has an image (chip_classes checks it)",
    },
    "models/system/system.cpp": {
        "chip classes of another system":
            "invariant: simulate() builds the classes from the same programs it passes the system",
    },
    "sim/compile/activation_layout.cpp": {
        "not whole tiles":
            "invariant: plan_activation_layouts tiles a tensor only where every block that moves it covers whole tiles",
    },
    "sim/compile/collective.cpp": {
        "needs CollectiveTarget::channels":
            "invariant: the tiled compiler always passes its channel table; channels come only from --mesh pp",
        "is not in its group": "invariant: shard_mesh puts each chip in the groups of its own mesh place",
        "decomposed, but not a single ring":
            "invariant: plan_overlap decomposes only what its algorithm lowers as one ring phase",
    },
    "models/dma/dma_core.cpp": {
        "throw std::invalid_argument(fmt::format(":
            "guarded: schema.cpp refuses dma.request_bytes that is not a multiple of the burst",
        "start() before": "invariant: the DMA engine issues one descriptor at a time",
        "check(d)": "guarded: the trace reader checks every DMA against the chip's memories ('outside memory')",
    },
    "models/dma/dma_engine.cpp": {"only executes DMA": ENGINE_STREAM},
    "models/isa/program.hpp": {
        "a count of 2^32 or more":
            "bounded: a count is at most the instructions signalling one semaphore; 2^32 would be over 800 GB "
            "(the instruction budget refuses far less); the trace reader refuses a count of 2^32 or more",
    },
    "models/isa/program.cpp": {
        "index past the end":
            "invariant: the grid view reads instructions at the indices the engines' own records name",
    },
    "models/hbm/hbm_core.cpp": {
        "core clock": "guarded: clock_mhz is in [1, 100000]",
        "past the capacity": "guarded: compile refuses a workload past the HBM; the trace reader a DMA outside memory",
    },
    "models/ici/ici_engine.cpp": {"only executes send": ENGINE_STREAM},
    "models/ici/topology.cpp": {"at least one chip": "guarded: ici.dims is in [1, 4096] per dimension"},
    "models/mxu/dataflow.cpp": {
        "dim_of": "invariant: a switch over every GemmDim (-Werror=switch)",
        "std::logic_error(\"dataflow \"": "invariant: mxu.dataflow takes only registered dataflows",
    },
    "models/mxu/grid_common.cpp": {
        "empty matrix": "guarded: matmul m, k, n are at least 1 in every reader",
        "PeGrid::run: A is": "invariant: the MXU builds both operands of one matmul",
        "data size": "invariant: the MXU builds both operands of one matmul",
    },
    "models/mxu/grid_recorder.cpp": {
        "GridRecorder: got": "invariant: the recorder is made for the grid it watches",
        "GridRecorder: cycle": "invariant: simulated time only moves forward",
    },
    "models/mxu/mxu_timing.cpp": {
        "__builtin_mul_overflow": "guarded: caught as overflow by check_cycle_range and check_matmul_cycle_range first",
        "__builtin_add_overflow": "guarded: caught as overflow by check_cycle_range and check_matmul_cycle_range first",
    },
    "models/mxu/pe_grid.cpp": {"at least 1x1": "guarded: mxu.rows and mxu.cols are in [1, 65536]"},
    "models/vpu/vpu_core.cpp": {
        "unknown vector kind": "invariant: a switch over every VectorKind (-Werror=switch)",
        "exceeds 64 bits": "guarded: readers keep rows x cols x repeat within 63 bits (trace: 'overflows 63 bits')",
        "negative tensor size": "guarded: no reader takes a sign on a size",
    },
    "models/vpu/vpu_engine.cpp": {
        "catch (const std::exception":
            "converted: VpuEngine::check turns vpu_cycles' exception into the message the trace reader reports",
        "check(op)": "guarded: the trace reader runs the same VpuEngine::check per op",
        "only executes vector": ENGINE_STREAM,
    },
    "sim/cli/main.cpp": {"catch (const std::exception": "the catch-all itself: exit 1, what this test walks"},
    "sim/common/csv_fields.cpp": {
        "csv_init failed": "invariant: libcsv out of memory",
        "malformed CSV line": "converted: the SCALE-Sim and request-log readers catch it with the file and line",
    },
    "sim/common/cycle_range.cpp": {"std::stoull": "bounded: at most 18 digits, checked first"},
    "sim/common/percentile.cpp": {"percentile": "invariant: called with fixed quantiles"},
    "sim/common/scalars.hpp": {
        "single value": "converted: every reader of a scalar catches it with the key",
        "expected {}, got": "converted: every reader of a scalar catches it with the key",
    },
    "sim/compile/tiled_internal.hpp": {"compile_collective": "invariant: the compiler routes ICI work itself"},
    "sim/config/hash.cpp": {"std::stoull": "bounded: at most 19 digits, checked first (< 2^64)"},
    "sim/config/schema_ici.cpp": {"std::stoll": "bounded: at most 6 digits, checked first"},
    "sim/config/values.hpp": {"registry used before": "invariant: static-initialisation order, at start-up"},
    "sim/packing/bin_packers.cpp": {
        "lane_length must be positive": "guarded: bucket sequence lengths are at least 1 (bucket-set reader)",
        "throw std::invalid_argument(fmt::format(": TOO_LONG,
    },
    "sim/packing/decode.cpp": {
        "no token to decode": "guarded: the request-log reader takes output tokens >= 1",
        "needs a KV length": TOO_LONG,
        "no decode shapes": "guarded: the bucket-set reader requires decode shapes",
    },
    "sim/packing/packer.cpp": {
        "no prefill shapes": "guarded: the bucket-set reader requires prefill shapes",
        "fits no bucket": TOO_LONG,
        "appears twice": "guarded: the request-log reader refuses a repeated id",
    },
    "sim/report/report.cpp": {"more MACs than their peak": "invariant: physics (a MAC per PE per cycle at most)"},
    "sim/report/timeline_file.cpp": {
        "deflateInit2": "invariant: zlib out of memory",
        "catch (...)": "rethrow",
    },
    "sim/serving/batching.cpp": {"nothing can run": SERVING},
    "sim/serving/shape_workers.cpp": {
        "the replay simulates it again": "deferred",
        "nobody asked for it yet": "deferred",
        "then rethrows": "rethrow",
    },
    "sim/serving/engine.cpp": {"serving engine": SERVING},
    "sim/serving/metrics.cpp": {"serving conservation": SERVING},
    "sim/serving/schedulers/chunked.cpp": {"nothing can run": SERVING},
    "sim/serving/schedulers/disaggregated.cpp": {"nothing can run": SERVING},
    "sim/serving/schedulers/static.cpp": {"nothing can run": SERVING},
    "sim/trace/trace_field_reader.hpp": {
        "throw std::invalid_argument": "converted: trace_reader.cpp catches it and reports the file and line",
        "std::stod": "converted: caught on the next line, then as above",
        "catch (const std::exception": "converted: rethrown as invalid_argument",
    },
    "sim/trace/trace_reader.cpp": {"std::stoi": "bounded: at most 5 digits, checked first"},
    "sim/trace/trace_tokens.cpp": {
        "throw std::invalid_argument": "converted: trace_reader.cpp catches it and reports the file and line",
    },
    "sim/viz/html_writer.cpp": {"data marker": "invariant: the page template is compiled in"},
    "sim/viz/vcd_clock.cpp": {"std::stoull": "invariant: parses SystemC's own VCD output"},
    "sim/viz/vcd_tracer.cpp": {"catch (...)": "rethrow"},
    "sim/workload/transformer/lower.cpp": {
        "exceed 64 bits":
            "guarded: each op's multiply-adds and elements are checked below 2^63 first ('expected a smaller bucket')",
        "is not a vector op": "invariant: the lowering names its own ops",
    },
    "sim/workload/transformer/model_reader.cpp": {"joined by": "invariant: the sharder joins collectives to matmuls"},
}


def sites():
    """(file, line number, line) of every match of SITE in sim/ and models/ (not the Python)."""
    found = []
    for path in sorted(list((REPO / "sim").rglob("*.[ch]pp")) + list((REPO / "models").rglob("*.[ch]pp"))):
        rel = path.relative_to(REPO).as_posix()
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if SITE.search(line) and not line.lstrip().startswith("//"):
                found.append((rel, number, line.strip()))
    return found


def test_every_path_is_accounted_for():
    found = sites()
    unclassified = [f"{f}:{n}: {line}" for f, n, line in found
                    if not any(fragment in line for fragment in SITES.get(f, {}))]
    assert not unclassified, "classify these in SITES (converted, guarded, bounded, invariant):\n" + "\n".join(
        unclassified)
    stale = [(file, fragment) for file, fragments in SITES.items() for fragment in fragments
             if not any(f == file and fragment in line for f, _, line in found)]
    assert not stale, f"no longer in the code, remove from SITES: {stale}"
    assert len(found) >= 80  # the walk found what it walks: 88 sites when written


def trace_with(tmp_path, old, new, *more):
    """The example GEMMs compiled for tiny-4x4, with a line changed (and more old, new pairs)."""
    trace = tmp_path / "t.trace"
    run_cli("compile", "-c", TINY, "-w", EXAMPLE, "-o", trace)
    text = trace.read_text()
    pairs = [(old, new)] + list(zip(more[::2], more[1::2]))
    for old, new in pairs:
        assert old in text
        text = text.replace(old, new, 1)
    trace.write_text(text)
    return trace


def model(tmp_path, **keys):
    text = TINY_LM
    for key, value in keys.items():
        text = re.sub(rf"^{key}: .*$", f"{key}: {value}", text, flags=re.M)
    path = tmp_path / "m.yaml"
    path.write_text(text)
    return path


MATMUL0 = "matmul layer=0 m=4 k=4 n=4"
# The input each guard or converter stands in front of, and a fragment of its exit-2 message.
PROBES = {
    "trace matmul past the simulated-time range (clock.hpp, mxu_timing.cpp)": (
        lambda t: ["run", "-c", TINY, "--set", "mxu.model=fast",
                   "-t", trace_with(t, MATMUL0, "matmul layer=0 m=288230376151711744 k=1 n=1",
                                    "kind=matmul m=4 k=4", "kind=matmul m=288230376151711744 k=4")],
        "pass the 64-bit simulated-time range"),
    "engine handed another engine's opcode (dma/ici/vpu_engine.cpp)": (
        lambda t: ["run", "-c", TINY, "-t", trace_with(t, MATMUL0, "dma layer=0 src=hbm:0x2000 dst=weights:0x0 "
                                                           "elem=1 shape=16x1x1 src_stride=1x0x0 dst_stride=1x0x0 m=4")],
        "cannot run on mxu0"),
    "DMA outside memory (dma_core.cpp check, hbm_core.cpp capacity)": (
        lambda t: ["run", "-c", TINY, "-t", trace_with(t, "src=hbm:0x2000 dst=weights:0x0",
                                                       "src=hbm:0xffffffff000 dst=weights:0x0")],
        "t.trace:"),
    "trace field text (trace_field_reader.hpp, trace_tokens.cpp)": (
        lambda t: ["run", "-c", TINY, "-t", trace_with(t, MATMUL0, "matmul layer=0 m=\"4 k=4 n=4")], "t.trace:"),
    "trace engine index past 5 digits (trace_reader.cpp stoi)": (
        lambda t: ["run", "-c", TINY, "-t", trace_with(t, "stream mxu0", "stream mxu999999999999")],
        "unknown engine"),
    "cycle window past 18 digits (cycle_range.cpp stoull)": (
        lambda t: ["run", "-c", TINY, "-w", EXAMPLE, "--timeline", t / "t.json",
                   "--timeline-window", "99999999999999999999:"], "expected A:B with whole cycle numbers"),
    "ICI dims past 6 digits (schema_ici.cpp stoll)": (
        lambda t: ["run", "-c", TINY, "-w", EXAMPLE, "--set", "ici.topology=ring", "--set", "ici.dims=99999999"],
        "key 'ici.dims'"),
    "ICI dimension of zero chips (topology.cpp)": (
        lambda t: ["run", "-c", TINY, "-w", EXAMPLE, "--set", "ici.topology=ring", "--set", "ici.dims=0"],
        "key 'ici.dims'"),
    "PE grid of zero rows (pe_grid.cpp)": (
        lambda t: ["run", "-c", TINY, "-w", EXAMPLE, "--set", "mxu.rows=0"], "key 'mxu.rows'"),
    "DMA request not a multiple of the burst (dma_core.cpp)": (
        lambda t: ["run", "-c", TINY, "-w", EXAMPLE, "--set", "dma.request_bytes=3"], "dma.request_bytes"),
    "config scalar of the wrong kind (scalars.hpp)": (
        lambda t: ["run", "-c", TINY, "-w", EXAMPLE, "--set", "clock_mhz=[1, 2]"], "clock_mhz"),
    "CSV line libcsv refuses (csv_fields.cpp)": (
        lambda t: ["run", "-c", TINY, "-w", write(t, "t.csv", "Layer, M, N, K,\n\"L0, 4, 4, 4,\n")], "t.csv:"),
    "transformer op past 2^63 multiply-adds (lower.cpp totals)": (
        lambda t: ["run", "-c", TINY, "-w", model(t, d_model=65536, d_ff=1048576, vocab=1048576, max_seq=1048576,
                                                  layers=65536), "--bucket", "1024x1048576"],
        "expected a smaller bucket"),
}


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("name", list(PROBES))
def test_the_input_in_front_of_each_guard_is_refused(tmp_path, systolic_bin, name):
    argv, expected = PROBES[name]
    proc = run_cli(*argv(tmp_path), "-o", tmp_path / "o", "-q", check=False)
    assert proc.returncode == 2, proc.stderr
    assert expected in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_a_request_longer_than_every_bucket_is_rejected_not_packed(tmp_path, systolic_bin):
    """The packers' 'fits no bucket' paths: pack sets such a request aside as rejected."""
    requests = write(tmp_path, "r.csv", "arrival_s,prompt_tokens,output_tokens\n0.000,100000,1\n")
    run_cli("pack", "-c", TINY, "-m", REPO / "tests" / "py" / "data" / "tiny-lm.yaml", "--requests", requests,
            "--buckets", REPO / "tests" / "py" / "data" / "tiny-buckets.yaml", "-o", tmp_path / "o", "-q")
    row = (tmp_path / "o" / "requests.csv").read_text().splitlines()[1].split(",")
    assert row[5:7] == ["rejected", "prompt-exceeds-prefill"]
