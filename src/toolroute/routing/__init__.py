"""Everything that turns a query into ranked tools: dense (ChromaDB), lexical (BM25), their fusion
(RRF), the no-call rule, an LLM reranker, and the one factory that wires them (`build_router`)."""

from toolroute.cards import open_catalog
from toolroute.routing.base import Ranking, Retriever
from toolroute.routing.factory import ARMS, RouterConfig, build_router, default_dev_file, make_retriever
from toolroute.routing.nocall import NoCallRule
from toolroute.routing.router import RouteResult, Router, ToolRouter

__all__ = [
    "ARMS", "NoCallRule", "Ranking", "Retriever", "RouteResult", "Router", "RouterConfig", "ToolRouter", "build_router",
    "default_dev_file", "make_retriever", "open_catalog",
]
