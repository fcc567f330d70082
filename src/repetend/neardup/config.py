"""The parameters of a near-duplicate search: :class:`NearDupConfig`.

One config serves every path that finds near-duplicates: the in-memory methods
(:func:`repetend.neardup.find.find_near_duplicates`), the out-of-core MinHash-LSH
run (:mod:`repetend.neardup.outofcore`), the Spark engine and the index.  It
validates its fields and completes the LSH banding (:meth:`NearDupConfig.banding`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..errors import ParameterError
from ..limits import MAX_DOCS, MAX_SEED, MAX_SHINGLE
from .lsh import MAX_NUM_PERM, check_banding, lsh_params
from .minhash import DEFAULT_SEED

__all__ = ["METHODS", "Method", "NearDupConfig"]

Method = Literal["minhash", "allpairs", "broder", "exact", "simhash"]
METHODS = ("minhash", "allpairs", "broder", "exact", "simhash")


@dataclass(slots=True)
class NearDupConfig:
    """Parameters of a near-duplicate search (shared by the local and Spark paths).

    ``bands``/``rows`` None → chosen by :func:`repetend.neardup.lsh.lsh_params`
    (P(threshold) >= ``min_recall``).  ``bbits`` None → full 64-bit signature
    values.  ``containment`` is the threshold of the containment pairs reported
    apart (max containment >= it, Jaccard < ``threshold``).

    ``stopwords`` (a language such as ``ru``/``english`` or a word-list file) and
    ``stem`` (a Snowball language) normalize the tokens before shingling
    (:mod:`repetend.neardup.normalize`).  ``hamming`` is the SimHash distance k,
    ``simhash_blocks`` the table design's block count (None: chosen for k and the
    corpus size), ``simhash_weights`` ``binary`` (1 per distinct shingle) or
    ``count`` (occurrences in the document).
    """

    method: Method = "minhash"
    threshold: float = 0.8
    shingle: int = 5
    num_perm: int = 128
    bands: int | None = None
    rows: int | None = None
    hash: Literal["splitmix64", "crc32"] = "splitmix64"
    scheme: Literal["minhash", "oph"] = "oph"
    bbits: int | None = None
    seed: int = DEFAULT_SEED
    max_bucket: int | None = 200
    min_shingles: int = 3
    containment: float = 0.8
    min_recall: float = 0.98
    exact_hash: Literal["xxh64", "crc32"] = "xxh64"
    stopwords: str | None = None
    stem: str | None = None
    lemmatize: str | None = None            # "ru" | "auto": pymorphy3 normal forms (normalize_lang)
    lemma_keys: Literal["lexeme", "first"] = "lexeme"   # a word's key: its lexeme group, or its first parse
    hamming: int = 3
    simhash_blocks: int | None = None
    simhash_weights: Literal["binary", "count"] = "binary"
    memory_limit: int | str | None = None   # minhash out of core under this much private memory

    def validate(self) -> "NearDupConfig":
        """Check every field; return the config itself.

        Raises
        ------
        ParameterError
            On the first field out of its range or domain, or on a combination
            that does not apply (``exact`` with stopwords/stem, a banding that
            does not fit ``num_perm``).
        """
        if self.method not in METHODS:
            raise ParameterError(f"method must be one of {', '.join(METHODS)}, got {self.method!r}")
        if not 0.0 < float(self.threshold) <= 1.0:
            raise ParameterError(f"threshold must be in (0, 1], got {self.threshold}")
        if not 0.0 < float(self.containment) <= 1.0:
            raise ParameterError(f"containment threshold must be in (0, 1], got {self.containment}")
        if not 1 <= int(self.shingle) <= MAX_SHINGLE:
            raise ParameterError(f"shingle size k must be in 1..{MAX_SHINGLE}, got {self.shingle}")
        if not 1 <= int(self.num_perm) <= MAX_NUM_PERM:
            raise ParameterError(f"num_perm must be in 1..{MAX_NUM_PERM}, got {self.num_perm}")
        if self.bbits is not None and not 1 <= int(self.bbits) <= 64:
            raise ParameterError(f"bbits must be in 1..64, got {self.bbits}")
        if self.hash not in ("splitmix64", "crc32"):
            raise ParameterError(f"hash must be 'splitmix64' or 'crc32', got {self.hash!r}")
        if self.scheme not in ("minhash", "oph"):
            raise ParameterError(f"scheme must be 'minhash' or 'oph', got {self.scheme!r}")
        if self.exact_hash not in ("xxh64", "crc32"):
            raise ParameterError(f"exact_hash must be 'xxh64' or 'crc32', got {self.exact_hash!r}")
        if self.max_bucket is not None and self.max_bucket != 0 and not 3 <= int(self.max_bucket) <= MAX_DOCS:
            raise ParameterError(f"max_bucket must be None, 0 or in 3..{MAX_DOCS}, got {self.max_bucket}")
        if not 1 <= int(self.min_shingles) <= MAX_DOCS:
            raise ParameterError(f"min_shingles must be in 1..{MAX_DOCS}, got {self.min_shingles}")
        if isinstance(self.seed, bool) or not 0 <= int(self.seed) <= MAX_SEED:
            raise ParameterError(f"seed must be in 0..2**64-1, got {self.seed}")
        if not 0.0 <= float(self.min_recall) <= 1.0:
            raise ParameterError(f"min_recall must be in [0, 1], got {self.min_recall}")
        check_banding(int(self.num_perm), self.bands, self.rows)
        for name in ("stopwords", "stem", "lemmatize"):
            v = getattr(self, name)
            if v is not None and (not isinstance(v, str) or not v.strip()):
                raise ParameterError(f"{name} must be a non-empty string or None, got {v!r}")
        if self.method == "exact" and (self.stopwords or self.stem or self.lemmatize):
            raise ParameterError("method 'exact' checksums the verbatim text: stopwords/stem/lemmatize do not apply")
        if self.lemmatize is not None and self.lemmatize.strip().lower() not in ("ru", "russian", "auto"):
            raise ParameterError(f"lemmatize must be 'ru' or 'auto', got {self.lemmatize!r}")
        if self.lemma_keys not in ("lexeme", "first"):
            raise ParameterError(f"lemma_keys must be 'lexeme' or 'first', got {self.lemma_keys!r}")
        if not 0 <= int(self.hamming) <= 32:
            raise ParameterError(f"hamming must be in 0..32, got {self.hamming}")
        if self.simhash_blocks is not None and not int(self.hamming) + 1 <= int(self.simhash_blocks) <= 64:
            raise ParameterError(f"simhash_blocks must be in {int(self.hamming) + 1}..64, got {self.simhash_blocks}")
        if self.simhash_weights not in ("binary", "count"):
            raise ParameterError(f"simhash_weights must be 'binary' or 'count', got {self.simhash_weights!r}")
        return self

    def banding(self) -> tuple[int, int]:
        """(bands, rows): the user's, completed, or the chooser's."""
        b, r = check_banding(int(self.num_perm), self.bands, self.rows)
        if b is None:
            p = lsh_params(self.threshold, self.num_perm, min_recall=self.min_recall)
            b, r = p.bands, p.rows
        return int(b), int(r)
