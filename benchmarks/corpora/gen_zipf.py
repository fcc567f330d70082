"""Stream a web-like Zipfian corpus straight into a token store on disk.

    .venv/bin/python benchmarks/corpora/gen_zipf.py --tokens 100M --out /work/tmp/zipf100m
    .venv/bin/python benchmarks/corpora/gen_zipf.py --lz78 1M          # only print c/n of a sample

No text is materialised: documents are generated chunk by chunk as int32 ids
with numpy (about 4 M tokens per chunk, so memory stays flat whatever the
size) and appended to ``tokens.npy``; the store is complete (vocabulary with
exact df, ``docs.parquet``; empty ``text.bin``) and opens with
``TokenStore.open``.  The directory appears atomically.

A document is ``[site header] body [shared block]* [site footer]``:

* sites have Zipfian sizes (``rng.zipf(1.6)``), each with its own header and
  footer template (8-60 tokens): the planted boilerplate, frequent exactly in
  the sites with at least σ pages;
* a few shared blocks (cookie banner, "read also") appear on 20 % of pages;
* the body is Zipfian text (exponent 1.05 over ``--vocab`` words) in which a
  quarter of the units are collocations of 2-4 words drawn from a Zipfian
  phrase book, which gives the corpus the local repetitiveness of natural text
  (LZ78 c/n, see below);
* ``--dup-rate`` of the pages are near-copies of an earlier page of the same
  chunk (same body with 3 % of its tokens substituted), on the same site
  (same header and footer) with probability ``--same-site`` (0.8), else a
  repost under another site's templates; the pairs are saved in ``dups.npy``
  (copy, original).

``--lz78`` prints the LZ78 phrase ratio c/n of the first N tokens (the BloomSpan
paper, §5: ≈ 0.27 for natural text, 1.0 for unique random words).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from repetend._atomic import atomic_dir
from repetend.corpus.store import FORMAT_VERSION, _npy_header
from repetend.phrases._bloomspan_kernels import word_df


class ZipfCorpus:
    """The generator's fixed parts: vocabulary CDF, phrase book, templates."""

    def __init__(self, vocab=1_000_000, zipf=1.05, n_sites=50_000, mean_len=300,
                 dup_rate=0.05, colloc_rate=0.25, same_site=0.8, seed=0):
        self.rng = np.random.default_rng(seed)
        self.vocab = int(vocab)
        self.mean_len = float(mean_len)
        self.dup_rate = float(dup_rate)
        self.same_site = float(same_site)
        self.colloc_rate = float(colloc_rate)
        self.n_sites = int(n_sites)
        w = 1.0 / np.arange(1, self.vocab + 1, dtype=np.float64) ** zipf
        self.cdf = np.cumsum(w / w.sum())
        rng = self.rng
        # phrase book: 200 k collocations of 2-4 words, used with Zipfian frequency
        nc = 200_000
        self.c_len = rng.integers(2, 5, nc)
        self.c_off = np.concatenate([[0], np.cumsum(self.c_len)])
        self.c_tok = self.words(int(self.c_off[-1]))
        wc = 1.0 / np.arange(1, nc + 1, dtype=np.float64)
        self.c_cdf = np.cumsum(wc / wc.sum())
        # templates: header + footer per site, then 8 shared blocks
        nt = 2 * self.n_sites + 8
        self.t_len = rng.integers(8, 61, nt)
        self.t_off = np.concatenate([[0], np.cumsum(self.t_len)]).astype(np.int64)
        self.t_tok = self.words(int(self.t_off[-1]))

    def words(self, m: int) -> np.ndarray:
        r = np.searchsorted(self.cdf, self.rng.random(m))
        return np.minimum(r, self.vocab - 1).astype(np.int32)

    def text(self, m: int) -> np.ndarray:
        """m tokens of body text: words and collocations."""
        rng = self.rng
        units = int(m / (1 + 2 * self.colloc_rate)) + 64
        out = []
        total = 0
        while total < m:
            is_c = rng.random(units) < self.colloc_rate
            cid = np.searchsorted(self.c_cdf, rng.random(units))
            cid = np.minimum(cid, self.c_len.shape[0] - 1)
            lens = np.where(is_c, self.c_len[cid], 1)
            start = np.where(is_c, self.c_off[cid], 0)
            src = np.concatenate([self.c_tok, self.words(units)])
            start = np.where(is_c, start, self.c_tok.shape[0] + np.arange(units))
            off = np.zeros(units + 1, dtype=np.int64)
            np.cumsum(lens, out=off[1:])
            idx = np.repeat(start - off[:-1], lens) + np.arange(int(off[-1]))
            out.append(src[idx])
            total += int(off[-1])
        return np.concatenate(out)[:m]

    def chunk(self, n_tokens: int, doc0: int):
        """About ``n_tokens`` tokens of whole documents: (tokens, lengths, dups)."""
        rng = self.rng
        mu = np.log(self.mean_len) - 0.5 * 0.9 ** 2
        nd = max(1, int(n_tokens / (self.mean_len + 70)))
        body = np.clip(rng.lognormal(mu, 0.9, nd), 8, 50_000).astype(np.int64)
        site = (rng.zipf(1.6, nd) - 1) % self.n_sites
        dup = rng.random(nd) < self.dup_rate
        dup[0] = False
        src = np.arange(nd)
        k = np.flatnonzero(dup)
        orig = np.flatnonzero(~dup)
        if k.size:  # copy an earlier original of this chunk
            pick = np.searchsorted(orig, k) - 1
            src[k] = orig[(rng.random(k.size) * (pick + 1)).astype(np.int64)]
            body[k] = body[src[k]]
            same_site = rng.random(k.size) < self.same_site
            site[k[same_site]] = site[src[k[same_site]]]
        b_off = np.zeros(nd + 1, dtype=np.int64)
        np.cumsum(np.where(dup, 0, body), out=b_off[1:])
        flat = self.text(int(b_off[-1]))
        b_start = b_off[:-1][src] + self.t_off[-1]   # in the concatenated source
        shared = np.where(rng.random(nd) < 0.2, 2 * self.n_sites + rng.integers(0, 8, nd), -1)
        # segments: header, body, [shared], footer
        seg_start = np.stack([self.t_off[2 * site], b_start,
                              np.where(shared >= 0, self.t_off[np.maximum(shared, 0)], 0),
                              self.t_off[2 * site + 1]], axis=1).reshape(-1)
        seg_len = np.stack([self.t_len[2 * site], body,
                            np.where(shared >= 0, self.t_len[np.maximum(shared, 0)], 0),
                            self.t_len[2 * site + 1]], axis=1).reshape(-1)
        source = np.concatenate([self.t_tok, flat])
        off = np.zeros(seg_len.shape[0] + 1, dtype=np.int64)
        np.cumsum(seg_len, out=off[1:])
        idx = np.repeat(seg_start - off[:-1], seg_len) + np.arange(int(off[-1]))
        toks = source[idx]
        doc_len = seg_len.reshape(nd, 4).sum(axis=1)
        # edits of the copies: 3 % of the body tokens substituted
        if k.size:
            body_at = off[:-1].reshape(nd, 4)[:, 1]
            ne = np.maximum(1, rng.binomial(body[k], 0.03))
            at = np.repeat(body_at[k], ne) + (rng.random(int(ne.sum())) * np.repeat(body[k], ne)).astype(np.int64)
            toks[at] = self.words(at.shape[0])
        dups = np.stack([k + doc0, src[k] + doc0], axis=1) if k.size else np.zeros((0, 2), np.int64)
        return toks, doc_len, dups


def lz78_ratio(tokens: np.ndarray) -> float:
    """c/n of the LZ78 parse of ``tokens`` (a dict trie; benchmark use on samples)."""
    trie: dict = {}
    node = 0
    nxt = 1
    c = 0
    for t in tokens.tolist():
        key = (node, t)
        child = trie.get(key)
        if child is None:
            trie[key] = nxt
            nxt += 1
            c += 1
            node = 0
        else:
            node = child
    if node:
        c += 1
    return c / max(1, len(tokens))


def generate(out: str | os.PathLike, n_tokens: int, *, chunk_tokens: int = 4 << 20,
             progress: bool = True, **kw) -> dict:
    """Write a token store of about ``n_tokens`` tokens to ``out`` (atomically)."""
    t0 = time.perf_counter()
    g = ZipfCorpus(**kw)
    V = g.vocab
    df = np.zeros(V, dtype=np.int64)
    counts = np.zeros(V, dtype=np.int64)
    lens_all = []
    dups_all = []
    n = 0
    nd = 0
    with atomic_dir(out) as tmp:
        with open(tmp / "tokens.npy", "wb") as f:
            f.write(b"\0" * 128)
            while n < n_tokens:
                toks, lens, dups = g.chunk(min(chunk_tokens, n_tokens - n), nd)
                off = np.zeros(lens.shape[0] + 1, dtype=np.int64)
                np.cumsum(lens, out=off[1:])
                df += word_df(toks, off, V)
                counts += np.bincount(toks, minlength=V)
                toks.tofile(f)
                lens_all.append(lens)
                dups_all.append(dups)
                n += int(toks.shape[0])
                nd += int(lens.shape[0])
                if progress:
                    print(f"\r  {n / 1e6:,.0f} M tokens, {nd:,} documents", end="", file=sys.stderr)
            f.seek(0)
            f.write(_npy_header(np.dtype(np.int32), n))
        if progress:
            print(file=sys.stderr)
        lens = np.concatenate(lens_all)
        doc_off = np.zeros(nd + 1, dtype=np.int64)
        np.cumsum(lens, out=doc_off[1:])
        np.save(tmp / "doc_offsets.npy", doc_off)
        np.save(tmp / "text_offsets.npy", np.zeros(nd + 1, dtype=np.int64))
        np.save(tmp / "dups.npy", np.concatenate(dups_all))
        (tmp / "text.bin").write_bytes(b"")
        names = pc.binary_join_element_wise("w", pc.cast(pa.array(np.arange(V)), pa.string()), "")
        pq.write_table(pa.table({"token": names, "df": pa.array(df.astype(np.int32)),
                                 "count": pa.array(counts)}), tmp / "vocab.parquet")
        ids = pc.binary_join_element_wise("d", pc.cast(pa.array(np.arange(nd)), pa.string()), "")
        nulls = pa.nulls(nd, pa.string())
        pq.write_table(pa.table({"doc_id": ids, "url": nulls, "host": nulls,
                                 "n_tokens": pa.array(lens), "source": nulls,
                                 "record_no": pa.array(np.arange(nd))}), tmp / "docs.parquet")
        summary = {"documents": nd, "tokens": n, "vocabulary": V, "bytes": 0,
                   "empty_documents": 0, "unit": "word", "read": None,
                   "generator": {"script": "benchmarks/corpora/gen_zipf.py", **{k: v for k, v in kw.items()}}}
        meta = {"format_version": FORMAT_VERSION, "unit": "word", "lang": None, "summary": summary}
        (tmp / "meta.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return {"tokens": n, "documents": nd, "seconds": time.perf_counter() - t0,
            "planted_dups": int(sum(d.shape[0] for d in dups_all))}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tokens", default="10M", help="corpus size, e.g. 10M, 100M, 1G")
    ap.add_argument("--out", help="token store directory to write")
    ap.add_argument("--vocab", type=int, default=1_000_000)
    ap.add_argument("--zipf", type=float, default=1.05)
    ap.add_argument("--sites", type=int, default=50_000)
    ap.add_argument("--mean-len", type=float, default=300)
    ap.add_argument("--dup-rate", type=float, default=0.05)
    ap.add_argument("--colloc-rate", type=float, default=0.25)
    ap.add_argument("--same-site", type=float, default=0.8,
                    help="share of the near-copies that keep their original's site templates")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--lz78", default=None, help="print LZ78 c/n of the first N tokens (e.g. 1M)")
    a = ap.parse_args(argv)
    kw = dict(vocab=a.vocab, zipf=a.zipf, n_sites=a.sites, mean_len=a.mean_len,
              dup_rate=a.dup_rate, colloc_rate=a.colloc_rate, same_site=a.same_site,
              seed=a.seed)
    n = _decimal(a.tokens)
    if a.lz78:
        m = _decimal(a.lz78)
        g = ZipfCorpus(**kw)
        toks = []
        got = 0
        while got < m:
            t, _, _ = g.chunk(min(4 << 20, m - got), 0)
            toks.append(t)
            got += t.shape[0]
        sample = np.concatenate(toks)[:m]
        t0 = time.perf_counter()
        r = lz78_ratio(sample)
        print(f"LZ78 c/n of {m:,} tokens: {r:.3f}  ({time.perf_counter() - t0:.1f} s; "
              f"BloomSpan paper §5: natural text 0.27, unique random words 1.0)")
    if a.out:
        info = generate(a.out, n, **kw)
        print(f"{info['tokens']:,} tokens, {info['documents']:,} documents, "
              f"{info['planted_dups']:,} planted near-copies in {info['seconds']:.1f} s "
              f"({info['seconds'] / info['tokens'] * 1e9:.1f} ns/token) -> {a.out}")


def _decimal(s: str) -> int:
    """'10M' -> 10_000_000, '1G'/'1B' -> 10**9 (decimal: corpus sizes are counts)."""
    s = s.strip().upper()
    mult = {"K": 10**3, "M": 10**6, "G": 10**9, "B": 10**9}
    if s and s[-1] in mult:
        return int(float(s[:-1]) * mult[s[-1]])
    return int(s)


if __name__ == "__main__":
    main()
