"""Batch tokenization: a compiled UTF-8 scanner with the reference definition.

Word tokens (``unit="word"``, the default) follow
:mod:`repetend.corpus.tokenize_ref` exactly: Unicode NFC, ``str.lower``, a token
is a maximal run of L*/N*/M* characters, every Han ideograph and kana is a
token of its own (the BloomSpan paper, §2: "lower-case, cut at everything that is not
a letter or a digit").  ``unit="char"`` gives character tokens for character
k-gram shingles (the shingling article); ``unit="code"`` gives programming-language tokens
with comments dropped (the MinHash/LSH article, :mod:`repetend.corpus.code_tokens`).

How the word scanner works
--------------------------
Python does the C-speed parts per batch (one ``encode`` per document and one
``join``); a numba kernel then decodes the UTF-8, lowers each code point
through a table, classifies it (separator / word / single-character token) and
emits byte spans and FNV-1a 64 hashes of the lowered token bytes, in parallel
over documents and over ~1 MiB pieces of long documents (a thread pool
running the ``nogil`` kernel on contiguous ranges of segments).  The same pass runs
the NFC quick check (NFC_Quick_Check and canonical order); the rare documents
that may not be NFC, or hold U+0130 or U+03A3 (whose ``str.lower`` is not a
per-character table lookup), are normalized and lowered in Python and scanned
again.  See ``docs/tokenizer.md``.

Lone surrogates (text decoded with ``errors="surrogateescape"`` or
``"surrogatepass"``) are encoded with ``"surrogatepass"``; they are category
Cs, so in word tokens they separate, and in char tokens each is a token whose
hash is that of its surrogatepass bytes (what
:func:`repetend.neardup.shingles.token_hashes` computes for the same string).
"""

from __future__ import annotations

import os
import sys
import threading
import unicodedata
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Literal, Sequence

import numba
import numpy as np
import numpy.typing as npt

from ..errors import ParameterError
from . import _tokenizer_kernels as K
from .unicode_table import NO_BOUNDARY, tables

__all__ = ["TokenizedBatch", "Unit", "hash_strings", "token_spans", "tokenize", "tokenize_batch"]

Unit = Literal["word", "char", "code"]
_UNITS = ("word", "char", "code")
_SEGMENT_BYTES = 1 << 20
_PARALLEL_BYTES = 1 << 20   # below this a batch is scanned on one thread
_ENC = "surrogatepass"


@dataclass(slots=True)
class TokenizedBatch:
    """Tokens of a batch of documents.

    Attributes
    ----------
    hashes : ndarray of uint64
        FNV-1a 64 of each token's normalized UTF-8 bytes, documents back to back.
    doc_offsets : ndarray of int64, length ``len(texts) + 1``
        Document ``d`` owns tokens ``doc_offsets[d]:doc_offsets[d + 1]``.
    """

    hashes: npt.NDArray[np.uint64]
    doc_offsets: npt.NDArray[np.int64]
    _buf: bytes = b""
    _start: npt.NDArray[np.int64] = field(default_factory=lambda: np.empty(0, np.int64))
    _end: npt.NDArray[np.int64] = field(default_factory=lambda: np.empty(0, np.int64))
    _doc_raw: npt.NDArray[np.bool_] = field(default_factory=lambda: np.empty(0, bool))
    _doc_enc16: npt.NDArray[np.bool_] = field(default_factory=lambda: np.empty(0, bool))
    _unit: str = "word"
    _strings: list | None = None
    _buf2: bytes = b""   # documents normalized in Python (``_doc_raw`` false)

    def __len__(self) -> int:
        return int(self.hashes.shape[0])

    def strings(self, token_indices) -> list[str]:
        """The normalized strings of the tokens at *token_indices* (batch-global)."""
        idx = np.asarray(token_indices, dtype=np.int64).reshape(-1)
        if self._strings is not None:
            return [self._strings[i] for i in idx.tolist()]
        if idx.size and (idx.min() < 0 or idx.max() >= self.hashes.shape[0]):
            raise IndexError("token index out of range")
        docs = np.searchsorted(self.doc_offsets, idx, side="right") - 1
        if self._unit == "word" and idx.size >= 32:
            return self._strings_joined(idx, docs)
        raw = self._doc_raw[docs].tolist()
        e16 = self._doc_enc16[docs].tolist()
        out = []
        for s, e, r, u16 in zip(self._start[idx].tolist(), self._end[idx].tolist(), raw, e16):
            buf = self._buf if r else self._buf2
            t = buf[s:e].decode("utf-16-le") if u16 else buf[s:e].decode("utf-8", _ENC)
            if r:  # the kernel lowered this document on the fly
                t = t.lower()
            if self._unit == "char" and t.isspace():
                t = " "
            out.append(t)
        return out

    def _strings_joined(self, idx: np.ndarray, docs: np.ndarray) -> list[str]:
        """Word tokens never contain a newline: decode (and lower) each group of
        tokens that share a buffer and an encoding as one newline-joined string."""
        out = np.empty(idx.size, dtype=object)
        raw = self._doc_raw[docs]
        e16 = self._doc_enc16[docs]
        for r in (True, False):
            buf = np.frombuffer(self._buf if r else self._buf2, dtype=np.uint8)
            for u16 in (False, True):
                sel = np.flatnonzero((raw == r) & (e16 == u16))
                if sel.size == 0:
                    continue
                data = K.join_spans(buf, self._start[idx[sel]], self._end[idx[sel]], u16)
                text = data.tobytes().decode("utf-16-le" if u16 else "utf-8", _ENC)
                if r:
                    text = text.lower()
                parts = text.split("\n")
                parts.pop()  # after the last newline
                out[sel] = parts
        return out.tolist()

    def tokens(self, d: int) -> list[str]:
        """All token strings of document *d*."""
        return self.strings(np.arange(self.doc_offsets[d], self.doc_offsets[d + 1]))


def _check_unit(unit: str) -> None:
    if unit not in _UNITS:
        raise ParameterError(f"unit must be one of {', '.join(_UNITS)}; got {unit!r}")


def _nfc_lower(text: str) -> str:
    if not text.isascii() and not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    return text.lower()


def _segments(buf: np.ndarray, doc_a: np.ndarray, doc_b: np.ndarray, docs: np.ndarray,
              split: bool, doc_enc16: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Segments (a, b, doc) covering the given documents; every document has at
    least one (possibly empty) segment; long documents are cut when *split*."""
    seg_a, seg_b, seg_d = [doc_a[docs]], [doc_b[docs]], [docs]
    if split:
        long = docs[(doc_b[docs] - doc_a[docs]) > 2 * _SEGMENT_BYTES]
        if long.size:
            keep = (doc_b[docs] - doc_a[docs]) <= 2 * _SEGMENT_BYTES
            seg_a, seg_b, seg_d = [doc_a[docs][keep]], [doc_b[docs][keep]], [docs[keep]]
            for d in long.tolist():
                cuts = K.split_points(buf, np.int64(doc_a[d]), np.int64(doc_b[d]),
                                      np.int64(_SEGMENT_BYTES), bool(doc_enc16[d]))
                seg_a.append(cuts[:-1])
                seg_b.append(cuts[1:])
                seg_d.append(np.full(cuts.size - 1, d, dtype=np.int64))
    a = np.concatenate(seg_a).astype(np.int64)
    b = np.concatenate(seg_b).astype(np.int64)
    d = np.concatenate(seg_d).astype(np.int64)
    if len(seg_a) > 1:
        order = np.lexsort((a, d))
        a, b, d = a[order], b[order], d[order]
    return a, b, d


_POOL: ThreadPoolExecutor | None = None
_LOWER_EXTRA: np.ndarray | None = None


def _pool(n: int) -> ThreadPoolExecutor:
    global _POOL
    if _POOL is None or _POOL._max_workers < n:  # noqa: SLF001 - sizing only
        _POOL = ThreadPoolExecutor(max_workers=n, thread_name_prefix="repetend-tok")
    return _POOL


def _forget_pool() -> None:
    """A forked child has none of the parent's threads: start a new pool there."""
    global _POOL
    _POOL = None
    global _SCRATCH_LOCK
    _SCRATCH_LOCK = threading.Lock()  # it may have been held by a parent thread


os.register_at_fork(after_in_child=_forget_pool)


# Output arrays of the last batch, kept for the next one.  Writing tokens into
# fresh memory costs a page fault per 4 KiB (glibc maps large arrays anew each
# time): about a fifth of the scan.  An array is reused only when nothing else
# refers to it any more (no live batch or view: CPython reference count), so a
# caller keeping ``hashes`` of an earlier batch is never overwritten.
_SCRATCH: dict[int, np.ndarray] = {}
_SCRATCH_LOCK = threading.Lock()
_SCRATCH_DTYPES = (np.int64, np.int64, np.uint64)


def _refs_when_free() -> int:
    """``sys.getrefcount`` of an array held by a dict and a local only, measured
    the way :func:`_take_scratch` measures (the count an interpreter reports
    for the same references differs between Python versions).  A live view or
    batch holds a strong reference to the array, so it always adds to this."""
    d = {0: np.empty(1)}
    a = d.get(0)
    return sys.getrefcount(a)


_FREE_REFS = _refs_when_free()


def _take_scratch(n: int) -> list[np.ndarray]:
    out = []
    with _SCRATCH_LOCK:
        for k, dt in enumerate(_SCRATCH_DTYPES):
            a = _SCRATCH.get(k)
            if a is not None and a.shape[0] >= n and sys.getrefcount(a) == _FREE_REFS:
                del _SCRATCH[k]  # ours until _keep_scratch offers it again
            else:
                a = np.empty(n, dtype=dt)
            out.append(a)
    return out


def _keep_scratch(arrays: Sequence[np.ndarray]) -> None:
    """Offer the arrays :func:`_take_scratch` gave to the next batch (the larger
    ones win when calls overlap)."""
    with _SCRATCH_LOCK:
        for k, a in enumerate(arrays):
            old = _SCRATCH.get(k)
            if old is None or old.shape[0] < a.shape[0]:
                _SCRATCH[k] = a


_MALLOC_WARMED = False


def _warm_malloc() -> None:
    """Free one just-under-32 MiB block once per process.

    glibc serves large blocks with a fresh ``mmap`` each time (every page
    faulted in again: a fifth of the cost of a batch) until a freed block raises
    its dynamic threshold, at most to 32 MiB; this does that raise once, so a
    batch's joined text and its encoding (16 MiB for 8 M characters) come from
    the heap and are reused, as they would be after any large numpy array was
    freed.  Elsewhere than glibc it only costs an untouched allocation.
    """
    global _MALLOC_WARMED
    if not _MALLOC_WARMED:
        _MALLOC_WARMED = True
        np.empty((32 << 20) - (16 << 10), dtype=np.uint8)  # freed at once


def _forget_scratch() -> None:
    """Drop the kept output arrays (their memory goes back to the allocator)."""
    with _SCRATCH_LOCK:
        _SCRATCH.clear()


def _capacity(nbytes: int, kunit: int) -> int:
    # natural text has 4-12 bytes per word token; a too small guess only costs a regrow
    return nbytes + 16 if kunit == K.UNIT_CHAR else nbytes // 4 + 64


def _scan_segments(buf: np.ndarray, seg_a: np.ndarray, seg_b: np.ndarray, seg_low: np.ndarray,
                   seg_enc16: np.ndarray, kunit: int
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Tokens of all segments in segment order: ``(start, end, hash, counts, flags)``.

    Contiguous ranges of segments (balanced by bytes) are scanned by the
    ``nogil`` kernel in a thread pool of ``numba.get_num_threads()`` threads:
    plain threads that sleep when idle, unlike OpenMP workers that spin, which
    matters on a shared machine.
    """
    T = tables()
    m = seg_a.size
    counts = np.zeros(m, dtype=np.int64)
    seg_flag = np.zeros(m, dtype=np.uint8)
    sizes = seg_b - seg_a
    cum = np.cumsum(sizes)
    total = int(cum[-1]) if m else 0
    nt = 1 if total < _PARALLEL_BYTES else max(1, min(numba.get_num_threads(), m))
    cuts = np.searchsorted(cum, total * np.arange(1, nt) / nt, side="left") + 1
    bounds = np.unique(np.concatenate([[0], np.minimum(cuts, m), [m]])).tolist()

    # one output region per range, sized by its bytes, in shared arrays; a range
    # that outgrows its region continues in private arrays
    caps = [_capacity(int(sizes[a:b].sum()), kunit) for a, b in zip(bounds[:-1], bounds[1:])]
    # every region as large as the largest, rounded up to a power of two: the
    # regions then start at the same offsets batch after batch, so the pages a
    # reused output array has touched stay bounded by the largest batch's
    # tokens (with offsets that drift, they would creep over all its capacity)
    step = 1 << (max(caps) - 1).bit_length() if caps else 0
    region = (step * np.arange(len(caps) + 1)).astype(np.int64)
    total_cap = int(region[-1])
    st_all, en_all, ha_all = _take_scratch(total_cap)

    def work(r: int):
        s0, s1 = bounds[r], bounds[r + 1]
        lo, hi = int(region[r]), int(region[r + 1])
        st, en, ha = st_all[lo:hi], en_all[lo:hi], ha_all[lo:hi]
        cap = hi - lo
        s, pos = s0, 0
        private = False
        while True:
            # errstate: the FNV multiply wraps around (numpy warns when numba is
            # off); errstate is per thread, so it is set here, in the worker
            with np.errstate(over="ignore"):
                s, pos = K.scan_range(buf, seg_a, seg_b, seg_low, seg_enc16, s, s1, kunit,
                                      T.flags, T.lflags, T.lower, T.ccc, T.compose_keys, st, en,
                                      ha, pos, counts, seg_flag)
            if s >= s1:
                return st, en, ha, pos, private
            # a word token takes >= 1 byte plus a separator, a char token >= 1 byte
            cap = max(2 * cap, pos + int(sizes[s]) + 16 + _capacity(int(sizes[s:s1].sum()), kunit))
            st2, en2, ha2 = (np.empty(cap, dtype=x.dtype) for x in (st, en, ha))
            st2[:pos], en2[:pos], ha2[:pos] = st[:pos], en[:pos], ha[:pos]
            st, en, ha = st2, en2, ha2
            private = True

    n_ranges = len(bounds) - 1
    if n_ranges <= 1:
        parts = [work(r) for r in range(n_ranges)]
    else:
        parts = list(_pool(n_ranges).map(work, range(n_ranges)))
    if not parts:
        st, en, ha = st_all[:0], en_all[:0], ha_all[:0]
    elif len(parts) == 1:
        st, en, ha, pos, _ = parts[0]
        st, en, ha = st[:pos], en[:pos], ha[:pos]
    elif not any(p[4] for p in parts):
        dst = 0
        for r, p in enumerate(parts):  # close the gaps between the regions
            if dst != region[r]:
                K.move_tokens(st_all, en_all, ha_all, region[r], np.int64(dst), np.int64(p[3]))
            dst += p[3]
        st, en, ha = st_all[:dst], en_all[:dst], ha_all[:dst]
    else:
        st, en, ha = (np.concatenate([p[k][:p[3]] for p in parts]) for k in range(3))
    _keep_scratch((st_all, en_all, ha_all))
    return st, en, ha, counts, seg_flag


def _encode_all(texts: Sequence[str], doc_enc16: np.ndarray, docs: np.ndarray) -> list[bytes]:
    """Bytes of each text for the scanner: ASCII as is (UTF-8), other text as
    UTF-16LE (CPython encodes its 2-byte strings to UTF-16 two to three times
    faster than to UTF-8), text with lone surrogates as UTF-8 surrogatepass
    (strict UTF-16 refuses it, and a surrogatepass pair would be ambiguous).
    Sets ``doc_enc16[docs[i]]`` for the UTF-16 ones."""
    out = []
    for t, d in zip(texts, docs.tolist()):
        if t.isascii():
            out.append(t.encode("ascii"))
            doc_enc16[d] = False
            continue
        try:
            out.append(t.encode("utf-16-le"))
            doc_enc16[d] = True
        except UnicodeEncodeError:
            out.append(t.encode("utf-8", _ENC))
            doc_enc16[d] = False
    return out


def _as_texts(texts: Sequence) -> list[str]:
    """None counts as an empty document (a null text column); anything else
    that is not a string is a :class:`ParameterError` naming its index."""
    out = []
    for i, t in enumerate(texts):
        if t is None:
            t = ""
        elif not isinstance(t, str):
            raise ParameterError(f"texts[{i}] is a {type(t).__name__}, not a str")
        out.append(t)
    return out


def _encode_joined(texts: Sequence[str], doc_enc16: np.ndarray
                   ) -> tuple[bytes, np.ndarray] | None:
    """The whole batch in one ``join`` and one ``encode``: ASCII if it is all
    ASCII, else strict UTF-16LE (then ``doc_enc16`` is set for every document).
    Returns the bytes and the documents' byte offsets, or None when some text
    holds lone surrogates (:func:`_encode_all` encodes document by document)."""
    lens = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(lens, out=offsets[1:])
    joined = "".join(texts)
    if joined.isascii():
        return joined.encode("ascii"), offsets
    try:
        data = joined.encode("utf-16-le")
    except UnicodeEncodeError:
        return None
    del joined
    if len(data) != 2 * offsets[-1]:  # astral characters take two UTF-16 units
        offsets = K.utf16_offsets(np.frombuffer(data, dtype=np.uint8), lens)
    else:
        offsets *= 2
    doc_enc16[:] = True
    return data, offsets


def _scan_batch(texts: Sequence[str], unit: str) -> TokenizedBatch:
    _warm_malloc()
    kunit = K.UNIT_WORD if unit == "word" else K.UNIT_CHAR
    n_docs = len(texts)
    doc_enc16 = np.zeros(n_docs, dtype=bool)
    try:
        joined = _encode_joined(texts, doc_enc16)
    except TypeError:  # None or a non-string among the texts
        texts = _as_texts(texts)
        joined = _encode_joined(texts, doc_enc16)
    if joined is not None:
        blob, offsets = joined
        doc_a, doc_b = offsets[:-1].copy(), offsets[1:].copy()
    else:
        enc = _encode_all(texts, doc_enc16, np.arange(n_docs))
        lens = np.fromiter(map(len, enc), dtype=np.int64, count=n_docs)
        doc_a = np.zeros(n_docs, dtype=np.int64)
        if n_docs:
            np.cumsum(lens[:-1], out=doc_a[1:])
        doc_b = doc_a + lens
        blob = enc[0] if n_docs == 1 else b"".join(enc)  # no copy for one (long) document
        del enc
    buf = np.frombuffer(blob, dtype=np.uint8)
    split = kunit == K.UNIT_WORD
    seg_a, seg_b, seg_d = _segments(buf, doc_a, doc_b, np.arange(n_docs, dtype=np.int64), split,
                                    doc_enc16)
    seg_low = np.ones(seg_a.size, dtype=np.uint8)
    st, en, ha, counts, seg_flag = _scan_segments(buf, seg_a, seg_b, seg_low, doc_enc16[seg_d],
                                                  kunit)
    doc_raw = np.ones(n_docs, dtype=bool)
    blob2 = b""
    bad = np.unique(seg_d[seg_flag != 0])
    if bad.size:
        doc_flag = np.zeros(n_docs, dtype=np.uint8)
        np.bitwise_or.at(doc_flag, seg_d, seg_flag)
        # not (surely) NFC, or İ / Σ: normalize and lower these documents in
        # Python, append their bytes to the buffer, scan them without lowering,
        # and put their tokens in place of the first scan's
        if bad.size == n_docs:  # nothing of the first encoding is needed any more
            del buf, st, en, ha
            blob = b""
        fixed = _encode_all([_nfc_lower(texts[d]) if doc_flag[d] & K.FLAG_NFC
                             else texts[d].lower() for d in bad.tolist()], doc_enc16, bad)
        flens = np.fromiter(map(len, fixed), dtype=np.int64, count=len(fixed))
        # a second buffer (``_buf2``) for them: no copy of the batch's text
        blob2 = fixed[0] if len(fixed) == 1 else b"".join(fixed)
        del fixed
        buf2 = np.frombuffer(blob2, dtype=np.uint8)
        starts = np.zeros(bad.size, dtype=np.int64)
        np.cumsum(flens[:-1], out=starts[1:])
        doc_a[bad] = starts
        doc_b[bad] = doc_a[bad] + flens
        doc_raw[bad] = False
        na, nb, nd = _segments(buf2, doc_a, doc_b, bad, split, doc_enc16)
        nlow = np.zeros(na.size, dtype=np.uint8)
        fst, fen, fha, fcounts, _ = _scan_segments(buf2, na, nb, nlow, doc_enc16[nd], kunit)
    if bad.size and bad.size == n_docs:
        st, en, ha, counts, seg_d = fst, fen, fha, fcounts, nd
    elif bad.size:
        pos_main = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
        keep = ~np.isin(seg_d, bad)
        old_n = np.zeros(n_docs, dtype=np.int64)
        np.add.at(old_n, seg_d[~keep], counts[~keep])
        new_n = np.zeros(n_docs, dtype=np.int64)
        np.add.at(new_n, nd, fcounts)
        if np.array_equal(old_n[bad], new_n[bad]):
            # the usual case (NFC and Σ / İ rarely change the number of tokens):
            # overwrite the documents' tokens in place
            first_seg = np.searchsorted(seg_d, bad, side="left")
            dst = pos_main[first_seg]
            src = np.concatenate([[0], np.cumsum(new_n[bad])[:-1]]).astype(np.int64)
            K.copy_runs(fst, fen, fha, src, dst, new_n[bad], st, en, ha)
            counts = np.concatenate([counts[keep], fcounts])
            seg_d = np.concatenate([seg_d[keep], nd])
        else:
            pos_fix = -1 - np.concatenate([[0], np.cumsum(fcounts)[:-1]]).astype(np.int64)
            seg_a = np.concatenate([seg_a[keep], na])
            seg_d = np.concatenate([seg_d[keep], nd])
            seg_src = np.concatenate([pos_main[keep], pos_fix])
            counts = np.concatenate([counts[keep], fcounts])
            order = np.lexsort((seg_a, seg_d))
            seg_d, seg_src, counts = seg_d[order], seg_src[order], counts[order]
            n_tok = int(counts.sum())
            out = tuple(np.empty(n_tok, dtype=x.dtype) for x in (st, en, ha))
            K.gather_tokens(st, en, ha, fst, fen, fha, seg_src, counts, *out)
            st, en, ha = out
    doc_offsets = np.zeros(n_docs + 1, dtype=np.int64)
    if n_docs:
        per_doc = np.zeros(n_docs, dtype=np.int64)
        np.add.at(per_doc, seg_d, counts)
        np.cumsum(per_doc, out=doc_offsets[1:])
    return TokenizedBatch(ha, doc_offsets, blob, st, en, doc_raw, doc_enc16, unit,
                          _buf2=blob2)


def tokenize_batch(texts: Sequence[str], unit: Unit = "word", lang: str | None = None,
                   names: Sequence[str] | None = None) -> TokenizedBatch:
    """Tokenize a batch of documents.

    Parameters
    ----------
    texts : sequence of str
        The documents.  Lone surrogates are allowed (see the module docstring);
        None is an empty document.
    unit : {"word", "char", "code"}
        ``"word"``: the reference definition (:mod:`repetend.corpus.tokenize_ref`);
        ``"char"``: every character of the NFC lower-cased text, each whitespace
        run one ``" "`` token, leading and trailing whitespace dropped;
        ``"code"``: Pygments tokens without comments and whitespace, case kept
        (needs the ``code`` extra).
    lang : str, optional
        Pygments lexer name for ``unit="code"`` (else chosen from *names*).
    names : sequence of str, optional
        File names of the documents (``unit="code"``: the extension picks the lexer).

    Returns
    -------
    TokenizedBatch
        ``hashes`` (FNV-1a 64 of each token's normalized UTF-8, equal to
        :func:`repetend.neardup.shingles.token_hashes` of the strings) and
        ``doc_offsets``; ``strings(indices)`` gives the token strings.

    Notes
    -----
    Linear in the text length (no recursion); parallel over documents and over
    ~1 MiB pieces of long documents.  Tokenization per the BloomSpan paper, §2.
    """
    _check_unit(unit)
    if names is not None and len(names) != len(texts):
        raise ParameterError(f"names has {len(names)} entries for {len(texts)} texts")
    if unit == "code":
        from .code_tokens import code_tokenize_batch

        toks, offsets = code_tokenize_batch(_as_texts(texts), lang=lang, names=names)
        return TokenizedBatch(hash_strings(toks), offsets, _strings=toks, _unit="code")
    return _scan_batch(texts, unit)


def tokenize(text: str) -> list[str]:
    """Word tokens of *text* (NFC, lower case, runs of letters/digits/marks).

    >>> tokenize("Все права защищены.")
    ['все', 'права', 'защищены']
    >>> tokenize("© 2024 Company_Name")
    ['2024', 'company', 'name']
    """
    tb = _scan_batch([text], "word")
    return tb.strings(np.arange(len(tb)))


def hash_strings(strings: Sequence[str]) -> npt.NDArray[np.uint64]:
    """FNV-1a 64 of each string's UTF-8 (surrogatepass) bytes."""
    enc = [s.encode("utf-8", _ENC) for s in strings]
    offsets = np.zeros(len(enc) + 1, dtype=np.int64)
    if enc:
        np.cumsum(np.fromiter(map(len, enc), dtype=np.int64, count=len(enc)), out=offsets[1:])
    data = np.frombuffer(b"".join(enc), dtype=np.uint8)
    with np.errstate(over="ignore"):  # FNV wrap-around when numba is off
        return K.fnv1a64_spans(data, offsets)


# -- spans in the original text ------------------------------------------------------

def _scan_chars(text_bytes: bytes, lower: int, kunit: int) -> tuple[np.ndarray, int]:
    """Character spans [n, 2] of one text's tokens (a single serial segment)."""
    T = tables()
    buf = np.frombuffer(text_bytes, dtype=np.uint8)
    a = np.zeros(1, dtype=np.int64)
    b = np.array([buf.size], dtype=np.int64)
    low = np.array([lower], dtype=np.uint8)
    with np.errstate(over="ignore"):  # FNV wrap-around when numba is off
        counts, flag = K.count_segments(buf, a, b, low, np.zeros(1, dtype=np.bool_), kunit, T.flags,
                                        T.lflags, T.lower, T.ccc, T.compose_keys)
        n = int(counts[0])
        spans = np.empty((n, 2), dtype=np.int64)
        h = np.empty(n, dtype=np.uint64)
        K.scan_segment(buf, np.int64(0), np.int64(buf.size), np.int64(lower), False, kunit, T.flags,
                       T.lflags, T.lower, T.ccc, T.compose_keys, True, True, np.int64(0),
                       spans[:, 0], spans[:, 1], h, np.int64(0))
    return spans, int(flag[0])


def _nfc_map(text: str) -> tuple[str, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """NFC of *text* segment by segment, and the pieces that changed.

    Cuts before every character whose canonical decomposition starts with a
    starter that never composes backwards (a normalization boundary: NFC of the
    concatenation is the concatenation of the NFCs).  Returns the normalized
    text and, for every segment whose NFC differs, its original ``[oa, ob)``
    and normalized ``[na, nb)`` ranges.
    """
    T = tables()
    buf = np.frombuffer(text.encode("utf-8", _ENC), dtype=np.uint8)
    cand = K.nfc_candidates(buf, T.flags, NO_BOUNDARY, K.NOT_QC_YES)
    pieces: list[str] = []
    oa, ob, na, nb = [], [], [], []
    prev = 0
    shift = 0
    for a, b in cand.tolist():
        seg = text[a:b]
        ns = unicodedata.normalize("NFC", seg)
        if ns == seg:
            continue
        pieces.append(text[prev:a])
        pieces.append(ns)
        prev = b
        oa.append(a)
        ob.append(b)
        na.append(a + shift)
        nb.append(a + shift + len(ns))
        shift += len(ns) - (b - a)
    pieces.append(text[prev:])
    arr = [np.array(x, dtype=np.int64) for x in (oa, ob, na, nb)]
    return "".join(pieces), *arr


def _map_spans_slow(text: str, kunit: int, flag: int) -> np.ndarray:
    """Spans of a text that is not NFC or holds U+0130 / U+03A3."""
    if flag & K.FLAG_NFC:
        nfc, oa, ob, na, nb = _nfc_map(text)
    else:
        nfc, oa = text, np.empty(0, dtype=np.int64)
    low = nfc.lower()
    spans, _ = _scan_chars(low.encode("utf-8", _ENC), 0, kunit)
    if spans.shape[0] == 0:
        return spans
    T = tables()
    # lowered index -> NFC index: only characters with a longer lower case shift
    if len(low) != len(nfc):
        global _LOWER_EXTRA
        if _LOWER_EXTRA is None:
            _LOWER_EXTRA = (T.lower_len.astype(np.int64) - 1).astype(np.uint8)
        pos = K.char_positions(np.frombuffer(nfc.encode("utf-8", _ENC), dtype=np.uint8),
                               _LOWER_EXTRA)
        where, extra_cnt = pos[:, 0], pos[:, 1]
        # lowered index of each expanding character, then of its extra characters
        low_pos = where + np.concatenate([[0], np.cumsum(extra_cnt)[:-1]]).astype(np.int64)
        first_extra = np.repeat(low_pos + 1, extra_cnt)
        within = np.arange(first_extra.size) - np.repeat(np.cumsum(extra_cnt) - extra_cnt, extra_cnt)
        extra = (first_extra + within).astype(np.int64)

        def l2n(j):
            return j - np.searchsorted(extra, j, side="right")
    else:
        def l2n(j):
            return j
    first = l2n(spans[:, 0])          # NFC index of the first character
    last = l2n(spans[:, 1] - 1)       # NFC index of the last character
    if oa.size:
        k = np.searchsorted(na, first, side="right") - 1
        kc = np.maximum(k, 0)
        inside = (k >= 0) & (first < nb[kc])
        after = np.where(k >= 0, ob[kc] - nb[kc], 0)
        o_first = np.where(inside, oa[kc], first + after)
        k = np.searchsorted(na, last, side="right") - 1
        kc = np.maximum(k, 0)
        inside = (k >= 0) & (last < nb[kc])
        after = np.where(k >= 0, ob[kc] - nb[kc], 0)
        o_last_end = np.where(inside, ob[kc], last + 1 + after)
    else:
        o_first, o_last_end = first, last + 1
    return np.stack([o_first, o_last_end], axis=1).astype(np.int64)


def token_spans(text: str, unit: Unit = "word", lang: str | None = None,
                name: str | None = None) -> npt.NDArray[np.int64]:
    """Character offsets ``[n_tokens, 2]`` of the tokens in the ORIGINAL *text*.

    The tokens and their order are those :func:`tokenize_batch` gives for this
    text, so ``text[s:e]`` is the surface form (case and punctuation kept) of
    token i.  Fast path: the scanner counts characters while it scans the text
    (NFC texts without U+0130 / U+03A3).  Otherwise the text is normalized per
    normalization segment and lowered with an index map; a token that starts or
    ends inside a segment whose NFC differs (a composed character) is widened
    to that whole segment, so ``text[s:e]`` always covers the token.
    """
    _check_unit(unit)
    if unit == "code":
        from .code_tokens import code_token_spans

        return code_token_spans(text, lang=lang, name=name)
    kunit = K.UNIT_WORD if unit == "word" else K.UNIT_CHAR
    spans, flag = _scan_chars(text.encode("utf-8", _ENC), 1, kunit)
    if flag:
        spans = _map_spans_slow(text, kunit, flag)
    return spans
