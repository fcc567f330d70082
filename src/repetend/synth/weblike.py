"""A web-like corpus with known boilerplate and known near-duplicates.

Sites of Zipfian size, each in one language (English or Russian), each page
made of segments joined by line breaks::

    menu · [cookie banner] · title · [signature] · body · [listing] · [read also]
    · [subscribe] · [disclaimer] · [cookie banner] · footer

Template segments come from blocks: verbatim blocks (menu, cookie banner,
disclaimer, "read also", subscribe box) that are either the site's own or
shared across sites (the same CMS plugin on many sites), and templates with
slots (footer «© {year} …», signature «Posted by {author} on {date}», listing
«Showing {first}–{last} of {total} items»).  Title and body are Zipfian text
over the word lists of :mod:`repetend.synth.words`, with capitals and
punctuation so that surface forms differ from tokens.

Near-duplicates are then planted: exact copies (maybe with other whitespace or
case, equal after canonical form), edited copies (word substitutions and
deletions), truncated copies, longer pages containing a page, and reposts on
another site.  The ground truth gives every segment's exact character span and
block, every block's text, and every planted copy relation (see
``docs/generators.md``).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from ..corpus.record import Record
from ..errors import ParameterError
from ..limits import check_seed
from . import words as W
from .corpus import SynthCorpus

__all__ = ["COPY_KINDS", "DEMO_PAGES", "demo_corpus", "weblike"]

#: Kinds of planted copy relations, with their default shares among the copies.
COPY_KINDS: dict[str, float] = {"exact": 0.25, "edit": 0.30, "truncate": 0.15,
                                "contained": 0.10, "repost": 0.20}
#: Pages in the corpus ``repetend demo`` uses.
DEMO_PAGES = 3000

_SEPS = np.array([" ", ", ", ". ", "? ", "! ", ".\n", ".", "  ", ""], dtype=object)
_SPACE, _COMMA, _END, _Q, _EXCL, _PARA, _FINAL, _DOUBLE, _NONE = range(9)
_TERMINAL = np.zeros(len(_SEPS), dtype=bool)     # a sentence ends after this separator
_TERMINAL[[_END, _Q, _EXCL, _PARA, _FINAL]] = True


# -- language models -----------------------------------------------------------------
class _Lang:
    """A Zipfian vocabulary: common words first, then invented ones."""

    def __init__(self, lang: str, rng: np.random.Generator, n_pseudo: int, exponent: float):
        vocab = W.COMMON[lang] + W.pseudo_words(lang, n_pseudo, rng)
        self.lang = lang
        self.words = np.array(vocab, dtype=object)
        self.caps = np.array([w[:1].upper() + w[1:] for w in vocab], dtype=object)
        weights = 1.0 / (np.arange(len(vocab)) + 2.7) ** exponent
        self.cdf = np.cumsum(weights / weights.sum())
        self.cdf[-1] = 1.0

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        ids = np.searchsorted(self.cdf, rng.random(n), side="right").astype(np.int32)
        for _ in range(2):                       # no word twice in a row
            rep = np.flatnonzero(ids[1:] == ids[:-1]) + 1
            ids[rep] = (ids[rep] + 1) % self.words.size
        return ids


@dataclass
class _Text:
    """Running text as word ids plus the separator code after each word."""

    ids: np.ndarray
    seps: np.ndarray

    def render(self, lang: _Lang, case: str | None = None) -> str:
        n = self.ids.size
        if n == 0:
            return ""
        start = np.ones(n, dtype=bool)
        start[1:] = _TERMINAL[self.seps[:-1]]
        out = np.empty(2 * n, dtype=object)
        out[0::2] = np.where(start, lang.caps[self.ids], lang.words[self.ids])
        out[1::2] = _SEPS[self.seps]
        text = "".join(out)
        return text.lower() if case == "lower" else text.upper() if case == "upper" else text

    def copy(self) -> "_Text":
        return _Text(self.ids.copy(), self.seps.copy())


def _body(lang: _Lang, rng: np.random.Generator, n: int) -> _Text:
    ids = lang.sample(rng, n)
    seps = np.zeros(n, dtype=np.uint8)
    ends = np.cumsum(rng.integers(5, 19, size=n // 5 + 2)) - 1
    ends = ends[ends < n - 1]
    kinds = rng.choice(np.array([_END, _Q, _EXCL], dtype=np.uint8), p=[0.92, 0.05, 0.03],
                       size=ends.size)
    kinds[rng.random(ends.size) < 0.22] = _PARA
    seps[ends] = kinds
    seps[(rng.random(n) < 0.07) & (seps == _SPACE)] = _COMMA
    seps[-1] = _FINAL
    return _Text(ids, seps)


def _title(lang: _Lang, rng: np.random.Generator, lo: int = 4, hi: int = 9) -> _Text:
    n = int(rng.integers(lo, hi + 1))
    seps = np.zeros(n, dtype=np.uint8)
    seps[-1] = _NONE
    return _Text(lang.sample(rng, n), seps)


def _edit(text: _Text, rate: float, lang: _Lang, rng: np.random.Generator) -> tuple[_Text, int]:
    """Substitute or delete ``round(rate·n)`` distinct random words (at least one).
    Returns the edited text and the number of words edited."""
    n = text.ids.size
    k = min(n - 1, max(1, int(round(rate * n))))
    pos = rng.choice(n, size=k, replace=False)
    delete = rng.random(k) < 0.5
    out = text.copy()
    sub = pos[~delete]
    new = lang.sample(rng, sub.size)
    clash = new == out.ids[sub]                      # a substitution must change the word
    new[clash] = (new[clash] + 1) % lang.words.size
    out.ids[sub] = new
    dele = np.sort(pos[delete])
    for p in dele[::-1]:                             # a deleted sentence end moves left
        if p > 0 and out.seps[p] != _SPACE and out.seps[p - 1] in (_SPACE, _COMMA):
            out.seps[p - 1] = out.seps[p]
    keep = np.ones(n, dtype=bool)
    keep[dele] = False
    edited = _Text(out.ids[keep], out.seps[keep])
    edited.seps[-1] = _FINAL                         # the text still ends with a full stop
    return edited, k


# -- sites and blocks ----------------------------------------------------------------------
@dataclass
class _Seg:
    text: str
    kind: str
    block: str | None = None
    values: dict | None = None


@dataclass
class _Site:
    index: int
    lang: str
    company: str
    host: str
    sections: list[str]
    top: list[str] = field(default_factory=list)     # block ids before the title
    after: list[str] = field(default_factory=list)   # verbatim blocks after the body
    bottom: list[str] = field(default_factory=list)  # block ids before the footer
    authors: list[str] = field(default_factory=list)
    signature_p: float = 0.0
    listing_p: float = 0.0
    read_also_p: float = 0.0
    year: int = 2024
    n_pages: int = 0


class _Blocks:
    """The block registry that becomes ``truth["blocks"]``."""

    def __init__(self) -> None:
        self.items: dict[str, dict[str, Any]] = {}

    def verbatim(self, bid: str, kind: str, lang: str, site: int | None, text: str) -> str:
        self.items.setdefault(bid, {"kind": kind, "lang": lang, "site": site,
                                    "shared": site is None, "text": text})
        return bid

    def template(self, bid: str, kind: str, lang: str, site: int | None, template: str,
                 **extra: Any) -> str:
        self.items.setdefault(bid, {"kind": kind, "lang": lang, "site": site,
                                    "shared": site is None, "template": template, **extra})
        return bid

    def seg(self, bid: str, **values: Any) -> _Seg:
        b = self.items[bid]
        if "text" in b:
            return _Seg(b["text"], b["kind"], bid)
        return _Seg(b["template"].format(**values), b["kind"], bid, dict(values))


def _company(lang: str, rng: np.random.Generator, taken: set[str]) -> str:
    a, b, c = W.COMPANY_PARTS[lang]
    while True:
        if lang == "ru":
            name = f"{c[rng.integers(len(c))]} «{a[rng.integers(len(a))]}{b[rng.integers(len(b))]}»"
        else:
            name = f"{a[rng.integers(len(a))]}{b[rng.integers(len(b))]} {c[rng.integers(len(c))]}"
        if name not in taken:
            taken.add(name)
            return name
        if len(taken) > 2000:            # all combinations used: number them
            name = f"{name} {len(taken)}"
            taken.add(name)
            return name


def _make_site(k: int, lang: str, langs: dict[str, _Lang], blocks: _Blocks,
               rng: np.random.Generator, taken: set[str]) -> _Site:
    company = _company(lang, rng, taken)
    site = _Site(index=k, lang=lang, company=company, host=f"site-{k}.example",
                 sections=list(rng.choice(W.SECTIONS[lang], size=int(rng.integers(1, 4)),
                                          replace=False)))
    sid = f"site-{k}"
    items = rng.choice(W.MENU_ITEMS[lang], size=int(rng.integers(5, 9)), replace=False)
    site.top.append(blocks.verbatim(f"{sid}/menu", "menu", lang, k,
                                    f"{company} — " + " | ".join(items)))
    local = W.SITE_BLOCKS[lang]
    shared = W.SHARED_BLOCKS[lang]
    for kind, p_have, where in (("cookie", 0.7, None), ("disclaimer", 0.5, "bottom")):
        if rng.random() >= p_have:
            continue
        if rng.random() < 0.6:
            j = int(rng.integers(len(shared[kind])))
            bid = blocks.verbatim(f"shared/{lang}/{kind}-{j}", kind, lang, None, shared[kind][j])
        else:
            bid = blocks.verbatim(f"{sid}/{kind}", kind, lang, k, local[kind].format(company=company))
        place = where or ("top" if rng.random() < 0.5 else "bottom")
        (site.top if place == "top" else site.bottom).append(bid)
    if rng.random() < 0.6:
        titles = " · ".join(_title(langs[lang], rng).render(langs[lang]) for _ in range(3))
        blocks.verbatim(f"{sid}/read_also", "read_also", lang, k,
                        local["read_also"].format(titles=titles))
        site.read_also_p = float(rng.uniform(0.5, 0.95))
    if rng.random() < 0.3:
        site.after.append(blocks.verbatim(f"{sid}/subscribe", "subscribe", lang, k,
                                          local["subscribe"].format(company=company)))
    tpl = W.SLOT_TEMPLATES[lang]
    if rng.random() < 0.6:
        n_auth = int(rng.integers(2, 6))
        site.authors = [f"{rng.choice(W.FIRST_NAMES[lang])} {rng.choice(W.LAST_NAMES[lang])}"
                        for _ in range(n_auth)]
        blocks.template(f"{sid}/signature", "signature", lang, k, tpl["signature"],
                        slots=["author", "date"], authors=site.authors)
        site.signature_p = float(rng.uniform(0.6, 1.0))
    if rng.random() < 0.3:
        blocks.template(f"shared/{lang}/listing", "listing", lang, None, tpl["listing"],
                        slots=["first", "last", "total"])
        site.listing_p = float(rng.uniform(0.3, 0.8))
    blocks.template(f"{sid}/footer", "footer", lang, k,
                    tpl["footer"].replace("{company}", company), slots=["year"])
    site.year = int(rng.choice([2019, 2020, 2021, 2022, 2023, 2024],
                               p=[0.05, 0.05, 0.1, 0.1, 0.2, 0.5]))
    return site


def _template_segments(site: _Site, blocks: _Blocks, rng: np.random.Generator
                       ) -> tuple[list[_Seg], list[_Seg], list[_Seg]]:
    """The template segments of one new page of *site*: (before the title, between
    title and body, after the body)."""
    lang, sid = site.lang, f"site-{site.index}"
    top = [blocks.seg(b) for b in site.top]
    mid: list[_Seg] = []
    if site.authors and rng.random() < site.signature_p:
        m = int(rng.integers(12))
        date = W.SLOT_TEMPLATES[lang]["date"].format(
            month=W.MONTHS[lang][m], day=int(rng.integers(1, 29)),
            year=int(rng.integers(site.year - 3, site.year + 1)))
        mid.append(blocks.seg(f"{sid}/signature",
                              author=site.authors[int(rng.integers(len(site.authors)))],
                              date=date))
    tail: list[_Seg] = []
    if site.listing_p and rng.random() < site.listing_p:
        total = int(rng.integers(21, 2000))
        page = int(rng.integers(1, (total - 1) // 20 + 2))
        first = 20 * (page - 1) + 1
        tail.append(blocks.seg(f"shared/{lang}/listing", first=first,
                               last=min(first + 19, total), total=total))
    if site.read_also_p and rng.random() < site.read_also_p:
        tail.append(blocks.seg(f"{sid}/read_also"))
    tail.extend(blocks.seg(b) for b in site.after)
    tail.extend(blocks.seg(b) for b in site.bottom)
    year = site.year if rng.random() < 0.8 else int(rng.integers(2015, site.year + 1))
    tail.append(blocks.seg(f"{sid}/footer", year=year))
    return top, mid, tail


@dataclass
class _Page:
    site: _Site
    url: str
    segs: list[_Seg]
    title: _Text | None = None
    body: _Text | None = None
    sep: str = "\n"


def _assemble(top, mid, tail, title: str, bodies: list[_Seg]) -> list[_Seg]:
    return top + [_Seg(title, "title")] + mid + bodies + tail


def _render(page: _Page) -> tuple[str, list[dict]]:
    spans, pos, parts = [], 0, []
    for i, s in enumerate(page.segs):
        if i:
            pos += len(page.sep)
        spans.append({"start": pos, "end": pos + len(s.text), "kind": s.kind, "block": s.block,
                      **({"values": s.values} if s.values is not None else {})})
        pos += len(s.text)
        parts.append(s.text)
    return page.sep.join(parts), spans


# -- similarity, for the truth file ------------------------------------------------------------
_WORD = re.compile(r"[^\W_]+")


def _shingles(text: str, k: int = 5) -> set[tuple[str, ...]]:
    toks = _WORD.findall(text.lower())
    return {tuple(toks[i:i + k]) for i in range(max(len(toks) - k + 1, 0))}


def _lang_shares(lang_mix: float | Mapping[str, float]) -> tuple[list[str], np.ndarray]:
    if isinstance(lang_mix, Mapping):
        names = list(lang_mix)
        p = np.array([float(lang_mix[n]) for n in names])
    else:
        if not 0.0 <= float(lang_mix) <= 1.0:
            raise ParameterError(f"lang_mix (share of Russian pages) must be in [0, 1], got {lang_mix}")
        names, p = ["en", "ru"], np.array([1.0 - float(lang_mix), float(lang_mix)])
    bad = [n for n in names if n not in W.COMMON]
    if bad or (p < 0).any() or p.sum() <= 0:
        raise ParameterError(f"lang_mix must give non-negative shares of {sorted(W.COMMON)}, "
                             f"got {lang_mix!r}")
    return names, p / p.sum()


def weblike(n_pages: int = 3000, n_sites: int | None = None, seed: int = 0,
            lang_mix: float | Mapping[str, float] = 0.5, *, dup_rate: float = 0.12,
            copy_kinds: Mapping[str, float] | None = None, body_words: int = 350,
            zipf_sites: float = 1.0, zipf_words: float = 1.05,
            vocab_size: int = 8000, thin_rate: float = 0.02) -> SynthCorpus:
    """A web-like corpus: sites with templates around Zipfian text, plus planted copies.

    Parameters
    ----------
    n_pages : int
        Documents in the corpus, originals and planted copies together.
    n_sites : int, optional
        Sites (default ``max(1, n_pages // 25)``); site sizes are Zipfian
        (weight ``1/rank**zipf_sites``, at least one page each).
    seed : int
        Seed of ``numpy.random.default_rng``; the corpus is a function of the arguments.
    lang_mix : float or mapping
        Share of Russian pages (``0.5``: half), or ``{"en": w, "ru": w}``; whole sites are
        assigned, largest first, to the language furthest below its share.
    dup_rate : float
        Share of the pages that are planted copies of another page.
    copy_kinds : mapping, optional
        Shares of the copy kinds (default :data:`COPY_KINDS`): ``exact`` (same text, or
        with extra whitespace / other case: equal after canonical form), ``edit`` (2–10 %
        of the body words substituted or deleted), ``truncate`` (the page cut after
        40–80 % of its body), ``contained`` (a longer page of the same site whose body
        holds the source's title and body whole), ``repost`` (title and body on another
        site of the same language, 0–3 % edited).
    body_words : int
        Median body length in words (log-normal, σ = 0.5, clipped to [200, 2000] words
        when ``body_words ≥ 200``).  At most ~130 template words surround a body, so
        two unrelated pages of one site stay below 5-word-shingle resemblance ~0.25.
    zipf_sites, zipf_words : float
        Zipf exponents of site sizes and of word ranks.
    vocab_size : int
        Invented words per language appended to the common-word list.
    thin_rate : float
        Share of the original pages that are "thin": the site's template around a 2–4 word
        title and no body (empty category pages; the boilerplate drop candidates).  Thin
        pages of one site resemble each other, as in real crawls; they are never copy
        sources.  The first page is never thin.

    Returns
    -------
    SynthCorpus
        ``truth`` holds ``blocks`` (id → kind, lang, site, shared, text or template +
        slots), ``docs`` (per document: id, url, site, lang, original, thin, spans with
        exact character offsets, kind and block of every segment, slot values of
        templated ones) and ``copies`` (doc, source, kind, variant, edit rate, and
        5-word-shingle resemblance and containments).

    Notes
    -----
    The templates are the boilerplate of the BloomSpan paper (menu, footer, cookie
    banner, disclaimers, "read also", templates with variable parts); the copies are
    the near-duplicates of the shingling article and Broder 1997 (exact duplicates
    after canonical form, resemblance, containment).
    """
    n_pages = int(n_pages)
    if n_pages < 1:
        raise ParameterError(f"n_pages must be at least 1, got {n_pages}")
    if not 0.0 <= dup_rate < 1.0:
        raise ParameterError(f"dup_rate must be in [0, 1), got {dup_rate}")
    kinds = dict(COPY_KINDS if copy_kinds is None else copy_kinds)
    if any(k not in COPY_KINDS for k in kinds) or any(v < 0 for v in kinds.values()) \
            or sum(kinds.values()) <= 0:
        raise ParameterError(f"copy_kinds must give non-negative shares of {list(COPY_KINDS)}, "
                             f"got {copy_kinds!r}")
    n_copies = int(round(dup_rate * n_pages))
    n_orig = n_pages - n_copies
    if n_orig < 1:
        n_orig, n_copies = 1, n_pages - 1
    n_sites = max(1, n_pages // 25) if n_sites is None else int(n_sites)
    if not 1 <= n_sites <= n_orig:
        raise ParameterError(f"n_sites must be between 1 and the number of original pages "
                             f"({n_orig}), got {n_sites}")
    if not 0.0 <= thin_rate <= 1.0:
        raise ParameterError(f"thin_rate must be in [0, 1], got {thin_rate}")
    if body_words < 20:
        raise ParameterError(f"body_words must be at least 20, got {body_words}")
    lang_names, lang_p = _lang_shares(lang_mix)
    check_seed(seed)
    rng = np.random.default_rng(seed)
    langs = {n: _Lang(n, rng, int(vocab_size), float(zipf_words)) for n in lang_names}
    blocks = _Blocks()

    # sites: Zipfian sizes, at least one page each
    w = 1.0 / np.arange(1, n_sites + 1) ** float(zipf_sites)
    sizes = np.maximum(1, np.floor(w / w.sum() * n_orig)).astype(np.int64)
    sizes[0] += n_orig - sizes.sum()
    while sizes[0] < 1:                       # only when n_sites is close to n_orig
        j = int(np.argmax(sizes))
        sizes[j] -= 1
        sizes[0] += 1
    # languages: each site (largest first) goes to the language furthest below its share
    # of the pages so far, so the page shares follow lang_mix even with a huge first site
    site_lang, assigned = [], np.zeros(len(lang_names))
    for size in sizes.tolist():
        need = lang_p * (assigned.sum() + size) - assigned
        best = np.flatnonzero(need >= need.max() - 1e-9)
        j = int(best[rng.integers(best.size)])
        assigned[j] += size
        site_lang.append(lang_names[j])
    taken: set[str] = set()
    sites = [_make_site(k, str(site_lang[k]), langs, blocks, rng, taken) for k in range(n_sites)]

    lo, hi = (200, 2000) if body_words >= 200 else (body_words // 2, body_words * 6)
    pages: list[_Page] = []

    def new_page(site: _Site, title: _Text, bodies: list[tuple[_Text | None, str, str]]) -> _Page:
        site.n_pages += 1
        section = site.sections[int(rng.integers(len(site.sections)))]
        url = f"https://{site.host}/{section}/{site.n_pages}"
        top, mid, tail = _template_segments(site, blocks, rng)
        lang = langs[site.lang]
        segs = [_Seg(t.render(lang) if t is not None else s, kind) for t, s, kind in bodies]
        return _Page(site, url, _assemble(top, mid, tail, title.render(lang), segs))

    used_urls: set[str] = set()

    def unique_url(url: str) -> str:
        """A copy's url, numbered when another copy already took it."""
        out, j = url, 2
        while out in used_urls:
            out, j = f"{url}{'&' if '?' in url else '?'}copy={j}", j + 1
        used_urls.add(out)
        return out

    def body_len() -> int:
        return int(np.clip(rng.lognormal(np.log(body_words), 0.5), lo, hi))

    for site, size in zip(sites, sizes.tolist()):
        lang = langs[site.lang]
        for _ in range(size):
            if pages and rng.random() < thin_rate:       # template and a short title only
                title = _title(lang, rng, 2, 4)
                page = new_page(site, title, [])
                page.title = title
            else:
                title, body = _title(lang, rng), _body(lang, rng, body_len())
                page = new_page(site, title, [(body, "", "body")])
                page.title, page.body = title, body
            pages.append(page)
    full = [i for i, p in enumerate(pages) if p.body is not None]   # copy sources
    used_urls.update(p.url for p in pages)

    # planted copies; sources are always original pages
    kind_names = list(kinds)
    kind_p = np.array([kinds[k] for k in kind_names], dtype=float)
    copy_kind = rng.choice(kind_names, p=kind_p / kind_p.sum(), size=n_copies)
    relations: list[dict[str, Any]] = []
    for kind in copy_kind.tolist():
        src_i = full[int(rng.integers(len(full)))]
        src = pages[src_i]
        site, lang = src.site, langs[src.site.lang]
        rel: dict[str, Any] = {"kind": kind, "source_index": src_i}
        body_at = next(i for i, s in enumerate(src.segs) if s.kind == "body")
        if kind == "exact":
            variant = str(rng.choice(["verbatim", "whitespace", "case"]))
            segs = list(src.segs)
            sep = "\n"
            if variant == "whitespace":
                sep = str(rng.choice(["\r\n", "\n\n"]))
                b = src.body.copy()
                b.seps[(b.seps == _SPACE) & (rng.random(b.seps.size) < 0.3)] = _DOUBLE
                segs[body_at] = _Seg(b.render(lang), "body")
            elif variant == "case":
                case = str(rng.choice(["lower", "upper"]))
                segs[body_at] = _Seg(src.body.render(lang, case=case), "body")
                title_at = next(i for i, s in enumerate(src.segs) if s.kind == "title")
                segs[title_at] = _Seg(src.title.render(lang, case=case), "title")
            suffix = str(rng.choice(["?utm_source=feed", "/amp", "/print", "?ref=home"]))
            page = _Page(site, src.url + suffix, segs, sep=sep)
            rel.update(variant=variant, edit_rate=0.0)
        elif kind == "edit":
            rate = float(rng.uniform(0.02, 0.10))
            body, k = _edit(src.body, rate, lang, rng)
            segs = list(src.segs)
            segs[body_at] = _Seg(body.render(lang), "body")
            page = _Page(site, f"{src.url}?rev={int(rng.integers(2, 9))}", segs)
            rel.update(edit_rate=round(k / src.body.ids.size, 4), edited_words=k)
        elif kind == "truncate":
            keep = float(rng.uniform(0.4, 0.8))
            n_keep = max(1, int(round(keep * src.body.ids.size)))
            b = _Text(src.body.ids[:n_keep].copy(), src.body.seps[:n_keep].copy())
            b.seps[-1] = _NONE
            segs = src.segs[:body_at] + [_Seg(b.render(lang), "body")]
            page = _Page(site, src.url + "/amp", segs)
            rel.update(kept=round(n_keep / src.body.ids.size, 4), edit_rate=0.0)
        elif kind == "contained":
            before, after = _body(lang, rng, body_len() // 2), _body(lang, rng, body_len() // 2)
            page = new_page(site, _title(lang, rng),
                            [(before, "", "body"), (src.title, "", "title"),
                             (src.body, "", "body"), (after, "", "body")])
            rel.update(edit_rate=0.0)
        else:  # repost
            others = [s for s in sites if s.lang == site.lang and s is not site]
            target = others[int(rng.integers(len(others)))] if others else site
            rate = float(rng.choice([0.0, rng.uniform(0.005, 0.03)]))
            if target is site:           # keep it a near-duplicate, not an exact copy
                rate = max(rate, 0.005)
            body, k = (src.body, 0) if rate == 0 else _edit(src.body, rate, lang, rng)
            page = new_page(target, src.title, [(body, "", "body")])
            rel.update(edit_rate=round(k / src.body.ids.size, 4), edited_words=k,
                       site=target.index, source_site=site.index)
            if target is site:
                rel["note"] = "no other site in this language: reposted on the same site"
        page.url = unique_url(page.url)
        rel["page"] = page
        pages.append(page)
        relations.append(rel)

    # corpus order: shuffled; ids follow that order
    order = rng.permutation(len(pages))
    position = np.empty(len(pages), dtype=np.int64)
    position[order] = np.arange(len(pages))
    ids = [f"doc-{i:06d}" for i in range(len(pages))]
    page_index = {id(p): i for i, p in enumerate(pages)}
    records: list[Record] = []
    docs: list[dict[str, Any]] = []
    texts: list[str] = [""] * len(pages)
    for r, i in enumerate(order.tolist()):
        page = pages[i]
        text, spans = _render(page)
        texts[i] = text
        records.append(Record(id=ids[r], text=text, url=page.url, source="synth:weblike",
                              record_no=r))
        docs.append({"id": ids[r], "url": page.url, "site": page.site.index,
                     "lang": page.site.lang, "original": bool(i < n_orig),
                     "thin": page.body is None and i < n_orig, "spans": spans})
    copies = []
    for rel in relations:
        page = rel.pop("page")
        i, j = page_index[id(page)], rel.pop("source_index")
        a, b = _shingles(texts[i]), _shingles(texts[j])
        inter = len(a & b)
        copies.append({"doc": ids[position[i]], "source": ids[position[j]], **rel,
                       "resemblance_w5": round(inter / max(len(a | b), 1), 4),
                       "containment_doc_in_source_w5": round(inter / max(len(a), 1), 4),
                       "containment_source_in_doc_w5": round(inter / max(len(b), 1), 4)})
    site_pages = Counter(d["site"] for d in docs)
    template_chars = 0
    block_docs: dict[str, int] = defaultdict(int)
    block_sites: dict[str, set[int]] = defaultdict(set)
    for d, t in zip(docs, (texts[i] for i in order.tolist())):
        n = 0
        for s in d["spans"]:
            if s["block"] is not None:
                n += s["end"] - s["start"]
                block_docs[s["block"]] += 1
                block_sites[s["block"]].add(d["site"])
        d["template_share"] = round(n / max(len(t), 1), 4)
        template_chars += n
    for bid, b in blocks.items.items():
        b["docs"] = block_docs.get(bid, 0)
        b["n_sites"] = len(block_sites.get(bid, ()))
    truth = {
        "blocks": blocks.items,
        "sites": [{"site": s.index, "host": s.host, "lang": s.lang, "company": s.company,
                   "pages": site_pages[s.index]} for s in sites],
        "docs": docs,
        "copies": copies,
        "summary": {"pages": len(pages), "original_pages": n_orig, "sites": n_sites,
                    "thin_pages": n_orig - len(full),
                    "copies": {k: int((copy_kind == k).sum()) for k in kind_names},
                    "template_char_share": round(template_chars / max(sum(map(len, texts)), 1), 4)},
    }
    params = {"n_pages": n_pages, "n_sites": n_sites, "seed": seed,
              "lang_mix": dict(lang_mix) if isinstance(lang_mix, Mapping) else lang_mix,
              "dup_rate": dup_rate, "copy_kinds": kinds, "body_words": body_words,
              "zipf_sites": zipf_sites, "zipf_words": zipf_words, "vocab_size": vocab_size,
              "thin_rate": thin_rate}
    return SynthCorpus("weblike", records, truth, params)


def demo_corpus(seed: int = 0) -> SynthCorpus:
    """The web-like corpus ``repetend demo`` runs on: :func:`weblike` with
    :data:`DEMO_PAGES` pages and the default settings (generation takes about a second)."""
    return weblike(DEMO_PAGES, seed=seed)
