"""The encoder's batches (chunkeval.embedders.bert._batches): every text once, sorted by
length, bounded by count and by padded wordpieces."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from chunkeval.embedders.bert import BATCH_TOKENS, _batches


def test_batches_by_hand():
    lengths = np.array([256, 10, 256, 12, 120, 256, 100, 11])
    got = [b.tolist() for b in _batches(lengths, 32)]
    # sorted by length; short texts share a pass while rows x longest stay <= 256 wordpieces
    assert got == [[1, 7, 3], [6, 4], [0], [2], [5]]
    assert [b.tolist() for b in _batches(lengths, 2)] == [[1, 7], [3, 6], [4], [0], [2], [5]]
    assert [b.tolist() for b in _batches(np.array([5000, 3]), 32)] == [[1], [0]]  # over the bound: alone


@given(lengths=st.lists(st.integers(1, 600), max_size=80), batch_size=st.integers(1, 40))
def test_batches_cover_every_text_once_within_the_bounds(lengths, batch_size):
    arr = np.array(lengths, dtype=np.int64)
    batches = list(_batches(arr, batch_size))
    flat = np.concatenate(batches) if batches else np.array([], dtype=np.int64)
    assert sorted(flat.tolist()) == list(range(len(lengths)))
    assert np.all(np.diff(arr[flat]) >= 0)  # length order: little padding
    for b in batches:
        assert 1 <= len(b) <= batch_size
        assert len(b) == 1 or len(b) * arr[b].max() <= BATCH_TOKENS


def test_batches_run_at_once_up_to_the_threads_decided():
    import threading

    from chunkeval.embedders import bert as E

    class Threads(E._Threads):
        def __init__(self, threaded: bool, decided: list[int]) -> None:
            super().__init__(E.MIN_THREADED_TOKENS if threaded else 0)
            self.decided = iter(decided)

        def now(self) -> int:
            return next(self.decided, 2) if self.threaded else 1

    lock, active, most, callers = threading.Lock(), [0], [0], set()
    pair = threading.Barrier(2)  # batches 1 and 2, the first sent once two were decided, meet

    def embed(rows: np.ndarray) -> np.ndarray:
        with lock:
            active[0] += 1
            most[0] = max(most[0], active[0])
            callers.add(threading.get_ident())
        if threading.current_thread() is not threading.main_thread() and int(rows[0]) in (1, 2):
            pair.wait(60)  # both running at once, on any machine (60 s: a bug cannot hang the suite)
        with lock:
            active[0] -= 1
        return rows * 10

    batches = [np.array([i, i + 100]) for i in range(8)]
    got = {int(r[0]): v.tolist() for r, v in E._concurrently(embed, batches, Threads(True, [1, 1]))}
    assert got == {i: [10 * i, 10 * (i + 100)] for i in range(8)}  # every batch once, its own rows
    assert most[0] == 2  # one at a time while 1 was decided, then two at once, never more
    most[0], callers = 0, set()
    assert len(list(E._concurrently(embed, batches, Threads(False, [])))) == 8
    assert most[0] == 1 and callers == {threading.get_ident()}  # small work: the calling thread
