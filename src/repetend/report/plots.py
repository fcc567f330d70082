"""The report's pictures: matplotlib (Agg) figures rendered to SVG and inlined.

Each function takes plain arrays and returns an SVG document as a string
(``None`` when there is nothing to draw).  No corpus text ever goes into a
figure, only numbers and fixed labels.

The S-curve and the chord picture follow the MinHash/LSH article (MinHash and LSH on the Go
source tree; docs/references.md): the LSH candidate probability ``P(s) = 1 - (1 - s^r)^b`` with the
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


def _to_svg(fig, dpi: int = 110) -> str:
    _, plt = _plt()
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None}, dpi=dpi)
    plt.close(fig)
    svg = buf.getvalue()
    i = svg.find("<svg")
    return svg[i:] if i >= 0 else svg


def svg_data_uri(svg: str) -> str:
    """The SVG as a ``data:`` URI for an ``<img>`` (keeps each figure's ids apart)."""
    import base64

    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode("ascii")


def share_histogram(shares: npt.ArrayLike, *, bins: int = 20, drop_at: float | None = None) -> str | None:
    """Histogram of per-document boilerplate share (the BloomSpan paper, §6)."""
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
            threshold: float | None = None, bins: int = 20,
            measured: tuple | None = None) -> str | None:
    """The LSH S-curve ``P(s) = 1 - (1 - s^r)^b`` with the real candidate pairs.

    The candidates are drawn as a histogram of their true Jaccard similarity
    (right axis, pairs per bin) under the curve, so one sees where the
    candidates fall with respect to the steep part near ``(1/b)^(1/r)``.
    ``measured = (bin_centres, fraction_found, pairs_in_bin)``, from an exact
    all-pairs join, adds the measured share of all pairs of each similarity
    bin that became candidates (the MinHash/LSH article: the curve predicts it).
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
        if measured is not None and len(measured[0]):
            xc, frac, cnt = (np.asarray(v, dtype=np.float64) for v in measured)
            ax.errorbar(xc, frac, yerr=np.sqrt(np.maximum(frac * (1 - frac), 1e-12) / np.maximum(cnt, 1)),
                        fmt="o", ms=5, color="#2ca02c", ecolor="#2ca02c", elinewidth=1, capsize=2,
                        label=f"measured: share of all pairs found ({int(cnt.sum()):,} pairs, exact join)",
                        zorder=5)
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


def _rank(n: int, order_keys=None, order=None) -> np.ndarray:
    """Position of each document on the circle: its rank in id order."""
    if order is None:
        order = np.argsort(np.asarray(order_keys), kind="stable")
    order = np.asarray(order, dtype=np.int64)
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)
    return rank


_VIRIDIS = ["#440154", "#482475", "#414487", "#355f8d", "#2a788e", "#21918c", "#22a884", "#44bf70",
            "#7ad151", "#bddf26", "#fde725"]   # viridis at 0, 0.1, …, 1


def _viridis_bins(n: int = 32) -> list[str]:
    """*n* colours of viridis, interpolated between its tabulated stops."""
    stops = np.array([[int(c[i:i + 2], 16) for i in (1, 3, 5)] for c in _VIRIDIS], dtype=np.float64)
    x = (np.arange(n) + 0.5) / n * (len(_VIRIDIS) - 1)
    lo = np.floor(x).astype(int)
    f = (x - lo)[:, None]
    rgb = stops[lo] * (1 - f) + stops[np.minimum(lo + 1, len(_VIRIDIS) - 1)] * f
    return ["#%02x%02x%02x" % tuple(int(round(v)) for v in row) for row in rgb]


def chord_picture(n_docs: int, a: npt.ArrayLike, b: npt.ArrayLike, jaccard: npt.ArrayLike, *,
                  order_keys=None, order=None, max_chords: int = 5000,
                  seed: int = 0) -> tuple[str | None, int]:
    """The MinHash/LSH article's picture: documents on a circle in id order, one chord per
    candidate pair, coloured by its true Jaccard similarity (viridis, with a
    colour bar).

    The circle order is ``order`` (document indices in id order, e.g. an
    argsort of the ids), else the argsort of ``order_keys``, else the index.
    Written as SVG by hand (one quadratic Bézier per chord, chords of one
    colour bin in one path), so 5000 chords take about 40 bytes each.
    Returns ``(svg, chords drawn)``; above ``max_chords`` a uniform random
    sample of the pairs (fixed seed) is drawn.
    """
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    jac = np.clip(np.nan_to_num(np.asarray(jaccard, dtype=np.float64)), 0.0, 1.0)
    if n_docs < 2 or a.size == 0:
        return None, 0
    if a.size > max_chords:
        pick = np.random.default_rng(seed).choice(a.size, size=max_chords, replace=False)
        a, b, jac = a[pick], b[pick], jac[pick]
    if order is not None or order_keys is not None:
        rank = _rank(n_docs, order_keys, order)
    else:
        rank = np.arange(n_docs)
    W, H, cx, cy, R = 690, 600, 290.0, 318.0, 250.0
    th_a = 2 * np.pi * rank[a] / n_docs
    th_b = 2 * np.pi * rank[b] / n_docs
    xa, ya = cx + R * np.cos(th_a), cy - R * np.sin(th_a)
    xb, yb = cx + R * np.cos(th_b), cy - R * np.sin(th_b)
    # slightly bowed chords: the control point is the chord's midpoint pulled a
    # quarter toward the centre, so chords between neighbours stay short arcs
    # near the rim and copies across the corpus cross the middle
    qx = cx + ((xa + xb) / 2 - cx) * 0.75
    qy = cy + ((ya + yb) / 2 - cy) * 0.75
    nb = 32
    colours = _viridis_bins(nb)
    bin_ = np.minimum((jac * nb).astype(int), nb - 1)
    width = 0.7 if a.size > 1000 else (1.0 if a.size > 200 else 1.6)
    opacity = 0.55 if a.size > 1000 else 0.85
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
             'font-family="DejaVu Sans, Arial, sans-serif" font-size="12">',
             f'<rect width="{W}" height="{H}" fill="#ffffff"/>',
             f'<text x="{cx:.0f}" y="24" text-anchor="middle" font-size="14">{n_docs:,} documents on a '
             f'circle in id order; {a.size:,} candidate chords</text>',
             f'<circle cx="{cx}" cy="{cy}" r="{R}" fill="none" stroke="#999" stroke-width="0.8"/>']
    if n_docs <= 400:
        th = 2 * np.pi * np.arange(n_docs) / n_docs
        dots = "".join(f"M{cx + R * np.cos(t):.1f} {cy - R * np.sin(t):.1f}h0" for t in th)
        parts.append(f'<path d="{dots}" stroke="#555" stroke-width="3.5" stroke-linecap="round"/>')
    parts.append(f'<text x="{cx + R + 6:.0f}" y="{cy + 4:.0f}" fill="#555" font-size="10">first id</text>')
    parts.append(f'<g fill="none" stroke-width="{width}" stroke-opacity="{opacity}" stroke-linecap="round">')
    for k in range(nb):          # low similarity first, so similar pairs are drawn on top
        sel = np.flatnonzero(bin_ == k)
        if sel.size == 0:
            continue
        d = "".join(f"M{xa[i]:.1f} {ya[i]:.1f}Q{qx[i]:.1f} {qy[i]:.1f} {xb[i]:.1f} {yb[i]:.1f}" for i in sel)
        parts.append(f'<path stroke="{colours[k]}" d="{d}"/>')
    parts.append("</g>")
    # colour bar
    bx, by, bw, bh = 610, 90, 16, 440
    stops = "".join(f'<stop offset="{i / (len(_VIRIDIS) - 1):.2f}" stop-color="{c}"/>'
                    for i, c in enumerate(reversed(_VIRIDIS)))
    parts.append(f'<defs><linearGradient id="rp-viridis" x1="0" y1="0" x2="0" y2="1">{stops}</linearGradient></defs>')
    parts.append(f'<rect x="{bx}" y="{by}" width="{bw}" height="{bh}" fill="url(#rp-viridis)" stroke="#333" '
                 'stroke-width="0.6"/>')
    for v in (0.0, 0.2, 0.4, 0.6, 0.8, 1.0):
        y = by + bh * (1 - v)
        parts.append(f'<path d="M{bx + bw} {y:.1f}h4" stroke="#333"/><text x="{bx + bw + 7}" y="{y + 4:.1f}" '
                     f'font-size="11">{v:.1f}</text>')
    parts.append(f'<text transform="translate({bx + bw + 44},{by + bh / 2:.0f}) rotate(90)" text-anchor="middle">'
                 "true Jaccard similarity of the candidate pair</text>")
    parts.append("</svg>")
    return "".join(parts), int(a.size)
