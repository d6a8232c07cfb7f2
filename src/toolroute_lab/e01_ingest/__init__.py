"""Notebook 01 (ingest): the RAG index over the product PDFs and its retrieval check.

Its declaration (`INGEST`): what it checks before a run, what it writes and what the report reads;
`toolroute_lab.run.declared` lists it among the experiments."""

from toolroute_lab.shared.experiment import Experiment


INGEST = Experiment(
    "01_ingest", "RAG retrieval",
    tables=("retrieval.csv", "ingest.csv"), figures=("hit_rate.png",))
