"""The report section of templates with variable parts.

:func:`templates_section_html` reads ``templates.parquet`` or ``.jsonl`` (and
``templates_summary.json`` when present) from a scan directory — in
``phrases/``, ``templates/`` or the directory itself — and renders one
``<section id="templates">``: a line of coverage figures, then one row per
template (the example surface text with its slots as ``▢``, df, occurrences,
Ψ) with the slot value statistics in an expander.  Every string from the data
is escaped with :func:`html.escape`; the section uses the report's CSS classes
(``sortable``, ``num``, ``text``, ``note``, ``skip``, ``phrase``).
"""

from __future__ import annotations

import html
import json
from pathlib import Path

from ..scandir import phrases_summary_file, templates_dir

__all__ = ["find_templates_dir", "templates_section_html"]

def _e(x) -> str:
    return html.escape(str(x), quote=True)


def find_templates_dir(scan_dir: str | Path) -> Path | None:
    """The directory of a scan that holds ``templates.parquet`` (or
    ``templates.jsonl``, from ``phrases --out-format jsonl``); None: none
    (:func:`repetend.scandir.templates_dir`)."""
    return templates_dir(scan_dir)


def templates_skipped(scan_dir: str | Path) -> str | None:
    """Why the scan in *scan_dir* has no templates although they were asked for
    (the layer did not fit the memory limit), from the phrases summary; None
    when they were not skipped."""
    f = phrases_summary_file(scan_dir)
    if f is None:
        return None
    try:
        skipped = json.loads(f.read_text(encoding="utf-8")).get("templates_skipped")
    except (json.JSONDecodeError, UnicodeDecodeError, AttributeError):
        return None
    return (skipped or {}).get("reason") if isinstance(skipped, dict) else None


def _slot_html(slot: dict) -> str:
    vals = slot.get("top_values") or []
    items = "".join(f'<li><code>{_e(v["value"]) if v["value"] != "" else "∅"}</code> '
                    f'× {int(v["count"]):,}</li>' for v in vals)
    kind = slot.get("kind") or "gap"
    empty = int(slot.get("empty") or 0)
    extra = f", empty in {empty:,}" if empty else ""
    return (f'<div class="slot"><b>▢{int(slot["slot"]) + 1}</b> ({_e(kind)}): '
            f'{int(slot["distinct"]):,} distinct values{extra}<ul>{items}</ul></div>')


def templates_section_html(scan_dir: str | Path, max_rows: int = 200) -> str:
    """HTML of the templates section for the scan in *scan_dir*.

    Parameters
    ----------
    scan_dir : path
        A scan output directory (or a phrases/templates output directory).
    max_rows : int
        Templates listed (by Ψ, the table's order).

    Returns
    -------
    str
        One ``<section id="templates">`` element; a short note when the scan
        has no templates file or no template.
    """
    from ..phrases.templates.result import TEMPLATE_SCHEMA, read_table, template_file

    head = '<section id="templates"><h2>Templates with variable parts</h2>\n'
    d = find_templates_dir(scan_dir)
    if d is None:
        why = templates_skipped(scan_dir)
        if why:
            return head + f'<p class="skip">Templates skipped: {_e(why)}.</p>\n</section>\n'
        return (head + '<p class="skip">Templates: not in this scan (no '
                '<code>templates.parquet</code>).</p>\n</section>\n')
    table = read_table(template_file(d, "templates"), TEMPLATE_SCHEMA)
    summary = {}
    sf = d / "templates_summary.json"
    if sf.is_file():
        try:
            summary = json.loads(sf.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError):
            summary = {}
    parts = [head]
    note = ('Phrases that recur together, in the same order, with short variable '
            'insertions (numbers, dates, names) between them, reported as one '
            'template: ▢ marks a slot (the BloomSpan paper, §6).')
    if summary:
        gained = summary.get("gained_share")
        tpl = summary.get("template_covered_share")
        if gained is not None and tpl is not None:
            note += (f' Templates cover {tpl:.2%} of the tokens, {gained:.2%} of them '
                     'beyond the exact phrases.')
    parts.append(f'<p class="note">{_e(note)}</p>\n')
    downgraded = (summary.get("memory_plan") or {}).get("reason") if summary else None
    if downgraded:
        parts.append(f'<p class="skip">Templates: {_e(downgraded)}.</p>\n')
    if table.num_rows == 0:
        parts.append('<p class="note">No template reached the support threshold.</p>\n</section>\n')
        return "".join(parts)
    rows = table.slice(0, max_rows).to_pylist()
    trs = []
    for r in rows:
        slots = "".join(_slot_html(s) for s in (r.get("slots") or []))
        text = r.get("text") or " ".join(r.get("parts") or [])
        body = (f'<details><summary><span class="phrase">{_e(text)}</span></summary>'
                f'{slots}<p class="note">example: document {_e(r.get("example_doc_id"))}</p>'
                '</details>')
        trs.append(f'<tr><td class="num" data-v="{int(r["template_id"]) + 1}">'
                   f'{int(r["template_id"]) + 1}</td>'
                   f'<td class="text" data-v="{_e(text[:200])}">{body}</td>'
                   f'<td class="num" data-v="{int(r["n_slots"])}">{int(r["n_slots"])}</td>'
                   f'<td class="num" data-v="{int(r["df"])}">{int(r["df"]):,}</td>'
                   f'<td class="num" data-v="{int(r["occurrences"])}">{int(r["occurrences"]):,}</td>'
                   f'<td class="num" data-v="{int(r["span_tokens"])}">{int(r["span_tokens"]):,}</td>'
                   f'<td class="num" data-v="{int(r["psi"])}">{int(r["psi"]):,}</td></tr>')
    if table.num_rows > len(rows):
        parts.append(f'<p class="note">Showing {len(rows):,} of {table.num_rows:,} templates '
                     '(largest Ψ first).</p>\n')
    parts.append('<table class="sortable"><thead><tr><th class="num">#</th>'
                 '<th>template (▢ = slot)</th><th class="num">slots</th>'
                 '<th class="num">df (documents)</th><th class="num">occurrences</th>'
                 '<th class="num">span (tokens)</th><th class="num">Ψ = span × df</th>'
                 '</tr></thead><tbody>\n' + "\n".join(trs) + '\n</tbody></table>\n</section>\n')
    return "".join(parts)
