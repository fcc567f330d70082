"""The contract between a phrase engine and the rest of the phrases package.

Every engine (``bloomspan``, ``suffix``, the naive oracle in the tests) takes
the int32 token array and the int64 document offsets and returns a
:class:`RawPhrases`: the maximal frequent phrases, in any order, each with its
exact df and the global start positions of *all* its occurrences (every
position p with ``tokens[p:p+len] == phrase`` inside one document).
The shared code canonicalises the order and computes coverage from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

__all__ = ["RawPhrases"]


@dataclass(slots=True)
class RawPhrases:
    # phrase i is tokens[starts[occ_offsets[i]] : starts[occ_offsets[i]] + lengths[i]]
    lengths: npt.NDArray[np.int64]       # [P]
    df: npt.NDArray[np.int64]            # [P] distinct documents
    occ_offsets: npt.NDArray[np.int64]   # [P + 1]
    occ_starts: npt.NDArray[np.int64]    # [sum occurrences] global token positions, sorted per phrase
    stats: dict = field(default_factory=dict)  # engine counters: survivors per filter, timings…

    @property
    def n_phrases(self) -> int:
        return int(self.lengths.shape[0])
