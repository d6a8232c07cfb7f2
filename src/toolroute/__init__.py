"""toolroute: find the few tools an LLM agent needs among many.

ToolCards describe tools; a ToolIndex in ChromaDB (plus a Korean BM25 arm) ranks them for a
query; a calibrated rule decides when no tool should be called; `evaluation` measures it.
"""

import os as _os

__version__ = "0.1.0"

# The e5 embedder runs on OpenMP. With libgomp's default wait policy its idle threads spin, and
# when another process (the local LLM, a test run) holds the 2 cores, one query embedding after a
# batch took 1.7 s instead of ~20 ms. PASSIVE threads sleep instead. Set before any OpenMP
# library loads, never over the user's own setting; TOOLROUTE_OMP_DEFAULTS=0 turns it off (the
# LLM server child, whose own threads should spin, gets that).
OMP_DEFAULTS = {"OMP_WAIT_POLICY": "PASSIVE"}
OMP_APPLIED: dict[str, str] = {}  # the defaults this process set (not the user's own values)
if _os.environ.get("TOOLROUTE_OMP_DEFAULTS", "1") != "0":
    for _key, _value in OMP_DEFAULTS.items():
        if _key not in _os.environ:
            _os.environ[_key] = OMP_APPLIED[_key] = _value
