"""The kept rows of an Arrow record batch, text replaced: what the Parquet and the
Hugging Face dataset writers write."""

from __future__ import annotations

__all__ = ["kept_rows"]


def kept_rows(batch, base: int, keep: dict, schema, text_field: str):
    """The rows of an Arrow record *batch* (rows ``base…``) that *keep* holds, every
    column kept and the text column replaced where *keep* has a new text (None:
    unchanged); None when no row is kept."""
    import numpy as np
    import pyarrow as pa

    n = batch.num_rows
    rows = [i for i in range(base, base + n) if i in keep]
    if not rows:
        return None
    t = pa.Table.from_batches([batch]).take(pa.array(np.asarray(rows) - base, pa.int64()))
    new = [keep[i] for i in rows]
    if any(v is not None for v in new):
        ti = schema.get_field_index(text_field)
        ttype = schema.field(ti).type
        old = t.column(ti).to_pylist()
        vals = [o if v is None else v for o, v in zip(old, new)]
        if pa.types.is_binary(ttype) or pa.types.is_large_binary(ttype):
            vals = [v.encode("utf-8", "surrogatepass") if isinstance(v, str) else v for v in vals]
            col = pa.array(vals, type=ttype)
        elif pa.types.is_dictionary(ttype):
            col = pa.array(vals, type=ttype.value_type).dictionary_encode().cast(ttype)
        else:
            col = pa.array(vals, type=ttype)
        t = t.set_column(ti, schema.field(ti), col)
    return t
