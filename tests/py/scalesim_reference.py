#!/usr/bin/python3
"""Independent re-implementation of SCALE-Sim v2's weight-stationary 'Total Cycles' (CALC mode).

Written from SCALE-Sim v2's source (github.com/scalesim-project/scale-sim-v2, MIT licence), not
imported from it and not from this project, so that the simulator's `scalesim` convention can be
checked against it layer by layer. The structure mirrors SCALE-Sim's:

  scalesim/topology_utils.py      load_arrays_conv / load_arrays_gemm: the CSV rows, the 'DP'
                                  depthwise split, topo_calc_hyperparams: the valid-padding
                                  ofmap size ceil((H - Fh + S) / S)
  scalesim/compute/operand_matrix.py
                                  ifmap operand matrix [ofmap_px_per_filt x conv_window_size],
                                  filter operand [conv_window_size x num_filters]
  scalesim/compute/systolic_compute_ws.py
                                  Sr = window size, Sc = filters, T = ofmap pixels; folds
                                  ceil(Sr/R) x ceil(Sc/C); per fold the ifmap demand matrix is
                                  R rows of -1 (weight load) + T rows + C-1 rows of -1 (drain),
                                  then skew_matrix adds R-1 rows; folds are concatenated
  scalesim/memory/double_buffered_scratchpad_mem.py
                                  service_memory_requests walks the demand rows, one per cycle;
                                  total_cycles = the serviced cycle of the last OFMAP row, i.e.
                                  (rows - 1) + stalls. In CALC mode the read buffers are
                                  ReadBufferEstimateBw (always a hit) and no stall is taken, so
                                  Total Cycles = rows - 1 = folds * (2R + C + T - 2) - 1.

Caveat: the OFMAP write buffer (scalesim/memory/write_buffer.py) can add stall cycles in some
versions of SCALE-Sim when a layer's outputs overflow half of the OFMAP SRAM; this reference
assumes a stall-free run (SCALE-Sim's 'Stall Cycles' column = 0), which is what the `scalesim`
convention of this project models.

Parsing is SCALE-Sim's with these tolerances: the form is detected from the header (SCALE-Sim
needs `-i gemm` instead), the trailing comma is optional, '#' starts a comment, blank lines are
skipped anywhere. Layer names and order are SCALE-Sim's COMPUTE_REPORT rows: one per CSV row,
except a conv row whose name contains 'DP', which becomes `Channels` rows named
'<name>Channel_<i>' (i = 0 .. Channels-1), each with Channels = 1 and the same Num Filter.

Usage: scalesim_reference.py TOPOLOGY.csv [ROWS COLS]   (default 128 128)
"""

import sys
from dataclasses import dataclass

CONV_COLUMNS = ["ifmap height", "ifmap width", "filter height", "filter width", "channels",
                "num filter"]


@dataclass
class Layer:
    """One row of SCALE-Sim's topo_arrays: the convolution it simulates."""
    name: str
    ifmap_h: int
    ifmap_w: int
    filt_h: int
    filt_w: int
    channels: int
    num_filt: int
    stride_h: int
    stride_w: int


def _fields(line):
    line = line.split("#", 1)[0]
    if not line.strip():
        return []
    fields = [f.strip() for f in line.split(",")]
    if len(fields) > 1 and fields[-1] == "":
        fields.pop()  # the trailing comma SCALE-Sim expects (it always drops the last field)
    return fields


def _norm(field):
    return " ".join(field.replace("_", " ").lower().split())


def _header_form(fields):
    """'gemm', ('conv', two_strides) or raises ValueError."""
    f = [_norm(x) for x in fields]
    if f and f[-1] == "sparsity":
        f.pop()
    if not f or f[0] not in ("layer", "layer name"):
        raise ValueError(f"unrecognized header: {fields}")
    if f[1:] == ["m", "n", "k"]:
        return "gemm", False
    if f[1:] in (CONV_COLUMNS + ["strides"], CONV_COLUMNS + ["stride"]):
        return "conv", False
    if f[1:] == CONV_COLUMNS + ["stride height", "stride width"]:
        return "conv", True
    raise ValueError(f"unrecognized header: {fields}")


def read_topology(csv_path):
    """The layers SCALE-Sim would simulate for this file, in COMPUTE_REPORT order."""
    layers = []
    form = None
    with open(csv_path, encoding="utf-8-sig") as f:
        for lineno, line in enumerate(f, 1):
            fields = _fields(line)
            if not fields:
                continue
            if form is None:
                form = _header_form(fields)
                continue
            kind, two_strides = form
            name = fields[0]
            if kind == "gemm":
                # load_arrays_gemm: entries = [m, k, 1, k, 1, n, 1, 1]: an M x K ifmap, a 1 x K
                # filter, 1 channel, N filters, stride 1.
                m, n, k = (int(x) for x in fields[1:4])
                layers.append(Layer(name, m, k, 1, k, 1, n, 1, 1))
                continue
            v = [int(x) for x in fields[1:9 if two_strides else 8]]
            stride_w = v[7] if two_strides else v[6]
            layer = Layer(name, *v[:7], stride_w)
            if layer.filt_h > layer.ifmap_h or layer.filt_w > layer.ifmap_w:  # SCALE-Sim asserts
                raise ValueError(f"{csv_path}:{lineno}: filter larger than ifmap")
            if "DP" in name:  # load_arrays_conv: depth-wise convolution
                for ch in range(layer.channels):
                    layers.append(Layer(f"{name}Channel_{ch}", layer.ifmap_h, layer.ifmap_w,
                                        layer.filt_h, layer.filt_w, 1, layer.num_filt,
                                        layer.stride_h, layer.stride_w))
            else:
                layers.append(layer)
    return layers


def operand_dims(layer):
    """(T, Sr, Sc) of the WS dataflow: rows, cols of the ifmap operand matrix, filter columns."""
    # topo_calc_hyperparams: ofmap = int(math.ceil((ifmap - filt + stride) / stride)), here in
    # exact integer arithmetic (the float division loses precision beyond 2**53)
    ofmap_h = -(-(layer.ifmap_h - layer.filt_h + layer.stride_h) // layer.stride_h)
    ofmap_w = -(-(layer.ifmap_w - layer.filt_w + layer.stride_w) // layer.stride_w)
    window = layer.filt_h * layer.filt_w * layer.channels  # conv_window_size
    return ofmap_h * ofmap_w, window, layer.num_filt  # T, Sr, Sc


def ws_demand_rows(T, Sr, Sc, R, C):
    """Rows of the WS ifmap demand matrix, computed arithmetically."""
    row_fold = -(-Sr // R)
    col_fold = -(-Sc // C)
    per_fold = R + T + (C - 1)  # prefix (weights load) + streamed rows + suffix (drain)
    per_fold += R - 1           # skew_matrix: column c moves down by c, rows grow by cols-1
    return row_fold * col_fold * per_fold


def _skew_rows(rows, cols):
    # skew_matrix(): column c gets c rows of -1 above and cols-1-c below.
    return rows + cols - 1


def ws_demand_matrices(T, Sr, Sc, R, C):
    """Builds SCALE-Sim's three WS demand matrices literally (numpy); for small shapes only.

    Returns (ifmap, filter, ofmap) with the same row count, as SCALE-Sim asserts."""
    import numpy as np

    ifmap_op = np.arange(T * Sr).reshape(T, Sr)
    filter_op = np.arange(Sr * Sc).reshape(Sr, Sc) + 10_000_000
    ofmap_op = np.arange(T * Sc).reshape(T, Sc) + 20_000_000

    def skew(m):
        rows, cols = m.shape
        out = -np.ones((rows + cols - 1, cols))
        for c in range(cols):
            out[c:c + rows, c] = m[:, c]
        return out

    row_fold, col_fold = -(-Sr // R), -(-Sc // C)
    ifm, flt, ofm = [], [], []
    for fc in range(col_fold):
        for fr in range(row_fold):
            # create_ifmap_demand_mat
            part = ifmap_op[:, fr * R:min(fr * R + R, Sr)]
            part = np.concatenate((part, -np.ones((T, R - part.shape[1]))), axis=1)
            part = np.concatenate((-np.ones((R, R)), part, -np.ones((C - 1, R))), axis=0)
            ifm.append(skew(part))
            # create_filter_demand_mat
            part = filter_op[fr * R:min(fr * R + R, Sr), fc * C:min(fc * C + C, Sc)]
            part = np.concatenate((part, -np.ones((part.shape[0], C - part.shape[1]))), axis=1)
            part = np.concatenate((part, -np.ones((R - part.shape[0], C))), axis=0)
            part = np.flip(part, 0)
            flt.append(np.concatenate((part, -np.ones((R + C + T - 2, C))), axis=0))
            # create_ofmap_demand_mat
            part = ofmap_op[:, fc * C:min(fc * C + C, Sc)]
            part = np.concatenate((part, -np.ones((T, C - part.shape[1]))), axis=1)
            part = np.concatenate((-np.ones((2 * R - 1, C)), part), axis=0)
            ofm.append(skew(part))
    ifm, flt, ofm = (np.concatenate(x) for x in (ifm, flt, ofm))
    assert ifm.shape[0] == flt.shape[0] == ofm.shape[0], "demands out of sync"
    assert ifm.shape[1] == R and flt.shape[1] == C and ofm.shape[1] == C
    return ifm, flt, ofm


def layer_total_cycles(layer, rows, cols):
    """SCALE-Sim's 'Total Cycles' for one layer: index of the last demand row (stall-free)."""
    T, Sr, Sc = operand_dims(layer)
    return ws_demand_rows(T, Sr, Sc, rows, cols) - 1


def scalesim_total_cycles(csv_path, rows, cols):
    """[(layer_name, total_cycles)] in SCALE-Sim's COMPUTE_REPORT order."""
    return [(l.name, layer_total_cycles(l, rows, cols)) for l in read_topology(csv_path)]


def main(argv):
    if len(argv) not in (2, 4):
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    rows, cols = (int(argv[2]), int(argv[3])) if len(argv) == 4 else (128, 128)
    results = scalesim_total_cycles(argv[1], rows, cols)
    print(f"# {argv[1]} on a {rows}x{cols} weight-stationary array (SCALE-Sim v2 CALC mode)")
    print("layer, total_cycles")
    for name, cycles in results:
        print(f"{name}, {cycles}")
    print(f"# total, {sum(c for _, c in results)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
