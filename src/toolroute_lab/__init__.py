"""The lab: the experiments behind the notebooks, apart from the `toolroute` library they measure.

One folder per notebook (`e01_ingest` … `e07_report`), `run/` for what every notebook shares (the
pipeline behind `toolroute run`, the declarations in `run.declared`, set-up and checkpoints) and
`studies/` for the measurements outside the seven notebooks' main line. The library never imports
the lab (the layer contract in pyproject.toml); the lab adds its `run` command to the CLI through
the `toolroute.commands` entry point.

`setup_notebook`, `select_llm` / `select_llms` (the `llms` parameter) and `write_llms` are the set-up
every notebook shares; they load on first use, so that the CLI's `--help` stays fast.
"""

from importlib import import_module

__all__ = ["NotebookLLM", "parse_llms", "select_llm", "select_llms", "setup_notebook", "write_llms"]


def __getattr__(name: str):
    if name in __all__:
        return getattr(import_module("toolroute_lab.shared.notebook"), name)
    raise AttributeError(f"module 'toolroute_lab' has no attribute {name!r}")
