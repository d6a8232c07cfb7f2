"""Evaluation: eval-query files, ranking metrics with bootstrap CIs, leakage checks, retrieval runs."""
