"""A Hugging Face ``save_to_disk`` folder out, in the layout it was read from.

Every input shard (``data-0000i-of-0000n.arrow``) becomes a shard of the same
name under the output folder, with the kept rows only (every column kept, the
text column replaced where boilerplate was cut); ``state.json``,
``dataset_info.json`` and a ``DatasetDict``'s ``dataset_dict.json`` are copied,
the fingerprint in ``state.json`` changed (the content changed), so that
``datasets.load_from_disk`` opens the cleaned folder as it opened the input.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from ..corpus.read_hf import arrow_batches
from ..errors import InputError
from .table_rows import kept_rows

__all__ = ["DatasetDirWriter"]


def _dataset_root(shard: Path) -> Path:
    """The folder given as input: the split's parent for a DatasetDict, else the
    shard's folder."""
    return shard.parent.parent if (shard.parent.parent / "dataset_dict.json").is_file() \
        else shard.parent


class DatasetDirWriter:
    """``save_to_disk`` layout out: one output shard per input shard (the interface
    of :class:`repetend.clean.writers.Writer`: ``emit`` every record, then ``close``)."""

    def __init__(self, target: Path, *, text_field: str = "text"):
        self.target = target
        self.text_field = text_field
        self.written = 0
        target.mkdir(parents=True, exist_ok=True)
        self.src: Path | None = None
        self.keep: dict[int, str | None] = {}
        self.copied: set[Path] = set()

    def emit(self, rec, new_text, changed):
        if self.src is None or str(self.src) != rec.source:
            self._flush()
            self.src = Path(rec.source)
        if new_text is not None:
            self.keep[rec.record_no] = new_text if changed else None

    def _copy_sidecars(self, shard: Path, root: Path, dest_dir: Path) -> None:
        if shard.parent in self.copied:
            return
        self.copied.add(shard.parent)
        if root != shard.parent and (root / "dataset_dict.json").is_file():
            shutil.copyfile(root / "dataset_dict.json", self.target / "dataset_dict.json")
        info = shard.parent / "dataset_info.json"
        if info.is_file():
            shutil.copyfile(info, dest_dir / "dataset_info.json")
        state_file = shard.parent / "state.json"
        try:
            state = json.loads(state_file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise InputError(f"cannot read the dataset's state.json ({exc})",
                             path=str(state_file)) from None
        old = str(state.get("_fingerprint", ""))
        state["_fingerprint"] = hashlib.blake2b(f"{old}:repetend-clean".encode(),
                                                digest_size=8).hexdigest()
        (dest_dir / "state.json").write_text(json.dumps(state, indent=2, sort_keys=True),
                                             encoding="utf-8")

    def _flush(self):
        if self.src is None:
            return
        import pyarrow as pa

        shard = self.src
        root = _dataset_root(shard)
        dest = self.target / shard.relative_to(root)
        dest.parent.mkdir(parents=True, exist_ok=True)
        self._copy_sidecars(shard, root, dest.parent)
        schema, batches = arrow_batches(shard)
        base = 0
        with pa.OSFile(str(dest), "wb") as sink, pa.ipc.new_stream(sink, schema) as w:
            for batch in batches:
                t = kept_rows(batch, base, self.keep, schema, self.text_field)
                if t is not None:
                    for b in t.to_batches():
                        w.write_batch(b)
                    self.written += t.num_rows
                base += batch.num_rows
        self.keep = {}

    def close(self):
        self._flush()
        import pyarrow as pa

        # a shard that held no record is never emitted: still one (empty) shard, so
        # that state.json's list of files holds
        for src_dir in sorted(self.copied):
            root = _dataset_root(src_dir / "state.json")
            state = json.loads((src_dir / "state.json").read_text(encoding="utf-8"))
            for f in state.get("_data_files") or []:
                dest = self.target / src_dir.relative_to(root) / f["filename"]
                if not dest.exists():
                    schema, _ = arrow_batches(src_dir / f["filename"])
                    with pa.OSFile(str(dest), "wb") as sink, pa.ipc.new_stream(sink, schema):
                        pass
