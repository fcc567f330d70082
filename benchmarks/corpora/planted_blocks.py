"""Real pages with planted variable blocks: the surrounding text is real
documentation (``bench-data/debian.jsonl``), the blocks are templates with slots
whose values are drawn per page — some of them frequent (a city, a company on
≥ σ of the block's pages), the case that makes one template split into variants.

    from benchmarks.corpora.planted_blocks import planted_corpus
    sc = planted_corpus("bench-data/debian.jsonl", pages=3000, seed=0)
    sc.truth["blocks"]        # name -> {"pages": n, "text": the pattern}
    sc.truth["docs"][d]       # [[block name, char start, char end], …]

The three blocks (``BLOCKS``):

* ``catalogue`` — a Russian catalogue line «Каталог {категория}: найдено {n}
  товаров, страница {p} из {q}. Цены указаны в рублях, доставка по {город} …»;
* ``signature`` — «Posted by {First} {Last} on {d}.{m}.{yyyy}. Comments are
  closed for this article. Subscribe to our newsletter …»;
* ``footer`` — «© {year} {Company} Ltd. All rights reserved. Reproduction …
  Phone +{nn} {nnn} {nnnn}, or write to the support desk at our office in
  {City}, open on weekdays …».

Each goes onto ``pages_per_block`` distinct random pages at a paragraph break
(the catalogue line near the top, the signature after the first paragraph, the
footer at the end), so that real text lies on both sides.  Deterministic in
``seed``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

# slot name -> (values, weights of the first values: the rest share what is left)
_FIRST = ["James", "Mary", "Robert", "Linda", "Michael", "Susan", "David", "Karen",
          "Thomas", "Nancy", "Daniel", "Lisa", "Paul", "Betty", "Mark", "Helen", "Steven",
          "Sandra", "Kevin", "Donna", "Brian", "Carol", "George", "Ruth", "Edward", "Sharon"]
_LAST = ["Smith", "Johnson", "Williams", "Brown", "Jones", "Miller", "Davis", "Wilson",
         "Anderson", "Taylor", "Moore", "Jackson", "Martin", "Lee", "Thompson", "White",
         "Harris", "Clark", "Lewis", "Walker", "Young", "Allen", "King", "Wright", "Scott"]
_COMPANY = ["Northwind", "Globex", "Initech", "Umbrella", "Hooli", "Vandelay", "Stark",
            "Wayne", "Wonka", "Cyberdyne", "Tyrell", "Soylent", "Acme", "Oceanic", "Monarch",
            "Gringotts", "Aperture", "Virtucon", "Massive", "Dunder"]
_CITY = ["London", "Berlin", "Madrid", "Oslo", "Vienna", "Prague", "Dublin", "Lisbon",
         "Warsaw", "Athens", "Rome", "Paris", "Zurich", "Helsinki", "Riga", "Tallinn",
         "Sofia", "Budapest", "Bern", "Brussels"]
_CATEGORY = ["обувь", "одежда", "книги", "игрушки", "посуда", "мебель", "электроника",
             "инструменты", "косметика", "часы", "сумки", "спорттовары"]
_RU_CITY = ["Москве", "Казани", "Самаре", "Перми", "Томску", "Омску", "Уфе", "Твери",
            "Рязани", "Калуге", "Туле", "Орлу"]

#: The planted blocks: a pattern with {slots}; ``skew`` gives slots a frequent
#: first value (its share of the block's pages), the rest uniform.
BLOCKS = {
    "catalogue": {
        "pattern": ("Каталог {cat}: найдено {n} товаров, страница {p} из {q}. Цены указаны "
                    "в рублях, доставка по {rucity} и области бесплатно при заказе от {sum} "
                    "рублей."),
        "skew": {"rucity": 0.35},
    },
    "signature": {
        "pattern": ("Posted by {first} {last} on {d}.{m}.{yyyy}. Comments are closed for "
                    "this article. Subscribe to our newsletter to get the next one by "
                    "mail."),
        "skew": {"last": 0.2},
    },
    "footer": {
        "pattern": ("© {year} {company} Ltd. All rights reserved. Reproduction in whole or in "
                    "part without written permission is prohibited. Questions? Phone +{nn} "
                    "{nnn} {nnnn}, or write to the support desk at our office in {city}, "
                    "open on weekdays from nine to five."),
        "skew": {"company": 0.25, "city": 0.3},
    },
}

_VALUES = {"first": _FIRST, "last": _LAST, "company": _COMPANY, "city": _CITY,
           "cat": _CATEGORY, "rucity": _RU_CITY}


def _value(slot: str, skew: dict, rng: np.random.Generator) -> str:
    if slot in _VALUES:
        vals = _VALUES[slot]
        if slot in skew and rng.random() < skew[slot]:
            return vals[0]
        return vals[int(rng.integers(1 if slot in skew else 0, len(vals)))]
    ranges = {"n": (20, 5000), "p": (2, 40), "q": (40, 90), "sum": (1000, 9000),
              "d": (1, 29), "m": (1, 13), "yyyy": (2005, 2026), "year": (2005, 2026),
              "nn": (10, 99), "nnn": (100, 999), "nnnn": (1000, 9999)}
    lo, hi = ranges[slot]
    v = int(rng.integers(lo, hi))
    return f"{v:02d}" if slot in ("d", "m") else str(v)


def render(name: str, rng: np.random.Generator) -> str:
    """One occurrence of block *name*, its slots filled."""
    b = BLOCKS[name]
    out, rest = [], b["pattern"]
    while "{" in rest:
        a, rest = rest.split("{", 1)
        slot, rest = rest.split("}", 1)
        out.append(a)
        out.append(_value(slot, b["skew"], rng))
    out.append(rest)
    return "".join(out)


class PlantedCorpus:
    """Texts, ids and the truth (``blocks``, ``docs``); ``to_store()`` tokenizes."""

    def __init__(self, texts: list[str], ids: list[str], truth: dict):
        self.texts, self.ids, self.truth = texts, ids, truth

    def to_store(self):
        from repetend.corpus.store import TokenStore

        return TokenStore.from_texts(self.texts, ids=self.ids)


def real_pages(path: str | Path, pages: int, min_chars: int = 1500,
               max_chars: int = 20000) -> tuple[list[str], list[str]]:
    """The first *pages* documents of a JSON-lines corpus of length within bounds."""
    texts, ids = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            t = row.get("text") or ""
            if min_chars <= len(t) <= max_chars and t.count("\n\n") >= 2:
                texts.append(t)
                ids.append(str(row.get("id", len(ids))))
                if len(texts) >= pages:
                    break
    return texts, ids


def planted_corpus(path: str | Path, pages: int = 3000, pages_per_block: dict | None = None,
                   seed: int = 0) -> PlantedCorpus:
    """Real pages of *path* with the blocks of :data:`BLOCKS` planted.

    ``pages_per_block`` (default catalogue 300, signature 250, footer 400) is the
    number of distinct pages each block goes onto; a page may get several."""
    per = {"catalogue": 300, "signature": 250, "footer": 400, **(pages_per_block or {})}
    texts, ids = real_pages(path, pages)
    if len(texts) < max(per.values()):
        raise SystemExit(f"{path}: only {len(texts)} usable pages")
    rng = np.random.default_rng(seed)
    plan: dict[int, list[str]] = {}
    for name in BLOCKS:
        for d in sorted(rng.choice(len(texts), per[name], replace=False).tolist()):
            plan.setdefault(d, []).append(name)
    docs: list[list] = [[] for _ in texts]
    for d, names in sorted(plan.items()):
        paras = texts[d].split("\n\n")
        ins = {"catalogue": 1, "signature": 2, "footer": len(paras)}
        new: list[str] = []
        marks = []
        for i in range(len(paras) + 1):
            for name in names:
                if min(ins[name], len(paras)) == i:
                    new.append(render(name, rng))
                    marks.append((len(new) - 1, name))
            if i < len(paras):
                new.append(paras[i])
        pos, starts = 0, []
        for p in new:
            starts.append(pos)
            pos += len(p) + 2
        texts[d] = "\n\n".join(new)
        docs[d] = [[name, starts[j], starts[j] + len(new[j])] for j, name in marks]
    blocks = {n: {"pages": per[n], "pattern": BLOCKS[n]["pattern"]} for n in BLOCKS}
    return PlantedCorpus(texts, ids, {"blocks": blocks, "docs": docs,
                                      "params": {"path": str(path), "pages": pages,
                                                 "seed": seed, "per": per}})
