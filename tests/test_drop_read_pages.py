"""drop_read_pages: consumed pages of a read-only memory map leave the resident set;
no value changes, and arrays in memory are never touched."""

from __future__ import annotations

import numpy as np

from repetend._memory import drop_read_pages


def _rss_file_kb() -> int:
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("RssFile:"):
                return int(line.split()[1])
    return 0


def test_dropped_pages_of_a_read_only_map_keep_their_values_and_leave_the_rss(tmp_path):
    want = np.arange(8 << 20, dtype=np.int32)          # 32 MB
    np.save(tmp_path / "t.npy", want)
    m = np.load(tmp_path / "t.npy", mmap_mode="r")
    view = np.ascontiguousarray(m, dtype=np.int32)      # a view of the map, as shingle_sets takes it
    assert int(view.sum(dtype=np.int64)) == int(want.sum(dtype=np.int64))   # all pages resident
    before = _rss_file_kb()
    drop_read_pages(view, 0, view.shape[0] - 1000)
    after = _rss_file_kb()
    assert before - after > 20_000                      # > 20 MB left the resident set
    assert np.array_equal(view, want) and np.array_equal(m, want)   # read back from the file
    drop_read_pages(view, 123, 4567)                    # unaligned, inside one run: still equal
    assert np.array_equal(view[100:5000], want[100:5000])


def test_arrays_in_memory_and_writable_maps_are_left_alone(tmp_path):
    a = np.arange(4 << 20, dtype=np.int32)
    drop_read_pages(a, 0, a.shape[0])
    assert np.array_equal(a, np.arange(4 << 20, dtype=np.int32))
    np.save(tmp_path / "w.npy", a)
    w = np.load(tmp_path / "w.npy", mmap_mode="r+")
    w[:10] = -1                                          # dirty pages must not be dropped
    drop_read_pages(w, 0, w.shape[0])
    assert w[:10].tolist() == [-1] * 10
    drop_read_pages(a[::2], 0, 100)                     # not contiguous: no-op
    drop_read_pages(a, 50, 10)                          # empty range: no-op
