"""`toolroute cards expand`: generated examples, the cache, human cards kept, broken replies per tool,
bad catalogues refused, and the folder usable as `--catalog DIR` (a scripted LLM; no network)."""

import json
import re
import shutil

import pytest

from fake_llm import ScriptedLLM
from toolroute import cli
from toolroute.cards import CatalogError, load_catalog
from toolroute.config import ROOT
from toolroute.cards.expand import BrokenReply, expand, expand_prompt, examples_from_reply
from toolroute.routing import RouterConfig, build_router

TOOLS = {
    "weather_now": "도시의 현재 날씨와 기온을 조회한다.",
    "bus_arrival": "정류장에 도착할 버스와 남은 시간을 조회한다.",
    "restaurant_book": "식당 예약을 날짜·시간·인원으로 잡는다.",
}
EXAMPLES = {
    "weather_now": ["부산 지금 비 와?", "서울 기온 몇 도야", "제주 날씨 알려줘", "대전 지금 맑아?"],
    "bus_arrival": ["강남역 버스 언제 와?", "시청 정류장 버스 몇 분 남았어", "472번 도착 시간", "집 앞 버스 곧 와?"],
    "restaurant_book": ["금요일 7시 4명 예약해줘", "내일 점심 두 명 자리 잡아줘", "토요일 저녁 6인 예약", "오늘 8시 한 명 예약"],
}


def schema_file(path, tools=TOOLS):
    items = [{"type": "function", "function": {"name": n, "description": d,
                                               "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}}
             for n, d in tools.items()]
    path.write_text(json.dumps(items, ensure_ascii=False), encoding="utf-8")
    return path


def tool_of(messages):
    return re.search(r"^(?:도구|Tool): (\S+)", messages[1].content, re.M).group(1)


def good_reply(messages, tools):
    return "예시입니다:\n" + json.dumps(EXAMPLES[tool_of(messages)], ensure_ascii=False)


def scripted(*replies):
    return ScriptedLLM(replies=list(replies), calls=[], bound=[])


def never():
    raise AssertionError("the LLM was called although every reply is cached")


def test_examples_are_written_cached_and_a_rerun_calls_no_llm(tmp_path):
    catalog = schema_file(tmp_path / "tools.json")
    llm = scripted(*[good_reply] * 3)
    report = expand(catalog, tmp_path / "cards", llm, "test-model", per_tool=4, progress=False)
    assert report.written == list(TOOLS) and report.llm_calls == 3 and not report.failures
    cards = load_catalog(tmp_path / "cards")
    assert {name: list(card.when_to_use) for name, card in cards.cards.items()} == EXAMPLES
    assert cards.cards["weather_now"].purpose == TOOLS["weather_now"]
    before = {p.name: p.read_text(encoding="utf-8") for p in (tmp_path / "cards").glob("*.yaml")}

    again = expand(catalog, tmp_path / "cards", never, "test-model", per_tool=4, progress=False)
    assert again.llm_calls == 0 and again.from_cache == list(TOOLS)
    assert {p.name: p.read_text(encoding="utf-8") for p in (tmp_path / "cards").glob("*.yaml")} == before


def test_a_changed_schema_or_model_is_asked_again_and_only_that(tmp_path):
    expand(schema_file(tmp_path / "tools.json"), tmp_path / "cards", scripted(*[good_reply] * 3), "m1",
           per_tool=4, progress=False)
    changed = schema_file(tmp_path / "tools.json", {**TOOLS, "bus_arrival": "버스 도착 정보를 알려준다."})
    llm = scripted(good_reply)
    report = expand(changed, tmp_path / "cards", llm, "m1", per_tool=4, progress=False)
    assert report.llm_calls == 1 and [tool_of(c["messages"]) for c in llm.calls] == ["bus_arrival"]
    other_model = expand(changed, tmp_path / "cards", scripted(*[good_reply] * 3), "m2", per_tool=4, progress=False)
    assert other_model.llm_calls == 3


def test_a_human_card_is_never_overwritten(tmp_path):
    out = tmp_path / "cards"
    out.mkdir()
    human = ("module: mine\ncards:\n  - name: weather_now\n    purpose: 사람이 쓴 날씨 카드\n"
             "    when_to_use: ['우산 챙겨야 해?', '오늘 더워?', '밖에 바람 세?']\n")
    (out / "mine.yaml").write_text(human, encoding="utf-8")
    llm = scripted(*[good_reply] * 2)
    report = expand(schema_file(tmp_path / "tools.json"), out, llm, "m", per_tool=4, progress=False)
    assert report.kept_human == ["weather_now"] and "kept weather_now" in report.text()
    assert sorted(tool_of(c["messages"]) for c in llm.calls) == ["bus_arrival", "restaurant_book"]
    assert (out / "mine.yaml").read_text(encoding="utf-8") == human and not (out / "weather_now.yaml").exists()
    assert load_catalog(out).cards["weather_now"].purpose == "사람이 쓴 날씨 카드"

    # a generated card edited by hand becomes the person's: the rerun keeps the edit
    edited = (out / "bus_arrival.yaml").read_text(encoding="utf-8").replace("472번 도착 시간", "472번 언제 와")
    (out / "bus_arrival.yaml").write_text(edited, encoding="utf-8")
    again = expand(tmp_path / "tools.json", out, never, "m", per_tool=4, progress=False)
    assert again.kept_human == ["weather_now", "bus_arrival"]
    assert (out / "bus_arrival.yaml").read_text(encoding="utf-8") == edited


@pytest.mark.parametrize("reply, why", [
    ("죄송하지만 도와드릴 수 없습니다.", "not a JSON list"),
    ("[]", "empty list"),
    ('[{"q": "부산 날씨"}, {"q": "서울 기온"}]', "holds no strings"),
    ('["부산 지금 비 와?", "부산 지금 비 와?", "부산 지금 비와"]', "duplicates"),
    (json.dumps([TOOLS["weather_now"]] * 2 + ["서울 기온 몇 도야"], ensure_ascii=False), "copies the description"),
])
def test_broken_replies_say_why(reply, why):
    with pytest.raises(BrokenReply, match=why):
        examples_from_reply(reply, TOOLS["weather_now"], 4)


def test_requests_grouped_in_lists_are_taken_one_by_one():
    reply = '```json\n[["부산 지금 비 와?", "서울 기온 몇 도야"], ["제주 날씨 알려줘"], "대전 지금 맑아?"]\n```'
    assert examples_from_reply(reply, TOOLS["weather_now"], 4) == EXAMPLES["weather_now"]


def test_a_broken_reply_fails_its_tool_by_name_and_keeps_the_others(tmp_path):
    catalog = schema_file(tmp_path / "tools.json")
    # weather: fine; bus: broken twice (asked once more with the reason); restaurant: fine on the second try
    llm = scripted(good_reply, "모르겠어요", '["강남역"]', "[]", good_reply)
    report = expand(catalog, tmp_path / "cards", llm, "m", per_tool=4, progress=False)
    assert list(report.failures) == ["bus_arrival"] and "not a JSON list" not in report.failures["bus_arrival"]
    assert "only 1 usable request(s)" in report.failures["bus_arrival"]
    assert "FAILED bus_arrival" in report.text() and report.llm_calls == 5
    assert "empty list" in llm.calls[-1]["messages"][-1].content  # the retry says what was wrong
    cards = load_catalog(tmp_path / "cards")  # the folder still loads: the failed tool keeps its description
    assert cards.cards["bus_arrival"].when_to_use == () and cards.cards["bus_arrival"].purpose == TOOLS["bus_arrival"]
    assert list(cards.cards["restaurant_book"].when_to_use) == EXAMPLES["restaurant_book"]
    # the rerun asks only the failed tool again
    llm = scripted(good_reply)
    again = expand(catalog, tmp_path / "cards", llm, "m", per_tool=4, progress=False)
    assert not again.failures and [tool_of(c["messages"]) for c in llm.calls] == ["bus_arrival"]


def test_a_failed_call_costs_its_tool_only_and_the_rerun_asks_it_again(tmp_path):
    llm = scripted(good_reply, RuntimeError("the LLM server went away"), good_reply)
    report = expand(schema_file(tmp_path / "tools.json"), tmp_path / "cards", llm, "m", per_tool=4, progress=False)
    assert report.failures == {"bus_arrival": "the LLM call failed: RuntimeError: the LLM server went away"}
    assert sorted(p.stem for p in (tmp_path / "cards").glob("*.yaml")) == sorted(TOOLS)
    again = expand(tmp_path / "tools.json", tmp_path / "cards", scripted(good_reply), "m", per_tool=4, progress=False)
    assert again.from_cache == ["weather_now", "restaurant_book"] and again.llm_calls == 1 and not again.failures


def test_the_expanded_folder_routes_through_the_cli(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("toolroute.llm.chat_model", lambda **kw: scripted(*[good_reply] * 3))
    catalog = schema_file(tmp_path / "tools.json")
    assert cli.main(["cards", "expand", "--catalog", str(catalog), "--per-tool", "4", "--quiet"]) == 0
    out = tmp_path / "tools_cards"
    assert "3 card(s) written" in capsys.readouterr().out
    router = build_router(RouterConfig(catalog=str(out), arm="bm25"), progress=False)
    assert router.route("472번 버스 몇 분 남았어").ranked[0][0] == "bus_arrival"
    assert cli.main(["route", "금요일 저녁 4명 예약", "--catalog", str(out), "--arm", "bm25", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["tools"][0]["name"] == "restaurant_book"


def test_the_cli_exits_1_naming_a_failed_tool(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("toolroute.llm.chat_model", lambda **kw: scripted(good_reply, "x", "y", good_reply))
    assert cli.main(["cards", "expand", "--catalog", str(schema_file(tmp_path / "tools.json")), "--quiet"]) == 1
    assert "bus_arrival" in capsys.readouterr().err


@pytest.mark.parametrize("content, expected", [
    ([], "non-empty JSON list"),
    ([{"type": "function", "function": {"name": "a", "description": "x"}}] * 2, "duplicate tool name 'a'"),
    ([{"type": "function", "function": {"name": "b", "description": "  "}}], "('b'): field 'description' is empty"),
])
def test_bad_catalogues_are_refused_naming_the_tool(tmp_path, monkeypatch, capsys, content, expected):
    monkeypatch.setattr("toolroute.llm.chat_model", lambda **kw: never())
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(content), encoding="utf-8")
    with pytest.raises(CatalogError, match=re.escape(expected)):
        expand(path, tmp_path / "cards", never, "m", progress=False)
    assert cli.main(["cards", "expand", "--catalog", str(path)]) == 2
    assert expected in capsys.readouterr().err


def test_a_folder_is_not_a_schema_file(tmp_path, capsys):
    assert cli.main(["cards", "expand", "--catalog", str(tmp_path)]) == 2
    assert "JSON file of OpenAI tool schemas" in capsys.readouterr().err


def test_the_prompt_is_in_the_catalogues_language():
    schema = {"name": "get_weather", "description": "Get the weather of a city.",
              "parameters": {"properties": {"city": {"type": "string", "description": "the city"}}}}
    english = expand_prompt("get_weather", schema, 5, "en")[1].content
    assert "Write 5 requests" in english and "- city: the city" in english
    assert "사용자 요청 문장을 5개" in expand_prompt("get_weather", schema, 5, "ko")[1].content


@pytest.mark.parametrize("domain", ["threat", "bfcl"])  # plant: not generated yet (see docs/results.md)
def test_the_committed_measurement_cards_are_complete_and_replay_from_their_cache(domain, tmp_path):
    """results/cards_expand/<domain>: every tool of tools.json has a generated card, and a rerun of
    `cards expand` on a copy asks the LLM only for the tools it failed on (the committed cache covers
    every other card of the measurement) and leaves every card as it was."""
    folder = ROOT / "results" / "cards_expand" / domain
    names = [t["function"]["name"] for t in json.loads((folder / "tools.json").read_text(encoding="utf-8"))]
    cards = load_catalog(folder / "cards")
    assert sorted(cards.names) == sorted(names)
    shutil.copytree(folder / "cards", tmp_path / "cards")
    model_id = "embedded:qwen2.5-coder-1.5b-instruct-q4_k_m.gguf:cc324af070c2|t=0.7|seed=7"
    failed = sorted(card.name for card in cards if not card.when_to_use)
    broken = scripted(*["no list"] * 2 * len(failed))
    report = expand(folder / "tools.json", tmp_path / "cards", broken, model_id, per_tool=6, progress=False)
    assert sorted(report.from_cache) == sorted(set(names) - set(failed)) and sorted(report.failures) == failed
    assert {p.name: p.read_text(encoding="utf-8") for p in (tmp_path / "cards").glob("*.yaml")} == \
           {p.name: p.read_text(encoding="utf-8") for p in (folder / "cards").glob("*.yaml")}
