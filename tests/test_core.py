"""The compiled core seen from Python: limits, Ctrl-C, error mapping, the bitset dataset."""

import os
import signal
import threading
import time

import numpy as np
import pytest

from optitree import _core
from optitree.exceptions import DataError, InvalidParameterError


def test_status_names_are_shared():
    assert _core.status_names() == [
        "optimal",
        "time_limit",
        "node_limit",
        "memory_limit",
        "interrupted",
        "greedy",
    ]


def test_time_and_node_limits_stop_a_search():
    assert _core._spin(time_limit=0.05)[0] == "time_limit"
    assert _core._spin(node_limit=1000) == ("node_limit", 1000)


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf")])
def test_bad_time_limits_are_parameter_errors(bad):
    with pytest.raises(InvalidParameterError, match="time_limit"):
        _core._spin(time_limit=bad)


@pytest.mark.skipif(os.name != "posix", reason="needs POSIX signals")
@pytest.mark.parametrize("on_worker_thread", [False, True])
def test_ctrl_c_interrupts_a_long_call_and_returns_its_result(on_worker_thread):
    # The call has no limit: only the SIGINT can end it. It must come back with status
    # 'interrupted' instead of raising, and the interpreter must stay usable. Single-threaded
    # searches run on the calling thread and poll for signals themselves; parallel ones run on
    # a worker thread while the calling thread watches.
    timer = threading.Timer(0.2, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    started = time.monotonic()
    status, iterations = _core._spin(on_worker_thread=on_worker_thread)
    timer.join()
    assert status == "interrupted"
    assert iterations > 0
    assert time.monotonic() - started < 30  # generous: only guards against a hang


@pytest.mark.parametrize("on_worker_thread", [False, True])
def test_other_threads_run_while_the_core_works(on_worker_thread):
    # The GIL is released during the call: a Python thread makes progress meanwhile.
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(1)
            time.sleep(0.001)

    th = threading.Thread(target=ticker)
    th.start()
    _core._spin(time_limit=0.2, on_worker_thread=on_worker_thread)
    stop.set()
    th.join()
    assert len(ticks) > 10


def test_dataset_summary_counts_classes_with_weights():
    codes = np.array([[0, 1], [1, 0], [2, 1], [1, 1]], dtype=np.int64)
    labels = np.array([0, 1, 1, 0], dtype=np.int64)
    s = _core.dataset_summary(codes, labels)
    assert (s["n_rows"], s["n_features"], s["n_classes"], s["n_values"]) == (4, 2, 2, [3, 2])
    w = np.array([1.0, 2.0, 0.5, 0.0])
    np.testing.assert_allclose(
        _core.dataset_summary(codes, labels, sample_weight=w)["class_totals"], [1.0, 2.5]
    )
    s = _core.dataset_summary(codes, labels, n_classes=3, n_values=[4, 2])
    assert s["n_values"] == [4, 2] and s["n_classes"] == 3


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.int64])
def test_the_core_reads_codes_of_every_width_alike(dtype):
    # A binarised table is one byte a cell: an eighth of the int64 it was, to fill and read.
    rng = np.random.default_rng(4)
    codes = rng.integers(0, 3, size=(50, 4))
    labels = (codes[:, 0] + codes[:, 2] > 2).astype(np.int64)
    narrow = np.ascontiguousarray(codes.astype(dtype))
    result = _core.fit_branches(narrow, labels, 1, 100, n_values=[3] * 4)
    reference = _core.fit_branches(codes.astype(np.int64), labels, 1, 100, n_values=[3] * 4)
    assert result["upper_bound"] == reference["upper_bound"]
    for name, array in reference["tree"].items():
        np.testing.assert_array_equal(result["tree"][name], array)
    # Not contiguous (a column slice): read through a copy, same result.
    wide = np.zeros((50, 8), dtype=dtype)
    wide[:, ::2] = codes
    again = _core.fit_branches(wide[:, ::2], labels, 1, 100, n_values=[3] * 4)
    assert again["upper_bound"] == reference["upper_bound"]
    # Column by column (Fortran order, as the estimators build it): copied, not transposed.
    by_column = np.asfortranarray(codes.astype(dtype))
    again = _core.fit_branches(by_column, labels, 1, 100, n_values=[3] * 4)
    for name, array in reference["tree"].items():
        np.testing.assert_array_equal(again["tree"][name], array)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.int64])
@pytest.mark.parametrize("order", ["C", "F"])
def test_a_bad_code_is_named_by_its_row_and_feature_in_either_order(dtype, order):
    codes = np.zeros((6, 3), dtype=dtype, order=order)
    codes[4, 2] = 9  # past n_values: checked feature by feature, the first feature is named
    codes[5, 0] = 7
    with pytest.raises(DataError, match="feature 0 has code 7 at row 5"):
        _core.fit_branches(codes, np.zeros(6, dtype=np.int64), 1, 100, n_values=[2] * 3)
    if dtype == np.int64:
        codes[3, 1] = -1  # not a code at all, found while copying: the first in row order
        with pytest.raises(DataError, match="feature 1 has code -1 at row 3"):
            _core.fit_branches(codes, np.zeros(6, dtype=np.int64), 1, 100)


def test_a_view_of_binarised_columns_takes_a_byte_a_cell():
    from optitree._validation import encode_fit
    from optitree.base import categorical_view, code_dtype

    X = np.random.default_rng(5).normal(size=(20, 3))
    view = categorical_view(encode_fit(X))
    assert view.codes.dtype == np.uint8
    assert view.codes.flags.f_contiguous  # the core's order: handed over by a copy
    assert code_dtype([2, 256]) == np.uint8
    assert code_dtype([257]) == np.uint16 and code_dtype([1 << 16]) == np.uint16
    assert code_dtype([(1 << 16) + 1]) == np.int64


@pytest.mark.parametrize(
    ("codes", "labels", "kwargs", "message"),
    [
        ([[0], [-1]], [0, 1], {}, "feature 0 has code -1 at row 1"),
        ([[0], [5]], [0, 1], {"n_values": [3]}, "feature 0 has code 5 at row 1"),
        ([[0], [1]], [0, 1, 1], {}, "2 rows but y has 3"),
        ([[0], [1]], [0, 3], {"n_classes": 2}, "label 3 at row 1"),
        (np.zeros((0, 1)), [], {}, "no rows"),
    ],
)
def test_core_data_errors_name_the_problem(codes, labels, kwargs, message):
    with pytest.raises(DataError, match=message):
        _core.dataset_summary(
            np.asarray(codes, dtype=np.int64), np.asarray(labels, dtype=np.int64), **kwargs
        )
