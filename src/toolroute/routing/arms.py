"""The retriever arms a router can use, by name: the one list that `RouterConfig`, the ablation grid,
the scale study, the CLI and the report read.

A new arm is a file with its `Retriever` and a builder `(config, catalog, client) -> Retriever`, plus one
line in `ARMS` below; its label (`RouterConfig.label`) and its rows in every table follow.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from toolroute.cards import Catalog
from toolroute.config import data_dir, synthetic_path
from toolroute.embeddings import get_embedder
from toolroute.routing.base import Retriever
from toolroute.routing.dense import DenseRetriever, ToolIndex
from toolroute.routing.ensemble import EnsembleRetriever
from toolroute.routing.fusion import HybridRetriever
from toolroute.routing.learned import ClassifierRetriever
from toolroute.routing.lexical import BM25Retriever

if TYPE_CHECKING:
    from toolroute.routing.factory import RouterConfig


@dataclass(frozen=True)
class RetrieverArm:
    """One arm: how to build it, and what of a configuration it reads."""

    name: str
    build: Callable[["RouterConfig", Catalog, Any], Retriever]  # (config, catalog, Chroma client or None)
    uses_embedder: bool = True  # has a dense part: needs an embedder and a Chroma client; its label names them
    cascadable: bool = False  # has a BM25 pass the cascade (`routing.cascade`) can stop at; on by default


def _index(config: "RouterConfig", catalog: Catalog, client: Any) -> ToolIndex:
    from toolroute.chroma import open_client  # a client only for arms that embed

    return ToolIndex(catalog, config.embedder, config.strategy(), client if client is not None else open_client())


def _bm25(config: "RouterConfig", catalog: Catalog, client: Any) -> Retriever:
    return BM25Retriever(catalog, fields=config.strategy().fields)


def _dense(config: "RouterConfig", catalog: Catalog, client: Any) -> Retriever:
    return DenseRetriever(_index(config, catalog, client))


def _hybrid(config: "RouterConfig", catalog: Catalog, client: Any) -> Retriever:
    return HybridRetriever(_dense(config, catalog, client), _bm25(config, catalog, client), config.rrf_k,
                           config.dense_weight)


def _classifier(config: "RouterConfig", catalog: Catalog, client: Any) -> Retriever:
    embedder = config.embedder if config.embedder is not None and not isinstance(config.embedder, str) \
        else get_embedder(config.embedder)
    domain = Path(config.catalog).name if Path(config.catalog).is_dir() else ""
    return ClassifierRetriever(catalog, embedder, synthetic_path(domain) if domain else None, data_dir() / "learned")


def _hybrid_classifier(config: "RouterConfig", catalog: Catalog, client: Any) -> Retriever:
    return EnsembleRetriever(_hybrid(config, catalog, client), _classifier(config, catalog, client), config.rrf_k,
                             config.classifier_weight)


ARMS: dict[str, RetrieverArm] = {arm.name: arm for arm in (
    RetrieverArm("dense", _dense),
    RetrieverArm("bm25", _bm25, uses_embedder=False),
    RetrieverArm("hybrid", _hybrid, cascadable=True),
    RetrieverArm("classifier", _classifier),
    RetrieverArm("hybrid+classifier", _hybrid_classifier, cascadable=True),
)}


def register(arm: RetrieverArm) -> RetrieverArm:
    """Add an arm from outside the package (a study's own arm, a test's)."""
    ARMS[arm.name] = arm
    return arm


def arm_named(name: str) -> RetrieverArm:
    try:
        return ARMS[name]
    except KeyError:
        raise ValueError(f"arm must be one of {tuple(ARMS)}, got '{name}'") from None
