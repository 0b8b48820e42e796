"""ONNX import (scripts/onnx_to_workload.py): small graphs built with onnx.helper (nothing is
downloaded), converted, and the workload YAML checked entry by entry; the output loads in
`systolic run` when the binary is built."""
import importlib.util
import os
import subprocess
import sys

import pytest

onnx = pytest.importorskip("onnx")
yaml = pytest.importorskip("yaml")
from onnx import TensorProto, helper  # noqa: E402

from conftest import REPO, SYSTOLIC, run_report  # noqa: E402

SCRIPT = REPO / "scripts" / "onnx_to_workload.py"
TINY = REPO / "configs" / "tiny-4x4.yaml"

_spec = importlib.util.spec_from_file_location("onnx_to_workload", SCRIPT)
otw = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(otw)


def vi(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def weight(name, shape, elem=TensorProto.FLOAT):
    n = 1
    for d in shape:
        n *= d
    return helper.make_tensor(name, elem, shape, [0.0] * n if elem != TensorProto.INT8 else [0] * n)


def save(tmp_path, nodes, inputs, outputs, initializers=(), opset=17, name="g", fname="m.onnx"):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    path = tmp_path / fname
    onnx.save(model, str(path))
    return path


def run(path, *args, check=True):
    proc = subprocess.run([sys.executable, str(SCRIPT), str(path), *map(str, args)],
                          capture_output=True, text=True, timeout=120)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def convert(path, *args):
    return yaml.safe_load(run(path, *args).stdout)


def gemms(doc):
    return [{k: g[k] for k in g} for g in doc["gemms"]]


def test_matmul_with_shared_weights_folds_batch_dims_into_m(tmp_path):
    # [2, 8, 16] x W[16, 32]: one GEMM of 2*8 rows.
    p = save(tmp_path, [helper.make_node("MatMul", ["x", "w"], ["y"], name="proj")],
             [vi("x", [2, 8, 16])], [vi("y", None)], [weight("w", [16, 32])])
    doc = convert(p)
    assert doc["name"] == "g"
    assert gemms(doc) == [{"name": "proj", "m": 16, "k": 16, "n": 32}]


def test_batched_matmul_repeats_per_broadcast_batch(tmp_path):
    # Attention scores: Q [2, 4, 8, 16] x K^T [2, 4, 16, 8] -> 8 GEMMs of 8x16x8;
    # a broadcast B [1, 4, 16, 8] also gives 2 * 4.
    nodes = [helper.make_node("MatMul", ["q", "kt"], ["s"], name="scores"),
             helper.make_node("MatMul", ["q", "b"], ["t"], name="bcast")]
    p = save(tmp_path, nodes, [vi("q", [2, 4, 8, 16]), vi("kt", [2, 4, 16, 8]), vi("b", [1, 4, 16, 8])],
             [vi("s", None), vi("t", None)])
    assert gemms(convert(p)) == [{"name": "scores", "m": 8, "k": 16, "n": 8, "repeat": 8},
                                 {"name": "bcast", "m": 8, "k": 16, "n": 8, "repeat": 8}]


def test_matmul_vectors(tmp_path):
    # 1-D A is one row; 1-D B one column.
    nodes = [helper.make_node("MatMul", ["v", "w"], ["y"]),
             helper.make_node("MatMul", ["x", "u"], ["z"])]
    p = save(tmp_path, nodes, [vi("v", [16]), vi("x", [3, 16]), vi("u", [16])],
             [vi("y", None), vi("z", None)], [weight("w", [16, 32])])
    assert gemms(convert(p)) == [{"name": "matmul_0", "m": 1, "k": 16, "n": 32},
                                 {"name": "matmul_1", "m": 3, "k": 16, "n": 1}]


def test_gemm_with_trans_b(tmp_path):
    # PyTorch Linear export: Gemm(x [4, 64], W [128, 64], transB=1) -> [4, 64] x [64, 128].
    nodes = [helper.make_node("Gemm", ["x", "w", "b"], ["y"], name="fc", transB=1),
             helper.make_node("Gemm", ["xt", "w2"], ["z"], name="fc_ta", transA=1)]
    p = save(tmp_path, nodes, [vi("x", [4, 64]), vi("xt", [64, 4])], [vi("y", None), vi("z", None)],
             [weight("w", [128, 64]), weight("b", [128]), weight("w2", [64, 10])])
    assert gemms(convert(p)) == [{"name": "fc", "m": 4, "k": 64, "n": 128},
                                 {"name": "fc_ta", "m": 4, "k": 64, "n": 10}]


def test_conv2d_with_strides_and_pads(tmp_path):
    # ResNet conv1: [1, 3, 224, 224] * [64, 3, 7, 7], stride 2, pad 3 -> [1, 64, 112, 112].
    nodes = [helper.make_node("Conv", ["x", "w"], ["y"], name="conv1", strides=[2, 2],
                              pads=[3, 3, 3, 3], kernel_shape=[7, 7]),
             # 3x3 stride 1 "same" via auto_pad, batch 2: [2, 64, 112, 112].
             helper.make_node("Conv", ["y", "w2"], ["z"], name="conv2", auto_pad="SAME_UPPER"),
             # Depthwise 3x3, stride 2, no pad: 112 -> 55; 64 groups of k = 9, n = 1.
             helper.make_node("Conv", ["z", "wd"], ["d"], name="dw", group=64, strides=[2, 2])]
    p = save(tmp_path, nodes, [vi("x", [2, 3, 224, 224])], [vi("d", None)],
             [weight("w", [64, 3, 7, 7]), weight("w2", [64, 64, 3, 3]), weight("wd", [64, 1, 3, 3])])
    assert gemms(convert(p)) == [
        {"name": "conv1", "m": 2 * 112 * 112, "k": 3 * 49, "n": 64},
        {"name": "conv2", "m": 2 * 112 * 112, "k": 64 * 9, "n": 64},
        {"name": "dw", "m": 2 * 55 * 55, "k": 9, "n": 1, "repeat": 64}]


def test_conv_output_computed_when_inference_leaves_it_open():
    # The fallback formula: floor((H + pads - dil*(k-1) - 1) / stride) + 1.
    node = helper.make_node("Conv", ["x", "w"], ["y"], strides=[2, 1], pads=[1, 0, 1, 0],
                            dilations=[1, 2])
    conv = otw.Converter.__new__(otw.Converter)
    assert conv._conv_out(node, 0, [10, 10], [3, 3]) == [5, 6]
    same = helper.make_node("Conv", ["x", "w"], ["y"], strides=[2, 2], auto_pad="SAME_LOWER")
    assert conv._conv_out(same, 0, [7, 8], [3, 3]) == [4, 4]


def transformer_block(tmp_path, opset=17):
    """A tiny pre-norm block: LayerNorm, QKV MatMul, scores, Softmax, context, residual Add,
    FFN with Gelu (contrib domain, unknown to shape inference) and SiLU as Sigmoid * x."""
    T, D = 8, 16
    nodes = [
        helper.make_node("LayerNormalization", ["x", "g", "beta"], ["h"], name="ln1", axis=-1),
        helper.make_node("MatMul", ["h", "wq"], ["q"], name="q_proj"),
        helper.make_node("MatMul", ["h", "wk"], ["k"], name="k_proj"),
        helper.make_node("Transpose", ["k"], ["kt"], perm=[1, 0]),
        helper.make_node("MatMul", ["q", "kt"], ["s"], name="scores"),
        helper.make_node("Softmax", ["s"], ["p"], name="softmax"),
        helper.make_node("MatMul", ["p", "h"], ["c"], name="context"),
        helper.make_node("Add", ["x", "c"], ["r"], name="residual"),
        helper.make_node("MatMul", ["r", "w1"], ["u"], name="ffn_up"),
        helper.make_node("Gelu", ["u"], ["a"], name="gelu", domain="com.microsoft"),
        helper.make_node("Sigmoid", ["a"], ["sg"], name="silu"),
        helper.make_node("Mul", ["a", "sg"], ["sw"], name="silu_mul"),
        helper.make_node("Mul", ["sw", "a"], ["gm"], name="gate_mul"),
        helper.make_node("Relu", ["gm"], ["rl"], name="relu"),
        helper.make_node("MatMul", ["rl", "w2"], ["y"], name="ffn_down"),
    ]
    graph = helper.make_graph(
        nodes, "block", [vi("x", [T, D])], [vi("y", None)],
        initializer=[weight("g", [D]), weight("beta", [D]), weight("wq", [D, D]),
                     weight("wk", [D, D]), weight("w1", [D, 4 * D]), weight("w2", [4 * D, D])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset),
                                                    helper.make_opsetid("com.microsoft", 1)])
    path = tmp_path / "block.onnx"
    onnx.save(model, str(path))
    return path


def test_vector_ops_are_written_only_with_the_flag(tmp_path):
    p = transformer_block(tmp_path)
    plain = run(p).stdout
    doc = yaml.safe_load(plain)
    assert set(doc) == {"name", "gemms"}
    assert [g["name"] for g in doc["gemms"]] == ["q_proj", "k_proj", "scores", "context",
                                                 "ffn_up", "ffn_down"]
    assert "# Not GEMMs or not written (--vector-ops): " in plain
    assert "Transpose x1" in plain and "Softmax x1" in plain

    doc = convert(p, "--vector-ops")
    assert doc["vector_ops"] == [
        {"name": "ln1", "kind": "layernorm", "rows": 8, "cols": 16},
        {"name": "softmax", "kind": "softmax", "rows": 8, "cols": 8},
        {"name": "residual", "kind": "add", "rows": 8, "cols": 16},
        {"name": "gelu", "kind": "gelu", "rows": 8, "cols": 64},   # shape propagated
        {"name": "silu", "kind": "silu", "rows": 8, "cols": 64},   # Sigmoid + its Mul
        {"name": "gate_mul", "kind": "mul", "rows": 8, "cols": 64},
        {"name": "relu", "kind": "relu", "rows": 8, "cols": 64},
    ]
    for v in doc["vector_ops"]:
        assert v["kind"] in otw.VECTOR_KINDS


def test_softmax_axis_before_and_after_opset_13(tmp_path):
    x = [vi("x", [2, 3, 5])]
    n13 = [helper.make_node("MatMul", ["x", "w"], ["y"]),
           helper.make_node("Softmax", ["x"], ["s"], name="sm_mid", axis=1),
           helper.make_node("Softmax", ["x"], ["t"], name="sm_last")]
    p = save(tmp_path, n13, x, [vi("y", None), vi("s", None), vi("t", None)], [weight("w", [5, 4])])
    ops = convert(p, "--vector-ops")["vector_ops"]
    assert ops == [{"name": "sm_mid", "kind": "softmax", "rows": 10, "cols": 3},
                   {"name": "sm_last", "kind": "softmax", "rows": 6, "cols": 5}]
    # Opset 11: default axis 1, input coerced to 2-D [2, 15].
    p11 = save(tmp_path, n13[:1] + [helper.make_node("Softmax", ["x"], ["t"], name="sm")], x,
               [vi("y", None), vi("t", None)], [weight("w", [5, 4])], opset=11, fname="o11.onnx")
    assert convert(p11, "--vector-ops")["vector_ops"] == [
        {"name": "sm", "kind": "softmax", "rows": 2, "cols": 15}]


def test_symbolic_batch_dims_must_be_bound(tmp_path):
    p = save(tmp_path, [helper.make_node("MatMul", ["x", "w"], ["y"], name="proj")],
             [vi("x", ["batch", 8, 16])], [vi("y", None)], [weight("w", [16, 32])])
    proc = run(p, check=False)
    assert proc.returncode == 2
    assert proc.stderr.strip() == (f"{p}: node 'proj' (MatMul): input A 'x' has the symbolic "
                                   "dimension 'batch'; bind it with --dim batch=N")
    assert gemms(convert(p, "--dim", "batch=4")) == [{"name": "proj", "m": 32, "k": 16, "n": 32}]
    proc = run(p, "--dim", "seq=4", check=False)
    assert proc.returncode == 2
    assert "--dim seq: the graph inputs have no dimension 'seq'; symbolic dimensions: batch" in proc.stderr


def test_shapes_inference_cannot_know(tmp_path):
    # A Reshape to a runtime shape: the MatMul's input has no static shape.
    nodes = [helper.make_node("Reshape", ["x", "shape"], ["r"]),
             helper.make_node("MatMul", ["r", "w"], ["y"], name="after_reshape")]
    p = save(tmp_path, nodes, [vi("x", [4, 8]), vi("shape", [2], TensorProto.INT64)],
             [vi("y", None)], [weight("w", [8, 8])])
    proc = run(p, check=False)
    assert proc.returncode == 2
    assert f"{p}: node 'after_reshape' (MatMul): input A 'r' has" in proc.stderr
    assert proc.stderr.count("\n") == 1


def test_dtypes(tmp_path):
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"], name="f32"),
             helper.make_node("MatMul", ["h", "v"], ["z"], name="f16")]
    p = save(tmp_path, nodes, [vi("x", [4, 8]), vi("h", [4, 8], TensorProto.FLOAT16)],
             [vi("y", None), vi("z", None, TensorProto.FLOAT16)],
             [weight("w", [8, 8]), weight("v", [8, 8], TensorProto.FLOAT16)])
    assert [g.get("dtype") for g in convert(p)["gemms"]] == [None, None]  # the chip's
    assert [g["dtype"] for g in convert(p, "--dtype", "graph")["gemms"]] == ["fp32", "fp16"]
    assert [g["dtype"] for g in convert(p, "--dtype", "bf16")["gemms"]] == ["bf16", "bf16"]
    d = save(tmp_path, [helper.make_node("MatMul", ["x", "w"], ["y"], name="dbl")],
             [vi("x", [4, 8], TensorProto.DOUBLE)], [vi("y", None, TensorProto.DOUBLE)],
             [helper.make_tensor("w", TensorProto.DOUBLE, [8, 8], [0.0] * 64)], fname="d.onnx")
    proc = run(d, "--dtype", "graph", check=False)
    assert proc.returncode == 2
    assert "node 'dbl' (MatMul): element type DOUBLE of 'x' has no MXU dtype" in proc.stderr


def test_names_are_unique_and_quoted(tmp_path):
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"], name="layer: 1"),
             helper.make_node("MatMul", ["y", "w"], ["z"], name="layer: 1"),
             helper.make_node("MatMul", ["z", "w"], ["t"], name="true")]
    p = save(tmp_path, nodes, [vi("x", [4, 8])], [vi("t", None)], [weight("w", [8, 8])])
    assert [g["name"] for g in convert(p)["gemms"]] == ["layer: 1", "layer: 1_2", "true"]


def test_errors_exit_2_with_one_line(tmp_path):
    # No GEMM at all.
    p = save(tmp_path, [helper.make_node("Relu", ["x"], ["y"])], [vi("x", [4])], [vi("y", None)])
    proc = run(p, check=False)
    assert proc.returncode == 2
    assert proc.stderr == f"{p}: no MatMul, Gemm or Conv node; a workload needs at least one GEMM\n"
    # Not an ONNX file; a missing file.
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x00\x01garbage")
    proc = run(bad, check=False)
    assert proc.returncode == 2 and proc.stderr.startswith(f"{bad}: ")
    proc = run(tmp_path / "missing.onnx", check=False)
    assert proc.returncode == 2
    assert proc.stderr == f"{tmp_path / 'missing.onnx'}: cannot open ONNX file\n"
    # Bad --dim syntax is a usage error (argparse, also exit 2).
    proc = run(p, "--dim", "batch", check=False)
    assert proc.returncode == 2 and "expected NAME=VALUE" in proc.stderr


def test_output_file(tmp_path):
    p = save(tmp_path, [helper.make_node("MatMul", ["x", "w"], ["y"], name="proj")],
             [vi("x", [4, 8])], [vi("y", None)], [weight("w", [8, 8])])
    out = tmp_path / "w.yaml"
    proc = run(p, "-o", out, "--name", "mine")
    assert proc.stdout == ""
    doc = yaml.safe_load(out.read_text())
    assert doc["name"] == "mine"
    assert doc["gemms"] == [{"name": "proj", "m": 4, "k": 8, "n": 8}]


@pytest.mark.skipif(not SYSTOLIC.exists(), reason="systolic is not built")
def test_the_simulator_reads_the_output(tmp_path):
    p = transformer_block(tmp_path)
    out = tmp_path / "block.yaml"
    run(p, "-o", out)
    report = run_report("-c", TINY, "-w", out, outdir=tmp_path / "run")
    assert len(report["chips"][0]["layers"]) == 6
