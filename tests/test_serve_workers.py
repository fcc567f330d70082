"""`repetend serve --workers N`: N processes answer on one socket; an /add in one is
seen by the others' next query; SIGTERM stops them all."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from repetend.index import NearDupIndex
from repetend.neardup import NearDupConfig

pytest.importorskip("uvicorn")


def _texts(seed: int, n: int) -> list[str]:
    rng = np.random.default_rng(seed)
    words = [f"v{i}" for i in range(800)]
    return [" ".join(rng.choice(words, 40)) for _ in range(n)]


def _post(base: str, path: str, obj: dict) -> dict:
    req = urllib.request.Request(base + path, data=json.dumps(obj).encode(),
                                 headers={"Content-Type": "application/json",
                                          "Connection": "close"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read())


def _children(pid: int) -> list[int]:
    return [int(c) for t in Path(f"/proc/{pid}/task").iterdir()
            for c in (t / "children").read_text().split()]


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux /proc")
def test_workers_share_one_socket_and_see_each_others_adds(tmp_path):
    texts = _texts(0, 30)
    NearDupIndex.build(texts, tmp_path / "idx", NearDupConfig(threshold=0.7))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "repetend.cli.index_cmd", "serve",
                             str(tmp_path / "idx"), "--port", str(port), "--workers", "2"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        t0 = time.monotonic()
        while True:
            try:
                with urllib.request.urlopen(base + "/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.monotonic() - t0 < 180, "the service did not start"
            time.sleep(0.2)
        workers = _children(proc.pid)
        assert len(workers) == 2, workers
        new = _texts(1, 1)[0]
        assert _post(base, "/add", {"documents": [{"text": new, "id": "late"}]})[
            "summary"]["documents_after"] == 31
        for _ in range(8):   # new connections: both workers answer some of them
            got = _post(base, "/query", {"text": new, "fragments": False})
            assert [m["doc_id"] for m in got["documents"][0]["near_duplicates"]] == ["late"]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
        for w in workers:
            assert not Path(f"/proc/{w}").exists() or \
                Path(f"/proc/{w}/stat").read_text().split(") ")[1][0] == "Z"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()
