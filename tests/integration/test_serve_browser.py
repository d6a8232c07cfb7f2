"""The chat page in a real headless browser (Debian's chromium driven by Playwright): a two-tool
question shows the numbered steps, the streamed answer and the sources; "새 대화" starts over.
Set TOOLROUTE_SCREENSHOT=docs/img/chat.png to refresh the screenshot in the docs."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import httpx
import pytest
from langchain_core.tools import tool

from toolroute.serve import ServeOptions, create_app
from toolroute.serve.scripted import create_scripted_app

from serving import ThreadServer, openai_model, serving_agent

pytestmark = [pytest.mark.enable_socket, pytest.mark.allow_hosts(["127.0.0.1"])]

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--headless=new", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run"]


@tool
def rag_terms_query_engine(query: str, product: str | None = None, k: int = 3) -> dict:
    """약관 검색 (테스트용: 색인 없이 고정된 조항을 돌려줍니다)."""
    return {"status": "ok", "summary": "치매 진단비는 CDR 척도 기준으로 지급됩니다.",
            "passages": [{"text": "제3조 치매 진단비 지급", "source": "실속치매보험 약관 p.12"}]}


@pytest.fixture
def chat_page(tmp_path):
    if not Path(CHROMIUM).exists():
        pytest.skip("chromium is not installed (apt-get install -y chromium fonts-nanum; .ci/run does it)")
    pytest.importorskip("playwright")
    from toolroute.agent import load_pack
    from toolroute.serve.scripted import DEFAULT_PLAN

    pack = load_pack("insurance")
    pack.tools = [rag_terms_query_engine if t.name == "rag_terms_query_engine" else t for t in pack.tools]
    plan = {"premium_estimate": DEFAULT_PLAN["premium_estimate"],
            "rag_terms_query_engine": {"query": "치매 진단비 지급 기준", "product": "실속치매보험"}}
    with ThreadServer(create_scripted_app(latency=0.05, plan=plan, chunk_delay=0.03)) as llm:
        app = create_app(agent_factory=lambda model: serving_agent(model, tmp_path / "m.sqlite", pack),
                         llm=openai_model(llm.url + "/v1"), options=ServeOptions(memory_path=tmp_path / "m.sqlite"),
                         build_in_background=False)
        with ThreadServer(app) as server:
            assert httpx.get(f"{server.url}/readyz").status_code == 200
            yield server.url


def test_the_chat_page_shows_steps_answer_and_sources(chat_page):
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 980, "height": 760}, locale="ko-KR")
            page.goto(chat_page + "/")
            expect(page.locator("h1")).to_contain_text("보험 상담")
            page.fill("#message", "실속치매보험 55세 여성 보험료 얼마고 약관 조항도 검색해줘")
            page.click("#send")
            bot = page.locator(".msg.bot").last
            expect(bot).to_have_attribute("data-done", "1", timeout=30_000)
            steps = bot.locator(".steps li")
            expect(steps).to_have_count(2)
            expect(steps.nth(0)).to_have_text("1단계: premium_estimate → 55세 여성 기준 실속치매보험 월 17,950원(20년납).")
            expect(steps.nth(1)).to_contain_text("2단계: rag_terms_query_engine → 치매 진단비는 CDR")
            answer = bot.locator(".answer")
            expect(answer).to_contain_text("월 17,950원")
            expect(answer).to_contain_text("참고용")  # the disclaimer: the guarded answer, not the raw draft
            expect(bot.locator(".sources")).to_have_text("출처: 실속치매보험 약관 p.12")
            expect(bot.locator(".error")).to_have_text("")
            expect(page.locator("#thread")).to_contain_text("대화 ")
            shot = os.environ.get("TOOLROUTE_SCREENSHOT")
            if shot:
                page.screenshot(path=shot, full_page=True)
            page.click("#new")
            expect(page.locator(".msg")).to_have_count(0)
            expect(page.locator("#thread")).to_have_text("새 대화")
        finally:
            browser.close()


QUESTION = "실속치매보험 55세 여성 보험료 얼마고 약관 조항도 검색해줘"


def _browser(p):
    return p.chromium.launch(executable_path=CHROMIUM, args=ARGS)


def shot(page, name: str) -> None:
    """With TOOLROUTE_SCREENSHOTS=docs/img, keep this state of the page as docs/img/<name>.png (the docs' pictures)."""
    folder = os.environ.get("TOOLROUTE_SCREENSHOTS")
    if folder:
        page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=False)


def test_enter_while_a_turn_streams_sends_no_second_request_and_a_reload_restores_the_conversation(chat_page):
    """Issue 41, items 2 and 4: the box is locked while a turn runs (Enter included), and a reload shows
    the conversation the agent remembers instead of an empty page on the old thread."""
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as p:
        browser = _browser(p)
        try:
            page = browser.new_page(viewport={"width": 980, "height": 760}, locale="ko-KR")
            posts = []
            page.on("request", lambda r: posts.append(r.url) if r.method == "POST" and "api/chat" in r.url else None)
            page.goto(chat_page + "/")
            page.fill("#message", QUESTION)
            page.press("#message", "Enter")
            expect(page.locator(".msg.bot .progress").last).to_contain_text("초")  # the progress line at once
            shot(page, "chat-progress")
            page.focus("#message")
            page.keyboard.type("두 번째 질문")
            page.keyboard.press("Enter")
            page.keyboard.press("Enter")
            bot = page.locator(".msg.bot").last
            expect(bot).to_have_attribute("data-done", "1", timeout=30_000)
            assert len(posts) == 1, posts
            expect(page.locator(".msg.user")).to_have_count(1)
            expect(bot.locator(".error")).to_have_text("")
            expect(bot.locator(".progress")).to_contain_text("완료")
            thread = page.locator("#thread").text_content()
            page.reload()
            expect(page.locator(".msg.user")).to_have_count(1)
            expect(page.locator(".msg.user").first).to_have_text(QUESTION)
            expect(page.locator(".msg.bot .answer").first).to_contain_text("월 17,950원")
            expect(page.locator("#thread")).to_have_text(thread)
        finally:
            browser.close()


def test_a_cut_answer_puts_the_question_back_with_a_retry_and_the_page_follows_on_a_phone(chat_page):
    """Issue 41, items 3, 5 and 7: on a 390 px phone the page scrolls to the new answer; a turn whose answer
    is cut keeps its steps, says so in Korean, puts the question back and offers to resend it."""
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as p:
        browser = _browser(p)
        try:
            page = browser.new_page(viewport={"width": 390, "height": 640}, locale="ko-KR")
            page.goto(chat_page + "/")
            for _ in range(2):
                page.fill("#message", QUESTION)
                page.click("#send")
                expect(page.locator(".msg.bot").last).to_have_attribute("data-done", "1", timeout=30_000)
            assert page.evaluate("window.scrollY") > 0, "the page did not follow the answers"
            box = page.locator("#message").bounding_box()
            assert box and box["y"] + box["height"] <= 640 + 1, box  # the input box is on screen
            broken = "실속치매보험 55세 여성 보험료 알려줘 [cut]"
            page.fill("#message", broken)
            page.click("#send")
            bot = page.locator(".msg.bot").last
            expect(bot).to_have_attribute("data-done", "1", timeout=30_000)
            expect(bot.locator(".error")).to_contain_text("질문을 입력란에 다시 넣었습니다")
            expect(page.locator("#message")).to_have_value(broken)
            expect(bot.locator(".steps li")).to_have_count(1)  # the step already received stays
            assert not any(w in bot.inner_text() for w in ("Error", "error", "Traceback"))
            expect(bot.locator("button.retry")).to_have_text("다시 보내기")
            shot(page, "chat-phone-retry")
        finally:
            browser.close()


def test_stop_cancels_the_turn_on_the_server_and_keeps_the_question(chat_page):
    """Issue 41, item 5: "중지" while an answer streams leaves the stream; the server cancels the turn (the
    thread takes a new turn at once instead of answering 409 for the one still running), the steps
    stay, the question goes back into the box and "다시 보내기" resends it."""
    from playwright.sync_api import expect, sync_playwright

    slow = "실속치매보험 55세 여성 보험료 알려줘 [slow]"
    with sync_playwright() as p:
        browser = _browser(p)
        try:
            page = browser.new_page(viewport={"width": 980, "height": 760}, locale="ko-KR")
            page.goto(chat_page + "/")
            expect(page.locator("#stop")).to_be_hidden()
            page.fill("#message", slow)
            page.click("#send")
            bot = page.locator(".msg.bot").last
            expect(page.locator("#send")).to_be_hidden()
            expect(bot.locator(".steps li")).to_have_count(1, timeout=30_000)  # the tool ran; the answer is slow
            expect(bot.locator(".progress")).to_contain_text("답변 작성 중")
            page.click("#stop")
            expect(bot).to_have_attribute("data-done", "1", timeout=5_000)
            expect(bot.locator(".error")).to_have_text("중지했습니다. 질문을 입력란에 다시 넣었습니다.")
            expect(bot.locator(".steps li")).to_have_count(1)
            expect(page.locator("#message")).to_have_value(slow)
            expect(page.locator("#stop")).to_be_hidden()
            shot(page, "chat-stopped")
            page.fill("#message", "고마워요, 다른 질문: 실속치매보험 55세 여성 보험료 다시 알려줘")
            page.click("#send")
            second = page.locator(".msg.bot").last
            expect(second).to_have_attribute("data-done", "1", timeout=30_000)
            expect(second.locator(".error")).to_have_text("")  # not 409: the stopped turn no longer runs
            expect(second.locator(".answer")).to_contain_text("월 17,950원")
        finally:
            browser.close()


SEED_000_STREAM = (
    'event: route\ndata: {"route": "pattern_search"}\n\n'
    'data: {"token": "위협 등급은 "}\n\n'
    'event: tool_call\ndata: {"tool_called": true, "tool_name": "assess_threat_level", "tool_result": "HIGH"}\n\n'
    'data: {"token": "높음입니다."}\n\n'
    'event: sources\ndata: []\n\n'
    'event: done\ndata: {}\n\n'
)


def test_the_page_reads_a_stream_in_seed_000s_own_shape(chat_page):
    """Issue 41, item 11: seed 000 streams tokens as unnamed `data:` frames and a tool's result as a
    string; the page shows both (no `[object Object]`, no empty answer)."""
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as p:
        browser = _browser(p)
        try:
            page = browser.new_page(viewport={"width": 980, "height": 760}, locale="ko-KR")
            page.route("**/api/chat/stream", lambda route: route.fulfill(
                status=200, headers={"Content-Type": "text/event-stream"}, body=SEED_000_STREAM))
            page.goto(chat_page + "/")
            page.fill("#message", "고도 300m 미사일 위협 등급은?")
            page.click("#send")
            bot = page.locator(".msg.bot").last
            expect(bot).to_have_attribute("data-done", "1", timeout=10_000)
            expect(bot.locator(".steps li")).to_have_text(["1단계: assess_threat_level → HIGH"])
            expect(bot.locator(".answer")).to_have_text("위협 등급은 높음입니다.")
            expect(bot.locator(".error")).to_have_text("")
        finally:
            browser.close()


def test_a_turn_refused_while_the_agent_starts_is_sent_again_by_itself(chat_page):
    """Issue 41, item 9: a 503 with Retry-After (the agent is still building) is retried after that wait."""
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as p:
        browser = _browser(p)
        try:
            page = browser.new_page(viewport={"width": 980, "height": 760}, locale="ko-KR")
            refused = []

            def starting(route):
                if not refused:
                    refused.append(route.request.url)
                    route.fulfill(status=503, headers={"Retry-After": "1", "Content-Type": "application/json"},
                                  body='{"detail": "the agent is starting"}')
                else:
                    route.continue_()

            page.route("**/api/chat/stream", starting)
            page.goto(chat_page + "/")
            page.fill("#message", QUESTION)
            page.click("#send")
            first = page.locator(".msg.bot").first
            expect(first.locator(".error")).to_contain_text("자동으로 다시 보냅니다")
            assert "starting" not in first.inner_text()
            answered = page.locator(".msg.bot").last
            expect(page.locator(".msg.bot")).to_have_count(2, timeout=10_000)
            expect(answered).to_have_attribute("data-done", "1", timeout=30_000)
            expect(answered.locator(".answer")).to_contain_text("월 17,950원")
            assert len(refused) == 1
        finally:
            browser.close()


def test_a_turn_on_a_thread_the_server_no_longer_has_goes_out_again_as_a_new_conversation(chat_page):
    """A thread can be gone when its only turn was stopped before it was saved: the page sends the
    question again at once without it and says so, instead of asking the user to resend."""
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as p:
        browser = _browser(p)
        try:
            page = browser.new_page(viewport={"width": 980, "height": 760}, locale="ko-KR")
            page.add_init_script('sessionStorage.setItem("toolroute-thread", "gone-thread")')
            page.route("**/api/threads/gone-thread", lambda route: route.fulfill(
                status=200, headers={"Content-Type": "application/json"}, body='{"turns": []}'))
            page.goto(chat_page + "/")
            expect(page.locator("#thread")).to_have_text("대화 gone-thread")
            page.fill("#message", QUESTION)
            page.click("#send")
            expect(page.locator(".notice")).to_have_text("이전 대화를 찾을 수 없어 새 대화로 보냈습니다.")
            bot = page.locator(".msg.bot")
            expect(bot).to_have_count(1)
            expect(bot).to_have_attribute("data-done", "1", timeout=30_000)
            expect(bot.locator(".answer")).to_contain_text("월 17,950원")
            expect(page.locator(".msg.user")).to_have_count(1)
            expect(page.locator("#thread")).not_to_have_text("대화 gone-thread")
        finally:
            browser.close()


def test_a_knowledge_graph_answer_carries_kg_data_and_the_page_draws_it(tmp_path):
    """Issue 41, item 11 (seed 001): the plant agent's graph tool fills `kg_data` in the state and the
    `done` frame, and the chat page draws its nodes and relations under the answer."""
    if not Path(CHROMIUM).exists():
        pytest.skip("chromium is not installed (apt-get install -y chromium fonts-nanum; .ci/run does it)")
    pytest.importorskip("playwright")
    from playwright.sync_api import expect, sync_playwright

    plan = {"query_knowledge_graph": {"entity": "CNC-001", "target": "CP-007"}}
    with ThreadServer(create_scripted_app(latency=0.05, plan=plan, chunk_delay=0.01)) as llm:
        app = create_app(agent_factory=lambda model: serving_agent(model, tmp_path / "m.sqlite", domain="plant"),
                         llm=openai_model(llm.url + "/v1"),
                         options=ServeOptions(domain="plant", memory_path=tmp_path / "m.sqlite"),
                         build_in_background=False)
        with ThreadServer(app) as server:
            body = httpx.post(f"{server.url}/api/chat", json={"message": "CNC-001에서 냉각수 펌프 CP-007까지 어떻게 연결돼?"},
                              timeout=60).json()
            assert [n["id"] for n in body["kg_data"]["nodes"]] == ["CNC-001", "CP-007", "CL-003"]
            assert {(e["source"], e["target"]) for e in body["kg_data"]["edges"]} == {("CNC-001", "CL-003"), ("CL-003", "CP-007")}
            with sync_playwright() as p:
                browser = _browser(p)
                try:
                    page = browser.new_page(viewport={"width": 980, "height": 760}, locale="ko-KR")
                    page.goto(server.url + "/")
                    page.fill("#message", "CNC-001에서 냉각수 펌프 CP-007까지 어떻게 연결돼?")
                    page.click("#send")
                    bot = page.locator(".msg.bot").last
                    expect(bot).to_have_attribute("data-done", "1", timeout=30_000)
                    graph = bot.locator("svg.kg")
                    expect(graph.locator("circle")).to_have_count(3)
                    expect(graph.locator("line")).to_have_count(2)
                    expect(graph).to_contain_text("CP-007 냉각수 펌프")
                    expect(graph.locator("text.rel")).to_have_text(["구성 유닛", "사용 부품"])
                    bot.scroll_into_view_if_needed()
                    shot(page, "chat-kg")
                finally:
                    browser.close()
