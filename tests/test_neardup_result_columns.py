"""The dups tables' columns built from numpy buffers equal ``pa.array``'s, and
writing the tables does not import pandas (memory)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest

from repetend.neardup.result import _col, _repeat_string


def _parquet_bytes(col: pa.Array) -> bytes:
    import pyarrow.parquet as pq

    sink = pa.BufferOutputStream()
    pq.write_table(pa.table({"c": col}), sink, compression="zstd")
    return sink.getvalue().to_pybytes()


@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 100])
def test_columns_equal_pa_array(n):
    rng = np.random.default_rng(n)
    ints = rng.integers(-2**40, 2**40, size=n)
    floats = rng.random(n)
    floats[: n // 3] = np.nan
    bools = rng.random(n) < 0.5
    mask = rng.random(n) < 0.3
    for got, want in [
        (_col(ints, "int64"), pa.array(ints, pa.int64())),
        (_col(ints[::2], "int64"), pa.array(ints[::2], pa.int64())),
        (_col(floats, "float64"), pa.array(floats, pa.float64())),
        (_col(bools, "bool"), pa.array(bools, pa.bool_())),
        (_col(ints, "int64", mask=mask), pa.array(ints, pa.int64(), mask=mask)),
        (_repeat_string("minhash", n), pa.array(["minhash"] * n, pa.string())),
    ]:
        got.validate(full=True)
        assert got.type == want.type and got.null_count == want.null_count
        assert got.to_pylist() == want.to_pylist() or (  # NaN != NaN
            np.array_equal(got.to_numpy(zero_copy_only=False), want.to_numpy(zero_copy_only=False),
                           equal_nan=True))
        assert _parquet_bytes(got) == _parquet_bytes(want)


def test_writing_the_dups_tables_does_not_import_pandas(tmp_path):
    from repetend.corpus.store import TokenStore

    TokenStore.from_texts(["a b c d e f g"] * 3 + ["x y z w v u"]).save(tmp_path / "s")
    code = (
        "import sys\n"
        "from repetend.corpus.store import TokenStore\n"
        "from repetend.neardup import NearDupConfig, find_near_duplicates\n"
        f"s = TokenStore.open({str(tmp_path / 's')!r})\n"
        "r = find_near_duplicates(s, NearDupConfig(threshold=0.5))\n"
        f"r.write({str(tmp_path / 'd')!r})\n"
        "assert len(r.pairs) == 3, len(r.pairs)\n"
        "print('pandas' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
