"""The CLI contract (DESIGN.md) and its bad-input behaviour: one clear message, exit status 2."""

import json

import pytest

from toolroute.cli import main
from toolroute.config import toolcards_dir
from toolroute.routing.history import resolve_history_arm

SMALL = [
    {"id": "s1", "query": "첫날부터암보험 50세 남자 한 달 보험료 계산", "expected_tools": ["premium_estimate"]},
    {"id": "s2", "query": "해지된 계약 되살리려면 어떤 조건이 필요해요", "expected_tools": ["underwriting_reinstatement_rule"]},
    {"id": "s3", "query": "고객 계약 조회하고 추가 가입 가능한지 봐줘",
     "expected_tools": ["customer_contract_lookup", "duplicate_enrollment_check"]},
    {"id": "s4", "query": "주말에 갈 만한 캠핑장 추천해줘", "expected_tools": []},
]


@pytest.fixture
def small_queries(tmp_path):
    path = tmp_path / "small.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in SMALL), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def state_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("state")  # one index for the module: built once, reused


@pytest.fixture(autouse=True)
def isolated_index(state_dir, monkeypatch):
    monkeypatch.setenv("TOOLROUTE_DATA_DIR", str(state_dir))


def test_eval_retrieval_json_contract(small_queries, capsys):
    assert main(["eval-retrieval", "--queries", str(small_queries), "--k", "1,3,5", "--json", "--no-ci"]) == 0
    report = json.loads(capsys.readouterr().out)
    for key in ["n", "n_call", "n_no_call", "recall@1", "recall@3", "recall@5", "mrr", "hit@1",
                "no_call_accuracy", "threshold", "per_query"]:
        assert key in report
    assert (report["n"], report["n_call"], report["n_no_call"]) == (4, 3, 1)
    row = report["per_query"][0]
    assert set(row) >= {"id", "expected", "ranked", "scores", "no_call_predicted"}
    assert "premium_estimate" in row["ranked"][:3]
    assert report["threshold"] is not None  # fitted on the domain's dev split


def test_eval_retrieval_text_output_and_strategy_options(small_queries, capsys):
    code = main(["eval-retrieval", "--queries", str(small_queries), "--strategy", "single", "--arm", "dense",
                 "--fields", "purpose,when_to_use,tags,when_not_to_use", "--no-ci"])
    out = capsys.readouterr().out
    assert code == 0 and "recall@5" in out and "strategy=single+wnu/top2" in out


def test_route_json(capsys):
    assert main(["route", "40세 여성 치매보험 월 보험료", "--k", "3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["tools"]) == 3 and isinstance(out["no_call"], bool)


def test_external_catalogue_of_openai_schemas(tmp_path, capsys):
    tools = [{"type": "function", "function": {"name": "get_weather", "description": "Current weather in a city",
                                                 "parameters": {"type": "object", "properties": {"city": {}}}}},
             {"type": "function", "function": {"name": "send_email", "description": "Send an e-mail to someone"}}]
    (tmp_path / "tools.json").write_text(json.dumps(tools))
    (tmp_path / "q.jsonl").write_text(json.dumps({"id": "e1", "query": "what's the weather in Paris",
                                                  "expected_tools": ["get_weather"]}))
    assert main(["eval-retrieval", "--queries", str(tmp_path / "q.jsonl"), "--catalog", str(tmp_path / "tools.json"),
                 "--json", "--no-ci", "--k", "1"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["recall@1"] == 1.0 and report["threshold"] is None  # no dev split for this catalogue


@pytest.mark.parametrize("setup, expected", [
    (lambda d: (d / "q.jsonl").write_text(""), "no queries in file"),
    (lambda d: (d / "q.jsonl").write_text('{"id": "z9", "query": "x", "expected_tools": ["nope"]}'), "id 'z9': unknown tool 'nope'"),
])
def test_bad_query_file_exits_2(tmp_path, capsys, setup, expected):
    setup(tmp_path)
    assert main(["eval-retrieval", "--queries", str(tmp_path / "q.jsonl")]) == 2
    assert expected in capsys.readouterr().err


def test_bad_catalogues_exit_2(tmp_path, small_queries, capsys):
    (tmp_path / "schemas.json").write_text('{"tools": []}')
    assert main(["eval-retrieval", "--queries", str(small_queries), "--catalog", str(tmp_path / "schemas.json")]) == 2
    assert "expected a non-empty JSON list" in capsys.readouterr().err
    cards = tmp_path / "cards"
    cards.mkdir()
    (cards / "bad.yaml").write_text("cards:\n  - name: a\n    purpose: [unclosed\n")
    assert main(["cards", "validate", str(cards)]) == 2
    assert "bad.yaml line" in capsys.readouterr().err


def test_cards_validate_ok(capsys):
    assert main(["cards", "validate", str(toolcards_dir("insurance"))]) == 0
    assert "54 cards" in capsys.readouterr().out


def test_bad_k_exits_2(small_queries, capsys):
    assert main(["eval-retrieval", "--queries", str(small_queries), "--k", "a,b"]) == 2
    assert "--k must be" in capsys.readouterr().err


DIALOG = [
    {"id": "h0", "query": "첫날부터암보험 50세 남자 한 달 보험료 계산", "expected_tools": ["premium_estimate"]},
    {"id": "h1", "query": "그럼 아내 기준으로는요?", "expected_tools": ["premium_estimate"],
     "history": [{"role": "user", "content": "실속치매보험 55세 남성 월 보험료 알려줘"},
                 {"role": "assistant", "content": "월 3만 원대입니다."}]},
]


@pytest.fixture
def dialog_queries(tmp_path):
    path = tmp_path / "dialog.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in DIALOG), encoding="utf-8")
    return path


@pytest.mark.parametrize("arm", ["auto", "none", "carry", "weighted", "carry+weighted"])
def test_eval_retrieval_json_routes_history_rows_by_the_arm(dialog_queries, capsys, arm):
    assert main(["eval-retrieval", "--queries", str(dialog_queries), "--json", "--no-ci", "--k", "1,5",
                 "--history-arm", arm]) == 0
    report = json.loads(capsys.readouterr().out)
    expected = resolve_history_arm(arm, has_carry=True)
    assert (report["n"], report["n_history"], report["history_arm"]) == (2, 1, expected)
    plain, followup = report["per_query"]
    assert "history" not in plain and followup["history"]["arm"] == expected and followup["history"]["turns"] == 2
    routed = followup["history"]["routed"]
    assert (len(routed) > 1) == ("weighted" in expected)
    assert ("(" in routed[0][0] and "실속치매보험" in routed[0][0]) == ("carry" in expected)  # the carried context


def test_eval_retrieval_without_history_rows_keeps_the_contract(small_queries, capsys):
    assert main(["eval-retrieval", "--queries", str(small_queries), "--json", "--no-ci", "--history-arm", "weighted"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert "history_arm" not in report and all("history" not in r for r in report["per_query"])


def test_route_with_history_from_json_text_and_from_a_file(tmp_path, capsys):
    history = DIALOG[1]["history"]
    assert main(["route", "그럼 아내 기준으로는요?", "--history", json.dumps(history, ensure_ascii=False), "--json"]) == 0
    from_text = json.loads(capsys.readouterr().out)
    (tmp_path / "h.json").write_text(json.dumps(DIALOG[1], ensure_ascii=False), encoding="utf-8")  # a whole eval row
    assert main(["route", "그럼 아내 기준으로는요?", "--history", str(tmp_path / "h.json"), "--json"]) == 0
    from_file = json.loads(capsys.readouterr().out)
    assert from_text == from_file and from_text["history"]["turns"] == 2
    assert from_text["query"] == "그럼 아내 기준으로는요?" and "premium_estimate" in [t["name"] for t in from_text["tools"][:3]]
    assert main(["route", "그럼 아내 기준으로는요?", "--history", json.dumps(history), "--history-arm", "none", "--json"]) == 0
    alone = json.loads(capsys.readouterr().out)
    assert main(["route", "그럼 아내 기준으로는요?", "--json"]) == 0
    assert {**alone, "history": None} == {**json.loads(capsys.readouterr().out), "history": None}
    assert main(["route", "그럼 아내 기준으로는요?", "--history", json.dumps(history)]) == 0
    assert "history arm" in capsys.readouterr().out


@pytest.mark.parametrize("value, expected", [
    ('[{"role": "system", "content": "x"}]', "--history: 'history[0]'.role must be 'user' or 'assistant', got 'system'"),
    ('{"role": "user", "content": "x"}', "--history: 'history' must be a list of"),
    ('[{"role": "user", "content": 3}]', "'history[0]'.content must be a string, got a number"),
    ("이전 대화", "--history: neither a readable JSON file nor JSON text"),
])
def test_route_with_bad_history_exits_2(capsys, value, expected):
    assert main(["route", "그럼요?", "--history", value]) == 2
    assert expected in capsys.readouterr().err


def test_route_with_a_catalogue_without_pack_refuses_carry(tmp_path, capsys):
    tools = [{"type": "function", "function": {"name": "get_weather", "description": "Current weather in a city"}},
             {"type": "function", "function": {"name": "send_email", "description": "Send an e-mail to someone"}}]
    (tmp_path / "tools.json").write_text(json.dumps(tools))
    history = json.dumps([{"role": "user", "content": "what's the weather in Paris"}, {"role": "assistant", "content": "Sunny."}])
    args = ["route", "and tomorrow?", "--catalog", str(tmp_path / "tools.json"), "--history", history, "--json"]
    assert main(args + ["--history-arm", "carry"]) == 2
    assert "needs a domain pack" in capsys.readouterr().err
    assert main(args) == 0  # auto: the weighted arm alone
    out = json.loads(capsys.readouterr().out)
    assert out["history"]["arm"] == "weighted" and out["tools"][0]["name"] == "get_weather"


def test_eval_retrieval_names_file_row_and_field_of_a_bad_history(tmp_path, capsys):
    (tmp_path / "q.jsonl").write_text(json.dumps({"id": "z1", "query": "그럼요?", "expected_tools": [],
                                                  "history": [{"role": "bot", "content": "x"}]}))
    assert main(["eval-retrieval", "--queries", str(tmp_path / "q.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "q.jsonl:1 id 'z1': 'history[0]'.role must be 'user' or 'assistant', got 'bot'" in err
