"""HTML to text: the reader's C path (one XSLT program) gives exactly the text of
the element-by-element walk, on random documents and hostile ones; WARC pages
converted in worker processes give the same records, in order, as in-process."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from naive_html import text_before, walk_text
from repetend.corpus import read_warc
from repetend.corpus.read_warc import _tree_text, html_to_text

pytest.importorskip("trafilatura")
from trafilatura.utils import load_html  # noqa: E402

TAGS = ["div", "p", "span", "b", "a", "li", "ul", "br", "td", "tr", "table", "h1", "nav",
        "footer", "script", "style", "noscript", "template", "svg", "select", "option", "title",
        "iframe", "em", "section", "pre", "code", "label"]
WORDS = ["shop", "Доставка", "  ", "\t", "x&amp;y", "&lt;b&gt;", "\u00a0", "日本語", "a  b", "",
         "line\nbreak", "3000", "–"]


@st.composite
def fragment(draw, depth=0):
    parts = []
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["text", "el", "el", "comment"] if depth < 4 else ["text"]))
        if kind == "text":
            parts.append(draw(st.sampled_from(WORDS)))
        elif kind == "comment":
            parts.append(f"<!-- {draw(st.sampled_from(WORDS))} -->")
        else:
            tag = draw(st.sampled_from(TAGS))
            inner = draw(fragment(depth=depth + 1))
            parts.append(f"<{tag}>{inner}</{tag}>" if tag != "br" else "<br>")
    return "".join(parts)


@settings(max_examples=300, deadline=None)
@given(head=fragment(), body=fragment(), with_body=st.booleans(), title=st.sampled_from(WORDS))
def test_the_c_path_equals_the_walk(head, body, with_body, title):
    html = (f"<html><head><title>{title}</title>{head}</head>"
            + (f"<body>{body}</body>" if with_body else body) + "</html>")
    tree = load_html(html)
    if tree is None:
        return
    assert _tree_text(tree) == walk_text(load_html(html))


@pytest.mark.parametrize("html", [
    "<html><body>plain</body></html>",
    "<html><body><script>x</script>after script<style>y</style>z</body></html>",
    "<HTML><BODY><DIV>Upper</DIV><SCRIPT>no</SCRIPT>tail</BODY></HTML>",
    "<html><head><title>T</title></head><body><p>a<p>b<li>c<td>d</body></html>",
    "<html><body><?php echo 1 ?>pi tail<!-- c -->ctail<div><!----></div></body></html>",
    "<!doctype html><html><body><svg><text>drawn</text></svg>visible</body></html>",
    "<html><frameset><frame src=x></frameset></html>",
    "<html><body>" + "<div>" * 300 + "deep" + "</div>" * 300 + "</body></html>",
])
def test_hostile_pages(html):
    tree = load_html(html)
    if tree is None:
        return
    assert _tree_text(tree) == walk_text(load_html(html))


_POOLED = """
import json, sys, threading
if sys.argv[3] == "thread":   # as the scan's memory watchdog: the workers come from a fork server
    threading.Thread(target=threading.Event().wait, daemon=True).start()
from repetend.corpus import read_warc
from repetend.corpus.readers import read_corpus
from repetend.corpus.record import ReadStats
read_warc.WarcReader.workers = 2
read_warc.WarcReader.pool_chunk = 4
read_warc.WarcReader.pool_range_bytes = 3000
read_warc.WarcReader.pool_ranges = sys.argv[2] == "ranges"
used = []
real = read_warc.WarcReader._get_pool
read_warc.WarcReader._get_pool = lambda self, w: used.append(real(self, w)) or used[-1]
stats = ReadStats()
recs = [[r.id, r.url, r.text, r.record_no] for r in read_corpus([sys.argv[1]], stats=stats)]
print(json.dumps({"recs": recs, "stats": stats.as_dict(), "pool": used[-1] is not None}))
"""


@pytest.mark.parametrize("how, thread", [("ranges", "-"), ("pages", "-"), ("ranges", "thread"),
                                         ("pages", "thread")])
def test_pages_converted_in_worker_processes_equal_in_process(tmp_path, monkeypatch, how, thread):
    """In a fresh interpreter (the pool forks only before any other thread runs; with
    one, from the fork server), run as a script without a ``__main__`` guard; the
    workers reading byte ranges of the file, or given the pages by this process."""
    import json
    import os
    import subprocess
    import sys

    from test_readers import read, write_warc

    pages = [(f"http://site{i % 3}.example/p{i}",
              f"<html><head><title>Page {i}</title></head><body><nav>Home | About</nav>"
              f"<p>Body text {i} " + "words " * (i % 7) + "</p><footer>© Site</footer></body></html>",
              "text/html; charset=utf-8") for i in range(70)]
    pages = [(u, p.encode(), c) for u, p, c in pages]
    pages.insert(33, ("http://bad.example/x", b"\xff\xfe<html><body>\x00\x00bad", "text/html"))
    pages.insert(40, ("http://ru.example/", "<html><body><p>Доставка\x01 <pre> a  b</pre></p></body></html>"
                      .encode("cp1251"), "text/html; charset=windows-1251"))
    pages.insert(50, ("http://jp.example/", "<html><body>日本語&amp;</body></html>".encode("shift_jis"),
                      "text/html"))
    pages.insert(60, ("http://x.example/", b"<html><body>x</body></html>", "text/html; charset=nosuch"))
    path = write_warc(tmp_path / "c.warc.gz", pages)
    monkeypatch.setattr(read_warc.WarcReader, "workers", 1)
    serial, s_stats = read(path)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    script = tmp_path / "pooled.py"
    script.write_text(_POOLED)
    out = subprocess.run([sys.executable, str(script), str(path), how, thread], capture_output=True,
                         text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["pool"] is True                    # the worker processes did the pages
    assert got["recs"] == [[r.id, r.url, r.text, r.record_no] for r in serial]
    assert got["stats"] == s_stats.as_dict()
    assert len(serial) >= 70


def test_html_to_text_modes():
    assert html_to_text("<html><body><p>a</p><p>b</p></body></html>") == "a\nb"
    with pytest.raises(Exception):
        html_to_text("<p>x</p>", "nosuch")


_LAYOUT_CHARS = (" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2005\u200a\u200b\u200c"
                 "\u2028\u2029\u202f\u205f\u3000\ufeffaZé日\U0001f600\x00-")


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.sampled_from(_LAYOUT_CHARS), max_size=60)
       | st.text(max_size=40))
def test_the_compiled_line_layout_equals_the_python_one(text):
    """Every whitespace Python strips, every one of ``_SPACES``, runs of both mixed,
    empty lines, multi-byte characters, lone surrogates (as surrogatepass bytes)."""
    data = text.encode("utf-8", "surrogatepass")
    assert read_warc._clean_lines_utf8(data) == read_warc._clean_lines(text)


@pytest.mark.parametrize("text", ["", "\n", " \n \n", "a", " a ", "a\n\nb", "\u3000x\u3000\u3000y\u2028",
                                  "\x1c \x1c a \x1c \x1c", "a\u200b\u200bb", "\ud800 x"])
def test_the_compiled_line_layout_on_edge_cases(text):
    assert read_warc._clean_lines_utf8(text.encode("utf-8", "surrogatepass")) \
        == read_warc._clean_lines(text)


_PIECES = ["<html>", "</html>", "<body>", "<p>", "</p>", "<div>x</div>", "<html/>", "<html lang=en />",
           "<!DOCTYPE html>", "<!DOCTYPE html PUBLIC \"-//W3C//DTD XHTML 1.0//EN\" \"x/y.dtd\">",
           "<?xml version=\"1.0\" encoding=\"UTF-8\"?>", "<meta charset=\"windows-1251\">",
           "\x00", "\x01", "\x0b", "\x1f", "\ufffe", "\uffff", "\ufeff", "\t", "\n", "\r",
           "Доставка", "日本語", "café", "&amp;", "&#0;", "&#xfffe;", "<!-- c -->", "<script>s</script>",
           "<title>T</title>", "plain text ", "<pre> a  b\n c</pre>", "<", ">", "</div>",
           "\u3000", "\xa0", "\x1c", "\ud800", "\U0001f600", "<HTML>", " <!doctype html>",
           "<?xml version=\"1.0\" encoding=\"windows-1251\"?>", "<meta charset=\"utf-16\">",
           "<meta http-equiv=\"Content-Type\" content=\"text/html; charset=shift_jis\">"]
_CODECS = ["utf-8", "cp1251", "latin-1", "shift_jis", "utf-16", None]


@settings(max_examples=400, deadline=None)
@given(parts=st.lists(st.sampled_from(_PIECES), max_size=14), codec=st.sampled_from(_CODECS),
       gz=st.booleans())
def test_the_page_loader_equals_trafilaturas(parts, codec, gz):
    """``_load_html`` gives trafilatura's ``load_html`` tree (serialized) on text, on
    bytes in several charsets, on gzip-compressed bytes and on non-HTML."""
    import gzip

    from lxml import etree
    from trafilatura.utils import load_html as tload

    text = "".join(parts)
    pages: list = [text]
    if codec is not None:
        data = text.encode(codec, "replace")
        pages += [data, gzip.compress(data)] if gz else [data]
    for page in pages:
        mine, theirs = read_warc._load_html(page), tload(page)
        assert (mine is None) == (theirs is None)
        if mine is not None:
            assert etree.tostring(mine) == etree.tostring(theirs)
            assert html_to_text(page) == text_before(tload(page))

