"""The generated corpus: records plus the ground truth they were built from."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._atomic import atomic_path, write_json
from ..corpus.record import Record
from ..errors import InputError

__all__ = ["SynthCorpus"]


@dataclass
class SynthCorpus:
    """A synthetic corpus whose right answer is known.

    Attributes
    ----------
    name : str
        Generator name (``"synthetic1"``, ``"synthetic2"``, ``"weblike"``).
    records : list of Record
        The documents, in corpus order (``source`` is ``"synth:<name>"``).
    truth : dict
        JSON-serialisable ground truth; its layout depends on the generator and is
        documented in ``docs/generators.md``.
    params : dict
        The arguments the generator was called with (enough to regenerate it).
    """

    name: str
    records: list[Record]
    truth: dict[str, Any]
    params: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.records)

    @property
    def texts(self) -> list[str]:
        return [r.text for r in self.records]

    @property
    def ids(self) -> list[str]:
        return [r.id for r in self.records]

    @property
    def urls(self) -> list[str | None]:
        return [r.url for r in self.records]

    @property
    def n_chars(self) -> int:
        return sum(len(r.text) for r in self.records)

    def write(self, out_dir: str | os.PathLike) -> dict[str, Path]:
        """Write ``out_dir/corpus.jsonl`` (one ``{"id", "url", "text"}`` object per line)
        and ``out_dir/truth.json`` (``{"name", "params", ...truth}``), each atomically.

        Returns the paths written, keyed ``"corpus"`` and ``"truth"``.
        """
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        corpus_path, truth_path = out / "corpus.jsonl", out / "truth.json"
        with atomic_path(corpus_path) as tmp:
            with open(tmp, "w", encoding="utf-8", newline="\n") as f:
                for r in self.records:
                    f.write(json.dumps({"id": r.id, "url": r.url, "text": r.text},
                                       ensure_ascii=False))
                    f.write("\n")
        write_json(truth_path, {"name": self.name, "params": self.params, **self.truth})
        return {"corpus": corpus_path, "truth": truth_path}

    @classmethod
    def load(cls, out_dir: str | os.PathLike) -> "SynthCorpus":
        """Read back what :meth:`write` wrote into *out_dir*."""
        out = Path(out_dir)
        corpus_path, truth_path = out / "corpus.jsonl", out / "truth.json"
        for p in (corpus_path, truth_path):
            if not p.is_file():
                raise InputError("not found (expected corpus.jsonl and truth.json)", path=str(p))
        try:
            truth = json.loads(truth_path.read_text(encoding="utf-8"))
            name, params = truth.pop("name"), truth.pop("params")
        except (ValueError, KeyError) as exc:
            raise InputError(f"not a generator truth file ({exc})", path=str(truth_path)) from None
        records = []
        with open(corpus_path, encoding="utf-8") as f:
            for i, line in enumerate(f):
                try:
                    row = json.loads(line)
                    records.append(Record(id=row["id"], text=row["text"], url=row.get("url"),
                                          source=f"synth:{name}", record_no=i))
                except (ValueError, KeyError, TypeError) as exc:
                    raise InputError(f"bad line ({exc})", path=str(corpus_path), record=i) from None
        return cls(name, records, truth, params)

    def to_store(self, **kwargs):
        """Tokenize the corpus into an in-memory :class:`repetend.TokenStore`
        (keyword arguments go to :meth:`TokenStore.from_texts`)."""
        from ..corpus.store import TokenStore

        return TokenStore.from_texts(self.texts, ids=self.ids, urls=self.urls, **kwargs)
