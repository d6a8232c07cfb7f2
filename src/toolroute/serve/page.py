"""The chat page at `/`: server-rendered HTML and a little vanilla JavaScript (no build step).

It posts to `/api/chat/stream` and reads the SSE frames with `fetch` (EventSource cannot POST):
`route` → the routed tools, `tool_call` → "N단계: 도구명 → 결과" in order (as seed 000's ChatPanel
renders them), `token` → the answer as it arrives, `sources` → the sources, `error`, `done` → the
final answer (kept when the stream had to replace its text). "새 대화" starts a new thread. A turn whose tools showed a
knowledge graph (`kg_data` in `done`, seed 001) gets a small node-link drawing under its answer. A stream in
seed 000's own shape (tokens as unnamed `data:` frames, `tool_result` a string) reads the same.

While a turn runs the box is locked (Enter included) and a progress line shows the elapsed time and the
stage (도구 검색 → 도구 실행 → 답변 작성) from the stream's events; the page follows new content unless
the reader scrolled up. After an error the steps already shown stay, the question goes back into the
box and "다시 보내기" resends it (by itself after `Retry-After` seconds when the agent is still starting).
"중지" stops a running turn: the page leaves the stream and the
server cancels the turn when its client leaves (`serve.turns`). A reload restores the conversation from `GET /api/threads/{id}` (or
says that a new one starts). Every message on the page is Korean; server details stay in the logs.
"""

from __future__ import annotations

import html

EXAMPLES = {
    "insurance": ["55세 여성 실속치매보험 보험료랑 보장 내용 알려줘", "70세 아버지 종신보험 보험료 얼마야?",
                  "고혈압 있는 택시기사도 암보험 가입할 수 있어?"],
    "threat": ["고도 300m, 속도 900km/h 미사일 표적의 위협 등급과 대응 절차는?"],
    "plant": ["3호기 압축기 최근 30일 알람 이력 알려줘"],
}

PAGE = """<!doctype html>
<html lang="ko">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<link rel="icon" href="data:,">
<style>
  body {{ font-family: "NanumGothic", "Noto Sans CJK KR", "Malgun Gothic", sans-serif; margin: 0; background: #f4f6f8; color: #1c2733; }}
  header {{ background: #1f4e79; color: #fff; padding: 12px 20px; display: flex; align-items: center; justify-content: space-between; }}
  header h1 {{ font-size: 18px; margin: 0; }}
  header a {{ color: #fff; margin-right: 12px; font-size: 14px; }}
  main {{ max-width: 860px; margin: 0 auto; padding: 16px; }}
  #log {{ display: flex; flex-direction: column; gap: 12px; min-height: 240px; }}
  .msg {{ border-radius: 10px; padding: 10px 14px; line-height: 1.6; white-space: pre-wrap; }}
  .user {{ align-self: flex-end; background: #dbeafe; max-width: 80%; }}
  .bot {{ align-self: flex-start; background: #fff; border: 1px solid #d5dde5; width: 90%; }}
  .route {{ font-size: 12px; color: #5b6b7b; margin-bottom: 6px; }}
  .steps {{ list-style: none; padding: 0; margin: 0 0 8px 0; font-size: 13px; }}
  .steps li {{ background: #eef6ee; border-left: 3px solid #3c8d40; padding: 3px 8px; margin: 3px 0; }}
  .sources {{ font-size: 12px; color: #445; margin-top: 8px; }}
  .error {{ color: #b00020; font-size: 13px; margin-top: 6px; }}
  .progress {{ font-size: 12px; color: #5b6b7b; margin-top: 6px; }}
  .retry {{ margin-top: 6px; padding: 4px 12px; font-size: 13px; }}
  .notice {{ font-size: 13px; color: #5b6b7b; text-align: center; }}
  form {{ display: flex; gap: 8px; margin-top: 16px; }}
  textarea {{ flex: 1; font: inherit; padding: 8px; border-radius: 8px; border: 1px solid #b8c4d0; min-height: 44px; }}
  button {{ font: inherit; border: 0; border-radius: 8px; padding: 8px 16px; background: #1f4e79; color: #fff; cursor: pointer; }}
  button.secondary {{ background: #fff; color: #1f4e79; border: 1px solid #fff; }}
  button.stop {{ background: #a33; }}
  svg.kg {{ display: block; width: 100%; max-width: 520px; height: auto; margin-top: 8px; background: #f7f9fb; border-radius: 8px; }}
  svg.kg text {{ font-size: 10px; fill: #1c2733; }} svg.kg line {{ stroke: #8aa1b8; }} svg.kg circle {{ fill: #1f4e79; }}
  svg.kg circle.first {{ fill: #b5651d; }} svg.kg text.rel {{ fill: #5b6b7b; font-size: 9px; }}
  li.step[data-status="needs_user_input"] {{ color: #8a5a00; }}
  button:disabled {{ opacity: .5; cursor: default; }}
  .examples {{ margin-top: 10px; font-size: 13px; }}
  .examples button {{ background: #e8eef4; color: #1f4e79; padding: 4px 10px; margin: 2px; }}
</style>
</head>
<body>
<header><h1>{title}</h1><span><a href="admin/tools">도구 관리</a> <button id="new" class="secondary" type="button">새 대화</button></span></header>
<main>
  <div id="log" aria-live="polite"></div>
  <form id="ask">
    <label for="message" class="visually-hidden" style="position:absolute;left:-9999px">질문</label>
    <textarea id="message" name="message" maxlength="{max_chars}" aria-label="질문" placeholder="질문을 입력하세요 (Enter: 보내기, Shift+Enter: 줄바꿈)"></textarea>
    <button id="send" type="submit">보내기</button>
    <button id="stop" type="button" class="stop" hidden>중지</button>
  </form>
  <div class="examples">예시: {examples}</div>
  <div id="thread" class="route"></div>
</main>
<script>
(() => {{
  const log = document.getElementById("log"), form = document.getElementById("ask"), box = document.getElementById("message");
  const send = document.getElementById("send"), stop = document.getElementById("stop"), threadLine = document.getElementById("thread");
  let threadId = sessionStorage.getItem("toolroute-thread") || null;
  let busy = false, controller = null;
  stop.addEventListener("click", () => {{ if (controller) controller.abort(); }});
  const show = () => {{ threadLine.textContent = threadId ? "대화 " + threadId : "새 대화"; }};
  show();
  const el = (tag, cls, text) => {{ const e = document.createElement(tag); if (cls) e.className = cls; if (text) e.textContent = text; return e; }};
  const atBottom = () => window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 80;
  const follow = (wasAtBottom) => {{ if (wasAtBottom) form.scrollIntoView({{block: "end"}}); }};
  const forget = () => {{ threadId = null; sessionStorage.removeItem("toolroute-thread"); show(); }};
  const restore = async () => {{
    if (!threadId) return;
    try {{
      const response = await fetch("api/threads/" + encodeURIComponent(threadId));
      if (!response.ok) throw new Error(String(response.status));
      const data = await response.json();
      for (const turn of data.turns || []) {{
        log.appendChild(el("div", "msg user", turn.question));
        const bot = el("div", "msg bot"); bot.appendChild(el("div", "answer", turn.answer)); bot.dataset.done = "1";
        log.appendChild(bot);
      }}
      follow(true);
    }} catch (err) {{
      forget();
      log.appendChild(el("div", "notice", "이전 대화를 불러올 수 없어 새 대화를 시작합니다."));
    }}
  }};
  restore();
  // seed 001's kg_data: the turn's graph, its first node in the middle and the others on a circle
  const drawGraph = (graph) => {{
    const ns = "http://www.w3.org/2000/svg", W = 520, H = 360, cx = W / 2, cy = H / 2;
    const svg = document.createElementNS(ns, "svg"); svg.setAttribute("class", "kg"); svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    svg.setAttribute("role", "img"); svg.setAttribute("aria-label", "지식 그래프: 노드 " + graph.nodes.length + "개, 관계 " + graph.edges.length + "개");
    const at = {{}}, rest = graph.nodes.slice(1);
    at[graph.nodes[0].id] = [cx, cy];
    rest.forEach((n, i) => {{ const a = 2 * Math.PI * i / rest.length - Math.PI / 2; at[n.id] = [cx + 200 * Math.cos(a), cy + 140 * Math.sin(a)]; }});
    const add = (tag, attrs, text) => {{ const e = document.createElementNS(ns, tag); for (const k in attrs) e.setAttribute(k, attrs[k]); if (text) e.textContent = text; svg.appendChild(e); return e; }};
    for (const e of graph.edges) {{
      const a = at[e.source], b = at[e.target]; if (!a || !b) continue;
      add("line", {{x1: a[0], y1: a[1], x2: b[0], y2: b[1]}});
      add("text", {{x: (a[0] + b[0]) / 2, y: (a[1] + b[1]) / 2 - 2, "text-anchor": "middle", class: "rel"}}, e.relation || "");
    }}
    graph.nodes.forEach((n, i) => {{
      const [x, y] = at[n.id];
      const c = add("circle", {{cx: x, cy: y, r: 6, class: i === 0 ? "first" : ""}}); c.dataset.id = n.id;
      add("text", {{x: x, y: y + 16, "text-anchor": "middle"}}, n.id + (n.name ? " " + n.name : ""));
    }});
    return svg;
  }};
  const brief = (result) => String(result ?? "").slice(0, 120);  // a step's one line (the server's and seed 000's)
  document.getElementById("new").addEventListener("click", () => {{
    if (busy) return;
    forget(); log.innerHTML = ""; box.focus();
  }});
  document.querySelectorAll(".examples button").forEach(b => b.addEventListener("click", () => {{ box.value = b.textContent; box.focus(); }}));
  box.addEventListener("keydown", e => {{
    if (e.key === "Enter" && !e.shiftKey) {{ e.preventDefault(); if (!busy) form.requestSubmit(); }}
  }});
  const ask = async (message) => {{
    busy = true; box.value = ""; box.readOnly = true; send.disabled = true;
    controller = new AbortController(); send.hidden = true; stop.hidden = false;
    const wasAtBottom = atBottom();
    const mine = el("div", "msg user", message); log.appendChild(mine);
    let again = false;
    const bot = el("div", "msg bot"), route = el("div", "route"), steps = el("ol", "steps"), answer = el("div", "answer");
    const sources = el("div", "sources"), error = el("div", "error"), progress = el("div", "progress");
    bot.append(route, steps, answer, sources, error, progress); log.appendChild(bot);
    follow(wasAtBottom);
    let stepCount = 0, stage = "도구 검색 중", failed = false;
    const started = Date.now();
    const tick = () => {{ progress.textContent = stage + " · " + Math.round((Date.now() - started) / 1000) + "초"; }};
    tick();
    const timer = setInterval(tick, 1000);
    const fail = (text) => {{
      failed = true; error.textContent = text;
      const retry = el("button", "retry", "다시 보내기"); retry.type = "button";
      retry.addEventListener("click", () => {{ if (!busy) {{ retry.remove(); ask(message); }} }});
      bot.appendChild(retry);
      return retry;
    }};
    const handle = (event, data) => {{
      const wasAtBottom = atBottom();
      if (event === "route") {{
        if (data.thread_id) {{ threadId = data.thread_id; sessionStorage.setItem("toolroute-thread", threadId); show(); }}
        route.textContent = data.route === "tools" ? "검색된 도구: " + data.tools.join(", ")
          : data.route === "no_call" ? "도구 없이 답변" : data.route === "blocked" ? "안내 범위 밖의 요청" : "도구 검색 실패";
        stage = data.route === "tools" ? "도구 실행 중" : "답변 작성 중"; tick();
      }} else if (event === "tool_call") {{
        stepCount += 1; stage = "답변 작성 중"; tick();
        const li = el("li", "step", stepCount + "단계: " + data.tool_name + " → " + brief(data.tool_result)
          + (data.status === "needs_user_input" ? " (추가 정보 필요)" : ""));
        if (data.status) li.dataset.status = data.status;
        steps.appendChild(li);
      }} else if (event === "token") {{
        answer.textContent += data.token;
      }} else if (event === "sources") {{
        if (Array.isArray(data) && data.length) {{
          sources.textContent = "출처: " + data.map(s => s.source || JSON.stringify(s)).join(" · ");
        }}
      }} else if (event === "error") {{
        if (!failed) fail("오류: 답변을 완성하지 못했습니다. 질문을 입력란에 다시 넣었습니다.");
      }} else if (event === "done") {{
        if (data.answer && answer.textContent !== data.answer) answer.textContent = data.answer;
        if (data.kg_data && Array.isArray(data.kg_data.nodes) && data.kg_data.nodes.length) bot.appendChild(drawGraph(data.kg_data));
        if (data.failed && !failed) fail("오류: 답변을 완성하지 못했습니다. 질문을 입력란에 다시 넣었습니다.");
        bot.dataset.done = "1";
      }}
      follow(wasAtBottom);
    }};
    try {{
      const response = await fetch("api/chat/stream", {{method: "POST", headers: {{"Content-Type": "application/json"}},
        body: JSON.stringify({{message, thread_id: threadId}}), signal: controller.signal}});
      if (!response.ok) {{
        if (response.status === 404 && threadId) {{  // the thread is gone (its only turn was stopped, or expired)
          forget(); again = true; return;
        }}
        fail(response.status === 429 ? "지금 상담이 많습니다. 잠시 후 다시 보내 주세요."
          : response.status === 413 ? "메시지가 너무 깁니다. 줄여서 다시 보내 주세요."
          : response.status === 404 ? "이전 대화를 찾을 수 없어 새 대화로 보냅니다. 다시 보내 주세요."
          : response.status === 503 ? "상담 준비 중입니다. 잠시 후 다시 보내 주세요."
          : "오류: 요청을 처리하지 못했습니다 (" + response.status + "). 다시 보내 주세요.");
        const wait = parseInt(response.headers.get("Retry-After") || "", 10);
        if (response.status === 503 && wait >= 0 && wait <= 120) {{  // the agent is starting: send again by itself
          error.textContent = "상담 준비 중입니다. " + wait + "초 뒤 자동으로 다시 보냅니다.";
          const retry = bot.querySelector("button.retry");
          setTimeout(() => {{ if (retry && retry.isConnected && !busy && box.value === message) {{ box.value = ""; retry.click(); }} }},
                     wait * 1000);
        }}
        bot.dataset.done = "1";
        return;
      }}
      const reader = response.body.getReader(), decoder = new TextDecoder();
      let buffer = "";
      for (;;) {{
        const {{done, value}} = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, {{stream: true}}).replace(/\\r\\n/g, "\\n");
        let cut;
        while ((cut = buffer.indexOf("\\n\\n")) >= 0) {{
          const block = buffer.slice(0, cut); buffer = buffer.slice(cut + 2);
          let event = "message"; const data = [];
          for (const line of block.split("\\n")) {{
            if (line.startsWith("event:")) event = line.slice(6).trim();
            else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
          }}
          if (!data.length) continue;
          const parsed = JSON.parse(data.join("\\n"));
          // seed 000 sends its tokens as unnamed `data: {{"token": …}}` frames
          if (event === "message" && parsed && typeof parsed.token === "string") event = "token";
          handle(event, parsed);
        }}
      }}
      if (bot.dataset.done !== "1") fail("오류: 답변이 끊겼습니다. 질문을 입력란에 다시 넣었습니다.");
    }} catch (err) {{
      fail(err && err.name === "AbortError" ? "중지했습니다. 질문을 입력란에 다시 넣었습니다."
        : "오류: 서버에 연결할 수 없습니다. 질문을 입력란에 다시 넣었습니다.");
      bot.dataset.done = "1";
    }} finally {{
      controller = null; send.hidden = false; stop.hidden = true;
      clearInterval(timer);
      progress.textContent = failed ? "" : "완료 · " + Math.round((Date.now() - started) / 1000) + "초";
      if (failed && !box.value) box.value = message;
      busy = false; box.readOnly = false; send.disabled = false; box.focus();
      if (again) {{  // sent again at once as a new conversation, and said so
        mine.remove(); bot.remove(); box.value = "";
        log.appendChild(el("div", "notice", "이전 대화를 찾을 수 없어 새 대화로 보냈습니다."));
        ask(message);
      }}
    }}
  }};
  form.addEventListener("submit", (e) => {{
    e.preventDefault();
    const message = box.value.trim();
    if (!message || busy) return;
    ask(message);
  }});
}})();
</script>
</body>
</html>
"""


def render_page(domain: str, label: str, max_chars: int) -> str:
    """The chat page for one domain (its label and example questions)."""
    title = f"toolroute · {label} 상담"
    examples = " ".join(f'<button type="button">{html.escape(q)}</button>' for q in EXAMPLES.get(domain, []))
    return PAGE.format(title=html.escape(title), max_chars=max_chars, examples=examples)
