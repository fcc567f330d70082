"""The report's pictures: matplotlib (Agg) figures rendered to SVG and inlined.

Each function takes plain arrays and returns an SVG document as a string
(``None`` when there is nothing to draw).  No corpus text ever goes into a
figure, only numbers and fixed labels.

The S-curve and the chord picture follow seed 003 (MinHash and LSH on the Go
source tree): the LSH candidate probability ``P(s) = 1 - (1 - s^r)^b`` with the
real pairs on it, and the documents on a circle in id order with one chord per
candidate pair coloured by its true Jaccard similarity.
"""

from __future__ import annotations

import io

import numpy as np
import numpy.typing as npt

from ..errors import require

__all__ = ["share_histogram", "s_curve", "chord_picture", "svg_data_uri"]

_RC = {
    "svg.fonttype": "none",          # text stays text: small and sharp
    "svg.hashsalt": "repetend",      # deterministic ids
    "font.size": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
}


def _plt():
    mpl = require("matplotlib", "report", "the HTML report")
    mpl.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return mpl, plt


def _to_svg(fig) -> str:
    _, plt = _plt()
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    svg = buf.getvalue()
    i = svg.find("<svg")
    return svg[i:] if i >= 0 else svg


def svg_data_uri(svg: str) -> str:
    """The SVG as a ``data:`` URI for an ``<img>`` (keeps each figure's ids apart)."""
    import base64

    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode("ascii")


def share_histogram(shares: npt.ArrayLike, *, bins: int = 20, drop_at: float | None = None) -> str | None:
    """Histogram of per-document boilerplate share (seed 000 part 6)."""
    x = np.asarray(shares, dtype=np.float64)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return None
    mpl, plt = _plt()
    with mpl.rc_context(_RC):
        fig, ax = plt.subplots(figsize=(7.5, 3.2))
        counts, edges, _ = ax.hist(np.clip(x, 0, 1), bins=bins, range=(0, 1), color="#4c72b0",
                                   edgecolor="white")
        if counts.max() > 0 and counts.max() / max(counts[counts > 0].min(), 1) > 100:
            ax.set_yscale("log")
            ax.set_ylabel("documents (log scale)")
        else:
            ax.set_ylabel("documents")
        if drop_at is not None:
            ax.axvline(drop_at, color="#c44e52", ls="--", lw=1.2,
                       label=f"drop candidates (share ≥ {drop_at:g})")
            ax.legend(loc="upper center", frameon=False)
        ax.set_xlabel("share of the document's tokens inside boilerplate phrases")
        ax.set_xlim(0, 1)
        ax.set_title(f"Boilerplate share per document ({x.size:,} documents)")
        return _to_svg(fig)


def s_curve(bands: int, rows: int, *, candidate_j: npt.ArrayLike | None = None,
            threshold: float | None = None, bins: int = 20) -> str | None:
    """The LSH S-curve ``P(s) = 1 - (1 - s^r)^b`` with the real candidate pairs.

    The candidates are drawn as a histogram of their true Jaccard similarity
    (right axis, pairs per bin) under the curve, so one sees where the
    candidates fall with respect to the steep part near ``(1/b)^(1/r)``.
    """
    if not bands or not rows:
        return None
    b, r = int(bands), int(rows)
    mpl, plt = _plt()
    s = np.linspace(0, 1, 401)
    p = 1.0 - (1.0 - s ** r) ** b
    knee = (1.0 / b) ** (1.0 / r)
    with mpl.rc_context(_RC):
        fig, ax = plt.subplots(figsize=(7.5, 3.8))
        ax2 = None
        if candidate_j is not None:
            j = np.asarray(candidate_j, dtype=np.float64)
            j = j[np.isfinite(j)]
            if j.size:
                ax2 = ax.twinx()
                ax2.spines["right"].set_visible(True)
                ax2.hist(np.clip(j, 0, 1), bins=bins, range=(0, 1), color="#dd8452", alpha=0.45,
                         label=f"candidate pairs by true J ({j.size:,})")
                ax2.set_ylabel("candidate pairs per bin")
                ax2.set_zorder(0)
                ax.set_zorder(1)
                ax.patch.set_visible(False)
        ax.plot(s, p, color="#4c72b0", lw=2, label=f"P(candidate) = 1 − (1 − s^{r})^{b}")
        ax.axvline(knee, color="#4c72b0", ls=":", lw=1, label=f"(1/b)^(1/r) = {knee:.2f}")
        if threshold is not None:
            ax.axvline(float(threshold), color="#c44e52", ls="--", lw=1.2,
                       label=f"verification threshold t = {float(threshold):g}")
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1.02)
        ax.set_xlabel("Jaccard similarity s of a pair")
        ax.set_ylabel("probability the pair becomes a candidate")
        ax.set_title(f"LSH S-curve: b = {b} bands × r = {r} rows")
        handles, labels = ax.get_legend_handles_labels()
        if ax2 is not None:
            h2, l2 = ax2.get_legend_handles_labels()
            handles, labels = handles + h2, labels + l2
        ax.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, frameon=False)
        return _to_svg(fig)


def _rank(n: int, order_keys) -> np.ndarray:
    """Position of each document on the circle: its rank in id order."""
    order = np.argsort(np.asarray(order_keys), kind="stable")
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)
    return rank


def chord_picture(n_docs: int, a: npt.ArrayLike, b: npt.ArrayLike, jaccard: npt.ArrayLike, *,
                  order_keys=None, max_chords: int = 5000, seed: int = 0) -> tuple[str | None, int]:
    """Seed 003's picture: documents on a circle in id order, one chord per
    candidate pair, coloured by its true Jaccard similarity.

    Returns ``(svg, chords drawn)``; above ``max_chords`` a uniform random
    sample of the pairs is drawn.
    """
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    jac = np.asarray(jaccard, dtype=np.float64)
    if n_docs < 2 or a.size == 0:
        return None, 0
    if a.size > max_chords:
        pick = np.random.default_rng(seed).choice(a.size, size=max_chords, replace=False)
        a, b, jac = a[pick], b[pick], jac[pick]
    rank = _rank(n_docs, order_keys) if order_keys is not None else np.arange(n_docs)
    order = np.argsort(jac, kind="stable")          # similar pairs drawn on top
    a, b, jac = a[order], b[order], jac[order]
    th_a = 2 * np.pi * rank[a] / n_docs
    th_b = 2 * np.pi * rank[b] / n_docs
    pa = np.stack([np.cos(th_a), np.sin(th_a)], axis=1)
    pb = np.stack([np.cos(th_b), np.sin(th_b)], axis=1)
    # slightly bowed chords (a quadratic Bézier whose control point is the
    # chord's midpoint pulled a quarter toward the centre): chords between
    # neighbours stay short arcs near the rim, copies across the corpus cross it
    t = np.linspace(0, 1, 24)[None, :, None]
    ctrl = (pa + pb)[:, None, :] * 0.5 * 0.75
    curves = ((1 - t) ** 2) * pa[:, None, :] + 2 * (1 - t) * t * ctrl + (t ** 2) * pb[:, None, :]
    mpl, plt = _plt()
    from matplotlib.collections import LineCollection

    with mpl.rc_context(_RC):
        fig, ax = plt.subplots(figsize=(6.4, 6.0))
        cmap = mpl.colormaps["viridis"]
        norm = mpl.colors.Normalize(vmin=0.0, vmax=1.0)
        lc = LineCollection(curves, cmap=cmap, norm=norm, linewidths=0.8 if a.size > 200 else 1.6,
                            alpha=0.75 if a.size > 500 else 0.9)
        lc.set_array(jac)
        ax.add_collection(lc)
        circle = np.linspace(0, 2 * np.pi, 361)
        ax.plot(np.cos(circle), np.sin(circle), color="#999999", lw=0.8)
        if n_docs <= 400:
            th = 2 * np.pi * np.arange(n_docs) / n_docs
            ax.scatter(np.cos(th), np.sin(th), s=4, color="#555555", zorder=3)
        ax.text(1.04, 0, "first id", fontsize=8, va="center", color="#555555")
        ax.set_xlim(-1.12, 1.28)
        ax.set_ylim(-1.12, 1.12)
        ax.set_aspect("equal")
        ax.axis("off")
        cb = fig.colorbar(mpl.cm.ScalarMappable(norm=norm, cmap=cmap), ax=ax, fraction=0.04, pad=0.02)
        cb.set_label("true Jaccard similarity of the candidate pair")
        ax.set_title(f"{n_docs:,} documents on a circle in id order; {a.size:,} candidate chords")
        return _to_svg(fig), int(a.size)
