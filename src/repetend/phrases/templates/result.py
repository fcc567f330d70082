"""The template tables, reading them back, and the spans they cut."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from ..._atomic import write_json, write_parquet
from ...errors import InputError, ParameterError
from .config import TemplateConfig


#: The marker of a slot in ``parts`` and in the example text.
SLOT = "▢"


_SLOT_TYPE = pa.struct([
    ("slot", pa.int32()),
    ("kind", pa.string()),
    ("distinct", pa.int64()),
    ("empty", pa.int64()),
    ("top_values", pa.list_(pa.struct([("value", pa.string()), ("count", pa.int64())]))),
])


TEMPLATE_SCHEMA = pa.schema([
    ("template_id", pa.int64()),
    ("parts", pa.list_(pa.string())),
    ("n_slots", pa.int32()),
    ("slots", pa.list_(_SLOT_TYPE)),
    ("df", pa.int64()),
    ("occurrences", pa.int64()),
    ("span_tokens", pa.int64()),
    ("fixed_tokens", pa.int64()),
    ("psi", pa.int64()),
    ("text", pa.string()),
    ("example_doc_id", pa.string()),
])


OCCURRENCE_SCHEMA = pa.schema([
    ("template_id", pa.int64()),
    ("doc_index", pa.int64()),
    ("doc_id", pa.string()),
    ("start", pa.int64()),
    ("end", pa.int64()),
])


@dataclass
class TemplateResult:
    """Templates with slots; see the module docstring for the columns.

    ``table`` is ``templates.parquet``, ``occurrences`` is
    ``template_occurrences.parquet``."""

    table: pa.Table
    occurrences: pa.Table
    summary: dict
    config: TemplateConfig = field(default_factory=TemplateConfig)

    @property
    def n_templates(self) -> int:
        return self.table.num_rows

    def to_pandas(self, table: str = "templates"):
        """``templates`` (default) or ``occurrences`` as a pandas DataFrame."""
        if table not in ("templates", "occurrences"):
            raise ParameterError(f"no table {table!r}; tables: templates, occurrences")
        return (self.table if table == "templates" else self.occurrences).to_pandas()

    def write(self, out: str | Path) -> Path:
        """Write ``templates.parquet``, ``template_occurrences.parquet`` and
        ``templates_summary.json`` into directory *out*, each atomically."""
        out = Path(out)
        if out.exists() and not out.is_dir():
            raise InputError("output path exists and is not a directory", path=str(out))
        out.mkdir(parents=True, exist_ok=True)
        write_parquet(out / "templates.parquet", self.table)
        write_parquet(out / "template_occurrences.parquet", self.occurrences)
        write_json(out / "templates_summary.json", self.summary)
        return out

    to_parquet = write


def read_templates(path: str | Path) -> TemplateResult:
    """Read a directory written by :meth:`TemplateResult.write`."""
    import pyarrow.parquet as pq

    path = Path(path)
    f = path / "templates.parquet"
    if not f.is_file():
        raise InputError("no templates.parquet", path=str(path))
    occ = path / "template_occurrences.parquet"
    summary_file = path / "templates_summary.json"
    summary = json.loads(summary_file.read_text(encoding="utf-8")) if summary_file.is_file() else {}
    params = summary.get("parameters", {})
    known = {k: v for k, v in params.items() if k in TemplateConfig.__slots__}
    if params and "drop_nested" not in params:      # written before the nesting filter
        known["drop_nested"] = False
    return TemplateResult(table=pq.read_table(f),
                          occurrences=pq.read_table(occ) if occ.is_file()
                          else OCCURRENCE_SCHEMA.empty_table(),
                          summary=summary, config=TemplateConfig(**known))


def template_spans(source: "TemplateResult | pa.Table | str | Path"
                   ) -> dict[int, npt.NDArray[np.int64]]:
    """Token spans to cut, per document: the template occurrences (slots
    included) merged where they overlap or touch.

    Parameters
    ----------
    source : TemplateResult, the occurrences table, or a directory holding
        ``template_occurrences.parquet`` (a phrases or scan output directory).

    Returns
    -------
    dict
        ``doc_index -> int64 array [k, 2]`` of ``(start, end)`` token positions
        within the document, sorted, disjoint.  Documents without a template are
        absent.  The character span of ``(s, e)`` is
        ``[token_spans[s, 0], token_spans[e - 1, 1])``, as for phrase occurrences
        (:mod:`repetend.clean.spans`).
    """
    if isinstance(source, TemplateResult):
        occ = source.occurrences
    elif isinstance(source, pa.Table):
        occ = source
    else:
        import pyarrow.parquet as pq

        p = Path(source)
        f = p / "template_occurrences.parquet" if p.is_dir() else p
        if not f.is_file():
            raise InputError("no template_occurrences.parquet", path=str(p))
        occ = pq.read_table(f, columns=["doc_index", "start", "end"])
    if occ.num_rows == 0:
        return {}
    d = occ.column("doc_index").to_numpy().astype(np.int64)
    s = occ.column("start").to_numpy().astype(np.int64)
    e = occ.column("end").to_numpy().astype(np.int64)
    order = np.lexsort((s, d))
    d, s, e = d[order], s[order], e[order]
    # merge overlapping/touching spans per document (vectorised running max)
    out: dict[int, np.ndarray] = {}
    bounds = np.flatnonzero(np.diff(d)) + 1
    for lo, hi in zip(np.concatenate(([0], bounds)), np.concatenate((bounds, [d.size]))):
        ss, ee = s[lo:hi], e[lo:hi]
        run_end = np.maximum.accumulate(ee)
        new = np.ones(ss.size, dtype=bool)
        new[1:] = ss[1:] > run_end[:-1]
        starts = ss[new]
        idx = np.flatnonzero(new)
        ends = run_end[np.concatenate((idx[1:] - 1, [ss.size - 1]))]
        out[int(d[lo])] = np.stack([starts, ends], axis=1)
    return out
