"""When a scan may reuse what an earlier run left in its directory.

A token store is reused when it was read from the same input files (path,
size, modification time) with the same read options (``store/inputs.json``);
a stage when its stamp (:mod:`repetend.scandir`) holds the same parameters
and the same corpus fingerprint.  The standard input is never reused.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..corpus.read_base import STDIN
from ..scandir import inputs_stamp_file, read_stamp

__all__ = ["inputs_stamp", "same_inputs", "same_params", "templates_cut"]


def inputs_stamp(inputs: list[str], input_options: dict) -> dict:
    """What the store was made from: input files (size, mtime) and read options."""
    from ..corpus.readers import expand_inputs

    try:
        files = expand_inputs(inputs, input_options.get("fmt"), input_options.get("glob"))
    except Exception:  # noqa: BLE001 - an unreadable input just never matches
        files = []
    stamp = []
    for path, fmt in files:
        if str(path) == STDIN:  # no size or mtime: see same_inputs
            stamp.append([STDIN, fmt, None, None])
            continue
        st = Path(path).stat()
        stamp.append([str(Path(path).resolve()), fmt, st.st_size, st.st_mtime_ns])
    return {"inputs": inputs, "files": stamp,
            "options": {k: v for k, v in sorted(input_options.items())}}


def is_uri(path: str) -> bool:
    """A URI the Spark session reads (``s3a://…``, ``hdfs://…``, ``file://…``)."""
    return "://" in str(path)


def same_inputs(store_dir: Path, inputs: list[str], input_options: dict) -> bool:
    """Whether the store in *store_dir* was read from these inputs, as they are now
    (never for the standard input or a URI: no size and time to compare)."""
    if STDIN in inputs or any(is_uri(p) for p in inputs):
        return False
    try:
        old = json.loads(inputs_stamp_file(store_dir).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return old == json.loads(json.dumps(inputs_stamp(inputs, input_options)))


def same_params(stage_dir: Path, params: dict) -> bool:
    """Whether the stage in *stage_dir* ran with *params* (corpus fingerprint included)."""
    stamp = read_stamp(stage_dir)
    return stamp is not None and stamp == params


def templates_cut(stage_dir: Path) -> bool:
    """Whether the memory limit cut the template layer of a stored phrases run
    (skipped, or merge-only where the default was asked): the memory at hand is
    not in the reuse key, so such a run is redone rather than reused."""
    from ..phrases import template_layer_cut

    try:
        old = json.loads((stage_dir / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return True
    return template_layer_cut(old)
