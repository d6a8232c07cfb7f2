"""The plant's equipment knowledge graph (`data/graph.yaml`) and its traversal (networkx).

Nodes are equipment (CNC-001), components (CL-003), parts (CP-007), sensors (FS-301), alarms
(E-042) and procedures (PR-02); edges are typed and directed:

    equipment -HAS_COMPONENT-> component -USES_PART-> part
    component -MEASURED_BY-> sensor        component -TRIGGERS_ALARM-> alarm
    alarm -DETECTED_BY-> sensor    alarm -CAUSED_BY-> part    alarm -FIXED_BY-> procedure
    procedure -REQUIRES_PART-> part

`neighbourhood("CNC-001", depth=2)` walks edges in both directions (a part also answers "who uses
me"), breadth first, and returns the nodes reached, the edges walked and one path per node
(`CNC-001(CNC 선반 1호기) -[HAS_COMPONENT]-> CL-003(냉각 시스템(쿨런트)) -[USES_PART]-> CP-007(냉각수 펌프)`).
A `relation` keeps the nodes whose last hop is of that relation (the path may pass through any),
so "CNC-001, USES_PART" lists the machine's parts. `path(a, b)` is the shortest path between two.

Entities resolve from an id in any spelling (`cnc001`, `e042`), a name or an alias; a name shared
by several nodes ("냉각 시스템") is ambiguous and the caller must ask which one is meant.
"""

from __future__ import annotations

import difflib
import re
from collections import deque
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import networkx as nx
import yaml

DATA_DIR = Path(__file__).parent / "data"
MAX_DEPTH = 3
MAX_NODES = 60

NODE_TYPES: dict[str, str] = {
    "equipment": "설비", "component": "구성 유닛", "part": "부품", "sensor": "센서", "alarm": "알람",
    "procedure": "정비 절차",
}
RELATIONS: dict[str, str] = {
    "HAS_COMPONENT": "구성 유닛",
    "USES_PART": "사용 부품",
    "MEASURED_BY": "측정 센서",
    "TRIGGERS_ALARM": "발생 알람",
    "DETECTED_BY": "감지 센서",
    "CAUSED_BY": "원인 부품",
    "FIXED_BY": "조치 절차",
    "REQUIRES_PART": "필요 부품",
}
# Words a user or model may pass as `relation`, mapped to the relation names.
RELATION_WORDS: dict[str, str] = {
    "구성": "HAS_COMPONENT", "구성품": "HAS_COMPONENT", "구성유닛": "HAS_COMPONENT", "컴포넌트": "HAS_COMPONENT",
    "유닛": "HAS_COMPONENT", "component": "HAS_COMPONENT",
    "부품": "USES_PART", "사용부품": "USES_PART", "part": "USES_PART", "parts": "USES_PART",
    "센서": "MEASURED_BY", "측정": "MEASURED_BY", "측정센서": "MEASURED_BY", "sensor": "MEASURED_BY",
    "알람": "TRIGGERS_ALARM", "발생알람": "TRIGGERS_ALARM", "alarm": "TRIGGERS_ALARM",
    "감지": "DETECTED_BY", "감지센서": "DETECTED_BY",
    "원인": "CAUSED_BY", "원인부품": "CAUSED_BY", "의심부품": "CAUSED_BY", "cause": "CAUSED_BY",
    "조치": "FIXED_BY", "절차": "FIXED_BY", "조치절차": "FIXED_BY", "정비절차": "FIXED_BY", "procedure": "FIXED_BY",
    "필요부품": "REQUIRES_PART", "교체부품": "REQUIRES_PART",
}
_ID = re.compile(r"^([A-Za-z]{1,3})[\s_\-]?(\d{2,3})$")
_ID_IN_TEXT = re.compile(r"(?<![A-Za-z0-9])([A-Za-z]{1,3})-?(\d{2,3})(?![0-9])")


def compact(text: str) -> str:
    return "".join(str(text).split()).lower()


class GraphDataError(ValueError):
    """graph.yaml is malformed (names the node or edge)."""


@dataclass
class Resolution:
    """The node an entity names, or why there is none: ambiguous (candidates) or unknown (suggestions)."""

    node: str | None = None
    candidates: list[str] = field(default_factory=list)  # ambiguous: all nodes the text names
    suggestions: list[str] = field(default_factory=list)  # unknown: close ids / names


class EquipmentGraph:
    """The plant graph: node attributes, typed edges, entity resolution and traversal."""

    def __init__(self, data: dict[str, Any]):
        self.plant = data.get("plant", "")
        self.g = nx.MultiDiGraph()
        for raw in data.get("nodes", []):
            node = dict(raw)
            nid = node.pop("id", None)
            if not nid or node.get("type") not in NODE_TYPES or not node.get("name"):
                raise GraphDataError(f"graph node {raw!r}: needs id, a known type and a name")
            if nid in self.g:
                raise GraphDataError(f"graph node {nid}: defined twice")
            node["aliases"] = list(node.get("aliases", []))
            self.g.add_node(nid, **node)
        for raw in data.get("edges", []):
            if not isinstance(raw, list) or len(raw) != 3:
                raise GraphDataError(f"graph edge {raw!r}: expected [source, RELATION, target]")
            source, relation, target = raw
            if relation not in RELATIONS:
                raise GraphDataError(f"graph edge {raw!r}: unknown relation {relation!r}")
            for end in (source, target):
                if end not in self.g:
                    raise GraphDataError(f"graph edge {raw!r}: unknown node {end!r}")
            self.g.add_edge(source, target, key=relation, relation=relation)
        self._names: dict[str, set[str]] = {}
        for nid, attrs in self.g.nodes(data=True):
            for word in (attrs["name"], *attrs["aliases"]):
                self._names.setdefault(compact(word), set()).add(nid)

    # ----- nodes ----------------------------------------------------------------------------
    def __contains__(self, node_id: str) -> bool:
        return node_id in self.g

    def attrs(self, node_id: str) -> dict[str, Any]:
        return dict(self.g.nodes[node_id])

    def ids(self, node_type: str | None = None) -> list[str]:
        return [n for n, a in self.g.nodes(data=True) if node_type is None or a["type"] == node_type]

    def label(self, node_id: str) -> str:
        return f"{node_id}({self.g.nodes[node_id]['name']})"

    def node_dict(self, node_id: str) -> dict[str, Any]:
        """A node for a tool result: id, type (Korean), name and its facts (no aliases)."""
        attrs = self.attrs(node_id)
        out = {"id": node_id, "type": attrs.pop("type"), "name": attrs.pop("name")}
        out["type_ko"] = NODE_TYPES[out["type"]]
        attrs.pop("aliases", None)
        attrs.pop("reading", None)
        attrs.pop("actions", None)
        out.update(attrs)
        if out["type"] in ("component", "sensor", "alarm"):
            owners = self.equipment_of(node_id)
            if owners:
                out["equipment"] = owners
        return out

    def normalize_id(self, text: str) -> str | None:
        """`cnc001`, `CNC 001`, `e042` → the node id when such a node exists."""
        match = _ID.match(text.strip())
        if not match:
            return None
        prefix, number = match.group(1).upper(), match.group(2)
        for candidate in (f"{prefix}-{number}", f"{prefix}-{number.zfill(3)}", f"{prefix}-{number.zfill(2)}"):
            if candidate in self.g:
                return candidate
        return None

    def resolve(self, text: str | None, node_type: str | None = None) -> Resolution:
        """The node `text` names (id, name or alias), optionally of one type."""
        text = (text or "").strip()
        if not text:
            return Resolution()
        allowed = set(self.ids(node_type))
        nid = self.normalize_id(text)
        if nid is not None and nid in allowed:
            return Resolution(node=nid)
        key = compact(text)
        exact = sorted(self._names.get(key, set()) & allowed)
        if len(exact) == 1:
            return Resolution(node=exact[0])
        if len(exact) > 1:
            return Resolution(candidates=exact)
        # A phrase: "1호기 선반 냉각 시스템", "CNC-001 스핀들 베어링". Machines it names narrow the rest.
        machines = {i for i in (self.normalize_id(f"{a}-{b}") for a, b in _ID_IN_TEXT.findall(text)) if i}
        machines = {i for i in machines if self.g.nodes[i]["type"] == "equipment"}
        machines |= {n for word, nodes in self._names.items() if len(word) >= 3 and word in key
                     for n in nodes if self.g.nodes[n]["type"] == "equipment"}
        ids_in_text = {i for i in (self.normalize_id(f"{a}-{b}") for a, b in _ID_IN_TEXT.findall(text))
                       if i is not None and i in allowed}
        others = ids_in_text - machines
        if len(others) == 1:
            return Resolution(node=next(iter(others)))
        named = {w: nodes & allowed - machines for w, nodes in self._names.items() if len(w) >= 2 and w in key}
        named = {w: nodes for w, nodes in named.items() if nodes}
        if named:
            best = max(len(w) for w in named)
            top = {n for w, nodes in named.items() if len(w) == best for n in nodes}
            if machines and len(top) > 1:
                narrowed = {n for n in top if set(self.equipment_of(n)) & machines}
                top = narrowed or top
            top_sorted = sorted(top)
            return Resolution(node=top_sorted[0]) if len(top_sorted) == 1 else Resolution(candidates=top_sorted)
        if len(machines & allowed) == 1:
            return Resolution(node=next(iter(machines & allowed)))
        containing = sorted({n for word, nodes in self._names.items() if len(key) >= 2 and key in word
                             for n in nodes} & allowed)
        if len(containing) == 1:
            return Resolution(node=containing[0])
        if containing:
            return Resolution(candidates=containing)
        return Resolution(suggestions=self.suggest(text, node_type))

    def suggest(self, text: str, node_type: str | None = None, n: int = 5) -> list[str]:
        """Close ids and names, as 'ID(name)' labels."""
        allowed = self.ids(node_type)
        ids = difflib.get_close_matches(text.strip().upper(), allowed, n=n, cutoff=0.5)
        by_name = {compact(self.g.nodes[i]["name"]): i for i in allowed}
        names = difflib.get_close_matches(compact(text), list(by_name), n=n, cutoff=0.5)
        out = list(dict.fromkeys([*ids, *(by_name[x] for x in names)]))
        return [self.label(i) for i in out[:n]]

    # ----- structure ------------------------------------------------------------------------
    def out_edges(self, node_id: str, relation: str | None = None) -> list[str]:
        return [t for _, t, r in self.g.out_edges(node_id, keys=True) if relation is None or r == relation]

    def in_edges(self, node_id: str, relation: str | None = None) -> list[str]:
        return [s for s, _, r in self.g.in_edges(node_id, keys=True) if relation is None or r == relation]

    def equipment_of(self, node_id: str) -> list[str]:
        """The machines a component, sensor or alarm belongs to (an alarm: every machine that can raise it)."""
        kind = self.g.nodes[node_id]["type"]
        if kind == "equipment":
            return [node_id]
        if kind == "component":
            return self.in_edges(node_id, "HAS_COMPONENT")
        if kind == "sensor":
            return sorted({e for c in self.in_edges(node_id, "MEASURED_BY") for e in self.equipment_of(c)})
        if kind == "alarm":
            return sorted({e for c in self.in_edges(node_id, "TRIGGERS_ALARM") for e in self.equipment_of(c)})
        if kind == "part":
            return sorted({e for c in self.in_edges(node_id, "USES_PART") for e in self.equipment_of(c)})
        return []

    def components_of(self, equipment_id: str) -> list[str]:
        return self.out_edges(equipment_id, "HAS_COMPONENT")

    def alarms_of(self, equipment_id: str) -> dict[str, str]:
        """Alarm code → the component of this machine that raises it."""
        return {a: c for c in self.components_of(equipment_id) for a in self.out_edges(c, "TRIGGERS_ALARM")}

    def parts_of(self, equipment_id: str) -> list[str]:
        return list(dict.fromkeys(p for c in self.components_of(equipment_id) for p in self.out_edges(c, "USES_PART")))

    def where_used(self, part_id: str) -> list[dict[str, str]]:
        """Where a part is fitted: [{equipment, component}]."""
        out = []
        for comp in self.in_edges(part_id, "USES_PART"):
            for eq in self.equipment_of(comp):
                out.append({"equipment": self.label(eq), "component": self.label(comp)})
        return out

    # ----- traversal ------------------------------------------------------------------------
    def _hops(self, node_id: str) -> list[tuple[str, str, str, bool]]:
        """(neighbour, relation, edge text, outgoing) for every edge at `node_id`, outgoing first."""
        hops = [(t, r, True) for _, t, r in self.g.out_edges(node_id, keys=True)]
        hops += [(s, r, False) for s, _, r in self.g.in_edges(node_id, keys=True)]
        return [(n, r, f" -[{r}]-> " if out else f" <-[{r}]- ", out) for n, r, out in hops]

    def neighbourhood(self, start: str, depth: int = 1, relation: str | None = None) -> dict[str, Any]:
        """Breadth-first walk (both directions) up to `depth` hops; see the module docstring."""
        depth = max(1, min(MAX_DEPTH, int(depth)))
        parent: dict[str, tuple[str, str, bool] | None] = {start: None}
        level = {start: 0}
        order: list[str] = []
        queue = deque([start])
        truncated = False
        while queue:
            node = queue.popleft()
            if level[node] >= depth:
                continue
            for nxt, rel, _, outgoing in self._hops(node):
                if nxt in parent:
                    continue
                if len(order) >= MAX_NODES:
                    truncated = True
                    break
                parent[nxt] = (node, rel, outgoing)
                level[nxt] = level[node] + 1
                order.append(nxt)
                queue.append(nxt)
        reached = [n for n in order if relation is None or parent[n][1] == relation]  # type: ignore[index]
        edges, paths, seen_edges = [], [], set()
        for node in reached:
            chain = []
            cur = node
            while parent[cur] is not None:
                prev, rel, outgoing = parent[cur]  # type: ignore[misc]
                chain.append((prev, rel, cur, outgoing))
                cur = prev
            chain.reverse()
            text = self.label(start)
            for prev, rel, cur, outgoing in chain:
                text += (f" -[{rel}]-> " if outgoing else f" <-[{rel}]- ") + self.label(cur)
                source, target = (prev, cur) if outgoing else (cur, prev)
                if (source, rel, target) not in seen_edges:
                    seen_edges.add((source, rel, target))
                    edges.append({"source": source, "relation": rel, "relation_ko": RELATIONS[rel], "target": target})
            paths.append(text)
        return {
            "nodes": [dict(self.node_dict(n), hops=level[n]) for n in reached],
            "edges": edges,
            "paths": paths,
            "truncated": truncated,
        }

    def path(self, source: str, target: str) -> list[tuple[str, str, str, bool]] | None:
        """The shortest path between two nodes (any direction) as (from, relation, to, forward) steps."""
        undirected = self.g.to_undirected(as_view=True)
        try:
            nodes = nx.shortest_path(undirected, source, target)
        except nx.NetworkXNoPath:
            return None
        steps = []
        for a, b in zip(nodes, nodes[1:]):
            forward = self.g.has_edge(a, b)
            data = self.g.get_edge_data(a, b) if forward else self.g.get_edge_data(b, a)
            steps.append((a, sorted(data)[0], b, forward))
        return steps

    def path_text(self, steps: list[tuple[str, str, str, bool]]) -> str:
        if not steps:
            return ""
        text = self.label(steps[0][0])
        for _, rel, b, forward in steps:
            text += (f" -[{rel}]-> " if forward else f" <-[{rel}]- ") + self.label(b)
        return text


def parse_relation(value: str | None) -> str | None | bool:
    """The relation name of `value` ("USES_PART", "부품", "원인"); None when empty; False when unknown."""
    if value is None or not str(value).strip():
        return None
    text = str(value).strip()
    upper = text.upper().replace(" ", "_").replace("-", "_")
    if upper in RELATIONS:
        return upper
    key = compact(text)
    if key in RELATION_WORDS:
        return RELATION_WORDS[key]
    for word, rel in RELATION_WORDS.items():
        if word in key:
            return rel
    for rel, ko in RELATIONS.items():
        if compact(ko) == key:
            return rel
    return False


@lru_cache(maxsize=1)
def load_graph(path: str | None = None) -> EquipmentGraph:
    """The plant graph from `data/graph.yaml` (cached)."""
    source = Path(path) if path else DATA_DIR / "graph.yaml"
    with source.open(encoding="utf-8") as fh:
        data = yaml.safe_load(fh)
    if not isinstance(data, dict):
        raise GraphDataError(f"{source}: expected a mapping with 'nodes' and 'edges'")
    return EquipmentGraph(data)


def equipment_model(equipment_id: str) -> str:
    return load_graph().attrs(equipment_id)["model"]


def models() -> list[str]:
    g = load_graph()
    return sorted({g.attrs(e)["model"] for e in g.ids("equipment")})
