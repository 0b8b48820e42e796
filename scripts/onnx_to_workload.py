#!/usr/bin/python3
"""Turns an ONNX graph into a Systolic workload file (docs/transformers.md, "ONNX import").

    scripts/onnx_to_workload.py model.onnx -o model.yaml [--dim batch=4] [--dtype graph]
                                [--vector-ops] [--name NAME]

Reads the graph with Debian's python3-onnx, runs ONNX shape inference, and writes the GEMM
list YAML that `systolic run -w` reads (docs/workloads.md): one entry per MatMul, Gemm and
Conv node.

  MatMul  A[..., M, K] x B[..., K, N]. When B has no batch dimensions (a weight matrix shared
          by every batch), A's batch dimensions fold into M: m = prod(batch) * M, repeat 1.
          When B is batched (attention: Q x K^T), each broadcast batch is its own GEMM:
          m = M, repeat = prod(broadcast batch dims). A 1-D A is one row (M = 1), a 1-D B
          one column (N = 1).
  Gemm    A[M, K] (transA: [K, M]) x B[K, N] (transB: [N, K]); the bias C is fused.
  Conv    X[N, C, *spatial] * W[F, C/g, *kernel] -> Y[N, F, *out] by im2col:
          m = N * prod(out), k = (C/g) * prod(kernel), n = F/g, repeat = g (group count:
          a depthwise conv is C GEMMs of k = prod(kernel), n = F/C). Output sizes come from
          shape inference (strides, pads, dilations and auto_pad included).

With --vector-ops it also writes a `vector_ops:` list of the elementwise and row-wise ops the
vector unit runs, as {name, kind, rows, cols} with kind one of add, mul, relu, gelu, silu,
rmsnorm, layernorm, softmax, rope (models/vpu/vpu_core.hpp). The GEMM list loader does not
read `vector_ops` yet and rejects the key, so it is off by default.

  Add, Sub -> add;  Mul, Div -> mul;  Relu -> relu;  Gelu, FastGelu, BiasGelu -> gelu;
  Sigmoid followed by Mul(x, Sigmoid(x)) -> one silu;  Softmax -> softmax over its axis;
  LayerNormalization -> layernorm, SimplifiedLayerNormalization / RMSNormalization ->
  rmsnorm (over the normalised axes); RotaryEmbedding -> rope.
  Elementwise ops take rows x cols from their output: cols = last dimension, rows = the
  product of the others.

Symbolic dimensions (dim_param, e.g. "batch") must be bound with --dim NAME=VALUE wherever a
GEMM or vector op needs them. Every problem exits with code 2 and one line
"file: message" (naming the node) on stderr. Ops that are neither (Reshape, Transpose, ...)
are listed in a comment at the top of the output.
"""
import argparse
import collections
import math
import os
import sys
import tempfile
import warnings

import yaml

try:
    import onnx
    from onnx import helper, shape_inference
except ImportError:  # pragma: no cover - reported at run time
    onnx = None

VECTOR_KINDS = ("add", "mul", "relu", "gelu", "silu", "rmsnorm", "layernorm", "softmax", "rope")
DTYPES = ("int8", "fp8_e4m3", "fp8_e5m2", "bf16", "fp16", "fp32")

ELEMENTWISE = {"Add": "add", "Sub": "add", "Mul": "mul", "Div": "mul", "Relu": "relu",
               "Gelu": "gelu", "FastGelu": "gelu", "BiasGelu": "gelu"}
ROW_NORMS = {"LayerNormalization": "layernorm", "SimplifiedLayerNormalization": "rmsnorm",
             "RMSNormalization": "rmsnorm", "SkipSimplifiedLayerNormalization": "rmsnorm",
             "SkipLayerNormalization": "layernorm"}
GEMM_OPS = ("MatMul", "Gemm", "Conv")


class ImportFailure(Exception):
    """A problem with the input; printed as 'file: message', exit code 2."""


def _elem_dtype(elem_type):
    """MXU dtype name of an ONNX tensor element type, or None."""
    if onnx is None:
        return None
    t = onnx.TensorProto
    table = {t.FLOAT: "fp32", t.FLOAT16: "fp16", t.BFLOAT16: "bf16", t.INT8: "int8",
             t.UINT8: "int8"}
    for attr, name in (("FLOAT8E4M3FN", "fp8_e4m3"), ("FLOAT8E5M2", "fp8_e5m2")):
        if hasattr(t, attr):
            table[getattr(t, attr)] = name
    return table.get(elem_type)


class Tensor:
    """What is known about a value: its dims (int, or str for an unbound symbol, or None)."""

    def __init__(self, dims, elem_type=0, initializer=False):
        self.dims = dims
        self.elem_type = elem_type
        self.initializer = initializer


def _dims_of(type_proto):
    if not type_proto.HasField("tensor_type"):
        return None, 0
    tt = type_proto.tensor_type
    if not tt.HasField("shape"):
        return None, tt.elem_type
    dims = []
    for d in tt.shape.dim:
        if d.HasField("dim_value"):
            dims.append(int(d.dim_value))
        elif d.HasField("dim_param"):
            dims.append(d.dim_param)
        else:
            dims.append(None)
    return dims, tt.elem_type


def _attr(node, name, default=None):
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def _prod(values):
    return math.prod(values) if values else 1


class Converter:
    def __init__(self, model, path, dims, dtype, vector_ops):
        self.path = path
        self.dtype = dtype
        self.vector_ops = vector_ops
        self.gemms = []
        self.vectors = []
        self.skipped = collections.Counter()
        self.names = set()
        self.model = self._infer(model, dims)
        self.graph = self.model.graph
        self.opset = next((o.version for o in self.model.opset_import if o.domain in ("", "ai.onnx")), 0)
        self.values = {}
        for init in self.graph.initializer:
            self.values[init.name] = Tensor([int(d) for d in init.dims], init.data_type, True)
        for vi in list(self.graph.input) + list(self.graph.value_info) + list(self.graph.output):
            dims, elem = _dims_of(vi.type)
            if vi.name in self.values and self.values[vi.name].initializer:
                continue
            self.values[vi.name] = Tensor(dims, elem)
        self.consumers = collections.defaultdict(list)
        self.producer = {}
        for node in self.graph.node:
            for name in node.input:
                self.consumers[name].append(node)
            for name in node.output:
                self.producer[name] = node

    def _infer(self, model, dims):
        # Bind symbolic input dimensions first, so inference propagates the numbers.
        used = set()
        for vi in model.graph.input:
            if not vi.type.HasField("tensor_type"):
                continue
            for d in vi.type.tensor_type.shape.dim:
                if d.HasField("dim_param") and d.dim_param in dims:
                    used.add(d.dim_param)
                    d.dim_value = dims[d.dim_param]
        names = sorted({d.dim_param for vi in model.graph.input
                        if vi.type.HasField("tensor_type")
                        for d in vi.type.tensor_type.shape.dim if d.HasField("dim_param")})
        self.input_symbols = set(names)
        unused = sorted(set(dims) - used)
        if unused:
            raise ImportFailure(f"--dim {unused[0]}: the graph inputs have no dimension "
                                f"'{unused[0]}'; symbolic dimensions: {', '.join(names) or 'none'}")
        try:
            return shape_inference.infer_shapes(model)
        except Exception as e:  # onnx raises its own InferenceError and others
            raise ImportFailure(f"shape inference failed: {str(e).splitlines()[0]}")

    # --- helpers ---------------------------------------------------------------------------
    def _label(self, node, index):
        return node.name or f"{node.op_type.lower()}_{index}"

    def _unique(self, name):
        base, n = name, 2
        while name in self.names:
            name = f"{base}_{n}"
            n += 1
        self.names.add(name)
        return name

    def _fail(self, node, index, message):
        raise ImportFailure(f"node '{self._label(node, index)}' ({node.op_type}): {message}")

    def _shape(self, node, index, value, what):
        t = self.values.get(value)
        if t is None or t.dims is None:
            self._fail(node, index, f"{what} '{value}' has no known shape after shape inference")
        for d in t.dims:
            if isinstance(d, str) and d in self.input_symbols:
                self._fail(node, index, f"{what} '{value}' has the symbolic dimension '{d}'; "
                                        f"bind it with --dim {d}=N")
            if isinstance(d, str):
                self._fail(node, index, f"{what} '{value}' has the dimension '{d}' that shape "
                                        f"inference could not resolve (shape {self._fmt(t.dims)})")
            if d is None:
                self._fail(node, index, f"{what} '{value}' has an unknown dimension "
                                        f"(shape {self._fmt(t.dims)})")
        return list(t.dims)

    @staticmethod
    def _fmt(dims):
        return "[" + ", ".join("?" if d is None else str(d) for d in dims) + "]"

    def _gemm_dtype(self, node, index, value):
        if self.dtype == "chip":
            return None
        if self.dtype != "graph":
            return self.dtype
        t = self.values.get(value)
        name = _elem_dtype(t.elem_type) if t else None
        if name is None:
            type_name = onnx.TensorProto.DataType.Name(t.elem_type) if t and t.elem_type else "unknown"
            self._fail(node, index, f"element type {type_name} of '{value}' has no MXU dtype "
                                    f"({', '.join(DTYPES)}); choose one with --dtype")
        return name

    def _add_gemm(self, node, index, m, k, n, repeat, note):
        for key, v in (("m", m), ("k", k), ("n", n), ("repeat", repeat)):
            if v <= 0:
                self._fail(node, index, f"GEMM dimension {key} = {v}; expected a positive size")
        entry = {"name": self._unique(self._label(node, index)), "m": m, "k": k, "n": n}
        if repeat != 1:
            entry["repeat"] = repeat
        dtype = self._gemm_dtype(node, index, node.input[0])
        if dtype:
            entry["dtype"] = dtype
        self.gemms.append((entry, note))

    def _add_vector(self, node, index, kind, rows, cols, note):
        assert kind in VECTOR_KINDS
        if rows <= 0 or cols <= 0:
            return  # an empty tensor: nothing to compute
        self.vectors.append(({"name": self._unique(self._label(node, index)), "kind": kind,
                              "rows": rows, "cols": cols}, note))

    # --- ops -------------------------------------------------------------------------------
    def matmul(self, node, i):
        a = self._shape(node, i, node.input[0], "input A")
        b = self._shape(node, i, node.input[1], "input B")
        a2 = [1] + a if len(a) == 1 else a
        b2 = b + [1] if len(b) == 1 else b
        if len(a2) < 2 or len(b2) < 2:
            self._fail(node, i, "scalar operands are not a matrix product")
        M, K = a2[-2:]
        K2, N = b2[-2:]
        if K != K2:
            self._fail(node, i, f"inner dimensions differ: A {self._fmt(a)} x B {self._fmt(b)}")
        batch_a, batch_b = a2[:-2], b2[:-2]
        if not batch_b:
            m, repeat = _prod(batch_a) * M, 1
        else:
            batch = self._broadcast(node, i, batch_a, batch_b)
            m, repeat = M, _prod(batch)
        src = "initializer" if self.values[node.input[1]].initializer else "activation"
        self._add_gemm(node, i, m, K, N, repeat,
                       f"MatMul {self._fmt(a)} x {self._fmt(b)} ({src} B)")

    def _broadcast(self, node, i, x, y):
        out = []
        for p, q in zip([1] * (len(y) - len(x)) + x, [1] * (len(x) - len(y)) + y):
            if p != q and 1 not in (p, q):
                self._fail(node, i, f"batch dimensions {self._fmt(x)} and {self._fmt(y)} do not "
                                    "broadcast")
            out.append(max(p, q))
        return out

    def gemm(self, node, i):
        a = self._shape(node, i, node.input[0], "input A")
        b = self._shape(node, i, node.input[1], "input B")
        if len(a) != 2 or len(b) != 2:
            self._fail(node, i, f"expected 2-D A and B, got {self._fmt(a)} and {self._fmt(b)}")
        M, K = (a[1], a[0]) if _attr(node, "transA", 0) else (a[0], a[1])
        K2, N = (b[1], b[0]) if _attr(node, "transB", 0) else (b[0], b[1])
        if K != K2:
            self._fail(node, i, f"inner dimensions differ: A {self._fmt(a)} x B {self._fmt(b)} "
                                f"(transA {_attr(node, 'transA', 0)}, transB {_attr(node, 'transB', 0)})")
        self._add_gemm(node, i, M, K, N, 1,
                       f"Gemm {self._fmt(a)} x {self._fmt(b)}"
                       + (" transB" if _attr(node, "transB", 0) else "")
                       + (" transA" if _attr(node, "transA", 0) else ""))

    def conv(self, node, i):
        x = self._shape(node, i, node.input[0], "input X")
        w = self._shape(node, i, node.input[1], "weights W")
        if len(x) < 3 or len(w) != len(x):
            self._fail(node, i, f"expected X [N, C, spatial...] and W [F, C/group, kernel...], "
                                f"got {self._fmt(x)} and {self._fmt(w)}")
        group = int(_attr(node, "group", 1))
        n_batch, channels = x[0], x[1]
        filters, kernel = w[0], w[2:]
        if channels % group or filters % group or w[1] != channels // group:
            self._fail(node, i, f"group = {group} does not fit X channels {channels} and W "
                                f"{self._fmt(w)} (expected W[1] = C / group)")
        out = self.values.get(node.output[0])
        if out is not None and out.dims and all(isinstance(d, int) for d in out.dims):
            spatial = out.dims[2:]
        else:
            spatial = self._conv_out(node, i, x[2:], kernel)
        self._add_gemm(node, i, n_batch * _prod(spatial), (channels // group) * _prod(kernel),
                       filters // group, group,
                       f"Conv {self._fmt(x)} * {self._fmt(w)} -> {self._fmt([n_batch, filters] + list(spatial))}"
                       + (f", group {group}" if group != 1 else ""))

    def _conv_out(self, node, i, size, kernel):
        r = len(size)
        strides = list(_attr(node, "strides", [1] * r))
        dil = list(_attr(node, "dilations", [1] * r))
        pads = list(_attr(node, "pads", [0] * (2 * r)))
        auto_pad = _attr(node, "auto_pad", b"NOTSET")
        auto_pad = auto_pad.decode() if isinstance(auto_pad, bytes) else auto_pad
        out = []
        for j in range(r):
            if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
                out.append(-(-size[j] // strides[j]))
            else:
                span = dil[j] * (kernel[j] - 1) + 1
                padded = size[j] + (0 if auto_pad == "VALID" else pads[j] + pads[j + r])
                if padded < span:
                    self._fail(node, i, f"kernel {kernel} does not fit the padded input {size}")
                out.append((padded - span) // strides[j] + 1)
        return out

    def vector(self, node, i):
        op = node.op_type
        if op in ELEMENTWISE:
            if op == "Mul" and self._silu_mul(node):
                return  # counted with its Sigmoid
            dims = self._shape(node, i, node.output[0], "output")
            rows, cols = (_prod(dims[:-1]), dims[-1]) if dims else (1, 1)
            self._add_vector(node, i, ELEMENTWISE[op], rows, cols, f"{op} {self._fmt(dims)}")
        elif op == "Sigmoid":
            x = node.input[0]
            fused = [c for c in self.consumers[node.output[0]]
                     if c.op_type == "Mul" and set(c.input) == {x, node.output[0]}]
            if not fused:
                self.skipped[op] += 1
                return
            dims = self._shape(node, i, node.output[0], "output")
            rows, cols = (_prod(dims[:-1]), dims[-1]) if dims else (1, 1)
            self._add_vector(node, i, "silu", rows, cols, f"Sigmoid + Mul (SiLU) {self._fmt(dims)}")
        elif op == "Softmax":
            dims = self._shape(node, i, node.input[0], "input")
            default = -1 if self.opset >= 13 else 1
            axis = int(_attr(node, "axis", default))
            axis = axis + len(dims) if axis < 0 else axis
            if not 0 <= axis < max(len(dims), 1):
                self._fail(node, i, f"axis {axis} is outside the input {self._fmt(dims)}")
            if self.opset >= 13:
                cols = dims[axis]
                rows = _prod(dims) // cols if cols else 0
            else:  # coerced to 2-D at axis
                rows, cols = _prod(dims[:axis]), _prod(dims[axis:])
            self._add_vector(node, i, "softmax", rows, cols, f"Softmax {self._fmt(dims)} axis {axis}")
        elif op in ROW_NORMS:
            dims = self._shape(node, i, node.input[0], "input")
            axis = int(_attr(node, "axis", -1))
            axis = axis + len(dims) if axis < 0 else axis
            self._add_vector(node, i, ROW_NORMS[op], _prod(dims[:axis]), _prod(dims[axis:]),
                             f"{op} {self._fmt(dims)} axis {axis}")
        elif op == "RotaryEmbedding":
            dims = self._shape(node, i, node.input[0], "input")
            self._add_vector(node, i, "rope", _prod(dims[:-1]), dims[-1] if dims else 1,
                             f"RotaryEmbedding {self._fmt(dims)}")

    def _silu_mul(self, node):
        """True for Mul(x, Sigmoid(x)): the Sigmoid node already counted it as a SiLU."""
        if len(node.input) != 2:
            return False
        for j, name in enumerate(node.input):
            producer = self.producer.get(name)
            if (producer is not None and producer.op_type == "Sigmoid"
                    and producer.input[0] == node.input[1 - j]):
                return True
        return False

    def _propagate_unknown(self, node):
        """Shape inference skips ops it does not know (contrib Gelu, ...): for unary-shaped
        vector ops, the output has the input's shape."""
        if node.op_type in GEMM_OPS or not node.output or not node.input:
            return
        out = self.values.get(node.output[0])
        if out is not None and out.dims is not None:
            return
        if node.op_type in ELEMENTWISE or node.op_type in ROW_NORMS or node.op_type in (
                "Sigmoid", "Softmax", "RotaryEmbedding"):
            src = self.values.get(node.input[0])
            if src is not None and src.dims is not None:
                self.values[node.output[0]] = Tensor(list(src.dims), src.elem_type)

    def run(self):
        vector_types = set(ELEMENTWISE) | set(ROW_NORMS) | {"Sigmoid", "Softmax", "RotaryEmbedding"}
        for i, node in enumerate(self.graph.node):
            self._propagate_unknown(node)
            if node.op_type == "MatMul":
                self.matmul(node, i)
            elif node.op_type == "Gemm":
                self.gemm(node, i)
            elif node.op_type == "Conv":
                self.conv(node, i)
            elif node.op_type in vector_types:
                if self.vector_ops:
                    self.vector(node, i)
                else:
                    self.skipped[node.op_type] += 1
            else:
                self.skipped[node.op_type] += 1
        if not self.gemms:
            raise ImportFailure("no MatMul, Gemm or Conv node; a workload needs at least one GEMM")


def _yaml_entry(entry):
    """One entry as a YAML flow mapping on one line (PyYAML quotes what needs quoting)."""
    return yaml.safe_dump(entry, default_flow_style=True, width=float("inf"), sort_keys=False).strip()


def render(conv, source, name, vector_ops):
    lines = [f"# Generated by scripts/onnx_to_workload.py from {os.path.basename(source)} "
             f"(opset {conv.opset}).",
             "# GEMMs [m, k] x [k, n]: MatMul batch dims fold into m when B is shared, else "
             "repeat = batches;",
             "# Conv by im2col: m = N*prod(out), k = C/group*prod(kernel), n = F/group, "
             "repeat = group."]
    if conv.skipped:
        listed = ", ".join(f"{op} x{n}" for op, n in sorted(conv.skipped.items()))
        lines.append(f"# Not GEMMs{'' if vector_ops else ' or not written (--vector-ops)'}: {listed}")
    lines.append(yaml.safe_dump({"name": name}, width=float("inf")).strip())
    lines.append("gemms:")
    for entry, note in conv.gemms:
        lines.append(f"  - {_yaml_entry(entry)}  # {note}")
    if vector_ops and conv.vectors:
        lines.append("vector_ops:")
        for entry, note in conv.vectors:
            lines.append(f"  - {_yaml_entry(entry)}  # {note}")
    return "\n".join(lines) + "\n"


def convert(path, dims=None, dtype="chip", vector_ops=False, name=None):
    """The workload YAML text for the ONNX file at `path`. Raises ImportFailure."""
    if onnx is None:
        raise ImportFailure("the onnx module is missing (Debian: apt-get install python3-onnx)")
    try:
        with warnings.catch_warnings():  # protobuf warns on garbage before it fails
            warnings.simplefilter("ignore")
            model = onnx.load(path)
    except FileNotFoundError:
        raise ImportFailure("cannot open ONNX file")
    except Exception as e:
        raise ImportFailure(f"not an ONNX model: {str(e).splitlines()[0] if str(e) else type(e).__name__}")
    if not model.graph.node:
        raise ImportFailure("the graph has no nodes")
    _check_graph(model)
    conv = Converter(model, path, dims or {}, dtype, vector_ops)
    conv.run()
    label = name or model.graph.name or os.path.splitext(os.path.basename(path))[0]
    return render(conv, path, label, vector_ops)


def _check_graph(model):
    """Refuses an opset this onnx does not define (its rules, e.g. Softmax's axis, would be
    guessed) and a graph whose nodes form a cycle (ONNX graphs are acyclic; shape inference and
    the walk in Converter.run would go wrong)."""
    known = onnx.defs.onnx_opset_version()
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx") and not 1 <= o.version <= known:
            raise ImportFailure(f"opset {o.version}: expected an ai.onnx opset in [1, {known}] "
                                f"(the onnx module installed knows up to {known})")
    producer = {out: i for i, node in enumerate(model.graph.node) for out in node.output if out}
    # Kahn's algorithm over node -> node edges through their tensors.
    waiting = [0] * len(model.graph.node)
    users = collections.defaultdict(list)
    for i, node in enumerate(model.graph.node):
        for name in set(node.input):
            if name in producer:
                waiting[i] += 1
                users[producer[name]].append(i)
    ready = [i for i, w in enumerate(waiting) if w == 0]
    done = 0
    while ready:
        i = ready.pop()
        done += 1
        for j in users[i]:
            waiting[j] -= 1
            if waiting[j] == 0:
                ready.append(j)
    if done < len(waiting):
        stuck = next(i for i, w in enumerate(waiting) if w > 0)
        node = model.graph.node[stuck]
        raise ImportFailure(f"the graph has a cycle through node '{node.name or stuck}' ({node.op_type}); "
                            "expected an acyclic ONNX graph")


def _write(path, text):
    """Writes `text` to `path` through a temporary created exclusively beside it (never an
    existing file or link), renamed over it; ImportFailure when the folder is not writable."""
    folder = os.path.dirname(os.path.abspath(path))
    try:
        fd, temp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=folder)
    except OSError as e:
        raise ImportFailure(f"{path}: cannot write ({e.strerror})") from None
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(temp, path)
    except OSError as e:
        os.unlink(temp)
        raise ImportFailure(f"{path}: cannot write ({e.strerror})") from None


def _parse_dims(values, parser):
    dims = {}
    for v in values or []:
        key, sep, num = v.partition("=")
        if not sep or not key or not num.isdigit() or int(num) <= 0:
            parser.error(f"--dim {v}: expected NAME=VALUE with a positive integer, e.g. batch=4")
        dims[key] = int(num)
    return dims


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Write a Systolic GEMM-list workload from an ONNX graph's MatMul, Gemm and "
                    "Conv ops (and, with --vector-ops, its vector-unit ops).")
    parser.add_argument("model", help="ONNX file")
    parser.add_argument("-o", "--output", help="workload YAML to write (default: stdout)")
    parser.add_argument("--dim", action="append", metavar="NAME=VALUE",
                        help="bind a symbolic input dimension, e.g. --dim batch=4 (repeatable)")
    parser.add_argument("--dtype", default="chip", choices=("chip", "graph") + DTYPES,
                        help="GEMM dtype: chip (omit; the chip's mxu.dtype), graph (each "
                             "GEMM's input element type) or a fixed type (default: chip)")
    parser.add_argument("--vector-ops", action="store_true",
                        help="also write a vector_ops list (not yet read by systolic)")
    parser.add_argument("--name", help="workload label (default: the graph's name)")
    args = parser.parse_args(argv)
    dims = _parse_dims(args.dim, parser)
    try:
        if args.output and (os.path.isdir(args.output) or
                            not os.access(os.path.dirname(os.path.abspath(args.output)), os.W_OK)):
            raise ImportFailure(f"{args.output}: cannot write (not a writable file path)")  # before the work
        text = convert(args.model, dims, args.dtype, args.vector_ops, args.name)
        if args.output:
            _write(args.output, text)
    except ImportFailure as e:
        message = str(e) if str(e).startswith(f"{args.output}:") and args.output else f"{args.model}: {e}"
        print(message, file=sys.stderr)
        return 2
    if not args.output:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
