"""Checks of the SCALE-Sim v2 reference itself (tests/py/scalesim_reference.py) against values
worked out by hand from SCALE-Sim's WS demand-matrix structure."""
import os
import random
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scalesim_reference as ref  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOPO = os.path.join(ROOT, "traces", "topologies")


def write(tmp_path, text, name="t.csv"):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def test_single_fold_4x4(tmp_path):
    # GEMM M=K=N=4 on 4x4: one fold. Demand rows: 4 (weights load) + 4 (T) + 3 (C-1 drain)
    # = 11, skew adds R-1 = 3 -> 14 rows; Total Cycles is the last row's index, 13.
    p = write(tmp_path, "Layer, M, N, K,\nG, 4, 4, 4,\n")
    assert ref.scalesim_total_cycles(p, 4, 4) == [("G", 13)]


def test_gemm_form_maps_m_n_k(tmp_path):
    # Columns are M, N, K. T = M = 5, Sr = K = 3, Sc = N = 7 on 2x2: folds ceil(3/2) *
    # ceil(7/2) = 2 * 4 = 8, each 2*2 + 2 + 5 - 2 = 9 rows -> 72 rows -> 71.
    p = write(tmp_path, "Layer,M,N,K\nG,5,7,3\n")  # SCALE-Sim's gpt2.csv style, no commas
    assert ref.scalesim_total_cycles(p, 2, 2) == [("G", 71)]


def test_alexnet_conv1_128():
    # 224x224, 11x11/4: ofmap ceil((224-11+4)/4) = 55, T = 3025, Sr = 363 (3 row folds),
    # Sc = 96 (1 col fold): 3 * (2*128 + 128 + 3025 - 2) - 1 = 3 * 3407 - 1 = 10220.
    res = ref.scalesim_total_cycles(os.path.join(TOPO, "scalesim", "alexnet.csv"), 128, 128)
    assert res[0] == ("Conv1", 10220)
    assert len(res) == 5


def test_resnet18_128():
    res = dict(ref.scalesim_total_cycles(os.path.join(TOPO, "resnet18.csv"), 128, 128))
    assert len(res) == 21
    # conv1: T = 112*112 = 12544, Sr = 147 (2 row folds), Sc = 64: 2 * (384 + 12544 - 2) - 1.
    assert res["Conv1"] == 2 * 12926 - 1 == 25851
    # fc: T = 1, Sr = 512 (4), Sc = 1000 (8): 32 folds * (384 + 1 - 2) - 1 = 12255.
    assert res["FC"] == 12255


def test_scalesim_resnet18_is_unpadded():
    # SCALE-Sim's own file gives 224 for conv1: ofmap ceil((224-7+2)/2) = 110, T = 12100.
    layers = ref.read_topology(os.path.join(TOPO, "scalesim", "Resnet18.csv"))
    assert ref.operand_dims(layers[0]) == (12100, 147, 64)
    # 1x1/2 shortcut on 56: ceil((56-1+2)/2) = 29 (a partial edge window counts).
    assert layers[7].name == "Conv3_s" and ref.operand_dims(layers[7])[0] == 29 * 29


def test_depthwise_split(tmp_path):
    # 'DP' in the name: one layer per channel, '<name>Channel_<i>', Channels = 1.
    p = write(tmp_path, "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, "
                        "Channels, Num Filter, Strides,\n"
                        "C1,5,5,3,3,2,4,1,\nC2_DP,5,5,3,3,3,1,1,\nC3_dw,5,5,3,3,1,1,1,#dw\n")
    res = ref.scalesim_total_cycles(p, 4, 4)
    assert [n for n, _ in res] == ["C1", "C2_DPChannel_0", "C2_DPChannel_1", "C2_DPChannel_2",
                                   "C3_dw"]
    # C2_DP per channel: T = 3*3 = 9, Sr = 9 (3 row folds of 4), Sc = 1: 3 * (8+4+9-2) - 1 = 56.
    assert res[1][1] == res[2][1] == res[3][1] == 56
    # C1: T = 9, Sr = 18 (5 row folds), Sc = 4: 5 * 19 - 1 = 94.
    assert res[0][1] == 94


def test_two_strides_header(tmp_path):
    p = write(tmp_path, "Layer name,IFMAP height,IFMAP width,Filter height,Filter width,"
                        "Channels,Num filter,Stride height,Stride width,\nL,9,9,3,3,1,1,2,1,\n")
    (layer,) = ref.read_topology(p)
    assert ref.operand_dims(layer) == (4 * 7, 9, 1)


@pytest.mark.parametrize("seed", range(25))
def test_formula_matches_literal_demand_matrices(seed):
    # Build SCALE-Sim's three demand matrices literally for small shapes; their common row count
    # must be what ws_demand_rows computes.
    pytest.importorskip("numpy")
    rng = random.Random(seed)
    T, Sr, Sc = rng.randint(1, 12), rng.randint(1, 12), rng.randint(1, 12)
    R, C = rng.randint(1, 6), rng.randint(1, 6)
    ifm, flt, ofm = ref.ws_demand_matrices(T, Sr, Sc, R, C)
    assert ifm.shape[0] == ref.ws_demand_rows(T, Sr, Sc, R, C)
    # Every operand element is demanded exactly once per fold it belongs to.
    assert (ifm >= 0).sum() == T * Sr * -(-Sc // C)
    assert (flt >= 0).sum() == Sr * Sc
    assert (ofm >= 0).sum() == T * Sc * -(-Sr // R)


def test_main_prints_every_layer(capsys):
    assert ref.main(["x", os.path.join(TOPO, "scalesim", "yolo_tiny.csv"), "32", "32"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1] == "layer, total_cycles"
    assert len(out) == 2 + 9 + 1
