"""The admin dashboard at `/admin/tools`: server-rendered HTML and a little vanilla JavaScript (no build).

Seed 002's six functions, all over the card API (`toolroute.serve.cards_api`):
1. overview: tools, vectors, store version and status (`/api/stats`, `/readyz`), the tools with a filter;
2. card editing: the card in a form, saved with `PUT …/card` (`If-Match`, `Authorization: Bearer`);
3. history, diff and rollback of the selected card;
4. quick test: a typed query through `/api/route`, batch recall (`/api/eval` on dev, shown beside the
   previous run) and failure analysis (`/api/proposals` on tune: each proposal's diff and measured
   effect, or why it was skipped; accepting one is the `PUT` its `accept` block spells out, with that
   block's `If-Match` version, so a card saved meanwhile gets the usual 409 message);
5. unregister, confirmed by typing the tool's name; an unregistered tool is listed in the overview with
   "다시 등록" (`POST …/register`, confirmed);
6. hot reload of a tool module (`/api/tools/reload-module/{module}`).

The admin token is typed by the operator, checked on "적용" (`POST /api/admin/check`), and kept in
sessionStorage, shared with the browser's other dashboard tabs over a same-origin BroadcastChannel (never
written to disk; closing every tab forgets it): the server never puts it in the page. A save that meets
a newer version (409) shows the difference between that version and the operator's edit and re-applies
the edit on it at a click; a 422 marks the fields it names. Every call but a GET carries it: the writes, and batch recall and failure analysis, which
need it too (they cost a core and LLM calls). Everything from the API reaches the DOM through `textContent`. An endpoint this server
does not have (404 "Not Found" from the framework, 405) is shown as "not available on this server".
"""

from __future__ import annotations

import html

PAGE = """<!doctype html>
<html lang="ko">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{title}}</title>
<style>
  body { font-family: "NanumGothic", "Noto Sans CJK KR", "Malgun Gothic", sans-serif; margin: 0; background: #f4f6f8; color: #1c2733; font-size: 14px; }
  header { background: #1f4e79; color: #fff; padding: 10px 20px; display: flex; align-items: center; gap: 16px; flex-wrap: wrap; }
  header h1 { font-size: 18px; margin: 0; flex: 1; }
  header a { color: #fff; }
  header input { width: 200px; }
  main { max-width: 1180px; margin: 0 auto; padding: 16px; display: grid; grid-template-columns: 340px 1fr; gap: 16px; }
  section { background: #fff; border: 1px solid #d5dde5; border-radius: 10px; padding: 12px 16px; }
  section.wide { grid-column: 1 / -1; }
  h2 { font-size: 15px; margin: 0 0 10px 0; color: #1f4e79; }
  h3 { font-size: 14px; margin: 14px 0 6px 0; }
  .stats { display: grid; grid-template-columns: 1fr 1fr; gap: 6px; margin-bottom: 10px; }
  @media (max-width: 760px) {  /* a phone: one column, the editor under the list, wide tables scroll in place */
    main { grid-template-columns: minmax(0, 1fr); padding: 8px; }
    section { min-width: 0; }
    header input { width: 100%; }
    table, pre { display: block; overflow-x: auto; max-width: 100%; }
  }
  .stat { background: #eef3f8; border-radius: 6px; padding: 6px 8px; }
  .stat b { display: block; font-size: 18px; }
  #tools { list-style: none; padding: 0; margin: 6px 0 0 0; max-height: 520px; overflow-y: auto; }
  #tools li { padding: 5px 6px; border-bottom: 1px solid #eef1f4; cursor: pointer; }
  #tools li:hover, #tools li.selected { background: #e3edf7; }
  #tools .purpose, .muted { color: #5b6b7b; font-size: 12px; }
  label { display: block; margin: 8px 0 2px 0; font-weight: bold; font-size: 13px; }
  input, textarea, select { font: inherit; padding: 5px 7px; border-radius: 6px; border: 1px solid #b8c4d0; box-sizing: border-box; }
  textarea { width: 100%; min-height: 86px; }
  #when_to_use { min-height: 150px; }
  #purpose, #filter, #query { width: 100%; }
  button { font: inherit; border: 0; border-radius: 6px; padding: 5px 12px; background: #1f4e79; color: #fff; cursor: pointer; margin: 2px 0; }
  button.light { background: #e8eef4; color: #1f4e79; }
  button.danger { background: #b00020; }
  button:disabled { opacity: .45; cursor: default; }
  .row { display: flex; gap: 8px; align-items: center; flex-wrap: wrap; margin-top: 8px; }
  .msg { margin-top: 8px; min-height: 1em; }
  .msg.error { color: #b00020; }
  .msg.ok { color: #2e7d32; }
  table { border-collapse: collapse; width: 100%; margin-top: 6px; }
  th, td { text-align: left; padding: 4px 6px; border-bottom: 1px solid #eef1f4; vertical-align: top; }
  pre { background: #f7f9fb; border: 1px solid #e1e7ed; border-radius: 6px; padding: 8px; white-space: pre-wrap; margin: 6px 0; }
  .add { color: #2e7d32; } .del { color: #b00020; }
  .danger-zone { border-top: 1px dashed #e0b4b4; margin-top: 14px; padding-top: 6px; }
  .proposal { border: 1px solid #d5dde5; border-radius: 8px; padding: 8px; margin-top: 8px; }
  .proposal.skipped { background: #fafafa; }
  .proposal .reason { color: #8a5a00; }
  .hidden { display: none; }
  .invalid { border-color: #b00020; background: #fff5f5; }
  ul.removed { list-style: none; padding: 0; margin: 0; }
  ul.removed li { display: flex; justify-content: space-between; align-items: center; gap: 8px; padding: 3px 0; }
  #conflict { border: 1px solid #e0b4b4; border-radius: 8px; padding: 8px; margin-top: 8px; background: #fffafa; }
</style>
</head>
<body>
<header>
  <h1>{{title}}</h1>
  <a href="../">상담 화면</a>
  <span>관리자 토큰 <input id="token" type="password" autocomplete="off" placeholder="TOOLROUTE_ADMIN_TOKEN"></span>
  <button id="token-save" class="light" type="button">적용</button>
  <span id="token-state"></span>
</header>
<main>
  <section>
    <h2>개요</h2>
    <div class="stats">
      <div class="stat">도구 <b id="stat-tools">-</b></div>
      <div class="stat">벡터 <b id="stat-vectors">-</b></div>
      <div class="stat">카드 저장소 버전 <b id="stat-version">-</b></div>
      <div class="stat">상태 <b id="stat-status">-</b></div>
    </div>
    <div id="stat-more" class="muted"></div>
    <div id="removed" class="hidden"><h3>등록 해제된 도구</h3><ul id="removed-list" class="removed"></ul></div>
    <div class="row"><button id="refresh" class="light" type="button">새로고침</button></div>
    <label for="filter">도구 목록</label>
    <input id="filter" type="search" placeholder="이름이나 설명으로 찾기">
    <ul id="tools"></ul>
  </section>

  <section id="card-panel">
    <h2 id="card-title">카드 편집: 왼쪽에서 도구를 고르세요</h2>
    <form id="card-form" class="hidden">
      <div id="card-meta" class="muted"></div>
      <label for="purpose">목적 (purpose)</label>
      <input id="purpose">
      <label for="when_to_use">사용할 때 (when_to_use, 한 줄에 하나)</label>
      <textarea id="when_to_use"></textarea>
      <label for="when_not_to_use">사용하지 않을 때 (when_not_to_use, 한 줄에 하나)</label>
      <textarea id="when_not_to_use"></textarea>
      <label for="tags">태그 (쉼표로 구분)</label>
      <input id="tags" style="width: 100%">
      <label for="message">변경 사유</label>
      <input id="message" style="width: 100%" placeholder="예: 면책기간 질문을 이 도구로">
      <div class="row">
        <button id="save" type="submit">저장</button>
        <button id="reload-card" class="light hidden" type="button">최신 카드 다시 불러오기</button>
      </div>
      <div id="card-msg" class="msg" role="status"></div>
      <div id="conflict" class="hidden">
        <div class="muted">다른 사람이 먼저 저장한 최신 카드(버전 <span id="conflict-version"></span>)와 내 수정의 차이입니다.</div>
        <pre id="conflict-diff"></pre>
        <button id="reapply" type="button">최신 카드에 내 수정 다시 적용</button>
      </div>

      <h3>이력</h3>
      <table><thead><tr><th>버전</th><th>종류</th><th>시각</th><th>작성자</th><th>사유</th><th></th></tr></thead>
        <tbody id="history"></tbody></table>
      <pre id="diff" class="hidden"></pre>

      <div class="danger-zone">
        <h3>등록 해제</h3>
        <div class="muted">이 도구를 라우팅에서 뺍니다. 재시작해도 빠진 채로 남고, 개요의 "다시 등록"으로 되돌릴 수 있습니다. 확인을 위해 도구 이름을 입력하세요.</div>
        <div class="row">
          <input id="confirm-name" autocomplete="off">
          <button id="unregister" class="danger" type="button" disabled>등록 해제</button>
        </div>
      </div>
    </form>
  </section>

  <section class="wide">
    <h2>퀵 테스트</h2>
    <form id="route-form" class="row">
      <input id="query" placeholder="고객 질문을 입력하세요" style="flex: 1">
      <label for="k" style="margin: 0">k</label><input id="k" type="number" min="1" max="20" value="5" style="width: 60px">
      <button id="route" type="submit">라우팅</button>
    </form>
    <div id="route-decision" class="msg"></div>
    <table id="ranking-table" class="hidden"><thead><tr><th>순위</th><th>도구</th><th>점수</th></tr></thead>
      <tbody id="ranking"></tbody></table>
    <div class="row">
      <button id="eval" class="light" type="button">일괄 재현율 (dev, k=5)</button>
      <button id="proposals" class="light" type="button">실패 분석 (tune, 최대 3건)</button>
    </div>
    <div id="eval-msg" class="msg"></div>
    <div id="eval-result"></div>
    <div id="proposal-list"></div>
  </section>

  <section class="wide">
    <h2>모듈 핫 리로드</h2>
    <form id="module-form" class="row">
      <input id="module" placeholder="모듈 이름 (예: premium)" style="width: 260px">
      <button type="submit">다시 불러오기</button>
    </form>
    <div id="module-msg" class="msg"></div>
  </section>
</main>
<script>
(() => {
  const $ = (id) => document.getElementById(id);
  const el = (tag, cls, text) => { const e = document.createElement(tag); if (cls) e.className = cls; if (text !== undefined) e.textContent = String(text); return e; };
  const TOKEN_KEY = "toolroute-admin-token";
  let tools = [], current = null, lastQuery = "", routeSeq = 0;

  // ----- the API ---------------------------------------------------------------------------
  const call = async (method, path, body, version) => {
    const headers = {};
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const token = sessionStorage.getItem(TOKEN_KEY);
    if (method !== "GET" && token) headers["Authorization"] = "Bearer " + token;
    if (version !== undefined) headers["If-Match"] = String(version);
    try {
      const response = await fetch("../" + path, {method, headers, body: body === undefined ? undefined : JSON.stringify(body)});
      const data = await response.json().catch(() => null);
      return {status: response.status, ok: response.ok, data, retryAfter: response.headers.get("Retry-After")};
    } catch (err) {
      return {status: 0, ok: false, data: null};
    }
  };
  const detailText = (data) => {
    const detail = data && data.detail !== undefined ? data.detail : data;
    if (Array.isArray(detail)) {
      return detail.map(d => typeof d === "string" ? d
        : (d.loc || []).filter(p => p !== "body").join(".") + ": " + (d.msg || JSON.stringify(d))).join(" / ");
    }
    return typeof detail === "string" ? detail : JSON.stringify(detail);
  };
  const missing = (r) => r.status === 405 || (r.status === 404 && r.data && r.data.detail === "Not Found");
  const explain = (r) => {
    if (r.status === 0) return "서버에 연결할 수 없습니다.";
    if (missing(r)) return "이 서버에서는 사용할 수 없는 기능입니다.";
    if (r.status === 401) return "관리자 토큰이 올바르지 않습니다. 위쪽의 토큰을 확인해 주세요.";
    if (r.status === 403) return "이 서버는 카드 수정과 평가가 꺼져 있습니다 (서버에 TOOLROUTE_ADMIN_TOKEN이 설정되지 않음).";
    if (r.status === 413) return "입력이 너무 큽니다: " + detailText(r.data);
    if (r.status === 409) return "다른 사람이 이 카드를 먼저 수정했습니다. 최신 카드를 다시 불러온 뒤 다시 수정해 주세요.";
    if (r.status === 422) return "입력 오류: " + detailText(r.data);
    if (r.status === 428) return "카드 버전을 알 수 없습니다. 카드를 다시 불러와 주세요.";
    if (r.status === 429) return "다른 평가가 진행 중입니다. 끝난 뒤 다시 시도해 주세요.";
    if (r.status === 503 && r.retryAfter) return "에이전트가 아직 준비 중입니다. 잠시 후 다시 시도해 주세요.";
    if (r.status === 503) return "이 서버에서는 쓸 수 없습니다: " + detailText(r.data);
    return "오류 (" + r.status + "): " + detailText(r.data);
  };
  const say = (box, text, kind) => { box.textContent = text; box.className = "msg " + (kind || ""); };
  const fmt = (v) => typeof v === "number" ? (Number.isInteger(v) ? String(v) : v.toFixed(3)) : (v === null || v === undefined ? "-" : String(v));
  const lines = (text) => text.split("\\n").map(s => s.trim()).filter(Boolean);

  // ----- the token (this tab only) -------------------------------------------------------------
  const showToken = () => { $("token-state").textContent = sessionStorage.getItem(TOKEN_KEY) ? "토큰 적용됨 (이 브라우저를 닫으면 지워짐)" : "토큰 없음: 조회만 가능"; };
  $("token").value = sessionStorage.getItem(TOKEN_KEY) || "";
  $("token-save").addEventListener("click", async () => {
    const value = $("token").value.trim();
    if (!value) { sessionStorage.removeItem(TOKEN_KEY); showToken(); return; }
    const r = await fetch("../api/admin/check", {method: "POST", headers: {"Authorization": "Bearer " + value}})
      .then(x => ({status: x.status}), () => ({status: 0}));
    if (r.status === 200) { sessionStorage.setItem(TOKEN_KEY, value); showToken(); share(); return; }
    sessionStorage.removeItem(TOKEN_KEY); showToken();
    $("token-state").textContent = r.status === 401 ? "토큰이 올바르지 않습니다" : explain({status: r.status, data: null});
  });
  // the token reaches this browser's other dashboard tabs (same origin only), never the disk: a new tab
  // asks, an open tab that holds one answers; closing every tab forgets it
  const channel = "BroadcastChannel" in window ? new BroadcastChannel("toolroute-admin") : null;
  const share = () => { const t = sessionStorage.getItem(TOKEN_KEY); if (channel && t) channel.postMessage({token: t}); };
  if (channel) {
    channel.onmessage = (e) => {
      if (e.data === "token?") share();
      else if (e.data && typeof e.data.token === "string" && !sessionStorage.getItem(TOKEN_KEY)) {
        sessionStorage.setItem(TOKEN_KEY, e.data.token); $("token").value = e.data.token; showToken();
      }
    };
    if (!sessionStorage.getItem(TOKEN_KEY)) channel.postMessage("token?");
  }
  $("token").addEventListener("keydown", e => { if (e.key === "Enter") { e.preventDefault(); $("token-save").click(); } });
  showToken();

  // ----- 1. overview -------------------------------------------------------------------------
  const refresh = async () => {
    const [stats, ready, list] = await Promise.all([call("GET", "api/stats"), call("GET", "readyz"), call("GET", "api/tools")]);
    $("stat-status").textContent = ready.data && ready.data.ready ? "정상" : (ready.data && ready.data.index ? "LLM 응답 없음" : "준비 중");
    if (stats.ok) {
      const s = stats.data;
      $("stat-tools").textContent = fmt(s.tools); $("stat-vectors").textContent = fmt(s.vectors); $("stat-version").textContent = fmt(s.store_version);
      const more = ["검색 방식 " + fmt(s.arm)];
      if (s.last_build) more.push("마지막 색인 " + fmt(s.last_build.seconds) + "초");
      if (s.last_apply_seconds !== null && s.last_apply_seconds !== undefined) more.push("마지막 반영 " + fmt(s.last_apply_seconds) + "초");
      if (s.registry_version !== null && s.registry_version !== undefined) more.push("도구 레지스트리 버전 " + s.registry_version);
      showRemoved(s.removed || []);
      $("stat-more").textContent = more.join(" · ");
    } else {
      $("stat-more").textContent = explain(stats);
    }
    if (list.ok) { tools = list.data; showTools(); }
    if (stats.status === 503) setTimeout(refresh, 3000);
  };
  const showRemoved = (names) => {
    const ul = $("removed-list"); ul.replaceChildren();
    $("removed").classList.toggle("hidden", !names.length);
    for (const name of names) {
      const li = el("li"); li.dataset.name = name;
      const back = el("button", "light register", "다시 등록"); back.type = "button";
      back.addEventListener("click", async () => {
        if (!confirm(name + " 도구를 다시 등록할까요? 지금 카드 그대로 라우팅에 바로 반영됩니다.")) return;
        const r = await call("POST", "api/tools/" + encodeURIComponent(name) + "/register");
        if (!r.ok) { say($("card-msg"), explain(r), "error"); return; }
        await refresh();
        await loadCard(name, true);
        say($("card-msg"), "다시 등록했습니다: " + name + " (카드 버전 " + r.data.version + ")", "ok");
      });
      li.append(el("span", "", name), back); ul.appendChild(li);
    }
  };
  const showTools = () => {
    const needle = $("filter").value.trim().toLowerCase();
    const ul = $("tools"); ul.replaceChildren();
    for (const t of tools) {
      if (needle && !(t.name + " " + (t.purpose || "")).toLowerCase().includes(needle)) continue;
      const li = el("li"); li.dataset.name = t.name;
      if (current && current.name === t.name) li.classList.add("selected");
      li.append(el("div", "", t.name + " (v" + t.version + ")"), el("div", "purpose", t.purpose || ""));
      li.addEventListener("click", () => loadCard(t.name));
      ul.appendChild(li);
    }
  };
  $("filter").addEventListener("input", showTools);
  $("refresh").addEventListener("click", refresh);

  // ----- 2. card editing -----------------------------------------------------------------------
  const loadCard = async (name, keepMessage) => {
    const r = await call("GET", "api/tools/" + encodeURIComponent(name));
    if (!r.ok) { say($("card-msg"), explain(r), "error"); return; }
    current = r.data;
    const c = current.card;
    $("card-title").textContent = "카드 편집: " + current.name;
    $("card-meta").textContent = "카드 버전 " + current.version + " · 벡터 " + current.vectors + "개";
    $("purpose").value = c.purpose || "";
    $("when_to_use").value = (c.when_to_use || []).join("\\n");
    $("when_not_to_use").value = (c.when_not_to_use || []).join("\\n");
    $("tags").value = (c.tags || []).join(", ");
    $("message").value = ""; $("confirm-name").value = ""; $("unregister").disabled = true;
    $("reload-card").classList.add("hidden"); $("diff").classList.add("hidden"); $("conflict").classList.add("hidden");
    document.querySelectorAll(".invalid").forEach(e => e.classList.remove("invalid"));
    if (!keepMessage) say($("card-msg"), "");
    $("card-form").classList.remove("hidden");
    showTools();
    await loadHistory();
  };
  const afterWrite = async (text) => {
    await loadCard(current.name, true);
    say($("card-msg"), text, "ok");
    await refresh();
    if (lastQuery) await runRoute(lastQuery);  // the quick test shows the edit's effect at once
  };
  const FIELDS = ["purpose", "when_to_use", "when_not_to_use", "tags"];
  const formFields = () => ({purpose: $("purpose").value.trim(), when_to_use: lines($("when_to_use").value),
                             when_not_to_use: lines($("when_not_to_use").value),
                             tags: $("tags").value.split(/[,\\n]/).map(s => s.trim()).filter(Boolean)});
  const changed = (form, card) => {
    const body = {};
    for (const [field, value] of Object.entries(form)) {
      if (JSON.stringify(value) !== JSON.stringify(card[field] || (field === "purpose" ? "" : []))) body[field] = value;
    }
    return body;
  };
  const markInvalid = (r) => {  // a 422 names its fields (pydantic's `loc`, or "field: …" in the card's problems)
    const detail = r.data && r.data.detail;
    const text = JSON.stringify(detail || "");
    for (const field of FIELDS) if (text.includes(field)) $(field).classList.add("invalid");
  };
  const showConflict = async (mine) => {
    const r = await call("GET", "api/tools/" + encodeURIComponent(current.name));
    if (!r.ok) { $("reload-card").classList.remove("hidden"); return; }
    const theirs = r.data, pre = $("conflict-diff"); pre.replaceChildren();
    for (const field of Object.keys(mine)) {
      if (field === "message") continue;
      const before = [].concat(theirs.card[field] || []), after = [].concat(mine[field]);
      pre.appendChild(el("div", "muted", field));
      for (const line of before) if (!after.includes(line)) pre.appendChild(el("div", "del", "- " + line));
      for (const line of after) if (!before.includes(line)) pre.appendChild(el("div", "add", "+ " + line));
    }
    $("conflict-version").textContent = theirs.version;
    $("conflict").classList.remove("hidden"); $("reload-card").classList.remove("hidden");
    $("reapply").onclick = async () => {
      const r2 = await call("PUT", "api/tools/" + encodeURIComponent(current.name) + "/card", mine, theirs.version);
      if (r2.ok) { await afterWrite("최신 카드에 다시 적용했습니다: 카드 버전 " + r2.data.version); return; }
      say($("card-msg"), explain(r2), "error");
      if (r2.status === 409) await showConflict(mine);
    };
  };
  $("card-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    if (!current) return;
    document.querySelectorAll(".invalid").forEach(x => x.classList.remove("invalid"));
    const body = changed(formFields(), current.card);
    if (!Object.keys(body).length) { say($("card-msg"), "바뀐 내용이 없습니다."); return; }
    body.message = $("message").value.trim();
    $("save").disabled = true;
    const r = await call("PUT", "api/tools/" + encodeURIComponent(current.name) + "/card", body, current.version);
    $("save").disabled = false;
    if (r.ok) { await afterWrite("저장했습니다: 카드 버전 " + r.data.version + " (라우터 반영 " + fmt(r.data.applied_seconds) + "초)"); return; }
    say($("card-msg"), explain(r), "error");
    if (r.status === 422) markInvalid(r);
    if (r.status === 409) await showConflict(body);
  });
  $("reload-card").addEventListener("click", () => current && loadCard(current.name));

  // ----- 3. history, diff, rollback ------------------------------------------------------------
  const loadHistory = async () => {
    const body = $("history"); body.replaceChildren();
    const r = await call("GET", "api/tools/" + encodeURIComponent(current.name) + "/history");
    if (!r.ok) { body.appendChild(el("tr")).appendChild(el("td", "", explain(r))); return; }
    const rows = [...r.data].reverse().concat([{version: 0, kind: "원본", time: "", author: "YAML", message: "작성된 그대로"}]);
    for (const v of rows) {
      const tr = el("tr"); tr.dataset.version = v.version;
      const kind = {edit: "수정", rollback: "되돌림", register: "등록", unregister: "등록 해제"}[v.kind] || v.kind;
      const when = el("td", "time", v.time ? new Date(v.time).toLocaleString("ko-KR") : "");
      if (v.time) when.title = v.time;  // the stored UTC time, on hover
      tr.append(el("td", "", v.version), el("td", "", kind), when, el("td", "", v.author), el("td", "", v.message));
      const actions = el("td");
      if (v.version > 0) {
        const diff = el("button", "light diff", "차이");
        diff.type = "button"; diff.addEventListener("click", () => showDiff(v.version - 1, v.version));
        actions.appendChild(diff);
      }
      if (v.version !== current.version) {
        const back = el("button", "light rollback", "이 버전으로 되돌리기");
        back.type = "button"; back.addEventListener("click", () => rollback(v.version));
        actions.appendChild(back);
      }
      tr.appendChild(actions); body.appendChild(tr);
    }
  };
  const showDiff = async (from, to) => {
    const pre = $("diff"); pre.replaceChildren(); pre.classList.remove("hidden");
    const r = await call("GET", "api/tools/" + encodeURIComponent(current.name) + "/diff?from=" + from + "&to=" + to);
    if (!r.ok) { pre.textContent = explain(r); return; }
    pre.appendChild(el("div", "muted", "버전 " + r.data.from + " → " + r.data.to));
    if (!r.data.lines.length) pre.appendChild(el("div", "", "차이 없음"));
    for (const line of r.data.lines) pre.appendChild(el("div", line.trim().startsWith("+") ? "add" : line.trim().startsWith("-") ? "del" : "", line));
  };
  const rollback = async (to) => {
    if (!confirm(current.name + " 카드를 버전 " + to + "(으)로 되돌릴까요? 새 버전으로 저장되고 라우팅에 바로 반영됩니다.")) return;
    const r = await call("POST", "api/tools/" + encodeURIComponent(current.name) + "/rollback", {to}, current.version);
    if (r.ok) { await afterWrite("버전 " + to + "(으)로 되돌렸습니다: 카드 버전 " + r.data.version); return; }
    say($("card-msg"), explain(r), "error");
    if (r.status === 409) $("reload-card").classList.remove("hidden");
  };

  // ----- 5. unregister -------------------------------------------------------------------------
  $("confirm-name").addEventListener("input", () => { $("unregister").disabled = !current || $("confirm-name").value.trim() !== current.name; });
  $("unregister").addEventListener("click", async () => {
    const name = current.name;
    const r = await call("DELETE", "api/tools/" + encodeURIComponent(name));
    if (!r.ok) { say($("card-msg"), explain(r), "error"); return; }
    current = null;
    $("card-form").classList.add("hidden");
    $("card-title").textContent = "등록 해제했습니다: " + name + " (남은 벡터 " + r.data.vectors + "개)";
    await refresh();
  });

  // ----- 4. quick test -------------------------------------------------------------------------
  const runRoute = async (query) => {
    const seq = ++routeSeq;
    const k = Math.max(1, Math.min(20, parseInt($("k").value, 10) || 5));
    const r = await call("POST", "api/route", {query, k});
    if (seq !== routeSeq) return;  // a newer test was started
    const body = $("ranking"); body.replaceChildren();
    if (!r.ok) { say($("route-decision"), explain(r), "error"); $("ranking-table").classList.add("hidden"); return; }
    const p = r.data.call_probability;
    say($("route-decision"), (r.data.no_call ? "판정: 도구 호출 안 함" : "판정: 도구 호출") + (p === null || p === undefined ? "" : " (호출 확률 " + fmt(p) + ")"));
    r.data.tools.forEach((t, i) => {
      const tr = el("tr"); tr.dataset.name = t.name;
      tr.append(el("td", "", i + 1), el("td", "", t.name), el("td", "", fmt(t.score)));
      tr.addEventListener("click", () => loadCard(t.name));
      body.appendChild(tr);
    });
    $("ranking-table").classList.remove("hidden");
    $("ranking-table").dataset.query = query;
  };
  $("route-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const query = $("query").value.trim();
    if (query) { lastQuery = query; runRoute(query); }
  });

  // Batch recall and failure analysis read the shapes of `POST /api/eval` and `POST /api/proposals`:
  // the recall key is "recall@<k>", a metric the split cannot measure (NaN) is null.
  const metricNames = (k) => [["recall@" + k, "Recall@" + k], ["hit@1", "Hit@1"], ["mrr", "MRR"], ["no_call_accuracy", "무호출 정확도"]];
  const metricsTable = (runs, k) => {
    const names = metricNames(k);
    const table = el("table", "metrics"), head = el("tr");
    head.append(el("th", "", ""), ...names.map(([, label]) => el("th", "", label)));
    table.appendChild(head);
    for (const [label, m] of runs) {
      const tr = el("tr"); tr.append(el("td", "", label), ...names.map(([key]) => el("td", "", fmt(m[key])))); table.appendChild(tr);
    }
    return table;
  };
  const WHY = {"called on a no-call row": "무호출 질문에 호출", "refused (no-call)": "호출 안 함으로 판정"};
  const why = (text) => WHY[text] || fmt(text).replace(/^not in top (\\d+)$/, "$1위 안에 없음");
  const list = (v) => Array.isArray(v) ? (v.length ? v.join(", ") : "(도구 호출 안 함)") : fmt(v);
  let lastEval = null;  // the previous batch recall: shown beside the new one (before and after an edit)
  $("eval").addEventListener("click", async () => {
    const out = $("eval-result"); out.replaceChildren();
    say($("eval-msg"), "평가 중…");
    const r = await call("POST", "api/eval", {split: "dev", k: 5});
    if (!r.ok) { say($("eval-msg"), explain(r), "error"); return; }
    const d = r.data, version = $("stat-version").textContent;
    say($("eval-msg"), "일괄 재현율: " + d.split + " 분할 질문 " + d.n + "개, k=" + d.k + ", 1위 실패 " + d.n_failures + "개 (카드 저장소 버전 " + version + ")", "ok");
    const runs = [["지금 (버전 " + version + ")", d.before]];
    if (lastEval && lastEval.split === d.split && lastEval.k === d.k) runs.unshift(["직전 실행 (버전 " + lastEval.version + ")", lastEval.before]);
    out.appendChild(metricsTable(runs, d.k));
    lastEval = {split: d.split, k: d.k, before: d.before, version};
    const perTool = d.per_tool.slice(0, 8);  // weakest first
    if (perTool.length) {
      out.appendChild(el("h3", "", "재현율이 낮은 도구 (하위 " + perTool.length + "개)"));
      const t = el("table", "per-tool"); t.appendChild(el("tr")).append(el("th", "", "도구"), el("th", "", "질문 수"), el("th", "", "Recall@" + d.k));
      for (const p of perTool) t.appendChild(el("tr")).append(el("td", "", p.tool), el("td", "", fmt(p.n)), el("td", "", fmt(p.recall)));
      out.appendChild(t);
    }
    const failures = d.failures.slice(0, 10);
    if (failures.length) {
      out.appendChild(el("h3", "", "1위가 틀린 질문 (" + d.n_failures + "개 중 " + failures.length + "개)"));
      const t = el("table", "failures"); t.appendChild(el("tr")).append(el("th", "", "질문"), el("th", "", "정답"), el("th", "", "라우터 상위 3개"), el("th", "", "이유"));
      for (const f of failures) t.appendChild(el("tr")).append(el("td", "", f.query), el("td", "", list(f.expected)), el("td", "", list(f.got)), el("td", "", why(f.why)));
      out.appendChild(t);
    }
  });

  const effectTable = (effect) => {  // {metric: {before, after, diff, ci_low, ci_high, p_value}}: the paired comparison
    const t = el("table", "effect");
    t.appendChild(el("tr")).append(...["", "이전", "이후", "차이", "95% 신뢰구간", "p"].map(h => el("th", "", h)));
    for (const [metric, e] of Object.entries(effect)) {
      const ci = e.ci_low === null || e.ci_low === undefined ? "-" : "[" + fmt(e.ci_low) + ", " + fmt(e.ci_high) + "]";
      const diff = typeof e.diff === "number" ? (e.diff > 0 ? "+" : "") + fmt(e.diff) : fmt(e.diff);
      t.appendChild(el("tr")).append(el("td", "", metric.replace("hit@", "Hit@").replace("recall@", "Recall@")),
                                     el("td", "", fmt(e.before)), el("td", "", fmt(e.after)), el("td", "", diff), el("td", "", ci), el("td", "", fmt(e.p_value)));
    }
    return t;
  };
  const SKIP_KO = {  // `toolroute.cards.proposals.SKIP_CODES`
    no_json: "LLM 답에 수정안(JSON)이 없습니다", bad_values: "수정안의 도구·필드·문장 값이 올바르지 않습니다",
    unknown_card: "수정안이 없는 도구를 가리킵니다", wrong_tool: "기대 도구도, 대신 고른 도구도 아닌 도구를 고쳤습니다",
    bad_field: "이 필드는 수정안으로 바꿀 수 없습니다", bad_length: "문장이 비었거나 너무 깁니다",
    already_there: "카드에 이미 있는 문장입니다", like_eval: "평가 질문과 너무 비슷해 카드에 넣을 수 없습니다",
    llm_failed: "LLM 호출에 실패했습니다", other: "수정안을 쓸 수 없습니다"};
  const showProposal = (p, split) => {
    const div = el("div", "proposal" + (p.skipped ? " skipped" : "")); div.dataset.tool = p.tool || "";
    div.appendChild(el("div", "muted", "기대 도구 " + p.expected_tool + " · " + split + " 실패 질문 " + p.failures.length + "개"
                                       + (p.chosen.length ? " · 대신 고른 도구: " + p.chosen.join(", ") : "")));
    if (p.skipped) {  // no usable line: the reason (and the LLM's reply, to judge it)
      div.appendChild(el("div", "reason", "건너뜀: " + (SKIP_KO[p.skip_code] || "수정안을 쓸 수 없습니다")));
      div.lastChild.title = p.skipped;  // the server's own words, on hover
      if (p.reply) div.appendChild(el("pre", "muted", p.reply));
      return div;
    }
    const pre = el("pre");
    for (const line of p.diff) pre.appendChild(el("div", line.trim().startsWith("+") ? "add" : line.trim().startsWith("-") ? "del" : "", line));
    div.appendChild(pre);
    if (p.effect) div.appendChild(effectTable(p.effect));
    if (p.fixed && p.fixed.length) div.appendChild(el("div", "add", "고쳐지는 질문: " + p.fixed.join(" / ")));
    if (p.broken && p.broken.length) div.appendChild(el("div", "del", "새로 틀리는 질문: " + p.broken.join(" / ")));
    if (!p.accept) return div;
    const accept = el("button", "", "채택"), reject = el("button", "light", "거절"), msg = el("span", "msg");
    accept.type = reject.type = "button";
    accept.addEventListener("click", async () => {  // the normal card save the proposal spells out (If-Match: its card version)
      const a = p.accept;
      accept.disabled = true;
      const w = await call(a.method, a.path.replace(/^\\//, ""), a.body, a.if_match);
      if (!w.ok) { say(msg, explain(w), "error"); accept.disabled = w.status === 409; return; }
      say(msg, "채택했습니다: " + p.tool + " 카드 버전 " + a.if_match + " → " + w.data.version, "ok"); reject.disabled = true;
      if (current && current.name === p.tool) await loadCard(p.tool, true);
      await refresh();
      if (lastQuery) await runRoute(lastQuery);
    });
    reject.addEventListener("click", () => div.remove());  // rejecting is doing nothing
    div.append(el("div", "row"));
    div.lastChild.append(accept, reject, msg);
    return div;
  };
  $("proposals").addEventListener("click", async () => {
    const box = $("proposal-list"); box.replaceChildren();
    say($("eval-msg"), "실패 분석 중… (LLM이 카드 수정안을 만듭니다)");
    const r = await call("POST", "api/proposals", {split: "tune", k: 5, max: 3});
    if (!r.ok) { say($("eval-msg"), explain(r), "error"); return; }
    const d = r.data, usable = d.proposals.filter(p => !p.skipped).length;
    say($("eval-msg"), "실패 분석: " + d.split + " 분할 질문 " + d.n + "개, 1위 실패 " + d.n_failures + "개 → 수정안 " + usable + "건"
                       + (d.proposals.length > usable ? ", 건너뜀 " + (d.proposals.length - usable) + "건" : ""), "ok");
    box.appendChild(el("h3", "", "카드 수정안 (" + d.split + " 분할에서 측정, 저장 전)"));
    for (const p of d.proposals) box.appendChild(showProposal(p, d.split));
  });

  // ----- 6. module hot reload ------------------------------------------------------------------
  $("module-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const module = $("module").value.trim();
    if (!module) return;
    say($("module-msg"), "다시 불러오는 중…");
    const r = await call("POST", "api/tools/reload-module/" + encodeURIComponent(module));
    if (!r.ok) { say($("module-msg"), explain(r), "error"); return; }
    const d = r.data;
    say($("module-msg"), "다시 불러왔습니다: " + d.module + " · 교체한 도구 " + d.tools.length + "개 (" + d.tools.join(", ") + ") · 도구 레지스트리 버전 "
                         + d.registry_version + (d.warnings.length ? " · 경고: " + d.warnings.join(" / ") : ""), "ok");
    await refresh();
  });

  refresh();
})();
</script>
</body>
</html>
"""


def render_admin_page(label: str) -> str:
    """The dashboard of one domain. It holds no secret: the operator types the admin token in the page."""
    return PAGE.replace("{{title}}", html.escape(f"toolroute · {label} 도구 관리"))
