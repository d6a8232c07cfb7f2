"""The admin dashboard in a real headless browser (Debian's chromium driven by Playwright), against the
served app with its live router (BM25, so no model to load): the operator types the token, runs a quick
test, adds the query as a `when_to_use` example of a tool that was not top-1, sees the quick test's top-1
become that tool, looks at the diff, rolls back and sees the old top-1 return. Then: a stale save gets
the 409 message; batch recall on the dev split (the real `/api/eval`); failure analysis on tune (the
real `/api/proposals`, the served LLM scripted to answer with a JSON proposal, or with none: a skipped
proposal and its reason), one proposal accepted from the page (the card's version goes up), a stale
one refused with the 409 message; batch recall again, beside the first run; a module reload
(`premium`, re-imported for real); an invalid card's field error; an unregistered tool leaving the
list and the quick test, and registered back from a second tab that got the token from the first.
Only "not available on this server" is answered by the browser (a 405).
Set TOOLROUTE_SCREENSHOT_ADMIN=docs/img/admin.png to refresh the screenshot in the docs."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import httpx
import pytest

from toolroute.config import queries_path
from toolroute.domains.insurance.tools import premium
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
PROPOSED_LINE = "고객이 상품 코드나 고객 번호를 대며 같은 내용을 다른 말로 묻는 경우"  # what the scripted LLM proposes


def propose_for_the_expected_tool(messages, tools) -> str:
    """The scripted LLM's answer to a failure-analysis prompt: a JSON proposal of one `when_to_use`
    line for the card the prompt shows as expected (so it fits whichever groups the router fails)."""
    tool = re.search(r"기대한 도구의 카드:\n\[(\w+)\]", messages[-1].content).group(1)
    return json.dumps({"tool": tool, "field": "when_to_use", "line": PROPOSED_LINE}, ensure_ascii=False)


@pytest.fixture
def admin_page(tmp_path, monkeypatch):
    if not Path(CHROMIUM).exists():
        pytest.skip("chromium is not installed (apt-get install -y chromium fonts-nanum; .ci/run does it)")
    pytest.importorskip("playwright")
    monkeypatch.setenv("TOOLROUTE_ADMIN_TOKEN", TOKEN)
    # Edits, the audit log and any index stay in this test's folder (never the repo's .toolroute/).
    monkeypatch.setenv("TOOLROUTE_CARDSTORE", str(tmp_path / "cardstore"))
    monkeypatch.setenv("TOOLROUTE_DATA_DIR", str(tmp_path / "data"))
    # The served LLM answers the failure analysis's three calls: a proposal, no JSON (skipped), a proposal.
    llm = ScriptedLLM(replies=[propose_for_the_expected_tool, "제안할 것이 없습니다.", propose_for_the_expected_tool])
    app = create_app(agent_factory=lambda model: serving_agent(model, tmp_path / "m.sqlite"), llm=llm,
                     options=ServeOptions(memory_path=tmp_path / "m.sqlite"), build_in_background=False)
    with ThreadServer(app) as server:
        assert httpx.get(f"{server.url}/readyz").status_code == 200
        yield server.url
    audit = (tmp_path / "data" / "audit" / "cards.jsonl").read_text(encoding="utf-8")  # the writes went to the temp folder
    assert '"action": "reload_module"' in audit and len(llm.calls) == 3


def test_an_edit_in_the_dashboard_changes_the_quick_test_and_a_rollback_restores_it(admin_page):
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            context = browser.new_context(viewport={"width": 1240, "height": 900}, locale="ko-KR")
            page = context.new_page()
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
            page.fill("#token", TOKEN + "x")  # a wrong token is found when it is applied, not on the next save
            page.click("#token-save")
            expect(page.locator("#token-state")).to_have_text("토큰이 올바르지 않습니다")
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

            # History times are local (Korean format), the stored UTC time on hover.
            when = page.locator('#history tr[data-version="1"] td.time')
            assert re.match(r"\d{4}\. \d{1,2}\. \d{1,2}\.", when.text_content()), when.text_content()
            assert when.get_attribute("title").endswith(("Z", "+00:00", "+0000"))

            # Roll back to the YAML card, after a confirmation (dismissed once: nothing happens); the old top-1 returns.
            dialogs = []
            page.once("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.click('#history tr[data-version="0"] button.rollback')
            expect(page.locator("#history tr")).to_have_count(2)
            assert dialogs and "버전 0(으)로 되돌릴까요" in dialogs[0]
            page.once("dialog", lambda d: d.accept())
            page.click('#history tr[data-version="0"] button.rollback')
            expect(page.locator("#card-msg")).to_contain_text("버전 0(으)로 되돌렸습니다")
            expect(rows.nth(0)).to_have_attribute("data-name", before)
            assert QUERY not in page.input_value("#when_to_use")

            # Someone else edits the card meanwhile: the page's save gets the 409 message, the difference
            # between their version and this edit, and re-applies the edit on theirs at a click.
            card = httpx.get(f"{admin_page}/api/tools/{target}").json()
            other = httpx.put(f"{admin_page}/api/tools/{target}/card", json={"tags": [*card["card"]["tags"], "다른사람"]},
                              headers={"If-Match": str(card["version"]), "Authorization": f"Bearer {TOKEN}"})
            assert other.status_code == 200
            purpose = page.input_value("#purpose") + " (수정)"
            page.fill("#purpose", purpose)
            page.click("#save")
            expect(page.locator("#card-msg")).to_contain_text("다른 사람이 이 카드를 먼저 수정했습니다")
            expect(page.locator("#conflict")).to_be_visible()
            expect(page.locator("#conflict-version")).to_have_text(str(card["version"] + 1))
            expect(page.locator("#conflict-diff .add")).to_have_text([f"+ {purpose}"])
            if os.environ.get("TOOLROUTE_SCREENSHOTS"):
                page.locator("#conflict").scroll_into_view_if_needed()
                page.screenshot(path=os.path.join(os.environ["TOOLROUTE_SCREENSHOTS"], "admin-conflict.png"))
            page.click("#reapply")
            expect(page.locator("#card-msg")).to_contain_text("최신 카드에 다시 적용했습니다")
            expect(page.locator("#tags")).to_have_value(", ".join([*card["card"]["tags"], "다른사람"]))
            expect(page.locator("#purpose")).to_have_value(purpose)
            expect(page.locator("#conflict")).to_be_hidden()

            # Batch recall on the dev split: the live router's figures, as the API gives them.
            page.fill("#filter", "")
            page.click("#eval")
            n_dev = len(queries_path("insurance", "dev").read_text(encoding="utf-8").splitlines())
            expect(page.locator("#eval-msg")).to_contain_text(f"dev 분할 질문 {n_dev}개, k=5")
            assert httpx.post(f"{admin_page}/api/eval", json={"split": "dev", "k": 5}, timeout=15).status_code == 401
            first = httpx.post(f"{admin_page}/api/eval", json={"split": "dev", "k": 5}, timeout=15,
                               headers={"Authorization": f"Bearer {TOKEN}"}).json()  # the page sent its token
            metrics = page.locator("#eval-result table.metrics")
            expect(metrics.locator("tr")).to_have_count(2, timeout=60_000)
            expect(metrics).to_contain_text("Recall@5")
            expect(metrics.locator("tr").nth(1)).to_contain_text(f"{first['before']['recall@5']:.3f}")
            expect(metrics.locator("tr").nth(1)).to_contain_text(f"{first['before']['hit@1']:.3f}")
            expect(page.locator("#eval-result table.per-tool")).to_contain_text(first["per_tool"][0]["tool"])
            expect(page.locator("#eval-result table.failures")).to_contain_text(first["failures"][0]["query"])

            # Failure analysis on tune: two proposals measured (the paired CI), one skipped with its reason.
            page.click("#proposals")
            expect(page.locator("#eval-msg")).to_contain_text("수정안 2건, 건너뜀 1건", timeout=120_000)
            expect(page.locator(".proposal")).to_have_count(3)
            skipped = page.locator(".proposal.skipped")
            expect(skipped.locator(".reason")).to_have_text("건너뜀: LLM 답에 수정안(JSON)이 없습니다")
            expect(skipped.locator("button")).to_have_count(0)
            usable = page.locator(".proposal:not(.skipped)")
            expect(usable.first.locator("table.effect")).to_contain_text("95% 신뢰구간")
            accepted, stale = usable.nth(0).get_attribute("data-tool"), usable.nth(1).get_attribute("data-tool")
            expect(usable.nth(0)).to_contain_text(f"+ {PROPOSED_LINE}")

            # Accept the first from the page: the card's version goes up and it has the line.
            version = httpx.get(f"{admin_page}/api/tools/{accepted}").json()["version"]
            usable.nth(0).locator("button", has_text="채택").click()
            expect(usable.nth(0).locator(".msg")).to_contain_text("채택했습니다")
            card = httpx.get(f"{admin_page}/api/tools/{accepted}").json()
            assert card["version"] > version and card["card"]["when_to_use"][-1] == PROPOSED_LINE
            expect(page.locator(f'#tools li[data-name="{accepted}"]')).to_contain_text(f"(v{card['version']})")

            # Batch recall again: this run beside the one before the proposal was accepted.
            page.click("#eval")
            expect(metrics.locator("tr")).to_have_count(3, timeout=60_000)
            expect(metrics.locator("tr").nth(1)).to_contain_text("직전 실행")
            page.fill("#query", QUERY)
            page.click("#route")
            expect(rows).to_have_count(5)
            shot = os.environ.get("TOOLROUTE_SCREENSHOT_ADMIN")
            if shot:
                page.screenshot(path=shot, full_page=True)

            # The second proposal's card is saved by someone else first: its accept (If-Match) is a 409.
            theirs = httpx.get(f"{admin_page}/api/tools/{stale}").json()
            assert httpx.put(f"{admin_page}/api/tools/{stale}/card", json={"tags": [*theirs["card"]["tags"], "동료 수정"]},
                             headers={"If-Match": str(theirs["version"]), "Authorization": f"Bearer {TOKEN}"}).status_code == 200
            usable.nth(1).locator("button", has_text="채택").click()
            expect(usable.nth(1).locator(".msg")).to_contain_text("다른 사람이 이 카드를 먼저 수정했습니다")
            assert PROPOSED_LINE not in httpx.get(f"{admin_page}/api/tools/{stale}").json()["card"]["when_to_use"]

            # Module hot reload: on a server without the endpoint (answered by the browser), then for real.
            page.route("**/api/tools/reload-module/**", lambda route: route.fulfill(
                status=405, content_type="application/json", body='{"detail": "Method Not Allowed"}'))
            page.fill("#module", "premium")
            page.click("#module-form button")
            expect(page.locator("#module-msg")).to_have_text("이 서버에서는 사용할 수 없는 기능입니다.")
            page.unroute("**/api/tools/reload-module/**")
            page.click("#module-form button")
            expect(page.locator("#module-msg")).to_contain_text(
                f"다시 불러왔습니다: {premium.__name__} · 교체한 도구 {len(premium.TOOLS)}개")
            expect(page.locator("#module-msg")).to_contain_text("도구 레지스트리 버전 1")
            for tool in premium.TOOLS:  # the swapped tools by name
                expect(page.locator("#module-msg")).to_contain_text(tool.name)
            expect(page.locator("#stat-more")).to_contain_text("도구 레지스트리 버전 1")

            # An invalid card: the field error is shown, nothing saved.
            version = page.locator("#stat-version").inner_text()
            page.fill("#purpose", " ")
            page.click("#save")
            expect(page.locator("#card-msg")).to_contain_text("입력 오류")
            expect(page.locator("#card-msg")).to_contain_text("purpose")
            expect(page.locator("#purpose")).to_have_class(re.compile("invalid"))
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

            # A second tab of the same browser has the token without typing it; it registers the tool back
            # from the overview's list, after a confirmation.
            second = context.new_page()
            second.set_default_timeout(TIMEOUT)
            second.goto(admin_page + "/admin/tools")
            expect(second.locator("#token-state")).to_contain_text("토큰 적용됨")
            expect(second.locator("#removed-list li")).to_have_count(1)
            if os.environ.get("TOOLROUTE_SCREENSHOTS"):
                second.screenshot(path=os.path.join(os.environ["TOOLROUTE_SCREENSHOTS"], "admin-register-back.png"))
            second.once("dialog", lambda d: d.accept())
            second.click(f'#removed-list li[data-name="{target}"] button.register')
            expect(second.locator("#card-msg")).to_contain_text(f"다시 등록했습니다: {target}")
            expect(second.locator("#stat-tools")).to_have_text("54")
            expect(second.locator("#removed")).to_be_hidden()
            expect(second.locator("#card-title")).to_have_text(f"카드 편집: {target}")
            second.close()

            # On a phone the two columns become one: nothing wider than the screen, the editor under the list.
            page.set_viewport_size({"width": 390, "height": 844})
            assert page.evaluate("document.documentElement.scrollWidth") <= 390
            if os.environ.get("TOOLROUTE_SCREENSHOTS"):
                page.screenshot(path=os.path.join(os.environ["TOOLROUTE_SCREENSHOTS"], "admin-phone.png"))
            editor = page.locator("#card-title").bounding_box()
            assert editor and editor["x"] >= 0 and editor["x"] + editor["width"] <= 390
        finally:
            browser.close()
