"""The report's inline style sheet and script (no network, no CDN).

The script only sorts tables on a click of their header and, once it has run
without error, sets ``document.body.dataset.ok = "1"`` (the browser test looks
for it).  It carries no data: every piece of corpus text lives in the escaped
HTML, never in JavaScript.
"""

from __future__ import annotations

import base64
import hashlib

__all__ = ["CSS", "JS", "script_hash"]

CSS = """
:root { --fg:#1f2328; --muted:#57606a; --line:#d0d7de; --bg:#ffffff; --soft:#f6f8fa;
        --mark:#ffe08a; --accent:#0969da; }
* { box-sizing: border-box; }
body { font: 14px/1.45 -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
       color: var(--fg); background: var(--bg); margin: 0; }
main { max-width: 1240px; margin: 0 auto; padding: 8px 24px 64px; }
header.top { background: #24292f; color: #fff; padding: 14px 24px; }
header.top h1 { margin: 0; font-size: 22px; }
header.top .sub { color: #c9d1d9; font-size: 13px; overflow-wrap: anywhere; }
nav.toc { position: sticky; top: 0; background: var(--soft); border-bottom: 1px solid var(--line);
          padding: 6px 24px; z-index: 5; font-size: 13px; }
nav.toc a { margin-right: 14px; color: var(--accent); text-decoration: none; }
section { margin-top: 28px; }
h2 { border-bottom: 1px solid var(--line); padding-bottom: 4px; font-size: 19px; }
h3 { font-size: 15px; margin: 18px 0 6px; }
.cards { display: flex; flex-wrap: wrap; gap: 12px; }
.card { border: 1px solid var(--line); border-radius: 6px; padding: 10px 14px; min-width: 170px;
        background: var(--soft); }
.card .v { font-size: 22px; font-weight: 600; }
.card .k { color: var(--muted); font-size: 12px; }
.note { color: var(--muted); font-size: 13px; }
.skip { border-left: 4px solid #bf8700; background: #fff8c5; padding: 6px 10px; margin: 8px 0; }
table { border-collapse: collapse; width: 100%; margin: 6px 0 10px; font-size: 13px; }
th, td { border-bottom: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: var(--soft); position: relative; white-space: nowrap; }
table.sortable th { cursor: pointer; user-select: none; }
table.sortable th::after { content: " \\2195"; color: #8c959f; font-size: 11px; }
table.sortable th[aria-sort=ascending]::after { content: " \\2191"; color: var(--fg); }
table.sortable th[aria-sort=descending]::after { content: " \\2193"; color: var(--fg); }
table.kv { width: auto; min-width: 360px; }
table.kv th { text-align: left; }
td.num, th.num { width: 1%; text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.text { max-width: 640px; overflow-wrap: anywhere; }
td.wide { overflow-wrap: anywhere; }
.phrase { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
details { margin: 2px 0; }
details > summary { cursor: pointer; color: var(--accent); }
.ctx { white-space: pre-wrap; overflow-wrap: anywhere; background: var(--soft); border: 1px solid var(--line);
       border-radius: 4px; padding: 6px 8px; margin: 4px 0 8px; font-size: 12.5px; }
.ctx .who { color: var(--muted); font-size: 12px; display: block; margin-bottom: 2px; }
mark { background: var(--mark); padding: 0 1px; }
.pair { display: grid; grid-template-columns: 1fr 1fr; gap: 10px; }
.pair .doc { border: 1px solid var(--line); border-radius: 4px; padding: 6px 8px; min-width: 0; }
.pair .doc .meta { color: var(--muted); font-size: 12px; overflow-wrap: anywhere; }
.pair .doc .body { white-space: pre-wrap; overflow-wrap: anywhere; font-size: 12.5px; max-height: 320px;
                   overflow: auto; margin-top: 4px; }
figure { margin: 10px 0; }
figure img { max-width: 100%; height: auto; border: 1px solid var(--line); border-radius: 4px; }
figcaption { color: var(--muted); font-size: 13px; max-width: 900px; }
pre { background: var(--soft); border: 1px solid var(--line); border-radius: 4px; padding: 8px;
      overflow: auto; font-size: 12px; white-space: pre-wrap; overflow-wrap: anywhere; }
.figs { display: flex; flex-wrap: wrap; gap: 16px; align-items: flex-start; }
"""

JS = """
(function () {
  "use strict";
  function key(cell) {
    var v = cell ? cell.getAttribute("data-v") : null;
    if (v === null) { v = cell ? cell.textContent.trim().toLowerCase() : ""; }
    var f = Number(v);
    return (v !== "" && !isNaN(f)) ? [0, f] : [1, v];
  }
  function cmp(a, b) {
    if (a[0] !== b[0]) { return a[0] - b[0]; }
    return a[1] < b[1] ? -1 : (a[1] > b[1] ? 1 : 0);
  }
  var tables = document.querySelectorAll("table.sortable");
  Array.prototype.forEach.call(tables, function (table) {
    var heads = table.tHead ? table.tHead.rows[0].cells : [];
    Array.prototype.forEach.call(heads, function (th, col) {
      th.addEventListener("click", function () {
        var asc = th.getAttribute("aria-sort") !== "ascending";
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", asc ? "ascending" : "descending");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (r1, r2) {
          var c = cmp(key(r1.cells[col]), key(r2.cells[col]));
          return asc ? c : -c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
  if (location.hash === "#selftest") {
    // for the browser test: sort every table by its first numeric column,
    // descending, and check the order
    var good = true;
    Array.prototype.forEach.call(tables, function (table) {
      var heads = table.tHead ? table.tHead.rows[0].cells : [];
      var col = -1;
      Array.prototype.forEach.call(heads, function (th, i) {
        if (col < 0 && th.classList.contains("num")) { col = i; }
      });
      if (col < 0 || !table.tBodies[0].rows.length) { return; }
      heads[col].click();
      heads[col].click();
      var prev = Infinity;
      Array.prototype.forEach.call(table.tBodies[0].rows, function (r) {
        var k = key(r.cells[col]);
        if (k[0] === 0) { if (k[1] > prev) { good = false; } prev = k[1]; }
      });
    });
    document.body.dataset.sorted = good ? "1" : "0";
  }
  document.body.dataset.ok = "1";
})();
"""


def script_hash(js: str = JS) -> str:
    """CSP source expression allowing exactly this inline script."""
    digest = hashlib.sha256(js.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"
