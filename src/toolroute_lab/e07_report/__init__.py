"""Notebook 07 (report): the targets and the report page built from every notebook's outputs. Its
declaration (`REPORT`) is in `toolroute_lab.run.declared`: the run exports it to HTML last."""
