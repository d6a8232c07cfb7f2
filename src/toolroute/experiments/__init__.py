"""The functions behind each notebook, so that a notebook is parameters, calls, tables and figures.

Each experiment is declared once in `declared` (its notebook, checks, outputs and report section);
`setup_notebook`, `select_llm` / `select_llms` (the `llms` parameter) and `write_llms` are the set-up every
notebook shares.
"""

from toolroute.experiments.notebook import NotebookLLM, parse_llms, select_llm, select_llms, setup_notebook, write_llms

__all__ = ["NotebookLLM", "parse_llms", "select_llm", "select_llms", "setup_notebook", "write_llms"]
