"""The one record type every reader yields."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlsplit

__all__ = ["Record", "ReadStats", "host_of"]


def host_of(url: str | None) -> str | None:
    """The lower-cased host of *url* (``None`` when there is no url or no host)."""
    if not url:
        return None
    try:
        host = urlsplit(url if "//" in url else "//" + url).hostname
    except ValueError:
        return None
    return host.lower() if host else None


@dataclass(slots=True)
class Record:
    """One document of a corpus.

    ``source`` and ``record_no`` (0-based position of the record in its file)
    say where it came from, so every message and every result can point back.
    """

    id: str
    text: str
    url: str | None = None
    source: str = ""
    record_no: int = 0

    @property
    def host(self) -> str | None:
        return host_of(self.url)


@dataclass(slots=True)
class ReadStats:
    """What a read saw, beyond the records it yielded; nothing is lost silently."""

    files: int = 0
    records: int = 0           # records yielded
    malformed: int = 0         # records skipped because they could not be parsed
    empty: int = 0             # records whose text is empty or only whitespace (still yielded)
    invalid_utf8: int = 0      # records whose bytes were not valid UTF-8 (replaced, still yielded)
    missing_text: int = 0      # records without the text field (counted within malformed)
    skipped_non_response: int = 0  # WARC records that are not responses / not HTML
    skipped_binary: int = 0    # files of a text tree that are not text
    renamed_ids: int = 0       # records whose repeated id became id#2, id#3, … (duplicate_ids="rename")
    errors: list[str] = field(default_factory=list)  # first messages, capped

    MAX_ERRORS = 20

    def note_error(self, message: str) -> None:
        if len(self.errors) < self.MAX_ERRORS:
            self.errors.append(message)

    def as_dict(self) -> dict:
        return {
            "files": self.files,
            "records": self.records,
            "malformed": self.malformed,
            "empty": self.empty,
            "invalid_utf8": self.invalid_utf8,
            "missing_text": self.missing_text,
            "skipped_non_response": self.skipped_non_response,
            "skipped_binary": self.skipped_binary,
            "errors": list(self.errors),
            **({"renamed_ids": self.renamed_ids} if self.renamed_ids else {}),
        }
