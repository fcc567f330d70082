"""``repetend warmup``: compile every kernel once, ahead of the first real run.

The kernels are compiled by numba on first use and cached on disk next to the
package.  Without a warm-up the first ``repetend demo`` or ``scan`` on a machine
spends one to several minutes compiling; ``scripts/setup.sh`` runs this command
after installing, and a user of ``pip install repetend`` can run it once.

It runs the commands a user runs, on a small generated corpus in a temporary
directory: ``synth``, ``scan`` (every stage and the report), ``phrases`` with each
engine, ``dups`` with each method, ``index build``/``add`` and a query, ``clean``,
and the code and character tokenizers.  A second warm-up compiles nothing and
takes seconds.
"""

from __future__ import annotations

import contextlib
import io
import tempfile
import time
from pathlib import Path

import click

__all__ = ["COMMANDS", "warmup"]

_CODE_SAMPLE = '''def greet(name):
    """Say hello."""
    return f"hello {name}"  # a comment


for i in range(3):
    print(greet(str(i)))
'''


def _steps(t: Path) -> list[list[str]]:
    limit = "4GiB"   # any limit takes the out-of-core paths; this one is never reached
    corpus = str(t / "synth" / "corpus.jsonl")
    store = str(t / "scan" / "store")
    steps = [["synth", "weblike", "--docs", "240", "--out", str(t / "synth")],
             ["scan", corpus, "--out", str(t / "scan"), "-q"]]
    for engine in ("bloomspan", "suffix"):
        steps.append(["phrases", store, "--engine", engine, "--min-docs", "3",
                      "--out", str(t / f"phrases-{engine}"), "-q"])
    steps.append(["phrases", store, "--memory-limit", limit, "--min-docs", "3",
                  "--out", str(t / "phrases-outofcore"), "-q"])
    for method in ("minhash", "allpairs", "broder", "exact", "simhash"):
        steps.append(["dups", store, "--method", method, "--out", str(t / f"dups-{method}"), "-q"])
    steps.append(["dups", store, "--memory-limit", limit, "--out", str(t / "dups-outofcore"),
                  "-q"])
    steps += [["index", "build", corpus, "--limit", "200", "--out", str(t / "index"), "-q"],
              ["index", "add", str(t / "index"), corpus, "-q"],
              ["clean", corpus, "--scan", str(t / "scan"), "--out", str(t / "clean.jsonl"), "-q"],
              ["tokenize", str(t / "code"), "--unit", "code", "--out", str(t / "code-store"), "-q"],
              ["tokenize", corpus, "--limit", "20", "--unit", "char", "--out",
               str(t / "char-store"), "-q"]]
    return steps


def run_warmup(say=lambda line: None) -> tuple[float, int]:
    """Run every step; return (seconds, number of kernels compiled)."""
    from . import main
    from .._compile_notice import compiled
    from ..index.api import NearDupIndex

    t0 = time.perf_counter()
    before = compiled()
    with tempfile.TemporaryDirectory(prefix="repetend-warmup-") as tmp:
        t = Path(tmp)
        (t / "code").mkdir()
        (t / "code" / "sample.py").write_text(_CODE_SAMPLE * 5, encoding="utf-8")
        for args in _steps(t):
            say(f"  repetend {args[0]}{' ' + args[1] if args[0] == 'index' else ''} …")
            out = io.StringIO()
            try:
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                    main.main(args, standalone_mode=False)
            except SystemExit as exc:  # a step that fails is a bug, not the user's
                if exc.code not in (0, None):
                    raise click.ClickException(f"warm-up step failed: repetend {' '.join(args)}\n"
                                               f"{out.getvalue()[-2000:]}")
        NearDupIndex.open(t / "index").query(["a short text to look up in the index, "
                                              "long enough to have a few shingles"])
    return time.perf_counter() - t0, compiled() - before


@click.command("warmup")
@click.option("-q", "--quiet", is_flag=True, help="Print only the last line.")
def warmup(quiet: bool) -> None:
    """Compile every kernel once (a minute or more the first time on a machine), so
    that the first real run does not; a second warm-up takes seconds."""
    say = (lambda line: None) if quiet else (lambda line: click.echo(line, err=True))
    say("warming up: running every command once on a small generated corpus …")
    seconds, compiled = run_warmup(say)
    click.echo(f"warm-up done in {seconds:.1f} s: {compiled} kernel compilations"
               f"{'' if compiled else ' (all were already compiled)'}", err=True)


COMMANDS = [warmup]
