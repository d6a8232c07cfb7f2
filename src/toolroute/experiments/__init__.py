"""The functions behind each notebook, so that a notebook is parameters, calls, tables and figures.

Each experiment is declared once in `declared` (its notebook, checks, outputs and report section);
`setup_notebook` and `select_llm` are the set-up every notebook shares.
"""

from toolroute.experiments.notebook import NotebookLLM, select_llm, setup_notebook

__all__ = ["NotebookLLM", "select_llm", "setup_notebook"]
