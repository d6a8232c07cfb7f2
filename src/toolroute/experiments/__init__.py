"""The functions behind each notebook, so that a notebook is parameters, calls, tables and figures."""
