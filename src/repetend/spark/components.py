"""Connected components in DataFrame code: large-star / small-star.

Kiveris, Lattanzi, Mirrokni, Rastogi, Vassilvitskii (2014), "Connected
Components in MapReduce and Beyond" (SoCC '14).  Nodes are document indices
(their order is the label order).  With Γ(u) the neighbours of u and
m(u) = min(Γ(u) ∪ {u}):

large-star
    every node u links each *larger* neighbour v > u to m(u): edge (v, m(u));
small-star
    every node u links each *smaller* neighbour v < u, and itself, to
    m⁻(u) = min({v ∈ Γ(u): v < u} ∪ {u}): edges (v, m⁻(u)) and (u, m⁻(u)).

Both operations keep the connectivity of the graph and never raise a node's
smallest neighbour; alternating them ends, after O(log² n) rounds (the paper
proves O(log n) for the large-star phases), in a forest of stars in which each
component is one star centred on its smallest node.  We stop when no edge
(x, y), x > y, has an endpoint y that is itself the larger endpoint of an
edge, and no x is the larger endpoint of two edges: then the graph is a forest
of stars whose centres are the component minima.
The label of a node is the smallest node of its component — exactly the
label of the local union-find behind
:func:`repetend.neardup.clusters.clusters_from_pairs`.
"""

from __future__ import annotations

__all__ = ["connected_components"]


def _norm(edges):
    from pyspark.sql import functions as F

    return edges.select(F.greatest("u", "v").alias("u"), F.least("u", "v").alias("v")) \
        .filter(F.col("u") != F.col("v")).distinct()


def _large_star(edges):
    """edges (u > v) → large-star edges (x > y)."""
    from pyspark.sql import functions as F

    sym = edges.select("u", "v").union(edges.select(F.col("v").alias("u"), F.col("u").alias("v")))
    mins = sym.groupBy("u").agg(F.min("v").alias("m")) \
        .select("u", F.least("u", "m").alias("m"))
    # neighbour v larger than u → (v, m(u))
    larger = sym.filter(F.col("v") > F.col("u"))
    out = larger.join(mins, "u").select(F.col("v").alias("u"), F.col("m").alias("v"))
    return _norm(out)


def _small_star(edges):
    """edges (u > v) → small-star edges (x > y)."""
    from pyspark.sql import functions as F

    # in a normalised edge (u, v) with u > v, v is a smaller neighbour of u
    mins = edges.groupBy("u").agg(F.min("v").alias("m"))
    linked = edges.join(mins, "u").select(F.col("v").alias("u"), F.col("m").alias("v"))
    selfs = mins.select(F.col("u"), F.col("m").alias("v"))
    return _norm(linked.union(selfs))


def _is_star_forest(edges) -> bool:
    from pyspark.sql import functions as F

    if edges.groupBy("u").count().filter(F.col("count") > 1).limit(1).count():
        return False
    larger = edges.select(F.col("u").alias("x")).distinct()
    bad = edges.join(larger, edges["v"] == larger["x"], "inner").limit(1).count()
    return bad == 0


def _truncate(df):
    """Materialise *df* and cut its logical plan (each round reads the previous edges
    twice, so without this the plan doubles every round).  A reliable checkpoint when
    the SparkContext has a checkpoint directory, else a local checkpoint."""
    sc = df.sparkSession.sparkContext
    if sc.getCheckpointDir():
        return df.checkpoint(eager=True)
    return df.localCheckpoint(eager=True)


def connected_components(edges, *, a: str = "a", b: str = "b", max_rounds: int = 200):
    """Component label of every node that has an edge.

    Parameters
    ----------
    edges : DataFrame
        Undirected edges in columns *a*, *b* (long node ids).
    max_rounds : int
        Safety bound on large-star/small-star rounds (each round is logged in
        the returned ``rounds``).

    Returns
    -------
    (DataFrame, int)
        ``node, label`` (label = smallest node of the component, nodes without
        edges are absent) and the number of rounds.
    """
    from pyspark.sql import functions as F

    cur = _truncate(_norm(edges.select(F.col(a).cast("long").alias("u"),
                                       F.col(b).cast("long").alias("v"))))
    rounds = 0
    while not _is_star_forest(cur):
        if rounds >= max_rounds:  # pragma: no cover - the algorithm converges long before
            raise RuntimeError(f"connected components did not converge in {max_rounds} rounds")
        cur = _truncate(_small_star(_large_star(cur)))
        rounds += 1
    leaves = cur.select(F.col("u").alias("node"), F.col("v").alias("label"))
    roots = cur.select(F.col("v").alias("node")).distinct().select("node", F.col("node").alias("label"))
    return leaves.union(roots), rounds
