"""File-system faults a user causes end in one `error:` line naming the path and
exit status 2, never a traceback: an output path under a regular file, a full disk."""

from __future__ import annotations

import gc
import json
import os
import shutil
import subprocess
import uuid

import pytest
from click.testing import CliRunner

from repetend.cli import main


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("c") / "c.jsonl"
    path.write_text("".join(json.dumps({"id": f"d{i}", "text": f"page {i} shared footer words "
                                        "here and there for everyone " * 3}) + "\n"
                            for i in range(40)))
    return path


def _commands(corpus, out):
    return [
        ["tokenize", str(corpus), "-o", out, "-q"],
        ["scan", str(corpus), "-o", out, "--min-docs", "3", "-q"],
        ["phrases", str(corpus), "-o", out, "--min-docs", "3", "-q"],
        ["dups", str(corpus), "-o", out, "-q"],
        ["index", "build", str(corpus), "-o", out, "-q"],
        ["synth", "synthetic1", "--out", out],
    ]


@pytest.mark.parametrize("i", range(6))
def test_an_output_under_a_regular_file_is_one_line(corpus, tmp_path, i):
    (tmp_path / "file").write_text("keep me")
    args = _commands(corpus, str(tmp_path / "file" / "sub"))[i]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 2, (args, r.output)
    assert "Traceback" not in r.output and isinstance(r.exception, SystemExit)
    assert "error: " in r.output and str(tmp_path / "file") in r.output
    assert (tmp_path / "file").read_text() == "keep me"


@pytest.fixture
def small_disk(tmp_path):
    """A 1 MiB tmpfs (needs root and mount; skipped where the platform refuses)."""
    mnt = tmp_path / f"small-{uuid.uuid4().hex[:6]}"
    mnt.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a small filesystem needs root")
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)],
                       capture_output=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.decode(errors='replace').strip()}")
    try:
        yield mnt
    finally:
        if subprocess.run(["umount", str(mnt)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(mnt)], capture_output=True)   # busy: detach


def test_a_full_disk_is_one_line_and_leaves_no_half_output(small_disk, tmp_path):
    big = tmp_path / "big.jsonl"
    big.write_text("".join(json.dumps({"id": f"d{i}", "text": f"document {i} " + "word " * 400})
                           + "\n" for i in range(600)))    # ~1.4 MB of text: over 1 MiB
    for args in (["tokenize", str(big), "-o", str(small_disk / "store"), "-q"],
                 ["scan", str(big), "-o", str(small_disk / "scan"), "-q"]):
        r = CliRunner().invoke(main, args)
        assert r.exit_code == 2, (args, r.output)
        assert "error: " in r.output and "No space left on device" in r.output, r.output
        assert "Traceback" not in r.output
    leftovers = [p.name for p in small_disk.rglob("*") if p.is_file() and p.name != ".scan.lock"]
    assert leftovers == [], leftovers          # the scan's lock file (empty of data) stays


def _fill(disk, leave: int) -> None:
    """Fill *disk* up to *leave* bytes free."""
    st = os.statvfs(disk)
    free = st.f_bavail * st.f_frsize
    with open(disk / "filler", "wb") as f:
        f.write(b"\0" * max(free - leave, 0))


def _tree(root):
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != "filler"}


def test_a_full_disk_under_clean_index_dups_and_report_keeps_the_old_outputs(small_disk, tmp_path,
                                                                             corpus):
    """On a full disk clean, index build --overwrite, index add, dups and report end in one
    `error:` line naming ENOSPC, and what they were replacing is still whole (the
    old index opens and answers; the old dups files are one set)."""
    from repetend.index import NearDupIndex

    big = tmp_path / "big.jsonl"
    big.write_text("".join(json.dumps({"id": f"d{i}", "text": f"document {i} shared footer "
                                       "words here and there " + f"w{i} " * 60}) + "\n"
                           for i in range(400)))
    scan = tmp_path / "scan"
    assert CliRunner().invoke(main, ["scan", str(big), "-o", str(scan), "--min-docs", "3",
                                     "--no-templates", "-q"]).exit_code == 0
    old = {"x.jsonl": ["clean", "--scan", str(corpus_scan(tmp_path, corpus)), "-o"],
           "idx": ["index", "build", str(corpus), "-q", "-o"],
           "dups": ["dups", str(corpus), "-q", "-o"],
           "r.html": ["report", str(corpus_scan(tmp_path, corpus)), "-o"]}
    for name, args in old.items():
        r = CliRunner().invoke(main, [*args, str(small_disk / name)])
        assert r.exit_code == 0, (name, r.output)
    before = _tree(small_disk)
    _fill(small_disk, 16 * 1024)
    new = [["clean", "--scan", str(scan), "-q", "-o", str(small_disk / "x.jsonl")],
           ["index", "build", str(big), "-q", "--overwrite", "-o", str(small_disk / "idx")],
           ["index", "add", str(small_disk / "idx"), str(big), "-q"],
           ["dups", str(big), "-q", "-o", str(small_disk / "dups")],
           ["report", str(scan), "-o", str(small_disk / "r.html")]]
    for args in new:
        r = CliRunner().invoke(main, args)
        assert r.exit_code == 2, (args, r.output)
        lines = [ln for ln in r.output.splitlines() if ln.startswith("error: ")]
        assert len(lines) == 1 and "No space left on device" in lines[0], (args, r.output)
        assert "Traceback" not in r.output
        assert _tree(small_disk) == before, args      # nothing replaced, nothing left over
    idx = NearDupIndex.open(small_disk / "idx")
    assert idx.n_docs == 40
    assert idx.query(["page 3 shared footer words here and there for everyone " * 3],
                     fragments=False).documents[0]["near_duplicates"]
    del idx            # its segments are memory-mapped: unmap before the unmount
    gc.collect()


def corpus_scan(tmp_path, corpus):
    scan = tmp_path / "corpus-scan"
    if not scan.exists():
        r = CliRunner().invoke(main, ["scan", str(corpus), "-o", str(scan), "--min-docs", "3", "-q"])
        assert r.exit_code == 0, r.output
    return scan


@pytest.mark.parametrize("args", [["lsh-params", "--num-perm", "100000000"],
                                  ["dups", "x.jsonl", "-o", "o", "--num-perm", "100000000"],
                                  ["scan", "x.jsonl", "-o", "o", "--num-perm", "9000"],
                                  ["index", "build", "x.jsonl", "-o", "o", "-K", "0"]])
def test_the_signature_length_is_bounded(args):
    """--num-perm 10^8 once grew past 9.8 GB in the banding search: every command
    refuses it at once, with the bound in the message (and in --help)."""
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 2 and "1<=x<=8192" in r.output, r.output


def test_the_command_line_bound_is_the_library_bound():
    from repetend.errors import ParameterError
    from repetend.neardup import NearDupConfig, lsh_params
    from repetend.neardup.lsh import MAX_NUM_PERM

    from repetend.cli.options import NUM_PERM

    assert NUM_PERM.min == 1 and NUM_PERM.max == MAX_NUM_PERM == 8192
    NearDupConfig(num_perm=MAX_NUM_PERM).validate()
    with pytest.raises(ParameterError, match="num_perm must be in 1..8192"):
        NearDupConfig(num_perm=MAX_NUM_PERM + 1).validate()
    with pytest.raises(ParameterError, match="num_perm must be in 1..8192"):
        lsh_params(0.8, 10**8)


@pytest.mark.parametrize("command", [["dups"], ["phrases", "--min-docs", "2"], ["index", "build"]])
def test_skipped_records_are_counted_and_no_document_is_an_error(tmp_path, command):
    """phrases, dups and index build say how many records the readers skipped (as
    tokenize and scan do), and a corpus of which nothing could be read is an error,
    not "0 documents" and exit 0."""
    some = tmp_path / "some.jsonl"
    some.write_text('{"id": "a", "text": "one two three four five six"}\nnot json\n'
                    '{"id": "c", "text": "one two three four five six"}\n')
    r = CliRunner().invoke(main, [*command, str(some), "-o", str(tmp_path / "o1"), "-q"])
    assert r.exit_code == 0, r.output
    assert "warning: 1 malformed records skipped; first: " in r.output and "line 2" in r.output
    none = tmp_path / "none.jsonl"
    none.write_bytes("\ufeff".encode("utf-16-le") + '{"id": "a"}\n'.encode("utf-16-le"))
    r = CliRunner().invoke(main, [*command, str(none), "-o", str(tmp_path / "o2"), "-q"])
    assert r.exit_code == 2, r.output
    assert "error: " in r.output and "the corpus has no documents" in r.output
    assert not (tmp_path / "o2").exists()


def test_an_output_inside_the_input_directory_is_not_read_back(tmp_path):
    """scan DIR -o DIR/scan: the next scan of DIR reads the 8 pages, not the scan's
    files (a scan directory is skipped, with or without its lock file); clean
    --out DIR/cleaned is refused (its copies and log would be read back)."""
    tree = tmp_path / "tree"
    tree.mkdir()
    for i in range(8):
        (tree / f"p{i}.txt").write_text(f"page {i} shared footer words here and there again")
    for out in ("scan", "scan2"):
        r = CliRunner().invoke(main, ["scan", str(tree), "-o", str(tree / out), "--min-docs", "3",
                                      "-q"])
        assert r.exit_code == 0, r.output
        assert "corpus: 8 documents" in r.output
    (tree / "scan" / ".scan.lock").unlink()          # a scan directory from before the lock
    r = CliRunner().invoke(main, ["tokenize", str(tree), "-o", str(tmp_path / "st"), "-q"])
    assert r.exit_code == 0 and "8 documents" in r.output, r.output
    r = CliRunner().invoke(main, ["clean", "--scan", str(tree / "scan2"), "-o",
                                  str(tree / "cleaned"), "-q"])
    assert r.exit_code == 2 and "is inside the input directory" in r.output, r.output
    assert not (tree / "cleaned").exists()


def test_a_damaged_store_or_index_file_is_one_line(corpus, tmp_path):
    """`truncate -s 5000 tokens.npy`, another store's doc_offsets.npy, `truncate -s 100`
    on a segment's band_keys.npy: one error line naming the directory and what to
    rebuild (was: a ValueError traceback, or documents read from the wrong arrays)."""
    import numpy as np

    store = tmp_path / "store"
    assert CliRunner().invoke(main, ["tokenize", str(corpus), "-o", str(store), "-q"]).exit_code == 0
    good = (store / "doc_offsets.npy").read_bytes()
    np.save(store / "doc_offsets.npy", np.array([0, 5, 9], dtype=np.int64))
    for args in (["info", str(store)], ["phrases", str(store), "-o", str(tmp_path / "p"), "-q"]):
        r = CliRunner().invoke(main, args)
        assert r.exit_code == 2 and "damaged token store (its arrays do not agree" in r.output, \
            r.output
    (store / "doc_offsets.npy").write_bytes(good)
    os.truncate(store / "tokens.npy", 200)
    r = CliRunner().invoke(main, ["dups", str(store), "-o", str(tmp_path / "d"), "-q"])
    assert r.exit_code == 2 and "error: " in r.output and "damaged token store" in r.output
    assert "tokenize the corpus again" in r.output and "Traceback" not in r.output

    idx = tmp_path / "idx"
    assert CliRunner().invoke(main, ["index", "build", str(corpus), "-o", str(idx),
                                     "-q"]).exit_code == 0
    keys = next(idx.glob("segments/*/band_keys.npy"))
    os.truncate(keys, 100)
    r = CliRunner().invoke(main, ["query", str(idx), "--text", "page 3 shared footer words"])
    assert r.exit_code == 2 and "damaged index segment" in r.output and "rebuild" in r.output, \
        r.output
