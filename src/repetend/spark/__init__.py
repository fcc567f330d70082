"""repetend on Apache Spark: the local pipelines as Spark jobs, with identical results.

``find_near_duplicates(spark, df, config)`` and ``find_phrases(spark, df, config)``
mirror :func:`repetend.find_near_duplicates` and :func:`repetend.find_phrases`:
same config, same result types, same numbers (``docs/spark.md`` has the proofs
and the cluster how-to).  pyspark is imported only here; without it this package
raises :class:`repetend.errors.MissingExtraError` (``pip install 'repetend[spark]'``).
"""

from __future__ import annotations

from ..errors import require

require("pyspark", "spark", "the Spark engine")

from .components import connected_components  # noqa: E402
from .io import load_documents, local_session  # noqa: E402
from .neardup import find_near_duplicates, near_duplicate_frames  # noqa: E402
from .phrases import find_phrases  # noqa: E402

__all__ = sorted([
    "connected_components",
    "find_near_duplicates",
    "find_phrases",
    "load_documents",
    "local_session",
    "near_duplicate_frames",
])
