"""Compiled scanners of the tokenizer: UTF-8 bytes in, token spans and FNV-1a 64 hashes out.

Only ``@jit`` functions over arrays and scalars.  The input is valid UTF-8 as
produced by ``str.encode("utf-8", "surrogatepass")``, so lone surrogates arrive
as 3-byte sequences (decoded as U+D800..U+DFFF, category Cs, a separator).

A *segment* ``buf[a:b]`` is scanned in one of two modes:

* ``lower=1``: the bytes are the original text; the kernel lowers each code
  point through the ``lower`` table and classifies it with ``lflags``; it also
  reports (``flag``) when the text may not be NFC or needs a context-dependent
  lower-casing, in which case the caller redoes that document in Python.
* ``lower=0``: the bytes are already NFC and lower-cased; classify with ``flags``.

Positions written are byte offsets into ``buf`` (``chars=False``) or code-point
offsets counted from ``char_base`` (``chars=True``; one code point is one
Python ``str`` character).
"""

from __future__ import annotations

import numpy as np

from .._jit import jit

FNV_OFFSET = np.uint64(0xCBF29CE484222325)
FNV_PRIME = np.uint64(0x100000001B3)

WORD = 1
SINGLE = 2
SPACE = 4
NOT_QC_YES = 8
SPECIAL_LOWER = 16
MAYBE = 64
LF_CCC = 32
LF_LOWER = 128

FLAG_NFC = 1      # the segment may not be NFC
FLAG_LOWER = 2    # the segment holds U+0130 / U+03A3 (str.lower needs the context)

UNIT_WORD = 0
UNIT_CHAR = 1


@jit(inline="always")
def _fnv_byte(h, b):
    return (h ^ np.uint64(b)) * FNV_PRIME


@jit(inline="always")
def _fnv_cp(h, cp):
    """Feed the UTF-8 encoding of code point *cp* (surrogates as by surrogatepass)."""
    if cp < 0x80:
        h = _fnv_byte(h, cp)
    elif cp < 0x800:
        h = _fnv_byte(h, 0xC0 | (cp >> 6))
        h = _fnv_byte(h, 0x80 | (cp & 0x3F))
    elif cp < 0x10000:
        h = _fnv_byte(h, 0xE0 | (cp >> 12))
        h = _fnv_byte(h, 0x80 | ((cp >> 6) & 0x3F))
        h = _fnv_byte(h, 0x80 | (cp & 0x3F))
    else:
        h = _fnv_byte(h, 0xF0 | (cp >> 18))
        h = _fnv_byte(h, 0x80 | ((cp >> 12) & 0x3F))
        h = _fnv_byte(h, 0x80 | ((cp >> 6) & 0x3F))
        h = _fnv_byte(h, 0x80 | (cp & 0x3F))
    return h


@jit(inline="always")
def _composes(first, second, ckeys):
    """Whether the pair (first, second) forms a primary composite (NFC would join them)."""
    if first < 0:
        return False
    if 0x1100 <= first <= 0x1112 and 0x1161 <= second <= 0x1175:
        return True  # Hangul L + V
    if (0xAC00 <= first <= 0xD7A3 and (first - 0xAC00) % 28 == 0
            and 0x11A8 <= second <= 0x11C2):
        return True  # Hangul LV + T
    key = (first << 21) | second
    k = np.searchsorted(ckeys, key)
    return k < ckeys.shape[0] and ckeys[k] == key


@jit(inline="always")
def _decode(buf, i):
    """Code point and byte length of the UTF-8 sequence at ``buf[i]``."""
    c0 = buf[i]
    if c0 < 0x80:
        return np.int64(c0), 1
    if c0 < 0xE0:
        return (np.int64(c0 & 0x1F) << 6) | np.int64(buf[i + 1] & 0x3F), 2
    if c0 < 0xF0:
        return ((np.int64(c0 & 0x0F) << 12) | (np.int64(buf[i + 1] & 0x3F) << 6)
                | np.int64(buf[i + 2] & 0x3F)), 3
    return ((np.int64(c0 & 0x07) << 18) | (np.int64(buf[i + 1] & 0x3F) << 12)
            | (np.int64(buf[i + 2] & 0x3F) << 6) | np.int64(buf[i + 3] & 0x3F)), 4


@jit(inline="always")
def _decode16(buf, i, b):
    """Code point and byte length of the UTF-16LE unit(s) at ``buf[i]``."""
    u = np.int64(buf[i]) | (np.int64(buf[i + 1]) << 8)
    if 0xD800 <= u < 0xDC00 and i + 3 < b:
        lo = np.int64(buf[i + 2]) | (np.int64(buf[i + 3]) << 8)
        if 0xDC00 <= lo < 0xE000:
            return 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00), 4
    return u, 2


@jit
def scan_segment(buf, a, b, lower, enc16, unit, flags, lflags, lowtab, ccc, ckeys,
                 fill, chars, char_base, out_start, out_end, out_hash, pos):
    """Scan ``buf[a:b]``; return ``(n_tokens, flag)``.

    ``buf[a:b]`` is UTF-8 (``enc16`` false; lone surrogates as by
    surrogatepass) or UTF-16LE encoded strictly (``enc16`` true: a surrogate
    pair is one code point; the caller never uses UTF-16 for text with lone
    surrogates, which would be ambiguous).
    With ``fill`` the tokens are written at ``out_*[pos:pos + n_tokens]`` as
    far as the arrays reach (the count goes on past their end).
    ``flag`` (lower mode only) has ``FLAG_NFC`` when the segment may not be NFC
    (an NFC_Quick_Check=No character, a Maybe character that composes with
    its starter or follows other marks, or marks out of canonical order) and
    ``FLAG_LOWER`` when it holds a character whose lower-casing is context
    dependent.
    """
    cap = out_start.shape[0]
    n = 0
    flag = 0
    last_ccc = 0
    last_starter = np.int64(-1)
    marks = 0
    in_tok = False
    tstart = 0
    h = FNV_OFFSET
    space_run = False
    space_start = 0
    i = a
    ci = char_base
    while i < b:
        if enc16:
            cp = np.int64(buf[i]) | (np.int64(buf[i + 1]) << 8)
            w = 2
            if 0xD800 <= cp < 0xDC00 and i + 3 < b:
                lo = np.int64(buf[i + 2]) | (np.int64(buf[i + 3]) << 8)
                if 0xDC00 <= lo < 0xE000:
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00)
                    w = 4
        else:
            c0 = buf[i]
            if c0 < 0x80:
                cp = np.int64(c0)
                w = 1
            elif c0 < 0xE0:
                cp = (np.int64(c0 & 0x1F) << 6) | np.int64(buf[i + 1] & 0x3F)
                w = 2
            elif c0 < 0xF0:
                cp = ((np.int64(c0 & 0x0F) << 12) | (np.int64(buf[i + 1] & 0x3F) << 6)
                      | np.int64(buf[i + 2] & 0x3F))
                w = 3
            else:
                cp = ((np.int64(c0 & 0x07) << 18) | (np.int64(buf[i + 1] & 0x3F) << 12)
                      | (np.int64(buf[i + 2] & 0x3F) << 6) | np.int64(buf[i + 3] & 0x3F))
                w = 4
        if cp < 0x80:  # ASCII: NFC, ccc 0, lower case by arithmetic
            last_ccc = 0
            last_starter = cp
            marks = 0
            if lower:
                f = lflags[cp]
                lcp = cp + 32 if 65 <= cp <= 90 else cp
            else:
                f = flags[cp]
                lcp = cp
        elif lower:
            f = lflags[cp]
            if f & (NOT_QC_YES | SPECIAL_LOWER | LF_CCC):
                cc = np.int64(ccc[cp])
                if f & SPECIAL_LOWER:
                    flag |= FLAG_LOWER
                if f & NOT_QC_YES:
                    if not (f & MAYBE):
                        flag |= FLAG_NFC
                    elif cc == 0:  # composes only with an adjacent starter
                        if marks == 0 and _composes(last_starter, cp, ckeys):
                            flag |= FLAG_NFC
                    elif (marks > 0 or _composes(last_starter, cp, ckeys)
                          or _composes(last_starter, 0, ckeys)):
                        # (…, 0): the starter is precomposed with a mark (ô = o + U+0302);
                        # a composing mark after it may reorder and recompose (ô + U+0323
                        # → ộ), which only a full NFC sorts out
                        flag |= FLAG_NFC
                if cc != 0 and last_ccc > cc:
                    flag |= FLAG_NFC
                last_ccc = cc
                if cc == 0:
                    last_starter = cp
                    marks = 0
                else:
                    marks += 1
            else:  # the common case: a starter that is NFC_Quick_Check=Yes
                last_ccc = 0
                last_starter = cp
                marks = 0
            lcp = np.int64(lowtab[cp]) if f & LF_LOWER else cp
        else:
            f = flags[cp]
            lcp = cp
        p = ci if chars else i
        if unit == UNIT_WORD:
            if f & SINGLE:
                if in_tok:
                    if fill and pos + n < cap:
                        out_start[pos + n] = tstart
                        out_end[pos + n] = p
                        out_hash[pos + n] = h
                    n += 1
                    in_tok = False
                if fill and pos + n < cap:
                    out_start[pos + n] = p
                    out_end[pos + n] = ci + 1 if chars else i + w
                    out_hash[pos + n] = _fnv_cp(FNV_OFFSET, lcp)
                n += 1
            elif f & WORD:
                if not in_tok:
                    in_tok = True
                    tstart = p
                    h = FNV_OFFSET
                h = _fnv_cp(h, lcp)
                if lower:
                    # tight loop over plain text: ASCII and BMP characters that are NFC
                    # starters with a context-free lower case, words and the separators
                    # between them (tokens end and start here); anything else goes back
                    # to the general path with the state (in_tok, tstart, h) as it is
                    i += w
                    ci += 1
                    ci0 = ci
                    if enc16:
                        while i < b:
                            cp = np.int64(buf[i]) | (np.int64(buf[i + 1]) << 8)
                            if cp < 0x80:
                                g = lflags[cp] & (WORD | SINGLE)
                                if g == WORD:
                                    if not in_tok:
                                        in_tok = True
                                        tstart = ci if chars else i
                                        h = FNV_OFFSET
                                    h = _fnv_byte(h, cp + 32 if 65 <= cp <= 90 else cp)
                                elif g != 0:
                                    break
                                elif in_tok:
                                    if fill and pos + n < cap:
                                        out_start[pos + n] = tstart
                                        out_end[pos + n] = ci if chars else i
                                        out_hash[pos + n] = h
                                    n += 1
                                    in_tok = False
                            elif cp < 0xD800:
                                f = lflags[cp]
                                g = f & (WORD | SINGLE | NOT_QC_YES | SPECIAL_LOWER | LF_CCC)
                                if g == WORD:
                                    if not in_tok:
                                        in_tok = True
                                        tstart = ci if chars else i
                                        h = FNV_OFFSET
                                    h = _fnv_cp(h, np.int64(lowtab[cp]))  # identity where not LF_LOWER
                                elif g != 0:
                                    break
                                elif in_tok:
                                    if fill and pos + n < cap:
                                        out_start[pos + n] = tstart
                                        out_end[pos + n] = ci if chars else i
                                        out_hash[pos + n] = h
                                    n += 1
                                    in_tok = False
                            else:
                                break
                            i += 2
                            last_starter = cp
                            ci += 1
                    else:
                        while i < b:
                            c0 = buf[i]
                            if c0 < 0x80:
                                cp = np.int64(c0)
                                g = lflags[cp] & (WORD | SINGLE)
                                if g == WORD:
                                    if not in_tok:
                                        in_tok = True
                                        tstart = ci if chars else i
                                        h = FNV_OFFSET
                                    h = _fnv_byte(h, cp + 32 if 65 <= cp <= 90 else cp)
                                elif g != 0:
                                    break
                                elif in_tok:
                                    if fill and pos + n < cap:
                                        out_start[pos + n] = tstart
                                        out_end[pos + n] = ci if chars else i
                                        out_hash[pos + n] = h
                                    n += 1
                                    in_tok = False
                                i += 1
                            elif c0 < 0xE0:
                                cp = (np.int64(c0 & 0x1F) << 6) | np.int64(buf[i + 1] & 0x3F)
                                f = lflags[cp]
                                g = f & (WORD | SINGLE | NOT_QC_YES | SPECIAL_LOWER | LF_CCC)
                                if g == WORD:
                                    if not in_tok:
                                        in_tok = True
                                        tstart = ci if chars else i
                                        h = FNV_OFFSET
                                    h = _fnv_cp(h, np.int64(lowtab[cp]))  # identity where not LF_LOWER
                                elif g != 0:
                                    break
                                elif in_tok:
                                    if fill and pos + n < cap:
                                        out_start[pos + n] = tstart
                                        out_end[pos + n] = ci if chars else i
                                        out_hash[pos + n] = h
                                    n += 1
                                    in_tok = False
                                i += 2
                            else:
                                break
                            last_starter = cp
                            ci += 1
                    if ci != ci0:  # it consumed NFC starters with ccc 0
                        last_ccc = 0
                        marks = 0
                    continue
            elif in_tok:
                if fill and pos + n < cap:
                    out_start[pos + n] = tstart
                    out_end[pos + n] = p
                    out_hash[pos + n] = h
                n += 1
                in_tok = False
        else:  # UNIT_CHAR: every character a token, whitespace runs one " "
            if f & SPACE:
                if not space_run:
                    space_run = True
                    space_start = p
            else:
                if space_run:
                    if n > 0:  # no leading space token
                        if fill and pos + n < cap:
                            out_start[pos + n] = space_start
                            out_end[pos + n] = p
                            out_hash[pos + n] = _fnv_byte(FNV_OFFSET, 0x20)
                        n += 1
                    space_run = False
                if fill and pos + n < cap:
                    out_start[pos + n] = p
                    out_end[pos + n] = ci + 1 if chars else i + w
                    out_hash[pos + n] = _fnv_cp(FNV_OFFSET, lcp)
                n += 1
        i += w
        ci += 1
    if in_tok:
        if fill and pos + n < cap:
            out_start[pos + n] = tstart
            out_end[pos + n] = ci if chars else b
            out_hash[pos + n] = h
        n += 1
    return n, flag


@jit
def count_segments(buf, seg_a, seg_b, seg_lower, seg_enc16, unit, flags, lflags, lowtab, ccc,
                   ckeys):
    """Token count and NFC/lower flag of every segment (no output written)."""
    m = seg_a.shape[0]
    counts = np.zeros(m, dtype=np.int64)
    seg_flag = np.zeros(m, dtype=np.uint8)
    dummy_i = np.empty(0, dtype=np.int64)
    dummy_h = np.empty(0, dtype=np.uint64)
    for s in range(m):
        n, f = scan_segment(buf, seg_a[s], seg_b[s], seg_lower[s], seg_enc16[s], unit, flags, lflags,
                            lowtab, ccc, ckeys, False, False, 0, dummy_i, dummy_i, dummy_h, 0)
        counts[s] = n
        seg_flag[s] = f
    return counts, seg_flag


@jit
def scan_range(buf, seg_a, seg_b, seg_lower, seg_enc16, s0, s1, unit, flags, lflags, lowtab, ccc,
               ckeys,
               out_start, out_end, out_hash, pos, counts, seg_flag):
    """Scan segments ``s0:s1`` writing their tokens one after another from *pos*.

    Stops before the first segment whose tokens do not fit in the output
    arrays; returns ``(next segment, next position)`` so the caller can grow the
    arrays and resume.  ``counts`` / ``seg_flag`` receive each finished
    segment's token count and flag.  One thread, no GIL (``nogil``): the caller
    runs disjoint ranges in a thread pool.
    """
    cap = out_start.shape[0]
    for s in range(s0, s1):
        n, f = scan_segment(buf, seg_a[s], seg_b[s], seg_lower[s], seg_enc16[s], unit, flags, lflags,
                            lowtab, ccc, ckeys, True, False, 0, out_start, out_end, out_hash, pos)
        if pos + n > cap:
            return s, pos
        counts[s] = n
        seg_flag[s] = f
        pos += n
    return s1, pos


@jit
def gather_tokens(a_start, a_end, a_hash, b_start, b_end, b_hash, seg_src, seg_count,
                  out_start, out_end, out_hash):
    """Copy each segment's tokens back to back; ``seg_src[s] >= 0`` is a position
    in the ``a_*`` arrays, ``-1 - seg_src[s]`` one in the ``b_*`` arrays."""
    p = 0
    for s in range(seg_src.shape[0]):
        q = seg_src[s]
        if q >= 0:
            for k in range(seg_count[s]):
                out_start[p] = a_start[q + k]
                out_end[p] = a_end[q + k]
                out_hash[p] = a_hash[q + k]
                p += 1
        else:
            q = -1 - q
            for k in range(seg_count[s]):
                out_start[p] = b_start[q + k]
                out_end[p] = b_end[q + k]
                out_hash[p] = b_hash[q + k]
                p += 1
    return p


@jit
def copy_runs(src_start, src_end, src_hash, src_pos, dst_pos, lengths,
              out_start, out_end, out_hash):
    """``out_*[dst_pos[r]:+lengths[r]] = src_*[src_pos[r]:+lengths[r]]`` for every run r."""
    for r in range(lengths.shape[0]):
        for k in range(lengths[r]):
            out_start[dst_pos[r] + k] = src_start[src_pos[r] + k]
            out_end[dst_pos[r] + k] = src_end[src_pos[r] + k]
            out_hash[dst_pos[r] + k] = src_hash[src_pos[r] + k]


@jit
def split_points(buf, a, b, target, enc16):
    """Cut ``buf[a:b]`` into pieces of about *target* bytes before ASCII space or
    newline characters (always separators in the word unit; in UTF-8 such a
    byte is never inside a multi-byte sequence, in UTF-16 only code units at
    even offsets are looked at).  Returns the cut positions, ``a`` and ``b``
    included."""
    step = 2 if enc16 else 1
    cuts = [a]
    p = a + target - (target % step)
    while p < b:
        while p < b and not ((buf[p] == 0x20 or buf[p] == 0x0A)
                             and (not enc16 or buf[p + 1] == 0)):
            p += step
        if p >= b:
            break
        cuts.append(p)
        p += target - (target % step)
    cuts.append(b)
    out = np.empty(len(cuts), dtype=np.int64)
    for k in range(len(cuts)):
        out[k] = cuts[k]
    return out


@jit
def fnv1a64_spans(data, offsets):
    """FNV-1a 64 of ``data[offsets[i]:offsets[i+1]]`` for every i."""
    n = offsets.shape[0] - 1
    out = np.empty(n, dtype=np.uint64)
    for i in range(n):
        h = FNV_OFFSET
        for j in range(offsets[i], offsets[i + 1]):
            h = _fnv_byte(h, data[j])
        out[i] = h
    return out


@jit
def nfc_candidates(buf, flags, no_boundary, not_qc_yes):
    """Normalization segments of a UTF-8 text that NFC may change.

    A segment runs from a character without the ``no_boundary`` bit (or the
    text start) to the next such character.  Returns ``[k, 2]`` character
    ranges of the segments longer than one character or starting with a
    character whose ``not_qc_yes`` bit is set; every other segment is one
    NFC_Quick_Check=Yes starter, which NFC leaves alone.
    """
    out = np.empty((16, 2), dtype=np.int64)
    k = 0
    i = 0
    ci = 0
    seg_start = 0
    seg_first_flag = 0
    n = buf.shape[0]
    while i <= n:
        if i < n:
            cp, w = _decode(buf, i)
            f = flags[cp]
            boundary = (f & no_boundary) == 0 or ci == 0
        else:
            w = 1
            f = 0
            boundary = True
        if boundary and ci > 0:
            if ci - seg_start > 1 or (seg_first_flag & not_qc_yes):
                if k == out.shape[0]:
                    bigger = np.empty((2 * k, 2), dtype=np.int64)
                    bigger[:k] = out
                    out = bigger
                out[k, 0] = seg_start
                out[k, 1] = ci
                k += 1
        if boundary:
            seg_start = ci
            seg_first_flag = f
        i += w
        ci += 1
    return out[:k].copy()


@jit
def char_positions(buf, table):
    """``[k, 2]``: (character index, ``table[cp]``) of every character whose
    ``table[cp]`` is not 0."""
    out = np.empty((16, 2), dtype=np.int64)
    k = 0
    i = 0
    ci = 0
    n = buf.shape[0]
    while i < n:
        cp, w = _decode(buf, i)
        v = table[cp]
        if v != 0:
            if k == out.shape[0]:
                bigger = np.empty((2 * k, 2), dtype=np.int64)
                bigger[:k] = out
                out = bigger
            out[k, 0] = ci
            out[k, 1] = v
            k += 1
        i += w
        ci += 1
    return out[:k].copy()


@jit
def move_tokens(start, end, hsh, src, dst, n):
    """Move ``n`` tokens from position *src* down to *dst* (``dst <= src``) in place."""
    for k in range(n):
        start[dst + k] = start[src + k]
        end[dst + k] = end[src + k]
        hsh[dst + k] = hsh[src + k]


@jit
def utf16_offsets(buf, char_lens):
    """Byte offsets (``len(char_lens) + 1``) of consecutive texts of *char_lens*
    code points each in UTF-16LE *buf* (a surrogate pair is one code point)."""
    n = char_lens.shape[0]
    out = np.empty(n + 1, dtype=np.int64)
    out[0] = 0
    i = 0
    nb = buf.shape[0]
    for d in range(n):
        for _ in range(char_lens[d]):
            if buf[i + 1] >= 0xD8 and buf[i + 1] < 0xDC and i + 3 < nb:
                i += 4
            else:
                i += 2
        out[d + 1] = i
    return out


@jit
def join_spans(buf, starts, ends, enc16):
    """``buf[starts[k]:ends[k]]`` for every k, each followed by a newline
    (``0A`` in UTF-8, ``0A 00`` in UTF-16LE), in one byte array."""
    sep = 2 if enc16 else 1
    total = 0
    for k in range(starts.shape[0]):
        total += ends[k] - starts[k] + sep
    out = np.empty(total, dtype=np.uint8)
    p = 0
    for k in range(starts.shape[0]):
        for j in range(starts[k], ends[k]):
            out[p] = buf[j]
            p += 1
        out[p] = 0x0A
        p += 1
        if enc16:
            out[p] = 0
            p += 1
    return out


@jit
def scan_docs_chars(buf, seg_a, seg_b, unit, flags, lflags, lowtab, ccc, ckeys, out_off,
                    out_start, out_end, out_hash):
    """Character spans of the tokens of many documents (UTF-8 ``buf[seg_a[s]:seg_b[s]]``,
    lower-case mode), document s's tokens written at ``out_*[out_off[s]:out_off[s + 1]]``
    with character offsets relative to the document's start.  Returns each
    document's token count (a count unequal to the room given means another
    tokenizer: the caller refuses) and NFC/lower flag (flagged documents need the
    slow path)."""
    m = seg_a.shape[0]
    counts = np.zeros(m, dtype=np.int64)
    seg_flag = np.zeros(m, dtype=np.uint8)
    for s in range(m):
        lo = out_off[s]
        room = out_off[s + 1] - lo
        n, f = scan_segment(buf, seg_a[s], seg_b[s], 1, False, unit, flags, lflags, lowtab, ccc,
                            ckeys, room > 0, True, 0, out_start[lo:lo + room], out_end[lo:lo + room],
                            out_hash[lo:lo + room], 0)
        counts[s] = n
        seg_flag[s] = f
    return counts, seg_flag
