"""Exact duplicates: canonical form + checksum (Broder 1997, docs/references.md).

Two documents are exact duplicates when their canonical forms are equal. The
canonical form (:func:`canonical_form`) is the seed's: "extra" spaces removed,
line breaks removed, letters lowercased. Documents are grouped by sorting a
checksum of the canonical form (numpy, no dictionaries over the corpus), and
every group of equal checksums is then *confirmed* by comparing the canonical
strings themselves, so a checksum collision never merges two different texts.

Checksums:

``"crc32"``
    ``zlib.crc32`` as in the seed. 32 bits collide early: by the birthday
    bound a corpus of about 77 000 distinct documents already has a 50 %
    chance of one collision, and 10 million documents have about 11 600
    colliding pairs. Collisions cost only extra string comparisons here.
``"xxh64"`` (default)
    xxHash64 (the optional ``xxhash`` package); when it is not installed the
    always-available ``hashlib.blake2b(digest_size=8)`` is used instead and
    the result says so. Either 64-bit hash makes collisions (and hence extra
    comparisons) negligible below billions of documents.
``"blake2b"``
    ``hashlib.blake2b(digest_size=8)``.

The labels do not depend on the checksum chosen: only speed does.
"""

from __future__ import annotations

import hashlib
import zlib
from dataclasses import dataclass
from typing import Literal, Protocol, Sequence

import numpy as np
import numpy.typing as npt

from .._atomic import write_parquet
from ..errors import ParameterError, require

__all__ = ["ExactDuplicates", "canonical_form", "checksums", "exact_duplicate_groups",
           "exact_duplicates"]

HashName = Literal["xxh64", "crc32", "blake2b"]


class _TextSource(Protocol):  # a TokenStore, or anything with n_docs and text(d)
    @property
    def n_docs(self) -> int: ...

    def text(self, d: int) -> str: ...


def canonical_form(text: str) -> str:
    """The canonical form of a document (Broder 1997).

    Every maximal run of whitespace -- any character for which ``str.isspace``
    is true: spaces, tabs, line feeds, carriage returns, form feeds, vertical
    tabs, NEL, the Unicode line/paragraph separators, no-break and other
    Unicode spaces -- becomes one ASCII space; leading and trailing whitespace
    is dropped; letters are lowercased with ``str.lower``. A line break is
    therefore *replaced by a separator*, not deleted outright: deleting it
    would glue the last word of a line to the first word of the next (the
    seed removes line breaks so that re-wrapping a text does not change it,
    which this achieves). Punctuation, digits, zero-width characters and
    Unicode normalisation form are kept as they are.

    Examples
    --------
    >>> canonical_form("  Hello,\\r\\n  World!\\t")
    'hello, world!'
    """
    return " ".join(text.split()).lower()


def _hasher(hash: str):
    if hash == "crc32":
        return "crc32", zlib.crc32
    if hash == "xxh64":
        try:
            import xxhash
        except ImportError:
            hash = "blake2b"
        else:
            return "xxh64", xxhash.xxh64_intdigest
    if hash == "blake2b":
        return "blake2b", lambda b: int.from_bytes(hashlib.blake2b(b, digest_size=8).digest(), "little")
    raise ParameterError(f"hash must be 'xxh64', 'crc32' or 'blake2b', got {hash!r}")


def _texts(source) -> tuple[int, object]:
    if hasattr(source, "n_docs") and hasattr(source, "text"):
        return int(source.n_docs), source.text
    if isinstance(source, (str, bytes)):
        raise ParameterError("expected a token store or a sequence of texts, got one string")
    seq = list(source)
    return len(seq), seq.__getitem__


def checksums(source: _TextSource | Sequence[str], hash: HashName = "xxh64"
              ) -> tuple[npt.NDArray[np.uint64], str]:
    """Checksum of every document's canonical form and the name of the hash used."""
    name, fn = _hasher(hash)
    n, text = _texts(source)
    # one call per document (not per token): the canonical form is a C-level split/join/lower
    it = (fn(canonical_form(text(d)).encode("utf-8", "surrogatepass")) for d in range(n))
    return np.fromiter(it, dtype=np.uint64, count=n), name


@dataclass(slots=True)
class ExactDuplicates:
    """Exact-duplicate groups.

    ``labels[d]`` is the smallest document index whose canonical form equals
    that of ``d`` (so ``labels[d] == d`` for the first document of each group).
    """

    labels: npt.NDArray[np.int64]
    checksums: npt.NDArray[np.uint64]
    hash: str
    n_collisions: int  # documents whose checksum equalled another's with a different text

    @property
    def n_groups(self) -> int:
        """Groups of two or more identical documents."""
        sizes = np.bincount(self.labels, minlength=self.labels.size) if self.labels.size else self.labels
        return int(np.count_nonzero(sizes >= 2))

    @property
    def n_duplicates(self) -> int:
        """Documents that repeat an earlier one (what deduplication removes)."""
        return int(np.count_nonzero(self.labels != np.arange(self.labels.size)))

    def to_arrow(self):
        """Columns ``doc``, ``group`` (the label), ``checksum``."""
        import pyarrow as pa

        return pa.table({"doc": np.arange(self.labels.size, dtype=np.int64),
                         "group": self.labels, "checksum": self.checksums})

    def to_pandas(self):
        require("pandas", "all", "ExactDuplicates.to_pandas()")
        return self.to_arrow().to_pandas()

    def to_parquet(self, path) -> None:
        """Write :meth:`to_arrow` atomically."""
        write_parquet(path, self.to_arrow())


def exact_duplicates(source: _TextSource | Sequence[str], hash: HashName = "xxh64") -> ExactDuplicates:
    """Group exact duplicates by canonical form (Broder 1997); see the module docstring.

    Parameters
    ----------
    source
        A :class:`~repetend.corpus.store.TokenStore` (anything with ``n_docs``
        and ``text(d)``) or a sequence of strings.
    hash
        ``"xxh64"`` (default), ``"crc32"`` (the seed's) or ``"blake2b"``.

    Notes
    -----
    Documents are sorted by checksum (stable, so equal checksums keep document
    order); each run of equal checksums is re-canonicalised and split by string
    equality, so the result is exact whatever the hash. Empty documents (and
    documents of whitespace only) share the canonical form ``""`` and form one
    group like any other identical texts.
    """
    sums, name = checksums(source, hash)
    n = sums.size
    labels = np.arange(n, dtype=np.int64)
    collisions = 0
    if n < 2:
        return ExactDuplicates(labels, sums, name, 0)
    order = np.argsort(sums, kind="stable")
    s = sums[order]
    starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
    ends = np.r_[starts[1:], n]
    multi = np.flatnonzero(ends - starts >= 2)
    if multi.size:
        _, text = _texts(source)
        for r in multi:  # one iteration per group of equal checksums, not per document
            docs = order[starts[r]:ends[r]]  # ascending document order (stable sort)
            forms = [canonical_form(text(int(d))) for d in docs]
            first = forms[0]
            if all(f == first for f in forms[1:]):  # the usual case: a true group
                labels[docs] = docs[0]
                continue
            by_form = sorted(range(len(docs)), key=lambda i: (forms[i], docs[i]))
            distinct = 0
            for j, i in enumerate(by_form):
                if j == 0 or forms[i] != forms[by_form[j - 1]]:
                    head = docs[i]
                    distinct += 1
                labels[docs[i]] = head
            collisions += len(docs) if distinct > 1 else 0
    return ExactDuplicates(labels, sums, name, collisions)


def exact_duplicate_groups(store: _TextSource | Sequence[str], hash: HashName = "xxh64"
                           ) -> npt.NDArray[np.int64]:
    """int64 label per document: the smallest document index with the same canonical form.

    See :func:`exact_duplicates` (which also returns the checksums and the
    number of checksum collisions) and :func:`canonical_form`.

    References
    ----------
    The shingling article (canonical form and CRC32 checksum); A. Z. Broder, S. C. Glassman,
    M. S. Manasse, G. Zweig, "Syntactic Clustering of the Web", WWW 1997.
    """
    return exact_duplicates(store, hash).labels
