"""toolroute: find the few tools an LLM agent needs among many.

ToolCards describe tools; a ToolIndex in ChromaDB (plus a Korean BM25 arm) ranks them for a
query; a calibrated rule decides when no tool should be called; `evaluation` measures it.
"""

__version__ = "0.1.0"
