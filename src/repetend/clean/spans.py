"""Which characters to cut from a document, and what to put in their place.

Input: the character spans of the boilerplate phrase occurrences of one
document (token span ``start..end-1`` of a phrase occurrence is the character
span ``[spans[start, 0], spans[end - 1, 1])`` of the original text).  Output: a
list of :class:`Cut` — original character ranges and their replacements — such
that applying them leaves readable text.  The rule, in order:

1. **Blocks.** Occurrence spans are sorted and merged when they overlap or when
   the text between them holds no word character (only spaces and
   punctuation): two adjacent boilerplate pieces form one block.
2. **Glued punctuation.** A block takes the punctuation glued to its edges — a
   run of characters that are neither word characters nor whitespace
   (``.``, ``:``, ``»``, ``)``, ``©`` …) right after its end or right before
   its start — when that run is itself bounded by whitespace or the text edge
   (so ``word.word`` is never split).  A block glued between two separators
   (``a,<block>,b``) takes the separators on its right (``a,b``), and a block
   that fills a bracket or quote pair takes the pair (``x(<block>)y`` →
   ``x y``: no empty ``()`` is left).
3. **Dangling separators.** Whitespace-delimited items made only of separator
   characters (``| ¦ • · , ; : / \\ - – — ~ * > ›``) that follow the block up to
   the next word, line break or text end are taken with it; when the block
   ends its line and takes none, the separator items before it (back to the
   previous word or line start) are taken instead.  ``A | B | C`` without
   ``B`` becomes ``A | C``; ``A | B`` without ``B`` becomes ``A``.
4. **Whitespace.** The whitespace on both sides of the block is removed with it
   and replaced by a single joiner: nothing at the start or end of the text;
   the line break(s) of the removed whitespace when there were any (as many as
   the larger side had, so a paragraph break stays a paragraph break; a block
   spanning lines leaves one line break); otherwise one space — or nothing when
   the block had no whitespace on either side and the characters it separated
   would not glue into one word (punctuation, or CJK characters that are
   tokens on their own).

Every removed character is in exactly one cut, so the log of cuts lets a user
audit and undo the cleaning (:func:`undo_cuts`).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from ..corpus.tokenize_ref import is_single_char_token

__all__ = ["Cut", "SEPARATORS", "apply_cuts", "merge_spans", "plan_cuts", "undo_cuts"]

SEPARATORS = frozenset("|¦•·∙,;:/\\-–—~*>›")
# opening → closing brackets and quotes; an emptied pair goes with its block
_PAIRS = {"(": ")", "[": "]", "{": "}", "«": "»", "“": "”", "„": "“", "‘": "’", "‹": "›",
          '"': '"', "'": "'", "<": ">", "（": "）", "「": "」", "『": "』"}


def _word(ch: str) -> bool:
    return unicodedata.category(ch)[0] in "LNM"


def _ws(ch: str) -> bool:
    return ch.isspace()


@dataclass(slots=True)
class Cut:
    """Original characters ``[start, end)`` replaced by ``replacement``."""

    start: int
    end: int
    replacement: str
    phrase_ids: list[int] = field(default_factory=list)

    def as_dict(self, text: str) -> dict:
        return {"start": self.start, "end": self.end, "text": text[self.start:self.end],
                "replacement": self.replacement, "phrase_ids": self.phrase_ids}


def merge_spans(starts: npt.ArrayLike, ends: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sort and merge overlapping / touching ``[start, end)`` spans.

    Returns ``(starts, ends, group)`` of the merged spans and, for every input
    span (in input order), the index of the merged span holding it.
    """
    s = np.asarray(starts, dtype=np.int64)
    e = np.asarray(ends, dtype=np.int64)
    if s.size == 0:
        return s, e, np.empty(0, np.int64)
    order = np.lexsort((e, s))
    ss, ee = s[order], e[order]
    run_end = np.maximum.accumulate(ee)
    new = np.ones(ss.size, dtype=bool)
    new[1:] = ss[1:] > run_end[:-1]
    gid = np.cumsum(new) - 1
    ms = ss[new]
    me = np.maximum.reduceat(ee, np.flatnonzero(new))
    group = np.empty(s.size, np.int64)
    group[order] = gid
    return ms, me, group


def _items_right(text: str, j: int, limit: int) -> int:
    """End of the separator-only items right of *j* (before a word, line break or *limit*)."""
    n = min(len(text), limit)
    k = j
    taken = j
    while k < n:
        while k < n and _ws(text[k]) and text[k] not in "\r\n":
            k += 1
        if k >= n or text[k] in "\r\n":
            break
        m = k
        while m < n and not _ws(text[m]):
            m += 1
        item = text[k:m]
        if all(c in SEPARATORS for c in item):
            taken = m
            k = m
        else:
            break
    return taken


def _items_left(text: str, i: int, limit: int) -> int:
    """Start of the separator-only items left of *i* (after a word, line break or *limit*)."""
    k = i
    taken = i
    while k > limit:
        while k > limit and _ws(text[k - 1]) and text[k - 1] not in "\r\n":
            k -= 1
        if k <= limit or text[k - 1] in "\r\n":
            break
        m = k
        while m > limit and not _ws(text[m - 1]):
            m -= 1
        item = text[m:k]
        if all(c in SEPARATORS for c in item):
            taken = m
            k = m
        else:
            break
    return taken


def _line_ends_after(text: str, j: int) -> bool:
    n = len(text)
    while j < n and _ws(text[j]) and text[j] not in "\r\n":
        j += 1
    return j >= n or text[j] in "\r\n"


def _joiner(text: str, a: int, s: int, e: int, b: int) -> str:
    """Replacement for the removed region [a, b) whose block proper is [s, e)."""
    n = len(text)
    if a == 0 or b == n:
        return ""
    left, right, block = text[a:s], text[e:b], text[s:e]
    nl = max(left.count("\n"), right.count("\n"))
    if nl == 0 and "\n" in block:
        nl = 1
    if nl:
        eol = "\r\n" if "\r\n" in (left + block + right) else "\n"
        return eol * nl
    if left or right:
        return " "
    before, after = text[a - 1], text[b]
    if (_word(before) and _word(after) and not is_single_char_token(before)
            and not is_single_char_token(after)):
        return " "
    return ""


def plan_cuts(text: str, starts: npt.ArrayLike, ends: npt.ArrayLike,
              phrase_ids: npt.ArrayLike | None = None) -> list[Cut]:
    """The cuts that remove the character spans ``[starts[i], ends[i])`` of *text*
    by the rule of this module (see the module docstring)."""
    s = np.asarray(starts, dtype=np.int64)
    e = np.asarray(ends, dtype=np.int64)
    if s.size == 0:
        return []
    n = len(text)
    if s.min() < 0 or e.max() > n or np.any(e < s):
        raise ValueError("span outside the text")
    pid = np.asarray(phrase_ids if phrase_ids is not None else np.full(s.size, -1), dtype=np.int64)
    ms, me, group = merge_spans(s, e)
    # 1. blocks: merge across gaps without word characters
    blocks: list[list[int]] = []
    block_of = np.empty(ms.size, dtype=np.int64)
    for g in range(ms.size):
        a, b = int(ms[g]), int(me[g])
        if blocks and not any(_word(c) for c in text[blocks[-1][1]:a]):
            blocks[-1][1] = max(blocks[-1][1], b)
        else:
            blocks.append([a, b])
        block_of[g] = len(blocks) - 1
    ids_of: list[set[int]] = [set() for _ in blocks]
    for k, p in zip(block_of[group].tolist(), pid.tolist()):
        if p >= 0:
            ids_of[k].add(p)
    cuts: list[Cut] = []
    prev = 0  # nothing before this is available to the next block
    for k, (a, b) in enumerate(blocks):
        limit_r = blocks[k + 1][0] if k + 1 < len(blocks) else n
        # 2. glued punctuation
        # a block that fills a bracket or quote pair takes the pair ("x(<block>)y")
        while 0 < a and b < limit_r and a - 1 >= prev and _PAIRS.get(text[a - 1]) == text[b]:
            a -= 1
            b += 1
        j = b
        while j < limit_r and not _ws(text[j]) and not _word(text[j]):
            j += 1
        if j == n or (j < n and _ws(text[j])):
            b = j
        i = a
        while i > prev and not _ws(text[i - 1]) and not _word(text[i - 1]):
            i -= 1
        if i == 0 or i == prev or _ws(text[i - 1]):
            a = i
        # a block between two glued separators ("a,<block>,b") takes the right one
        if 0 < a and b < limit_r and text[a - 1] in SEPARATORS and text[b] in SEPARATORS:
            while b < limit_r and text[b] in SEPARATORS:
                b += 1
        # 3. dangling separators
        r = _items_right(text, b, limit_r)
        if r > b:
            b = r
        elif _line_ends_after(text, b):
            a = _items_left(text, a, prev)
        # 4. whitespace on both sides
        lo = a
        while lo > prev and _ws(text[lo - 1]):
            lo -= 1
        hi = b
        while hi < limit_r and _ws(text[hi]):
            hi += 1
        cuts.append(Cut(lo, hi, _joiner(text, lo, a, b, hi), sorted(ids_of[k])))
        prev = hi
    return cuts


def apply_cuts(text: str, cuts: list[Cut]) -> str:
    """The text with every cut replaced (cuts sorted and disjoint)."""
    out = []
    pos = 0
    for c in cuts:
        out.append(text[pos:c.start])
        out.append(c.replacement)
        pos = c.end
    out.append(text[pos:])
    return "".join(out)


def undo_cuts(cleaned: str, cuts: list[dict]) -> str:
    """The original text from a cleaned text and its logged cuts
    (``start``, ``end``, ``text``, ``replacement`` in original coordinates)."""
    out = []
    pos_clean = 0
    pos_orig = 0
    for c in sorted(cuts, key=lambda c: c["start"]):
        keep = c["start"] - pos_orig
        out.append(cleaned[pos_clean:pos_clean + keep])
        pos_clean += keep
        if cleaned[pos_clean:pos_clean + len(c["replacement"])] != c["replacement"]:
            raise ValueError(f"the cleaned text does not hold the replacement of cut at {c['start']}")
        out.append(c["text"])
        pos_clean += len(c["replacement"])
        pos_orig = c["end"]
    out.append(cleaned[pos_clean:])
    return "".join(out)
