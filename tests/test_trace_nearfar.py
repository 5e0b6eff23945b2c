"""The trace summary of benchmarks/trace_nearfar.py on a made-up trace (no GPU needed)."""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import trace_nearfar  # noqa: E402


def test_summary_splits_local_and_grid_steps_and_skips_raises():
    clock = 1e9  # 1 GHz: one cycle is a nanosecond
    local_bit = 1 << 40
    moves = [
        # top, ring, move end, |L| (+ local bit), list, key, atomic, append (cycles)
        (0, 100, 5100, 3 | local_bit, 600, 900, 1700, 2500),
        (5200, 5300, 9300, 5 | local_bit, 5800, 6100, 6900, 7700),
        (9400, 9500, 12500, 0, 0, 0, 0, 0),  # a raise: left out
        (14500, 14800, 22800, 4000, 15300, 15700, 16900, 18300),
        (25800, 26100, 34100, 5000, 26600, 27000, 28200, 29600),
    ]
    trace = np.zeros(8 * 16, np.uint64)
    trace[: 8 * len(moves)] = np.array(moves, np.uint64).ravel()
    s = trace_nearfar.summary(trace, len(moves), clock)
    assert s["local_moves"] == 2
    assert s["local_move_us"] == 4.5  # 5.0 and 4.0
    assert s["grid_move_us"] == 8.0
    assert s["grid_ring_us"] == 0.3
    assert s["grid_gap_us"] == 3.0  # 22800 -> 25800; the last move has no gap
    assert s["local_list_len"] == 4.0
    assert s["grid_list_read_us"] == 0.5
    assert s["grid_edge_atomic_us"] == 1.2
    assert s["grid_stamp_append_us"] == 1.4
    assert s["local_rest_us"] == 2.1  # 2500 -> 5100 and 7700 -> 9300: the median of 2.6 and 1.6
