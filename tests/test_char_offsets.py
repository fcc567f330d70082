"""Character offsets of token ranges: equal to the per-document spans of the
tokenizer (the slow, obvious reference), and ``text[char_start:char_end]``
re-tokenizes to the range's tokens, over Unicode: CJK, combining marks, Turkish
İ, final sigma, emoji, lone surrogates."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from repetend.corpus.char_offsets import char_offsets
from repetend.corpus.store import TokenStore
from repetend.corpus.tokenizer import tokenize_batch
from repetend.errors import InputError

PIECES = ["word", "Слово", "ΣΟΦΙΑ", "σοφός", "İstanbul", "KIRMIZI", "日本語のテキスト", "한국어",
          "cafe\u0301", "e\u0301\u0327", "\u1e9b\u0323", "Å", "ﬁne", "123", "a_b", "👍🏽", "x\u200dy",
          "\ud800", " ", "  ", "\n", ", ", ".", "—", "\u00a0", "Straße", "ǅemal"]


@st.composite
def corpus(draw):
    docs = draw(st.lists(st.lists(st.sampled_from(PIECES), min_size=0, max_size=25)
                         .map(lambda p: " ".join(p)), min_size=1, max_size=8))
    return docs


def _ranges(store, draw):
    n_tok = np.diff(np.asarray(store.doc_offsets))
    rows = []
    for d in np.flatnonzero(n_tok > 0):
        for _ in range(draw(st.integers(0, 4))):
            a = draw(st.integers(0, int(n_tok[d]) - 1))
            b = draw(st.integers(a + 1, int(n_tok[d])))
            rows.append((int(d), a, b))
    return rows


@pytest.mark.parametrize("unit", ["word", "char"])
@settings(max_examples=100, deadline=None)
@given(texts=corpus(), data=st.data(), chunk=st.sampled_from([1, 7, 8_000_000]))
def test_offsets_equal_the_tokenizers_spans_and_cut_the_tokens(unit, texts, data, chunk):
    store = TokenStore.from_texts(texts, unit=unit)
    rows = _ranges(store, data.draw)
    if not rows:
        return
    d, s, e = (np.array(x) for x in zip(*rows))
    cs, ce = char_offsets(store, d, s, e, chunk_tokens=chunk)
    for k, (dk, sk, ek) in enumerate(rows):
        spans = store.token_spans(dk)
        assert (cs[k], ce[k]) == (spans[sk, 0], spans[ek - 1, 1])
        text = store.text(dk)[cs[k]:ce[k]]
        want = [store.vocab[t] for t in store.tokens[store.doc_offsets[dk] + sk:
                                                     store.doc_offsets[dk] + ek]]
        if unit == "char" and (not want[0].strip() or not want[-1].strip()):
            continue  # a space token at a text's edge is not a token of that text alone
        if (sk > 0 and spans[sk - 1, 1] > cs[k]) or (ek < len(spans) and spans[ek, 0] < ce[k]):
            continue  # one character gave tokens on both sides (İ → i + U+0307)
        tb = tokenize_batch([text], unit=unit)
        assert tb.strings(np.arange(len(tb))) == want


def test_code_tokens_and_bad_ranges():
    pytest.importorskip("pygments")
    store = TokenStore.from_texts(["def f(x):\n    return x + 1\n", "print('hi')\n"], unit="code",
                                  ids=["a.py", "b.py"])
    cs, ce = char_offsets(store, [0, 1], [0, 0], [3, 1])
    assert store.text(0)[cs[0]:ce[0]].startswith("def") and ce[0] > cs[0]
    with pytest.raises(InputError):
        char_offsets(store, [0], [2], [2])
    with pytest.raises(InputError):
        char_offsets(store, [5], [0], [1])


def test_scan_tables_carry_character_offsets_that_cut_the_text(tmp_path):
    """The written occurrences, spans and template occurrences: text[char_start:char_end]
    re-tokenizes to the occurrence's tokens (what a DuckDB or Polars user cuts)."""
    import pyarrow.parquet as pq
    from click.testing import CliRunner

    from repetend.cli import main
    from repetend.synth import weblike

    paths = weblike(120, seed=3).write(tmp_path / "c")
    r = CliRunner().invoke(main, ["scan", str(paths["corpus"]), "-o", str(tmp_path / "k"),
                                  "--min-docs", "4", "-q", "--no-report"])
    assert r.exit_code == 0, r.output
    store = TokenStore.open(tmp_path / "k" / "store")
    seen = 0
    for name in ("occurrences", "spans", "template_occurrences"):
        t = pq.read_table(tmp_path / "k" / "phrases" / f"{name}.parquet").to_pylist()
        assert t and all("char_start" in row for row in t), name
        for row in t[:300]:
            d = row["doc_index"]
            text = store.text(d)[row["char_start"]:row["char_end"]]
            base = store.doc_offsets[d]
            want = [store.vocab[x] for x in store.tokens[base + row["start"]:base + row["end"]]]
            tb = tokenize_batch([text])
            assert tb.strings(np.arange(len(tb))) == want
            seen += 1
    assert seen > 100


def test_clean_from_the_written_offsets_equals_clean_from_token_positions(tmp_path):
    """clean reads char_start/char_end from the tables; a scan written before them
    (token positions only) gives the same cleaned corpus through the re-scan."""
    import shutil

    import pyarrow.parquet as pq
    from click.testing import CliRunner

    from repetend.cli import main
    from repetend.synth import weblike

    paths = weblike(120, seed=5).write(tmp_path / "c")
    run = CliRunner().invoke
    assert run(main, ["scan", str(paths["corpus"]), "-o", str(tmp_path / "k"), "--min-docs", "4",
                      "-q", "--no-report"]).exit_code == 0
    shutil.copytree(tmp_path / "k", tmp_path / "old")
    for name in ("occurrences", "spans", "template_occurrences"):
        f = tmp_path / "old" / "phrases" / f"{name}.parquet"
        t = pq.read_table(f)
        pq.write_table(t.drop_columns(["char_start", "char_end"]), f)
    outs = []
    for k in ("k", "old"):
        out = tmp_path / f"{k}.jsonl"
        r = run(main, ["clean", str(paths["corpus"]), "--scan", str(tmp_path / k), "-o", str(out),
                       "-q"])
        assert r.exit_code == 0, r.output
        outs.append(out.read_bytes())
    assert outs[0] == outs[1] and len(outs[0]) > 1000
