import hashlib
import os
import socket
import subprocess
import tempfile
import sys
import time
import uuid
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
# Saved card edits change what every router routes with: the suite never reads a developer's own.
os.environ.setdefault("TOOLROUTE_CARDSTORE", tempfile.mkdtemp(prefix="toolroute-test-cardstore-"))

from toolroute.config import toolcards_dir  # noqa: E402
from toolroute.domains.insurance import TOOL_NAMES  # noqa: E402


def pytest_report_header(config):
    """The CPU type at the top of every run: e5's vectors and the reference's rows depend on it (issue 39)."""
    from toolroute_lab.shared.machine import cpu_model

    return f"cpu: {cpu_model()}"


class HashEmbedder:
    """Deterministic bag-of-characters embedder: fast, no model, counts what it embeds."""

    spec = "test:hash"
    dim = 64

    def __init__(self, fail_after: int | None = None):
        self.passages_embedded = 0
        self.fail_after = fail_after

    def _vec(self, text: str) -> np.ndarray:
        v = np.zeros(self.dim, dtype=np.float32)
        for ch in text:
            v[int(hashlib.md5(ch.encode()).hexdigest(), 16) % self.dim] += 1.0
        n = np.linalg.norm(v)
        return v / n if n else v

    def embed_queries(self, texts):
        return np.stack([self._vec(t) for t in texts])

    def embed_passages(self, texts):
        if self.fail_after is not None and self.passages_embedded + len(texts) > self.fail_after:
            raise RuntimeError("embedder failed mid-build (test)")
        self.passages_embedded += len(texts)
        return np.stack([self._vec(t) for t in texts])


@pytest.fixture(scope="session")
def insurance_catalog():
    from toolroute.cards import load_toolcards

    return load_toolcards(toolcards_dir("insurance"), TOOL_NAMES)


@pytest.fixture
def chroma(tmp_path):
    from toolroute.chroma import open_client

    return open_client(tmp_path / "chroma")


@pytest.fixture
def hash_embedder():
    return HashEmbedder()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory):
    """A real Chroma server (`chroma run` from the pinned package) on a free 127.0.0.1 port."""
    import httpx

    port = _free_port()
    folder = tmp_path_factory.mktemp("chroma-server")
    log = (folder / "server.log").open("w")
    binary = Path(sys.executable).parent / "chroma"
    proc = subprocess.Popen([str(binary), "run", "--path", str(folder / "data"), "--host", "127.0.0.1", "--port", str(port)],
                            stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 90
    while True:
        try:
            if httpx.get(f"{url}/api/v2/heartbeat", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if proc.poll() is not None or time.time() > deadline:
            proc.kill()
            raise RuntimeError(f"chroma run did not start: {(folder / 'server.log').read_text()[-2000:]}")
        time.sleep(0.3)
    yield url
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


def server_database_client(url: str):
    """A client on a fresh database of the server, so each test starts from an empty store."""
    import chromadb
    from chromadb.config import Settings

    host, port = url.rsplit("//", 1)[1].split(":")
    settings = Settings(anonymized_telemetry=False, chroma_api_impl="chromadb.api.fastapi.FastAPI",
                        chroma_server_host=host, chroma_server_http_port=int(port))
    name = f"test-{uuid.uuid4().hex[:12]}"
    chromadb.AdminClient(settings).create_database(name)
    return chromadb.HttpClient(host=host, port=int(port), database=name, settings=Settings(anonymized_telemetry=False))


LOOPBACK_ONLY = [pytest.mark.enable_socket, pytest.mark.allow_hosts(["127.0.0.1"])]


@pytest.fixture(params=["embedded", pytest.param("server", marks=LOOPBACK_ONLY)])
def chroma_both(request, tmp_path):
    """The same test on the embedded store and on a Chroma server."""
    if request.param == "embedded":
        from toolroute.chroma import open_client

        return open_client(tmp_path / "chroma")
    return server_database_client(request.getfixturevalue("chroma_server"))
