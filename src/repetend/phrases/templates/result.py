"""The template tables, reading them back, and the spans they cut."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from ..._atomic import write_json, write_jsonl, write_parquet
from ...errors import InputError, ParameterError
from .config import TemplateConfig


_FORMATS = ("parquet", "jsonl")

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

    def write(self, out: str | Path, format: str = "parquet") -> Path:
        """Write ``templates``, ``template_occurrences`` (``.parquet``, or
        ``.jsonl`` with ``format="jsonl"``) and ``templates_summary.json`` into
        directory *out*, each atomically; the two tables of the other format
        are removed, so that they cannot be read back instead."""
        if format not in _FORMATS:
            raise ParameterError(f"format must be parquet or jsonl, got {format!r}")
        out = Path(out)
        if out.exists() and not out.is_dir():
            raise InputError("output path exists and is not a directory", path=str(out))
        out.mkdir(parents=True, exist_ok=True)
        write = write_parquet if format == "parquet" else write_jsonl
        for stem, table in (("templates", self.table),
                            ("template_occurrences", self.occurrences)):
            write(out / f"{stem}.{format}", table)
            for other in _FORMATS:
                if other != format:
                    (out / f"{stem}.{other}").unlink(missing_ok=True)
        write_json(out / "templates_summary.json", self.summary)
        return out

    to_parquet = write


def template_file(path: str | Path, stem: str) -> Path | None:
    """``stem.parquet`` or ``stem.jsonl`` in directory *path* (None: neither)."""
    for fmt in _FORMATS:
        f = Path(path) / f"{stem}.{fmt}"
        if f.is_file():
            return f
    return None


def read_table(f: Path, schema: pa.Schema, columns: list[str] | None = None) -> pa.Table:
    """A template table from Parquet or JSON lines, in *schema*'s types.

    Parameters
    ----------
    f : Path
        ``templates`` or ``template_occurrences`` file, ``.parquet`` or
        ``.jsonl`` (:func:`template_file` finds it).
    schema : pyarrow.Schema
        :data:`TEMPLATE_SCHEMA` or :data:`OCCURRENCE_SCHEMA`: the column
        types of a JSON lines file (an empty file gives an empty table).
    columns : list of str, optional
        Read only these columns.

    Returns
    -------
    pyarrow.Table
    """
    if f.suffix == ".parquet":
        import pyarrow.parquet as pq

        return pq.read_table(f, columns=columns)
    import pyarrow.json as pj

    table = (pj.read_json(f, parse_options=pj.ParseOptions(explicit_schema=schema))
             if f.stat().st_size else schema.empty_table())
    return table.select(columns) if columns else table


def read_templates(path: str | Path) -> TemplateResult:
    """Read a directory written by :meth:`TemplateResult.write` (either format)."""
    path = Path(path)
    f = template_file(path, "templates")
    if f is None:
        raise InputError("no templates.parquet or templates.jsonl", path=str(path))
    occ = template_file(path, "template_occurrences")
    summary_file = path / "templates_summary.json"
    summary = json.loads(summary_file.read_text(encoding="utf-8")) if summary_file.is_file() else {}
    params = summary.get("parameters", {})
    known = {k: v for k, v in params.items() if k in TemplateConfig.__slots__}
    if params and "drop_nested" not in params:      # written before the nesting filter
        known["drop_nested"] = False
    if params:                  # recorded only when on: absent, the run had them off
        known.setdefault("search_whole", False)
        known.setdefault("variant_evidence", False)
    return TemplateResult(table=read_table(f, TEMPLATE_SCHEMA),
                          occurrences=read_table(occ, OCCURRENCE_SCHEMA) if occ is not None
                          else OCCURRENCE_SCHEMA.empty_table(),
                          summary=summary, config=TemplateConfig(**known))


def template_spans(source: "TemplateResult | pa.Table | str | Path"
                   ) -> dict[int, npt.NDArray[np.int64]]:
    """Token spans to cut, per document: the template occurrences (slots
    included) merged where they overlap or touch.

    Parameters
    ----------
    source : TemplateResult, the occurrences table, or a directory holding
        ``template_occurrences.parquet`` or ``.jsonl`` (a phrases or scan
        output directory), or that file.

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
        p = Path(source)
        f = template_file(p, "template_occurrences") if p.is_dir() else p
        if f is None or not f.is_file():
            raise InputError("no template_occurrences.parquet or .jsonl", path=str(p))
        occ = read_table(f, OCCURRENCE_SCHEMA, ["doc_index", "start", "end"])
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
