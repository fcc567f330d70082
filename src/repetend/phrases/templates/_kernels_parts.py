"""Compiled kernels of the template layer's parts stage: number masking, the
packed L'-gram count and the covered runs (:mod:`.parts`).

Only ``@jit`` functions over arrays and scalars: no I/O, no Python objects.
The passes over the corpus run in parallel (``@pjit``) over contiguous
chunks of documents (``chunk_docs``, :func:`repetend._arrays.even_bounds`) or of
buckets, each chunk writing only its own rows or slices, and give the same
output, byte for byte, whatever the number of chunks.
"""

from __future__ import annotations

import numpy as np

from ..._jit import jit, pjit, prange

_MIX = np.uint64(0x9E3779B97F4A7C15)


@pjit
def mask_tokens(tokens, is_slot, slot_id):
    """Copy of *tokens* with every token ``t`` where ``is_slot[t]`` replaced by
    *slot_id* (parallel over positions)."""
    out = np.empty(tokens.shape[0], dtype=np.int32)
    for i in prange(tokens.shape[0]):
        t = tokens[i]
        out[i] = slot_id if is_slot[t] else t
    return out


@jit
def ngram_runs(doc_offsets, pos, s_start, s_end, n):
    """The covered runs of the frequent n-grams: every position inside an
    occurrence ``[pos[i], pos[i] + n)`` of a kept n-gram (``i`` in some
    ``[s_start[s], s_end[s])``), merged per document into maximal stretches of
    covered positions (occurrences never cross a document boundary).  Returns
    ``(run_offsets, starts, ends)`` as :class:`repetend.phrases.frequent_spans.
    FrequentSpans` has them (global positions, end exclusive)."""
    n_docs = doc_offsets.shape[0] - 1
    cov = np.zeros(doc_offsets[n_docs] + 1, dtype=np.bool_)
    for s in range(s_start.shape[0]):
        for i in range(s_start[s], s_end[s]):
            p = pos[i]
            for j in range(p, p + n):
                cov[j] = True
    return cover_runs(doc_offsets, cov)


@jit
def cover_runs(doc_offsets, cov):
    """Maximal stretches of ``cov`` per document: ``(run_offsets, starts, ends)``."""
    n_docs = doc_offsets.shape[0] - 1
    runs = np.zeros(n_docs + 1, dtype=np.int64)
    for d in range(n_docs):
        c = 0
        prev = False
        for p in range(doc_offsets[d], doc_offsets[d + 1]):
            if cov[p] and not prev:
                c += 1
            prev = cov[p]
        runs[d + 1] = runs[d] + c
    starts = np.empty(runs[n_docs], dtype=np.int64)
    ends = np.empty(runs[n_docs], dtype=np.int64)
    for d in range(n_docs):
        w = runs[d]
        b = doc_offsets[d + 1]
        p = doc_offsets[d]
        while p < b:
            if not cov[p]:
                p += 1
                continue
            q = p
            while q < b and cov[q]:
                q += 1
            starts[w] = p
            ends[w] = q
            w += 1
            p = q
    return runs, starts, ends


_ONES = np.uint64(0xFFFFFFFFFFFFFFFF)
_SALT = np.uint64(0x5555555555555555)  # the prefilter's bit is not the table slot's


@jit
def _low_mask(w):
    if w >= 64:
        return _ONES
    return (np.uint64(1) << np.uint64(w)) - np.uint64(1)


@jit
def _slot(x, tb):
    """Top *tb* bits of a multiplicative hash of *x*: a slot of a 2**tb table."""
    return np.int64((x * _MIX) >> np.uint64(64 - tb))


@jit
def _roll(run, k, c, sb, kmask):
    """One token of code *c* (0: not a frequent word) onto a document's rolling
    state: the frequent words in a row ending here (*run*) and the packed key of
    the last ``n`` codes (*k*, *sb* bits each, *kmask* its ``n · sb`` bits).
    The three passes over the corpus step with it, so they agree on the keys."""
    return (run + 1 if c != 0 else 0), ((k << sb) | np.uint64(c)) & kmask


@jit
def _packed_mix(k, kmask):
    """The bijective mix of a packed n-gram key (its low ``n · bits`` bits):
    its top bits pick the bucket, the rest goes into the bucket's entry, and
    the runs look it up — the three kernels must agree on it."""
    return (k * _MIX) & kmask


@pjit
def packed_bucket_sizes(tokens, doc_offsets, code, n, bits, bbits, chunk_docs):
    """Histograms of the buckets of the in-document n-grams of frequent words
    (``code[t] != 0``), one per chunk of documents: ``sizes[c, b]`` occurrences
    of documents ``chunk_docs[c]:chunk_docs[c + 1]`` fall in bucket b (chunks
    in parallel)."""
    n_chunks = chunk_docs.shape[0] - 1
    sizes = np.zeros((n_chunks, 1 << bbits), dtype=np.int64)
    kmask = _low_mask(n * bits)
    sb = np.uint64(bits)
    bsh = np.uint64(n * bits - bbits)
    for ch in prange(n_chunks):
        row = sizes[ch]
        for d in range(chunk_docs[ch], chunk_docs[ch + 1]):
            run = 0
            k = np.uint64(0)
            for q in range(doc_offsets[d], doc_offsets[d + 1]):
                run, k = _roll(run, k, code[tokens[q]], sb, kmask)
                if run >= n:
                    row[_packed_mix(k, kmask) >> bsh] += 1
    return sizes


@jit
def scatter_offsets(sizes):
    """From :func:`packed_bucket_sizes`' per-chunk histograms: the bucket starts
    (``bucket_starts[b]:bucket_starts[b + 1]`` is bucket b, length buckets + 1)
    and the per-chunk fill offsets (``fill[c, b]`` = bucket b's start plus its
    occurrences in the chunks before c), as :func:`packed_scatter` takes them."""
    n_chunks, nbk = sizes.shape
    bucket_starts = np.zeros(nbk + 1, dtype=np.int64)
    fill = np.empty((n_chunks, nbk), dtype=np.int64)
    t = 0
    for b in range(nbk):
        bucket_starts[b] = t
        for ch in range(n_chunks):
            fill[ch, b] = t
            t += sizes[ch, b]
    bucket_starts[nbk] = t
    return bucket_starts, fill


@pjit
def packed_scatter(tokens, doc_offsets, code, n, bits, bbits, docbits, chunk_docs, fill, out):
    """Write every counted n-gram as ``(low mix << docbits) | document`` at
    ``fill[c, bucket]`` (advanced) for chunk c of documents ``chunk_docs[c]:
    chunk_docs[c + 1]`` (chunks in parallel, each in its own slice of every
    bucket): documents ascending inside each bucket, the chunks being
    contiguous and in order."""
    n_chunks = chunk_docs.shape[0] - 1
    kmask = _low_mask(n * bits)
    lmask = _low_mask(n * bits - bbits)
    sb = np.uint64(bits)
    bsh = np.uint64(n * bits - bbits)
    db = np.uint64(docbits)
    for ch in prange(n_chunks):
        row = fill[ch]
        for d in range(chunk_docs[ch], chunk_docs[ch + 1]):
            run = 0
            k = np.uint64(0)
            ud = np.uint64(d)
            for q in range(doc_offsets[d], doc_offsets[d + 1]):
                run, k = _roll(run, k, code[tokens[q]], sb, kmask)
                if run >= n:
                    m = _packed_mix(k, kmask)
                    b = m >> bsh
                    t = row[b]
                    row[b] = t + 1
                    out[t] = ((m & lmask) << db) | ud


@jit
def _bucket_mixes(bucket_starts, vals, min_docs, low_bits, docbits, b0, b1, out, o0):
    """:func:`frequent_mixes` over buckets ``b0:b1``, written from ``out[o0]``:
    the number written."""
    mx = 0
    for b in range(b0, b1):
        mx = max(mx, bucket_starts[b + 1] - bucket_starts[b])
    size = 16
    while size < 2 * mx:
        size *= 2
    tk = np.empty(size, dtype=np.uint64)
    tdf = np.zeros(size, dtype=np.int64)
    tlast = np.empty(size, dtype=np.uint64)
    nout = o0
    db = np.uint64(docbits)
    dmask = _low_mask(docbits)
    bsh = np.uint64(low_bits)
    for b in range(b0, b1):
        lo = bucket_starts[b]
        hi = bucket_starts[b + 1]
        if hi - lo < min_docs:
            continue
        tb = 4
        while (1 << tb) < 2 * (hi - lo):
            tb += 1
        msk = (1 << tb) - 1
        tdf[:1 << tb] = 0
        hb = np.uint64(b) << bsh
        for i in range(lo, hi):
            v = vals[i]
            low = v >> db
            d = v & dmask
            h = _slot(low, tb)
            while True:
                if tdf[h] == 0:
                    tk[h] = low
                    tdf[h] = 1
                    tlast[h] = d
                    if min_docs <= 1:
                        out[nout] = hb | low
                        nout += 1
                    break
                if tk[h] == low:
                    if tlast[h] != d:
                        tlast[h] = d
                        tdf[h] += 1
                        if tdf[h] == min_docs:
                            out[nout] = hb | low
                            nout += 1
                    break
                h = (h + 1) & msk
    return nout - o0


@pjit
def frequent_mixes(bucket_starts, vals, min_docs, low_bits, docbits, chunk_buckets):
    """The mixes of the n-grams in at least *min_docs* distinct documents, from
    the buckets :func:`packed_scatter` filled (bucket b is
    ``vals[bucket_starts[b]:bucket_starts[b + 1]]``), in bucket order.  The
    buckets are counted in parallel over the chunks ``chunk_buckets[c]:
    chunk_buckets[c + 1]`` (contiguous, covering every bucket), each with its
    own hash table and output slice, then concatenated in chunk order."""
    n_chunks = chunk_buckets.shape[0] - 1
    # a key counted once per document: at most (a chunk's entries) / σ of them
    # are frequent, so a chunk's slice never grows
    base = np.zeros(n_chunks + 1, dtype=np.int64)
    for ch in range(n_chunks):
        e = bucket_starts[chunk_buckets[ch + 1]] - bucket_starts[chunk_buckets[ch]]
        base[ch + 1] = base[ch] + e // max(min_docs, 1) + 1
    buf = np.empty(base[n_chunks], dtype=np.uint64)
    got = np.zeros(n_chunks, dtype=np.int64)
    for ch in prange(n_chunks):
        got[ch] = _bucket_mixes(bucket_starts, vals, min_docs, low_bits, docbits,
                                chunk_buckets[ch], chunk_buckets[ch + 1], buf, base[ch])
    return _join_slices(buf, base, got)


@jit
def _join_slices(buf, base, got):
    """The chunks' slices ``buf[base[c]:base[c] + got[c]]`` joined in chunk
    order: moved to the front of *buf* (never past their source, as each
    slice fits its chunk's room) and copied out."""
    w = 0
    for ch in range(got.shape[0]):
        src = base[ch]
        for i in range(got[ch]):
            buf[w + i] = buf[src + i]
        w += got[ch]
    return buf[:w].copy()


@jit
def mix_table(mixes, fbits):
    """An open-addressing set of the (nonzero) *mixes* (``(table, tb)``, 0 is
    empty) and a one-bit-per-mix prefilter of ``2**fbits`` bits."""
    tb = 4
    while (1 << tb) < 2 * mixes.shape[0]:
        tb += 1
    tab = np.zeros(1 << tb, dtype=np.uint64)
    msk = (1 << tb) - 1
    bloom = np.zeros(1 << (fbits - 6), dtype=np.uint64)
    for i in range(mixes.shape[0]):
        m = mixes[i]
        h = _slot(m, tb)
        while tab[h] != 0:
            h = (h + 1) & msk
        tab[h] = m
        x = _slot(m ^ _SALT, fbits)
        bloom[x >> 6] |= np.uint64(1) << np.uint64(x & 63)
    return tab, tb, bloom


@jit
def _in_table(tab, tb, m):
    msk = (1 << tb) - 1
    h = _slot(m, tb)
    while True:
        e = tab[h]
        if e == m:
            return True
        if e == 0:
            return False
        h = (h + 1) & msk


@jit
def _chunk_mix_runs(tokens, doc_offsets, code, n, bits, tab, tb, bloom, fbits, d0, d1,
                    runs, starts, ends, w0):
    """:func:`frequent_mix_runs` over documents ``d0:d1``: the runs written from
    ``starts[w0]``/``ends[w0]``, ``runs[d + 1]`` = the chunk's runs up to
    document d's end; returns their number."""
    kmask = _low_mask(n * bits)
    sb = np.uint64(bits)
    w = w0
    for d in range(d0, d1):
        run = 0
        k = np.uint64(0)
        rs = -1
        ce = -1
        for q in range(doc_offsets[d], doc_offsets[d + 1]):
            run, k = _roll(run, k, code[tokens[q]], sb, kmask)
            if run >= n:
                m = _packed_mix(k, kmask)
                x = _slot(m ^ _SALT, fbits)
                if (bloom[x >> 6] >> np.uint64(x & 63)) & np.uint64(1) and _in_table(tab, tb, m):
                    p = q - n + 1
                    if p > ce:          # not touching the open run: close it
                        if rs >= 0:
                            starts[w] = rs
                            ends[w] = ce
                            w += 1
                        rs = p
                    ce = q + 1
        if rs >= 0:
            starts[w] = rs
            ends[w] = ce
            w += 1
        runs[d + 1] = w - w0
    return w - w0


@pjit
def frequent_mix_runs(tokens, doc_offsets, code, n, bits, tab, tb, bloom, fbits, chunk_docs):
    """The covered runs of the n-grams whose mix is in the set of
    :func:`mix_table`: ``(run_offsets, starts, ends)`` as :func:`cover_runs`
    gives them (maximal stretches per document, end exclusive, global
    run offsets).  Computed in parallel over the chunks of documents
    ``chunk_docs[c]:chunk_docs[c + 1]`` (contiguous, covering every
    document), each into its own slice, then concatenated in chunk order."""
    n_docs = doc_offsets.shape[0] - 1
    n_chunks = chunk_docs.shape[0] - 1
    runs = np.zeros(n_docs + 1, dtype=np.int64)
    base = np.zeros(n_chunks + 1, dtype=np.int64)
    for ch in range(n_chunks):
        t = doc_offsets[chunk_docs[ch + 1]] - doc_offsets[chunk_docs[ch]]
        base[ch + 1] = base[ch] + t // n + 1      # a run holds >= n tokens
    s_buf = np.empty(base[n_chunks], dtype=np.int64)
    e_buf = np.empty(base[n_chunks], dtype=np.int64)
    got = np.zeros(n_chunks, dtype=np.int64)
    for ch in prange(n_chunks):
        got[ch] = _chunk_mix_runs(tokens, doc_offsets, code, n, bits, tab, tb, bloom, fbits,
                                  chunk_docs[ch], chunk_docs[ch + 1], runs, s_buf, e_buf,
                                  base[ch])
    first = 0                           # the chunk's run offsets made global
    for ch in range(n_chunks):
        for d in range(chunk_docs[ch], chunk_docs[ch + 1]):
            runs[d + 1] += first
        first += got[ch]
    return runs, _join_slices(s_buf, base, got), _join_slices(e_buf, base, got)
