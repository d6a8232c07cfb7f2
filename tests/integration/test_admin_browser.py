"""The admin dashboard in a real headless browser (Debian's chromium driven by Playwright), against the
served app with its live router (BM25, so no model to load): the operator types the token, runs a quick
test, adds the query as a `when_to_use` example of a tool that was not top-1, sees the quick test's top-1
become that tool, looks at the diff, rolls back and sees the old top-1 return. Then: a stale save gets
the 409 message, an invalid card its field error, an accepted failure-analysis proposal becomes a real
edit, and an unregistered tool leaves the list and the quick test. The endpoints still being written
(`/api/eval`, `/api/proposals`, module reload) are answered by the browser's own request routing, to
check how the page renders their contract and a server without them.
Set TOOLROUTE_SCREENSHOT_ADMIN=docs/img/admin.png to refresh the screenshot in the docs."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import httpx
import pytest

from toolroute.serve import ServeOptions, create_app

from fake_llm import ScriptedLLM
from serving import ThreadServer, serving_agent

pytestmark = [pytest.mark.enable_socket, pytest.mark.allow_hosts(["127.0.0.1"])]

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--headless=new", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run"]
TOKEN = "admin-browser-test-token"
QUERY = "치매보험 약관에서 면책기간 찾아줘"
TIMEOUT = 15_000  # ms, for each wait on the page

EVAL = {"split": "dev", "n": 40, "before": {"recall@k": 0.9, "hit@1": 0.7, "mrr": 0.78, "no_call_accuracy": 1.0},
        "per_tool": [{"tool": "claim_guide", "n": 3, "recall": 0.333}, {"tool": "coverage_detail", "n": 2, "recall": 1.0}],
        "failures": [{"query": "<b>청구</b> 어떻게 해?", "expected": ["claim_guide"], "got": ["claim_required_forms"]}],
        "after": None, "paired": None}


@pytest.fixture
def admin_page(tmp_path, monkeypatch):
    if not Path(CHROMIUM).exists():
        pytest.skip("chromium is not installed (apt-get install -y chromium fonts-nanum; .ci/run does it)")
    pytest.importorskip("playwright")
    monkeypatch.setenv("TOOLROUTE_ADMIN_TOKEN", TOKEN)
    # Edits, the audit log and any index stay in this test's folder (never the repo's .toolroute/).
    monkeypatch.setenv("TOOLROUTE_CARDSTORE", str(tmp_path / "cardstore"))
    monkeypatch.setenv("TOOLROUTE_DATA_DIR", str(tmp_path / "data"))
    app = create_app(agent_factory=lambda model: serving_agent(model, tmp_path / "m.sqlite"), llm=ScriptedLLM(),
                     options=ServeOptions(memory_path=tmp_path / "m.sqlite"), build_in_background=False)
    with ThreadServer(app) as server:
        assert httpx.get(f"{server.url}/readyz").status_code == 200
        yield server.url
    assert (tmp_path / "data" / "audit" / "cards.jsonl").exists()  # the writes went to the temp folder


def test_an_edit_in_the_dashboard_changes_the_quick_test_and_a_rollback_restores_it(admin_page):
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1240, "height": 900}, locale="ko-KR")
            page.set_default_timeout(TIMEOUT)
            page.goto(admin_page + "/admin/tools")
            expect(page.locator("h1")).to_contain_text("도구 관리")
            expect(page.locator("#stat-tools")).to_have_text("54")
            expect(page.locator("#stat-status")).to_have_text("정상")
            assert TOKEN not in page.content()

            # Quick test: the top-1 before any edit, and a tool that was not top-1.
            page.fill("#query", QUERY)
            page.click("#route")
            rows = page.locator("#ranking tr")
            expect(rows).to_have_count(5)
            before, target = rows.nth(0).get_attribute("data-name"), rows.nth(1).get_attribute("data-name")
            assert before != target

            # Pick the target through the filtered tool list; add the query as an example.
            page.fill("#filter", target)
            expect(page.locator("#tools li")).to_have_count(1)
            page.click(f'#tools li[data-name="{target}"]')
            expect(page.locator("#card-title")).to_have_text(f"카드 편집: {target}")
            examples = page.input_value("#when_to_use")
            page.fill("#when_to_use", examples + "\n" + QUERY)
            page.fill("#message", "면책기간 질문은 이 도구로")
            page.click("#save")  # no token yet: refused, nothing saved
            expect(page.locator("#card-msg")).to_contain_text("관리자 토큰이 올바르지 않습니다")
            page.fill("#token", TOKEN)
            page.click("#token-save")
            expect(page.locator("#token-state")).to_contain_text("토큰 적용됨")
            page.click("#save")
            expect(page.locator("#card-msg")).to_contain_text("저장했습니다: 카드 버전 1")
            expect(rows.nth(0)).to_have_attribute("data-name", target)  # the quick test, rerun after the save
            page.click("#route")
            expect(rows.nth(0)).to_have_attribute("data-name", target)
            expect(page.locator("#stat-version")).to_have_text("1")

            # History and diff.
            expect(page.locator("#history tr")).to_have_count(2)
            page.click('#history tr[data-version="1"] button.diff')
            expect(page.locator("#diff")).to_contain_text(f"+ {QUERY}")
            shot = os.environ.get("TOOLROUTE_SCREENSHOT_ADMIN")
            if shot:
                page.screenshot(path=shot, full_page=True)

            # Roll back to the YAML card: the old top-1 returns.
            page.click('#history tr[data-version="0"] button.rollback')
            expect(page.locator("#card-msg")).to_contain_text("버전 0(으)로 되돌렸습니다")
            expect(rows.nth(0)).to_have_attribute("data-name", before)
            assert QUERY not in page.input_value("#when_to_use")

            # Someone else edits the card meanwhile: the page's save gets the 409 message and a reload button.
            card = httpx.get(f"{admin_page}/api/tools/{target}").json()
            other = httpx.put(f"{admin_page}/api/tools/{target}/card", json={"tags": [*card["card"]["tags"], "다른사람"]},
                              headers={"If-Match": str(card["version"]), "Authorization": f"Bearer {TOKEN}"})
            assert other.status_code == 200
            page.fill("#purpose", page.input_value("#purpose") + " (수정)")
            page.click("#save")
            expect(page.locator("#card-msg")).to_contain_text("다른 사람이 이 카드를 먼저 수정했습니다")
            page.click("#reload-card")
            expect(page.locator("#tags")).to_have_value(", ".join([*card["card"]["tags"], "다른사람"]))

            # Batch recall in the shape of the contract (answered by the browser), and a missing endpoint.
            page.route("**/api/eval", lambda route: route.fulfill(status=200, content_type="application/json",
                                                                  body=json.dumps(EVAL, ensure_ascii=False)))
            page.route("**/api/proposals", lambda route: route.fulfill(status=404, content_type="application/json",
                                                                       body='{"detail": "Not Found"}'))
            page.click("#eval")
            expect(page.locator("#eval-msg")).to_contain_text("질문 40개")
            expect(page.locator("#eval-result")).to_contain_text("0.900")
            expect(page.locator("#eval-result")).to_contain_text("<b>청구</b> 어떻게 해?")  # as text, not markup
            page.click("#proposals")
            expect(page.locator("#eval-msg")).to_have_text("이 서버에서는 사용할 수 없는 기능입니다.")
            page.route("**/api/tools/reload-module/**", lambda route: route.fulfill(status=405, content_type="application/json",
                                                                                body='{"detail": "Method Not Allowed"}'))
            page.fill("#module", "underwriting")
            page.click("#module-form button")
            expect(page.locator("#module-msg")).to_have_text("이 서버에서는 사용할 수 없는 기능입니다.")

            # A failure-analysis proposal accepted: its line is appended to the card field (a real PUT).
            line = "면책기간이 아니라 보장 제외 사유를 물으면 → underwriting_exclusions"
            proposal = [{"tool": target, "field": "when_not_to_use", "line": line, "diff": [f"  + {line}"],
                         "effect": {"before": {"recall@k": 0.8}, "after": {"recall@k": 0.85}}}]
            page.unroute("**/api/proposals")
            page.route("**/api/proposals", lambda route: route.fulfill(status=200, content_type="application/json",
                                                                       body=json.dumps(proposal, ensure_ascii=False)))
            page.click("#proposals")
            item = page.locator(".proposal")
            expect(item).to_have_count(1)
            item.locator("button", has_text="채택").click()
            expect(item.locator(".msg")).to_contain_text("채택했습니다")
            assert line in httpx.get(f"{admin_page}/api/tools/{target}").json()["card"]["when_not_to_use"]
            expect(page.locator("#when_not_to_use")).to_have_value(re.compile(re.escape(line)))

            # An invalid card: the field error is shown, nothing saved.
            version = page.locator("#stat-version").inner_text()
            page.fill("#purpose", " ")
            page.click("#save")
            expect(page.locator("#card-msg")).to_contain_text("입력 오류")
            expect(page.locator("#card-msg")).to_contain_text("purpose")
            expect(page.locator("#stat-version")).to_have_text(version)

            # Unregister: enabled only by the tool's exact name; the quick test never returns it after.
            page.fill("#confirm-name", target[:-1])
            expect(page.locator("#unregister")).to_be_disabled()
            page.fill("#confirm-name", target)
            page.click("#unregister")
            expect(page.locator("#card-title")).to_have_text(f"등록 해제했습니다: {target} (남은 벡터 0개)")
            expect(page.locator("#stat-tools")).to_have_text("53")
            page.fill("#filter", "")
            expect(page.locator(f'#tools li[data-name="{target}"]')).to_have_count(0)
            page.click("#route")
            expect(rows.nth(0)).to_have_attribute("data-name", before)
            expect(page.locator(f'#ranking tr[data-name="{target}"]')).to_have_count(0)
        finally:
            browser.close()
