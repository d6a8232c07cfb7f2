"""Synthetic card examples (leak-filtered) and the LLM reranker, with scripted chat models."""

from __future__ import annotations

import json

from langchain_core.messages import AIMessage

from toolroute.cards.augment import augment, parse_list, prompt
from toolroute.cards import Catalog, ToolCard
from toolroute_lab.shared.saved_replies import SavedReplies, prompt_digest
from toolroute.routing.rerank import LLMReranker
from toolroute.routing.router import RouteResult


class Replies:
    """`invoke` returns the queued texts in order and keeps the prompts."""

    def __init__(self, *texts):
        self.texts, self.prompts = list(texts), []

    def invoke(self, messages):
        self.prompts.append(messages)
        return AIMessage(self.texts.pop(0))


def _catalog():
    return Catalog("demo", {
        "bus_arrival": ToolCard(name="bus_arrival", purpose="버스 도착 시간을 알려준다",
                                when_to_use=("143번 버스 언제 와", "정류장에 버스 몇 분 남았어", "막차 끊겼어?")),
        "weather_now": ToolCard(name="weather_now", purpose="지금 날씨를 알려준다",
                                when_to_use=("오늘 서울 날씨 어때", "지금 비 와?", "밖에 바람 많이 불어?")),
    }, authored=True)


def test_parse_list_finds_the_json_list_inside_prose():
    assert parse_list('네, 만들었습니다:\n```json\n["가", "나"]\n```') == ["가", "나"]
    assert parse_list("목록을 만들 수 없습니다") is None
    assert parse_list('["가", ') is None


def test_augment_keeps_new_examples_and_drops_leaks_duplicates_and_junk():
    llm = Replies(
        '["마을버스 도착 시간 알려줘", "143번 버스 언제 와?", "2번 버스 몇 정거장 남았는지 봐줘", "' + "아" * 90 + '"]',
        "죄송합니다, 목록을 만들 수 없습니다.",
    )
    eval_queries = ["2번 버스 몇 정거장 남았는지 봐 줘"]  # a test query the generator happened to echo
    augmented, report = augment(_catalog(), llm, per_card=3, eval_queries=eval_queries, progress=False)
    assert report.added["bus_arrival"] == ["마을버스 도착 시간 알려줘"]
    assert report.dropped == {"like_an_existing_example": 1, "like_an_eval_query": 1, "empty_or_long": 1}
    assert report.failures == ["weather_now"] and report.llm_calls == 2
    assert augmented.cards["bus_arrival"].when_to_use[-1] == "마을버스 도착 시간 알려줘"
    assert augmented.cards["weather_now"] == _catalog().cards["weather_now"] and augmented.name == "demo-aug"
    assert "버스 도착 시간을 알려준다" in llm.prompts[0][1].content  # the card is in the prompt
    assert report.summary()["examples_added"] == 1 and report.summary()["parse_failures"] == 1


def _result():
    return RouteResult("비 오니?", [("bus_arrival", 0.9), ("weather_now", 0.8), ("x", 0.1)], no_call=False)


def test_reranker_moves_the_picked_tools_first_and_keeps_the_rest_in_order():
    reranker = LLMReranker(Replies("[2]"), _catalog(), candidates=2)
    out = reranker.rerank(_result())
    assert out.top(3) == ["weather_now", "bus_arrival", "x"] and out.ranked[0][1] == 0.8
    assert reranker.stats.queries == 1 and reranker.stats.parse_failures == 0
    assert "1. bus_arrival: 버스 도착 시간을 알려준다" in reranker.llm.prompts[0][1].content


def test_reranker_counts_unparsable_and_out_of_range_answers_and_keeps_the_order():
    reranker = LLMReranker(Replies("날씨 도구가 맞습니다", "[7, 2, 2]", "[]"), _catalog(), candidates=2)
    assert reranker.rerank(_result()).top(2) == ["bus_arrival", "weather_now"]  # not parsed: unchanged
    assert reranker.rerank(_result()).top(2) == ["weather_now", "bus_arrival"]  # 7 ignored, repeat ignored
    assert reranker.rerank(_result()).top(2) == ["bus_arrival", "weather_now"]  # [] = none fits: unchanged
    assert (reranker.stats.parse_failures, reranker.stats.empty_answers, reranker.stats.queries) == (1, 1, 3)


def test_both_arms_run_end_to_end_with_a_model_free_llm(tmp_path, monkeypatch):
    """The wiring of the notebook's two arms (the `replay` stand-in writes nothing and reorders nothing)."""
    from toolroute_lab.e06_card_improvement.card_improvement import NoOpinionLLM, augmentation_arm, rerank_arm

    from conftest import HashEmbedder

    monkeypatch.setenv("TOOLROUTE_DATA_DIR", str(tmp_path))
    table, report, augmented = augmentation_arm(NoOpinionLLM(), per_card=2, splits=["dev"], embedder=HashEmbedder(),
                                                names=["premium_estimate", "plan_options"], progress=False)
    assert report.llm_calls == 2 and report.summary()["examples_added"] == 0
    assert list(table["arm"]) == ["authored cards", "authored + synthetic"] and table["hit@1_diff"].iloc[1] == 0
    reranked, stats = rerank_arm(NoOpinionLLM(), candidates=3, split="dev", limit=6, embedder=HashEmbedder(),
                                 progress=False)
    assert reranked["n"].eq(6).all() and reranked["hit@1"].nunique() == 1  # [] keeps the first-stage order
    assert stats.empty_answers == stats.queries and stats.queries <= 6


def test_limits_take_rows_spread_over_the_list_not_its_first_ones():
    from toolroute_lab.e06_card_improvement.card_improvement import spread

    assert spread(list(range(54)), 4) == [0, 13, 26, 39]
    assert spread(list(range(3)), 5) == [0, 1, 2]


def test_saved_replies_replay_an_interrupted_run_at_the_cost_of_the_original_calls(tmp_path):
    """07 saves each LLM reply as it arrives; a rerun replays them (same prompt, same tag) and calls only the rest."""
    path = tmp_path / "replies.partial.jsonl"
    first = SavedReplies(Replies('["마을버스 도착 시간 알려줘"]'), path, tag="model-a")
    bus_prompt = prompt(_catalog().cards["bus_arrival"], 3)
    first.invoke(bus_prompt)
    with path.open("a", encoding="utf-8") as fh:
        fh.write('{"tag": "model-a", "row": {"prompt": "cut by a ki')  # a kill mid-line loses only that line

    scripted = Replies("죄송합니다, 목록을 만들 수 없습니다.")  # only the card not yet answered calls the LLM
    resumed = SavedReplies(scripted, path, tag="model-a")
    augmented, report = augment(_catalog(), resumed, per_card=3, progress=False)
    assert (resumed.replayed, resumed.called, len(scripted.prompts)) == (1, 1, 1)
    assert report.added["bus_arrival"] == ["마을버스 도착 시간 알려줘"] and report.failures == ["weather_now"]
    assert scripted.prompts[0] != bus_prompt  # the replayed card was not asked again
    saved = first.saved.get(prompt=prompt_digest(bus_prompt))
    assert report.seconds >= saved["seconds"]  # the replayed call is counted at its original cost

    other_model = SavedReplies(Replies("[]", "[]"), path, tag="model-b")  # another LLM never takes these replies
    augment(_catalog(), other_model, per_card=3, progress=False)
    assert (other_model.replayed, other_model.called) == (0, 2)


def test_reranker_reports_a_replayed_call_at_its_recorded_seconds(tmp_path):
    path = tmp_path / "replies.partial.jsonl"
    LLMReranker(SavedReplies(Replies("[2]"), path, tag="m"), _catalog(), candidates=2).rerank(_result())
    lines = path.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[0])
    record["row"]["seconds"] = 7.5  # as if the original call had taken 7.5 s
    path.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    reranker = LLMReranker(SavedReplies(Replies(), path, tag="m"), _catalog(), candidates=2)
    assert reranker.rerank(_result()).top(2) == ["weather_now", "bus_arrival"]
    assert 7.5 <= reranker.stats.per_query_seconds[0] < 7.6
