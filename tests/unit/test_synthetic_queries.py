"""The synthetic-query generator (issue 40, item 1): replies parsed in every shape a small model writes,
calls cached and never repeated, failures left for the next run, rule variants, the leakage filter and
the pair check."""

import json
import random
from types import SimpleNamespace

import pytest

from toolroute.cards import Catalog, ToolCard
from toolroute.cards.synthetic import (FAMILIES, Candidate, GenerationCache, call_seed, eval_texts, filter_candidates,
                                       generate, generation_prompt, pair_check, queries_in_reply, rule_variants)


def _catalog() -> Catalog:
    cards = {
        "premium_estimate": ToolCard(name="premium_estimate", purpose="나이·성별로 월 보험료를 계산한다",
                                     when_to_use=("40세 남자 암보험 보험료 알려줘",), tags=("보험료",),
                                     when_not_to_use=("납입 주기 선택지가 궁금할 때 → plan_options",)),
        "product_search": ToolCard(name="product_search", purpose="조건에 맞는 상품을 찾는다",
                                   when_to_use=("치매 보장 상품 찾아줘",), tags=("상품",)),
    }
    return Catalog(name="t", cards=cards, sources={})


class FakeLLM:
    """Answers every call with `reply(messages)`; counts calls and the seeds it was made with."""

    def __init__(self, reply, fail_on: set[str] = frozenset()):
        self.reply, self.fail_on, self.calls, self.seeds = reply, fail_on, 0, []

    def make(self, seed):
        self.seeds.append(seed)
        return self

    def invoke(self, messages):
        self.calls += 1
        text = messages[-1].content
        if any(word in text for word in self.fail_on):
            raise TimeoutError("the server took too long")
        return SimpleNamespace(content=self.reply(messages))


@pytest.mark.parametrize("reply, expected", [
    ('["치아보험 있어?", "상품 뭐 있어?"]', ["치아보험 있어?", "상품 뭐 있어?"]),
    ('답입니다:\n```json\n[["치아보험 있어?"], "상품 뭐 있어?"]\n```', ["치아보험 있어?", "상품 뭐 있어?"]),
    ("- 치아보험 있어요?\n- 연금보험 있어요?\n", ["치아보험 있어요?", "연금보험 있어요?"]),
    ('1. "실속치매보험 있어요?"\n2) “어린이 보험 돼요?”\n\n이 문장들은 예시입니다.', ["실속치매보험 있어요?", "어린이 보험 돼요?"]),
    ("모르겠습니다", []),
])
def test_queries_are_read_from_every_reply_shape(reply, expected):
    assert queries_in_reply(reply) == expected


def test_the_prompt_names_the_family_and_the_cases_to_avoid_but_not_the_tool():
    card = _catalog().cards["premium_estimate"]
    family = next(f for f in FAMILIES if f.name == "keyword")
    text = generation_prompt(card, family, 7, parameters=["age", "sex"], names=["실속치매보험"])[-1].content
    assert family.ko in text and "7개" in text and "실속치매보험" in text and "age, sex" in text
    assert "납입 주기 선택지가 궁금할 때" in text
    assert "premium_estimate" not in text


def test_generation_is_cached_per_call_and_a_failed_call_is_left_for_the_next_run(tmp_path):
    catalog = _catalog()
    families = FAMILIES[:2]
    path = tmp_path / "generations.jsonl"
    llm = FakeLLM(lambda m: '["보험료 얼마야?", "상품 뭐 있어?"]', fail_on={"조건에 맞는 상품"})
    cache = generate(catalog, llm.make, "fake", GenerationCache(path), families, n=2, progress=False)
    assert llm.calls == 4 and len(cache) == 2  # both product_search calls failed
    assert {g.tool for g in cache} == {"premium_estimate"}
    first = next(iter(cache))
    assert first.seed == call_seed(first.tool, first.family, 0) and first.queries == ["보험료 얼마야?", "상품 뭐 있어?"]
    assert sorted(llm.seeds) == sorted(call_seed(c, f.name, 0) for c in catalog.names for f in families)

    again = FakeLLM(lambda m: '["상품 있어?"]')
    reread = GenerationCache(path)
    generate(catalog, again.make, "fake", reread, families, n=2, progress=False)
    assert again.calls == 2 and len(reread) == 4  # only the two that had failed
    assert len(path.read_text(encoding="utf-8").splitlines()) == 4

    another_model = FakeLLM(lambda m: "[]")
    generate(catalog, another_model.make, "other", GenerationCache(path), families, n=2, progress=False)
    assert another_model.calls == 4  # the model is part of the key


def test_a_line_cut_by_a_kill_is_skipped_with_its_place(tmp_path, capsys):
    path = tmp_path / "generations.jsonl"
    GenerationCache(path).add(generate.__globals__["Generation"]("a", "keyword", 0, "m", 1, 0.8, "p", "[]", []))
    with path.open("a", encoding="utf-8") as fh:
        fh.write('{"tool": "b", "fam')
    assert len(GenerationCache(path)) == 1
    assert f"{path}:2: skipped" in capsys.readouterr().out


def test_rule_variants_are_seeded_and_each_changes_the_text():
    names = ["실속치매보험", "첫날부터암보험"]
    text = "실속치매보험 보험료를 알려줘"
    first = rule_variants(text, random.Random(3), names, per_text=5)
    assert first == rule_variants(text, random.Random(3), names, per_text=5)
    rules = dict(first)
    assert set(rules) == {"ending", "particle", "spacing", "typo", "name"}
    assert rules["ending"] == "실속치매보험 보험료를 알려주세요"
    assert rules["particle"] == "실속치매보험 보험료 알려줘"
    assert rules["spacing"] == "실속치매보험보험료를알려줘"
    assert rules["name"] == "첫날부터암보험 보험료를 알려줘"
    assert rules["typo"] != text and len(rules["typo"]) >= len(text) - 1
    assert rule_variants("보험", random.Random(0), names, per_text=5) == []  # nothing to vary


def test_the_filter_keeps_nothing_near_an_eval_query_a_card_line_or_a_tool_name():
    guarded = ["치아보험 있어요?", "40세 여자 보험료 얼마예요"]
    examples = ["치매 보장 상품 찾아줘"]
    candidates = [Candidate(q, "x", "casual") for q in (
        "치아보험 있어요", "40세 여자 보험료는 얼마예요?", "치매 보장 상품 찾아 줘", "plan_options 알려줘",
        "보험료 → 계산", "", "가" * 200, "연금보험 종류 뭐 있어?", "연금보험 종류 뭐 있어 ?", "운전자보험 보장 알려줘")]
    kept, dropped = filter_candidates(candidates, guarded, examples)
    assert [c.query for c in kept] == ["연금보험 종류 뭐 있어?", "운전자보험 보장 알려줘"]
    assert dropped == {"like an evaluation query": 2, "copies a card example": 1, "names a tool": 2,
                       "empty or too long": 2, "repeats another synthetic query": 1}


def test_eval_texts_read_every_user_text_of_a_domain_folder_but_the_synthetic_one(tmp_path):
    (tmp_path / "queries").mkdir()
    (tmp_path / "queries" / "dev.jsonl").write_text(json.dumps(
        {"id": "d1", "query": "질문1", "history": [{"role": "user", "content": "앞 질문"},
                                                  {"role": "assistant", "content": "답"}]}, ensure_ascii=False) + "\n")
    (tmp_path / "rag.jsonl").write_text(json.dumps({"question": "질문2", "answer_contains": "x"}, ensure_ascii=False))
    (tmp_path / "scenarios.yaml").write_text("scenarios:\n  - turns:\n      - user: 질문3\n        facts: [a]\n")
    (tmp_path / "synthetic").mkdir()
    (tmp_path / "synthetic" / "queries.jsonl").write_text(json.dumps({"query": "합성"}, ensure_ascii=False))
    assert sorted(eval_texts(tmp_path)) == sorted(["질문1", "앞 질문", "질문2", "질문3"])


def test_the_project_eval_texts_include_the_sealed_set_and_the_dialogs():
    from toolroute.config import ROOT

    texts = set(eval_texts(ROOT / "data" / "insurance"))
    for split in ("sealed", "dialog_test", "test", "calib"):
        first = json.loads((ROOT / "data" / "insurance" / "queries" / f"{split}.jsonl").read_text(encoding="utf-8")
                           .splitlines()[0])
        assert first["query"] in texts, split


@pytest.mark.parametrize("reply, own_wins", [("A", None), ("B", None), ("답: B", None), ("잘 모르겠어요", "none")])
def test_the_pair_check_reads_the_letter_in_the_order_it_showed(reply, own_wins):
    catalog = _catalog()
    own, other = catalog.cards["premium_estimate"], catalog.cards["product_search"]
    seen = []

    def answer(messages):
        seen.append(messages[-1].content)
        return reply

    verdict = pair_check(FakeLLM(answer), "보험료 얼마야?", own, other)
    if own_wins == "none":
        assert verdict is None
        return
    shown = seen[0]
    own_is_a = shown.index(own.purpose) < shown.index(other.purpose)
    assert verdict == ((reply.strip()[-1] == "A") == own_is_a)
    assert "보험료 얼마야?" in shown and "premium_estimate" not in shown


def test_variants_take_their_parents_verdict_and_the_llm_is_asked_only_for_contested_queries():
    from toolroute_lab.studies.synthetic_queries import verdicts_for

    kept = [Candidate("보험료 얼마지", "premium", "rule:typo", "보험료 얼마야"),  # a variant before its parent
            Candidate("보험료 얼마야", "premium", "short_question"),
            Candidate("청구 서류?", "claim", "keyword"),
            Candidate("청구 서류요", "claim", "rule:ending", "청구 서류?"),
            Candidate("상품 목록 줘", "search", "rule:ending", "상품 목록"),
            Candidate("가입 가능?", "search", "casual"),
            Candidate("해지 환급금", "refund", "keyword")]
    firsts = ["claim", "claim", "premium", "premium", "premium", "search", "premium"]
    asked = []

    def ask(candidate, other):
        asked.append((candidate.query, other))
        return {"보험료 얼마야": "llm", "청구 서류?": "rejected"}.get(candidate.query)

    verdicts = verdicts_for(kept, firsts, ask, examples={"상품 목록"})
    assert sorted(asked) == sorted([("보험료 얼마야", "claim"), ("청구 서류?", "premium"), ("해지 환급금", "premium")])
    assert verdicts == {"보험료 얼마야": "llm", "보험료 얼마지": "parent", "청구 서류?": "rejected",
                        "청구 서류요": "rejected", "상품 목록 줘": "card", "가입 가능?": "router"}
