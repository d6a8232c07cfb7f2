"""toolroute: find the few tools an LLM agent needs among many.

ToolCards describe tools; a ToolIndex in ChromaDB (plus a Korean BM25 arm) ranks them for a
query; a calibrated rule decides when no tool should be called; `evaluation` measures it.
"""

import os as _os

from toolroute.config import omp_defaults_enabled as _omp_defaults_enabled

__version__ = "0.1.0"

# The e5 embedder runs on OpenMP (libgomp). By default libgomp's idle threads spin for a long
# while before they sleep; when the local LLM held the 2 cores, one query embedding took 1.4 s
# instead of ~10 ms. A short spin avoids that, but too short a one (1,000) makes every parallel
# region of a forward pass wake a sleeping thread: a served turn's embedding, after 200 ms of
# waiting for the LLM, then took 33 ms instead of 13. 10,000 keeps both: 17 ms in a served turn,
# 19 ms next to a generating LLM (docs/performance.md; `make bench` measures the settings).
# Set before any OpenMP library loads, never over the user's own setting; TOOLROUTE_OMP_DEFAULTS=0
# turns it off (the LLM server child, whose own threads should spin, gets that).
OMP_DEFAULTS = {"GOMP_SPINCOUNT": "10000"}
OMP_APPLIED: dict[str, str] = {}  # the defaults this process set (not the user's own values)
if _omp_defaults_enabled():
    for _key, _value in OMP_DEFAULTS.items():
        if _key not in _os.environ:
            _os.environ[_key] = OMP_APPLIED[_key] = _value
