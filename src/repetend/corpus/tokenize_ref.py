"""The word tokenizer's definition, in slow and obviously correct Python.

This is the contract (and the oracle the compiled scanner is tested against):

* Unicode NFC, then lower-case with ``str.lower`` semantics;
* a token is a maximal run of characters whose Unicode category is L*, N* or M*;
* every other character separates;
* each Han ideograph and each Hiragana / Katakana character is a token on its own.
"""

from __future__ import annotations

import unicodedata

__all__ = ["is_word_char", "is_single_char_token", "tokenize_reference"]


def is_single_char_token(ch: str) -> bool:
    """Han ideographs (incl. extensions and compatibility), Hiragana, Katakana."""
    cp = ord(ch)
    return (
        0x3040 <= cp <= 0x309F        # Hiragana
        or 0x30A0 <= cp <= 0x30FF     # Katakana
        or 0x31F0 <= cp <= 0x31FF     # Katakana phonetic extensions
        or 0xFF66 <= cp <= 0xFF9F     # half-width Katakana
        or 0x3400 <= cp <= 0x4DBF     # CJK extension A
        or 0x4E00 <= cp <= 0x9FFF     # CJK unified ideographs
        or 0xF900 <= cp <= 0xFAFF     # CJK compatibility ideographs
        or 0x20000 <= cp <= 0x3FFFF   # CJK extensions B.. (planes 2 and 3)
    )


def is_word_char(ch: str) -> bool:
    return unicodedata.category(ch)[0] in "LNM"


def tokenize_reference(text: str) -> list[str]:
    """Tokens of *text* by the definition above (slow; the oracle)."""
    norm = unicodedata.normalize("NFC", text).lower()
    out: list[str] = []
    cur: list[str] = []
    for ch in norm:
        if is_single_char_token(ch) and is_word_char(ch):
            if cur:
                out.append("".join(cur))
                cur = []
            out.append(ch)
        elif is_word_char(ch):
            cur.append(ch)
        elif cur:
            out.append("".join(cur))
            cur = []
    if cur:
        out.append("".join(cur))
    return out
