// copse-hooks ui: a small hash-routed page over the local JSON API.
// Everything is built with DOM calls (text is never parsed as HTML).
"use strict";
(function () {
  // The session is an HttpOnly cookie the script never sees; the nonce proves a
  // state-changing request comes from this loaded page.
  const NONCE = document.querySelector('meta[name="copse-nonce"]').content;
  const main = document.getElementById("main");

  // ---------- helpers ----------
  function h(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === "class") e.className = v;
      else if (k === "text") e.textContent = v;
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else if (k === "value") e.value = v;
      else e.setAttribute(k, v === true ? "" : String(v));
    }
    for (const c of children.flat()) {
      if (c === undefined || c === null || c === false) continue;
      e.appendChild(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
    }
    return e;
  }

  function url(path, params) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(params || {})) {
      if (v !== undefined && v !== null && v !== "") q.set(k, v);
    }
    const qs = q.toString();
    return qs ? `${path}?${qs}` : path;
  }

  // A JSON answer, or the server's plain-text refusal (not signed in, no nonce) as
  // the error.
  async function answer(res) {
    const text = await res.text();
    let body;
    try {
      body = JSON.parse(text);
    } catch (_) {
      body = { error: text.trim() || `HTTP ${res.status}` };
    }
    if (!res.ok) throw new Error((body && body.error) || `HTTP ${res.status}`);
    return body;
  }

  async function api(path, params) {
    return answer(await fetch(url(path, params), { credentials: "same-origin" }));
  }

  async function post(path, payload) {
    const res = await fetch(path, {
      method: "POST",
      credentials: "same-origin",
      headers: { "X-Copse-Nonce": NONCE, "Content-Type": "application/json" },
      body: JSON.stringify(payload),
    });
    return answer(res);
  }

  const pad = (n, w = 2) => String(n).padStart(w, "0");
  function when(ms) {
    const d = new Date(ms);
    return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  }
  function ago(ms) {
    const s = Math.max(0, (Date.now() - ms) / 1000);
    if (s < 60) return `${Math.floor(s)}s ago`;
    if (s < 3600) return `${Math.floor(s / 60)}m ago`;
    if (s < 86400) return `${Math.floor(s / 3600)}h ago`;
    return `${Math.floor(s / 86400)}d ago`;
  }
  function ms(v) {
    if (v === null || v === undefined) return "–";
    if (v >= 3600000) return `${Math.floor(v / 3600000)} h ${Math.round((v % 3600000) / 60000)} min`;
    if (v >= 60000) return `${Math.floor(v / 60000)} min ${Math.round((v % 60000) / 1000)} s`;
    if (v >= 10000) return `${(v / 1000).toFixed(1)} s`;
    return `${v} ms`;
  }
  function pct(x) {
    if (!x) return "0%";
    return x < 0.001 ? "<0.1%" : `${(x * 100).toFixed(x < 0.1 ? 1 : 0)}%`;
  }
  function basename(p) {
    const parts = String(p).split("/");
    return parts.slice(-2).join("/");
  }
  function outcomeBadge(o) {
    const label = { allow: "allow", deny: "deny", ask: "ask", none: "no opinion", failed: "failed" }[o] || o;
    return h("span", { class: `badge ${o}` }, label);
  }
  function hookKey(h2) { return `${h2.source}\u001f${h2.command}`; }
  // The hook's script name: the last path part of its command's first word.
  function hookName(command) {
    const first = String(command).trim().split(/\s+/)[0] || String(command);
    return first.split("/").filter(Boolean).pop() || first;
  }
  // What the agent tried, as a node: the tool and a one-line summary of its input.
  function toolCall(r, cls) {
    const t = r.tool_call;
    if (!t) return h("span", { class: `faint ${cls || ""}` }, "–");
    return h("span", { class: `call ${cls || ""}`, title: t.input ? `${t.tool} ${t.input}` : t.tool },
      h("strong", {}, t.tool), t.input ? " " : null, t.input ? h("span", { class: "mono" }, t.input) : null);
  }
  // The exit code, always: a number, or why there is none.
  function exitText(r) {
    if (r.exit_code !== null && r.exit_code !== undefined) return `exit ${r.exit_code}`;
    if (r.failure === "timeout") return "timed out, killed";
    if (r.failure === "spawn") return "did not start";
    if (r.kind === "dropped") return "not run (dropped)";
    if (r.kind === "suppressed") return "not run (suppressed)";
    return "no exit code (killed)";
  }
  const TIMEOUT_HINT = "The hook ran longer than its timeout and was killed, so its answer was never read (this is not a parse error). Make it faster, or raise its `timeout` in the hook config.";
  // Next steps for an empty store, shared by the pages that read runs.
  function noRunsYet() {
    return h("div", { class: "empty" },
      h("p", {}, "Nothing is recorded yet: runs appear here when an agent calls hooks through copse-hooks."),
      h("ul", { class: "steps" },
        h("li", {}, "Write a first hook: ", h("code", {}, "copse-hooks init")),
        h("li", {}, "Try it without an agent: ", h("code", {}, `copse-hooks gate run_shell --input '{"command":"rm -rf /"}' --explain`), " or the ", h("a", { href: "#/tester" }, "Tester")),
        h("li", {}, "Connect an agent: ", h("code", {}, "copse-hooks install --agent claude")),
        h("li", {}, "See an example store: ", h("code", {}, "copse-hooks ui --demo"))));
  }

  // JSON, pretty and highlighted, as spans.
  function jsonView(value) {
    const pre = h("pre", { class: "code" });
    const text = JSON.stringify(value, null, 2);
    const re = /("(?:\\.|[^"\\])*")(\s*:)?|\b(true|false|null)\b|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/g;
    let last = 0, m;
    while ((m = re.exec(text))) {
      if (m.index > last) pre.appendChild(document.createTextNode(text.slice(last, m.index)));
      if (m[1]) {
        pre.appendChild(h("span", { class: m[2] ? "j-key" : "j-str" }, m[1]));
        if (m[2]) pre.appendChild(document.createTextNode(m[2]));
      } else if (m[3]) pre.appendChild(h("span", { class: "j-lit" }, m[3]));
      else pre.appendChild(h("span", { class: "j-num" }, m[4]));
      last = re.lastIndex;
    }
    pre.appendChild(document.createTextNode(text.slice(last)));
    return pre;
  }
  function streamView(name, text, parsed, truncated) {
    const head = h("div", { class: "stream-head" }, h("h3", {}, name));
    if (parsed !== null && parsed !== undefined && text.trim() !== "") head.appendChild(h("span", { class: "badge outline" }, "JSON"));
    if (truncated) head.appendChild(h("span", { class: "badge warn" }, "truncated at 64 KiB"));
    let body;
    if (!text || text.trim() === "") body = h("p", { class: "muted" }, "(empty)");
    else if (parsed !== null && parsed !== undefined) body = jsonView(parsed);
    else body = h("pre", { class: "code" }, text);
    return h("section", { "data-stream": name }, head, body);
  }

  function setMain(...nodes) {
    main.replaceChildren(...nodes.filter((n) => n !== null && n !== undefined && n !== false));
  }
  function fail(err) {
    setMain(h("div", { class: "panel" }, h("h2", { class: "error" }, "Something went wrong"), h("p", {}, String(err.message || err))));
  }
  function empty(text) { return h("div", { class: "empty" }, text); }

  function parseHash() {
    const raw = location.hash.replace(/^#\/?/, "");
    const [path, query] = raw.split("?");
    const parts = path.split("/").map(decodeURIComponent);
    return { page: parts[0] || "sources", arg: parts.slice(1).join("/"), params: new URLSearchParams(query || "") };
  }
  function go(hash) { location.hash = hash; }

  function windowPicker(current, onPick) {
    const seg = h("div", { class: "seg", role: "group", "aria-label": "Time window" });
    for (const w of ["1h", "24h", "7d", "30d", "all"]) {
      seg.appendChild(h("button", { type: "button", "aria-pressed": String(w === current), "data-window": w, onclick: () => onPick(w) }, w));
    }
    return seg;
  }

  // Shared data.
  let overview = null;
  let sourcesCache = null;
  async function loadSources(windowName) {
    sourcesCache = await api("/api/sources", { window: windowName || "24h" });
    return sourcesCache;
  }

  // ---------- Sources ----------
  async function pageSources(params) {
    const win = params.get("window") || "24h";
    const data = await loadSources(win);
    const hooks = data.hooks;
    const active = hooks.filter((x) => x.active).length;
    const untrusted = hooks.filter((x) => x.trust !== "trusted").length;
    const unsandboxed = hooks.filter((x) => !x.sandboxed).length;
    const runs = hooks.reduce((a, x) => a + x.stats.runs, 0);
    const failures = hooks.reduce((a, x) => a + x.stats.failures, 0);
    const head = h("div", { class: "page-head" },
      h("div", {}, h("h1", {}, "Sources"), h("p", { class: "muted" }, "Every hook discovery finds, in every dialect and scope, and how it has behaved.")),
      windowPicker(win, (w) => go(`#/sources?window=${w}`)));
    const notes = [];
    if (!data.hooks_enabled) notes.push(h("p", { class: "note warn" }, "External hooks are off: nothing below runs (turn on with `copse-hooks enable`)."));
    if (overview && overview.sandbox && !overview.sandbox.enforced) notes.push(h("p", { class: "note warn" }, `Sandbox NOT enforced on this machine (${overview.sandbox.enforcement}): hooks run unsandboxed.`));
    const cards = h("div", { class: "cards" },
      card("Hooks", hooks.length), card("Active", active),
      card("Not trusted", untrusted, untrusted ? "warn" : ""), card("Unsandboxed", unsandboxed, unsandboxed ? "bad" : ""),
      card(`Runs (${win})`, runs.toLocaleString()), card("Failure rate", pct(runs ? failures / runs : 0), failures ? "warn" : ""));
    const table = h("table", { id: "sources-table" },
      h("thead", {}, h("tr", {},
        h("th", {}, "Event"), h("th", {}, "Command"), h("th", {}, "State"),
        h("th", { class: "num" }, "Runs"), h("th", { class: "num" }, "Failed"),
        h("th", { class: "num" }, "p50"), h("th", { class: "num" }, "p95"), h("th", { class: "hide-narrow" }, "Last failure"))));
    const tbody = h("tbody");
    let current = null;
    for (const x of hooks) {
      if (x.source !== current) {
        current = x.source;
        tbody.appendChild(h("tr", { class: "group" }, h("td", { colspan: 8 },
          h("strong", {}, x.source), " ",
          h("span", { class: "badge outline" }, `${x.dialect} · ${x.scope}`), " ",
          h("a", { href: `#/source?path=${encodeURIComponent(x.source)}` }, "view file"))));
      }
      const state = h("div", { class: "badges" });
      state.appendChild(x.active ? h("span", { class: "badge ok" }, "active") : h("span", { class: "badge warn" }, "inactive"));
      if (x.trust === "changed") state.appendChild(h("span", { class: "badge bad", title: "its config changed since the workspace was trusted" }, "changed since trusted"));
      else if (x.trust === "untrusted") state.appendChild(h("span", { class: "badge warn" }, "not trusted"));
      if (!x.supported) state.appendChild(h("span", { class: "badge outline" }, "unsupported event"));
      if (x.matcher_error) state.appendChild(h("span", { class: "badge bad", title: x.matcher_error }, "invalid matcher"));
      state.appendChild(x.sandboxed ? h("span", { class: "badge outline" }, "sandboxed") : h("span", { class: "badge bad" }, "UNSANDBOXED"));
      state.appendChild(h("span", { class: "badge outline" }, x.fail_closed ? "fails closed" : "fails open"));
      state.appendChild(h("span", { class: "badge outline" }, `timeout ${x.timeout_ms / 1000}s`));
      const s = x.stats;
      const lf = s.last_failure;
      const last = lf ? h("a", { href: `#/run/${encodeURIComponent(lf.run_id)}`, title: lf.message || lf.kind }, `${lf.kind} · ${ago(lf.started_at)}`)
        : x.last_error ? h("span", { class: "error" }, x.last_error) : h("span", { class: "faint" }, "–");
      const row = h("tr", { class: "clickable", tabindex: "0", "data-hook": `${x.event}:${x.command}`,
        title: "Show this hook's runs" },
        h("td", {}, h("strong", {}, x.event), h("span", { class: "faint" }, `[${x.entry}]`),
          x.matcher ? h("div", { class: "faint mono" }, `matcher ${x.matcher}`) : null),
        h("td", { class: "cmd" }, x.command),
        h("td", {}, state),
        h("td", { class: "num" }, s.runs.toLocaleString()),
        h("td", { class: "num" }, s.runs ? pct(s.failure_rate) : "–"),
        h("td", { class: "num" }, ms(s.p50_ms)),
        h("td", { class: "num" }, ms(s.p95_ms)),
        h("td", { class: "hide-narrow" }, last));
      const open = () => go(`#/runs?source=${encodeURIComponent(x.source)}&command=${encodeURIComponent(x.command)}`);
      row.addEventListener("click", (e) => { if (e.target.tagName !== "A") open(); });
      row.addEventListener("keydown", (e) => { if (e.key === "Enter") open(); });
      tbody.appendChild(row);
    }
    table.appendChild(tbody);
    const trustPanel = h("div", { class: "panel" }, h("h2", {}, "Workspace trust"));
    for (const w of data.workspaces) {
      const rows = w.configs.concat((w.scripts || []).filter((c) => c.change !== "unchanged")).map((c) => h("li", {}, h("code", {}, c.path), " ",
        h("span", { class: `badge ${c.change === "unchanged" ? "ok" : c.change === "not pinned" ? "outline" : "bad"}` }, c.change)));
      trustPanel.appendChild(h("div", {},
        h("p", {}, h("code", {}, w.root), " ", w.trusted ? h("span", { class: "badge ok" }, w.pinned ? "trusted · pinned" : "trusted") : h("span", { class: "badge warn" }, "not trusted"),
          " ", h("a", { href: "#/trust" }, w.trusted ? "review" : "review and trust…")),
        rows.length ? h("ul", {}, rows) : h("p", { class: "muted" }, "No project hook configs.")));
    }
    const warnings = data.warnings.length ? h("div", { class: "panel" }, h("h2", {}, `Warnings (${data.warnings.length})`),
      h("ul", { id: "warnings" }, data.warnings.map((w) => h("li", {}, h("code", {}, basename(w.source)), w.event ? ` ${w.event}: ` : ": ", w.message)))) : null;
    setMain(head, ...notes, cards,
      h("div", { class: "panel flush" }, hooks.length ? h("div", { class: "table-wrap" }, table) : h("div", { class: "empty" },
        h("p", {}, "No hooks declared in any config discovery reads."),
        h("p", {}, "Write a first, commented hook for this workspace with ", h("code", {}, "copse-hooks init"), ", then trust it on the ", h("a", { href: "#/trust" }, "Trust"), " page."))),
      warnings, trustPanel);
  }
  function card(label, value, cls, small) {
    return h("div", { class: `card ${cls || ""}` }, h("div", { class: "label" }, label), h("div", { class: small ? "value small" : "value" }, String(value)));
  }

  // ---------- Runs ----------
  const RUN_FILTERS = ["agent", "event", "outcome", "failure", "hook", "session", "since"];
  let runsState = null;

  async function pageRuns(params) {
    const [filters, srcs] = await Promise.all([api("/api/filters"), sourcesCache ? Promise.resolve(sourcesCache) : loadSources("24h")]);
    const sel = (id, label, options, value) => h("label", { class: "field" }, label,
      h("select", { id: `f-${id}`, "data-filter": id, onchange: applyFilters },
        h("option", { value: "" }, "any"),
        options.map(([v, t]) => h("option", { value: v, selected: v === value }, t))));
    const hookOptions = [];
    const seen = new Set();
    for (const x of srcs.hooks) {
      const k = hookKey(x);
      if (seen.has(k)) continue;
      seen.add(k);
      hookOptions.push([k, `${x.command.length > 40 ? x.command.slice(0, 39) + "…" : x.command} (${basename(x.source)})`]);
    }
    const hookValue = params.get("source") && params.get("command") ? `${params.get("source")}\u001f${params.get("command")}` : "";
    if (hookValue && !seen.has(hookValue)) hookOptions.push([hookValue, params.get("command")]);
    const events = [...new Set([...filters.events, ...filters.canonical])].sort();
    const bar = h("div", { class: "panel" }, h("div", { class: "filters", id: "run-filters" },
      sel("agent", "Agent", filters.dialects.map((d) => [d, { cursor: "Cursor", claude: "Claude Code", copse: "Copse", gemini: "Gemini CLI", codex: "Codex" }[d] || d]), params.get("agent") || params.get("dialect") || ""),
      sel("event", "Event", events.map((e) => [e, e]), params.get("event") || ""),
      sel("outcome", "Decision", [["allow", "allow"], ["ask", "ask"], ["deny", "deny"], ["none", "no opinion"], ["failed", "failed"]], params.get("outcome") || ""),
      sel("failure", "Failure", [["any", "any failure"], ...filters.failures.map((f) => [f, f])], params.get("failure") || ""),
      sel("hook", "Hook", hookOptions, hookValue),
      sel("since", "Time", [["15m", "last 15 minutes"], ["1h", "last hour"], ["24h", "last 24 hours"], ["7d", "last 7 days"], ["30d", "last 30 days"]], params.get("since") || ""),
      h("label", { class: "field" }, "Session", h("input", { id: "f-session", "data-filter": "session", value: params.get("session") || "", placeholder: "session id", onchange: applyFilters })),
      h("div", {}, h("button", { type: "button", class: "btn", id: "f-clear", onclick: () => go("#/runs") }, "Clear"))));
    const table = h("table", { id: "runs-table" }, h("thead", {}, h("tr", {},
      h("th", {}, "When"), h("th", {}, "Decision"), h("th", {}, "Event"), h("th", {}, "Tool call"), h("th", {}, "Hook"),
      h("th", { class: "hide-narrow" }, "Agent"), h("th", { class: "num" }, "Duration"), h("th", {}, "Status"))));
    const tbody = h("tbody");
    table.appendChild(tbody);
    const more = h("button", { type: "button", class: "btn hidden", id: "runs-more" }, "Load older runs");
    const count = h("span", { class: "muted", id: "runs-count" });
    setMain(h("div", { class: "page-head" }, h("div", {}, h("h1", {}, "Runs"), h("p", { class: "muted" }, "Every recorded hook run, newest first. Updates live while an agent works.")), count),
      bar, h("div", { class: "panel flush" }, h("div", { class: "table-wrap" }, table)), h("div", { class: "row" }, more));
    const q = {};
    for (const k of ["agent", "dialect", "event", "outcome", "failure", "session", "since", "source", "command"]) if (params.get(k)) q[k] = params.get(k);
    runsState = { q, tbody, more, count, next: null, shown: 0, topSeq: 0, ids: new Set() };
    more.addEventListener("click", () => loadRuns(false));
    await loadRuns(true);
  }

  function applyFilters() {
    const p = new URLSearchParams();
    for (const el of document.querySelectorAll("[data-filter]")) {
      const v = el.value;
      if (!v) continue;
      if (el.dataset.filter === "hook") {
        const [source, command] = v.split("\u001f");
        p.set("source", source);
        p.set("command", command);
      } else p.set(el.dataset.filter, v);
    }
    go(`#/runs${p.toString() ? "?" + p : ""}`);
  }

  function runRow(r, fresh) {
    const failure = r.failure === "timeout" ? h("span", { class: "badge failed", title: TIMEOUT_HINT }, "timeout")
      : r.failure ? h("span", { class: "badge failed" }, r.failure) : null;
    const status = h("div", { class: "badges status" }, failure,
      h("span", { class: "faint exit", "data-exit": r.exit_code === null ? "" : String(r.exit_code) }, exitText(r)),
      r.sandbox === "blocked" ? h("span", { class: "badge bad" }, "sandbox blocked") : null);
    const row = h("tr", { class: `clickable${fresh ? " fresh" : ""}`, tabindex: "0", "data-run-id": r.run_id },
      h("td", { class: "when", title: when(r.started_at) }, when(r.started_at)),
      h("td", {}, outcomeBadge(r.outcome)),
      h("td", { class: "ev" }, h("strong", {}, r.event)),
      h("td", { class: "tool" }, toolCall(r)),
      h("td", { class: "cmd", title: r.command }, r.command),
      h("td", { class: "hide-narrow" }, h("span", { class: "badge outline" }, `${r.dialect} · ${r.scope}`)),
      h("td", { class: "num" }, ms(r.duration_ms)),
      h("td", { class: "st" }, status));
    const open = () => go(`#/run/${encodeURIComponent(r.run_id)}`);
    row.addEventListener("click", open);
    row.addEventListener("keydown", (e) => {
      if (e.key === "Enter") open();
      else if (e.key === "ArrowDown" && row.nextElementSibling) { e.preventDefault(); row.nextElementSibling.focus(); }
      else if (e.key === "ArrowUp" && row.previousElementSibling) { e.preventDefault(); row.previousElementSibling.focus(); }
    });
    return row;
  }

  async function loadRuns(first) {
    const st = runsState;
    const params = Object.assign({ limit: 100 }, st.q);
    if (!first && st.next) params.after = st.next;
    const page = await api("/api/runs", params);
    if (first) { st.tbody.replaceChildren(); st.ids.clear(); st.shown = 0; }
    for (const r of page.runs) { st.tbody.appendChild(runRow(r, false)); st.ids.add(r.run_id); }
    st.shown += page.runs.length;
    st.next = page.next;
    st.topSeq = Math.max(st.topSeq, page.latest_seq || 0);
    st.more.classList.toggle("hidden", !page.next);
    st.count.textContent = st.shown ? `${st.shown.toLocaleString()}${page.next ? "+" : ""} runs` : "";
    if (first && !page.runs.length) {
      const filtered = Object.keys(st.q).length > 0;
      st.tbody.appendChild(h("tr", {}, h("td", { colspan: 8 }, filtered
        ? h("div", { class: "empty" }, "No recorded hook runs match these filters. ", h("a", { href: "#/runs" }, "Clear the filters"), ".")
        : noRunsYet())));
    }
  }

  async function refreshRunsTop() {
    const st = runsState;
    if (!st || !document.body.contains(st.tbody)) return;
    const page = await api("/api/runs", Object.assign({ limit: 100 }, st.q));
    const fresh = page.runs.filter((r) => !st.ids.has(r.run_id));
    if (!fresh.length) return;
    const placeholder = st.tbody.querySelector("td[colspan]");
    if (placeholder) st.tbody.replaceChildren();
    for (const r of fresh.reverse()) { st.tbody.insertBefore(runRow(r, true), st.tbody.firstChild); st.ids.add(r.run_id); }
    st.shown += fresh.length;
    st.count.textContent = `${st.shown.toLocaleString()}${st.next ? "+" : ""} runs`;
  }

  // ---------- Run detail ----------
  async function pageRun(id) {
    const r = await api(`/api/runs/${encodeURIComponent(id)}`);
    const chips = h("div", { class: "badges" }, outcomeBadge(r.outcome),
      h("span", { class: "badge outline" }, r.event),
      h("span", { class: "badge outline" }, exitText(r)),
      h("span", { class: "badge outline" }, ms(r.duration_ms)),
      r.failure === "timeout" ? h("span", { class: "badge failed", title: TIMEOUT_HINT }, "timed out")
        : r.parse_ok || r.exit_code === null ? null : h("span", { class: "badge warn" }, "parse failed"),
      r.sandbox ? h("span", { class: `badge ${r.sandbox_blocked ? "bad" : "outline"}` }, `sandbox ${r.sandbox}`) : null,
      r.kind !== "run" ? h("span", { class: "badge warn" }, r.kind) : null);
    const dd = (v) => (v === null || v === undefined || v === "" ? h("span", { class: "faint" }, "–") : v);
    const kv = h("dl", { class: "kv", id: "run-kv" },
      h("dt", {}, "Run"), h("dd", { class: "mono" }, r.run_id),
      h("dt", {}, "Started"), h("dd", {}, `${when(r.started_at)} (${ago(r.started_at)})`),
      h("dt", {}, "Hook"), h("dd", {}, `${r.dialect} · ${r.scope} · ${r.event} (canonical ${r.canonical_event})`),
      h("dt", {}, "Tool call"), h("dd", { id: "run-tool" }, toolCall(r)),
      h("dt", {}, "Command"), h("dd", { class: "mono" }, r.command),
      h("dt", {}, "Source"), h("dd", {}, h("a", { href: `#/source?path=${encodeURIComponent(r.source)}`, id: "run-source" }, r.source)),
      h("dt", {}, "Session"), h("dd", {}, r.session_id ? h("a", { href: `#/session/${encodeURIComponent(r.session_id)}` }, r.session_id) : dd(""), r.turn_id ? h("span", { class: "faint" }, ` · turn ${r.turn_id}`) : null),
      h("dt", {}, "Outcome"), h("dd", {}, r.outcome, r.decision ? ` (decision ${r.decision})` : ""),
      h("dt", {}, "Failure"), h("dd", { class: r.failure ? "error" : "" }, r.failure ? `${r.failure}${r.failure_message ? " — " + r.failure_message : ""}` : dd(null)),
      h("dt", {}, "Failure policy"), h("dd", {}, dd(r.policy && `fails ${r.policy}`)),
      h("dt", {}, "Sandbox"), h("dd", {}, dd(r.sandbox), r.sandbox_blocked ? h("span", { class: "badge bad" }, "the sandbox blocked an access") : null),
      h("dt", {}, "Duration"), h("dd", {}, `${r.duration_ms} ms`),
      h("dt", {}, "Exit code"), h("dd", {}, r.exit_code === null ? `none: ${exitText(r)}` : String(r.exit_code)),
      h("dt", {}, "Response parsed"), h("dd", {}, r.parse_ok ? "yes" : r.failure === "timeout" ? "not read: the hook timed out" : r.exit_code === null ? "no response" : "no"),
      h("dt", {}, "Session env"), h("dd", {}, r.session_env ? "exported variables" : "no"));
    const channels = [];
    const ch = (name, v) => { if (v !== null && v !== undefined) channels.push(h("section", {}, h("div", { class: "stream-head" }, h("h3", {}, name)), typeof v === "string" ? h("pre", { class: "code" }, v) : jsonView(v))); };
    ch("Message to the agent", r.agent_message);
    ch("Message to you", r.user_message);
    ch("Halt reason", r.halt_reason);
    ch("Injected context", r.inject_context);
    ch("Rewritten tool input", r.updated_input);
    ch("Queued message", r.queued_message);
    setMain(
      h("div", { class: "page-head" }, h("div", {}, h("h1", {}, `Run of ${r.event}`), chips),
        h("div", { class: "row" }, h("button", { type: "button", class: "btn", onclick: () => history.back() }, "← Back"))),
      r.failure === "timeout" ? h("p", { class: "note warn", id: "run-timeout" }, h("strong", {}, "Timed out. "), TIMEOUT_HINT, r.failure_message ? ` (${r.failure_message})` : "") : null,
      r.sandbox_blocked ? h("p", { class: "note bad" }, "The sandbox blocked something this hook tried to do (see stderr).") : null,
      r.outcome_truncated ? h("p", { class: "note warn" }, "Some outcome text was cut at 64 KiB.") : null,
      h("div", { class: "panel", id: "run-detail" }, kv),
      channels.length ? h("div", { class: "panel" }, h("h2", {}, "What the hook asked for"), channels) : null,
      h("div", { class: "panel" }, h("h2", {}, "Streams"),
        streamView("stdin", r.stdin, r.stdin_json, r.stdin_truncated),
        streamView("stdout", r.stdout, r.stdout_json, r.stdout_truncated),
        streamView("stderr", r.stderr, r.stderr_json, r.stderr_truncated)));
  }

  // ---------- Sessions ----------
  async function pageSessions() {
    const data = await api("/api/sessions", { limit: 60 });
    const list = h("div", { class: "sessions", id: "sessions" });
    // One-run sessions the engine named itself (`local-…`: a one-off `gate` without a
    // session id) are collapsed into one card instead of a card each.
    const oneOff = data.sessions.filter((s) => s.runs === 1 && String(s.session_id).startsWith("local-"));
    const real = data.sessions.filter((s) => !oneOff.includes(s));
    for (const s of real) {
      list.appendChild(h("a", { class: "panel session-card", href: `#/session/${encodeURIComponent(s.session_id)}`, "data-session": s.session_id },
        h("div", { class: "sid" }, s.session_id || "(no session id)"),
        h("div", { class: "muted" }, `${when(s.first_at)} → ${when(s.last_at).slice(11)} · ${ago(s.last_at)}`),
        h("div", { class: "badges" },
          h("span", { class: "badge outline" }, s.runs === 1 ? "1 run" : `${s.runs.toLocaleString()} runs`),
          s.denials ? h("span", { class: "badge deny" }, `${s.denials} denied`) : null,
          s.failures ? h("span", { class: "badge failed" }, `${s.failures} failed`) : null,
          s.dialects.map((d) => h("span", { class: "badge outline" }, d)))));
    }
    if (oneOff.length) {
      const denied = oneOff.filter((s) => s.denials).length;
      const failed = oneOff.filter((s) => s.failures).length;
      list.appendChild(h("details", { class: "panel session-card one-off", id: "one-off-sessions" },
        h("summary", {}, h("span", { class: "sid" }, `${oneOff.length} one-off run${oneOff.length === 1 ? "" : "s"} without a session`),
          h("div", { class: "muted" }, `single gate calls, latest ${ago(oneOff[0].last_at)}`),
          h("div", { class: "badges" }, denied ? h("span", { class: "badge deny" }, `${denied} denied`) : null,
            failed ? h("span", { class: "badge failed" }, `${failed} failed`) : null)),
        h("ul", {}, oneOff.map((s) => h("li", {}, h("a", { href: `#/runs?session=${encodeURIComponent(s.session_id)}`, "data-one-off": s.session_id }, when(s.first_at)),
          s.denials ? h("span", { class: "badge deny" }, "denied") : null, s.failures ? h("span", { class: "badge failed" }, "failed") : null)))));
    }
    setMain(h("div", { class: "page-head" }, h("div", {}, h("h1", {}, "Sessions"), h("p", { class: "muted" }, "The most recently active agent sessions. Open one for its timeline."))),
      data.sessions.length ? list : h("div", { class: "panel" }, noRunsYet()));
  }

  async function pageSession(id) {
    const data = await api(`/api/sessions/${encodeURIComponent(id)}`);
    const runs = data.runs;
    const t0 = runs[0].started_at;
    const t1 = Math.max(...runs.map((r) => r.started_at + Math.max(1, r.duration_ms)));
    const span = Math.max(1, t1 - t0);
    const grid = h("div", { class: "timeline", id: "timeline", role: "list" });
    let turn = null;
    for (const r of runs) {
      if (r.turn_id !== turn) {
        turn = r.turn_id;
        grid.appendChild(h("div", { class: "t-row turn", role: "listitem" }, h("div", {}, turn ? `turn ${turn}` : "no turn"), h("div", {}, `+${((r.started_at - t0) / 1000).toFixed(1)} s`), h("div", {})));
      }
      const bar = h("a", { class: `t-bar ${r.outcome}${r.kind !== "run" ? " detached" : ""}`, href: `#/run/${encodeURIComponent(r.run_id)}`,
        title: `${r.event} · ${r.command}${r.tool_call ? " · " + r.tool_call.tool + " " + r.tool_call.input : ""} · ${r.outcome} · ${exitText(r)} · ${r.duration_ms} ms${r.kind !== "run" ? " · " + r.kind : ""}`, "aria-label": `${r.event} ${r.outcome} ${r.duration_ms} ms` });
      bar.style.left = `${((r.started_at - t0) / span) * 100}%`;
      bar.style.width = `${Math.max(0.4, (r.duration_ms / span) * 100)}%`;
      grid.appendChild(h("div", { class: "t-row", role: "listitem" },
        h("div", { class: "t-label", title: `${r.event} · ${r.command}${r.tool_call ? "\n" + r.tool_call.tool + " " + r.tool_call.input : ""}` },
          h("div", {}, h("span", { class: "ev" }, r.event), " ", h("span", { class: "cm" }, hookName(r.command))),
          r.tool_call ? toolCall(r, "t-call") : null),
        h("div", { class: "t-track" }, bar),
        h("div", { class: "t-dur" }, ms(r.duration_ms))));
    }
    const denied = runs.filter((r) => r.outcome === "deny").length;
    const failed = runs.filter((r) => r.failure).length;
    setMain(
      h("div", { class: "page-head" }, h("div", {}, h("h1", {}, "Session timeline"), h("p", { class: "muted mono" }, id)),
        h("div", { class: "row" }, h("a", { class: "btn", href: `#/runs?session=${encodeURIComponent(id)}` }, "As a list"))),
      h("div", { class: "cards" }, card("Runs", runs.length), card("Denied", denied, denied ? "bad" : ""), card("Failed", failed, failed ? "warn" : ""),
        card("Span", ms(span), "", true), card("Started", when(t0).slice(0, 16), "", true)),
      data.truncated ? h("p", { class: "note warn" }, "Only the first 5,000 runs of this session are shown.") : null,
      h("div", { class: "panel" }, h("div", { class: "row" }, h("div", { class: "legend" },
        h("span", {}, h("i", { class: "allow" }), "allow"), h("span", {}, h("i", { class: "deny" }), "deny"),
        h("span", {}, h("i", { class: "ask" }), "ask"), h("span", {}, h("i", {}), "no opinion"), h("span", {}, h("i", { class: "failed" }), "failed"),
        h("span", {}, "striped: detached (dropped or suppressed)"))),
      h("div", { class: "table-wrap" }, grid)));
  }

  // ---------- Charts ----------
  // The inner width of a panel on this page: the charts are drawn at it (one SVG
  // unit a pixel), so their text stays readable in a narrow window.
  function chartWidth() {
    return Math.max(280, Math.min(1232, main.clientWidth - 2 * parseFloat(getComputedStyle(main).paddingLeft || "0") - 38));
  }

  async function pageCharts(params) {
    const win = params.get("window") || "24h";
    const data = await api("/api/stats", { window: win, buckets: 48 });
    const head = h("div", { class: "page-head" }, h("div", {}, h("h1", {}, "Charts"), h("p", { class: "muted" }, `${data.runs.toLocaleString()} runs in the window.`)),
      windowPicker(win, (w) => go(`#/charts?window=${w}`)));
    if (!data.runs) {
      setMain(head, h("div", { class: "panel" }, overview && overview.spine && overview.spine.latest_seq
        ? h("div", { class: "empty" }, "No runs in this window. ", h("a", { href: "#/charts?window=all" }, "Show all runs"), ".")
        : noRunsYet()));
      return;
    }
    const over = h("div", { class: "panel", id: "chart-timeline" }, h("div", { class: "row" }, h("h2", {}, "Runs and denials over time"), h("span", { class: "spacer" }),
      h("div", { class: "legend" }, h("span", {}, h("i", { class: "allow" }), "runs"), h("span", {}, h("i", { class: "deny" }), "denied"), h("span", {}, h("i", { class: "failed" }), "failed"))),
      Charts.timeSeries(data.timeline, { width: chartWidth() }));
    const slow = data.hooks.filter((x) => x.runs > 0).slice().sort((a, b) => b.p95_ms - a.p95_ms).slice(0, 10)
      .map((x) => ({ label: `${x.event} · ${x.command}`, p50: x.p50_ms, p95: x.p95_ms, runs: x.runs }));
    const slowPanel = h("div", { class: "panel", id: "chart-slowest" }, h("div", { class: "row" }, h("h2", {}, "Slowest hooks (p95, with the median marked)")), Charts.slowest(slow, { width: chartWidth() }));
    const hist = h("div", { class: "hist-grid" });
    for (const x of data.hooks.slice(0, 12)) {
      hist.appendChild(h("div", {}, h("div", { class: "h-title", title: `${x.event} · ${x.command}` }, `${x.event} · ${x.command}`),
        h("div", { class: "faint" }, `${x.runs.toLocaleString()} runs · p50 ${x.p50_ms} ms · p95 ${x.p95_ms} ms`),
        Charts.histogram(x.histogram, data.latency_buckets, { label: `Latency of ${x.command}` })));
    }
    setMain(head, over, slowPanel, h("div", { class: "panel", id: "chart-latency" }, h("h2", {}, "Latency distribution per hook"), hist));
  }

  // ---------- Tester ----------
  async function pageTester(params) {
    const srcs = await loadSources("24h");
    const hooks = srcs.hooks.filter((x) => x.supported);
    const select = h("select", { id: "tester-hook" },
      hooks.map((x, i) => h("option", { value: String(i) }, `${x.trust !== "trusted" ? "[not trusted] " : ""}${x.dialect} ${x.event}[${x.entry}] — ${x.command.length > 60 ? x.command.slice(0, 59) + "…" : x.command}`)));
    const payload = h("textarea", { id: "tester-payload", spellcheck: "false", "aria-label": "Payload (JSON sent on stdin)" });
    const run = h("button", { type: "button", class: "btn primary", id: "tester-run" }, "Run hook");
    const reset = h("button", { type: "button", class: "btn", id: "tester-reset" }, "Reset payload");
    const info = h("p", { class: "muted", id: "tester-info" });
    const result = h("div", { id: "tester-result", "aria-live": "polite" });
    const pick = params.get("hook");
    if (pick !== null) select.value = pick;
    async function prefill() {
      const x = hooks[Number(select.value)];
      if (!x) return;
      info.replaceChildren(h("code", {}, x.source), ` · ${x.sandboxed ? "sandboxed" : "UNSANDBOXED"} · fails ${x.fail_closed ? "closed" : "open"}`);
      run.disabled = x.trust !== "trusted";
      if (run.disabled) result.replaceChildren(h("p", { class: "note warn" }, "This hook's workspace is not trusted (or changed since trusted): trust it on the Trust page to run it."));
      else result.replaceChildren();
      try {
        const p = await api("/api/tester/payload", { source: x.source, event: x.event, entry: x.entry });
        payload.value = p.payload;
      } catch (e) { payload.value = ""; result.replaceChildren(h("p", { class: "note bad" }, e.message)); }
    }
    async function go2() {
      const x = hooks[Number(select.value)];
      if (!x) return;
      try { JSON.parse(payload.value); } catch (e) { result.replaceChildren(h("p", { class: "note bad" }, `The payload is not valid JSON: ${e.message}`)); return; }
      run.disabled = true;
      result.replaceChildren(h("p", { class: "muted" }, "Running…"));
      try {
        const d = await post("/api/tester/run", { source: x.source, event: x.event, entry: x.entry, payload: payload.value });
        const exit = d.exit_code !== null ? `exit ${d.exit_code}` : d.failure === "timeout" ? "killed (timeout)" : d.failure === "spawn" ? "did not start" : "killed";
        result.replaceChildren(h("div", { class: "panel", "data-verdict": d.verdict },
          h("div", { class: "row" }, h("h2", {}, "Result"), outcomeBadge(d.verdict), h("span", { class: "muted" }, `${exit} · ${d.duration_ms} ms · ${d.parse_ok ? "response parsed" : d.failure === "timeout" ? "timed out: its answer was never read" : "response did not parse"}`)),
          d.failure === "timeout" ? h("p", { class: "note warn", id: "tester-timeout" }, TIMEOUT_HINT) : null,
          h("p", { id: "tester-summary" }, h("strong", {}, "Interpreted: "), d.summary),
          h("p", { class: "faint" }, `canonical event ${d.canonical_event}; dry run: nothing is recorded or applied`),
          streamView("stdout", d.stdout, d.stdout_json, false),
          streamView("stderr", d.stderr, null, false),
          streamView("stdin sent", d.stdin, d.stdin_json, false)));
      } catch (e) {
        result.replaceChildren(h("p", { class: "note bad" }, e.message));
      } finally { run.disabled = hooks[Number(select.value)].trust !== "trusted"; }
    }
    // Why a hook runs or not for a tool call: `gate --explain`, running nothing.
    const exTool = h("input", { id: "explain-tool", value: "run_shell", "aria-label": "Tool", spellcheck: "false" });
    const exInput = h("textarea", { id: "explain-input", class: "short", spellcheck: "false", "aria-label": "Tool input (JSON)" });
    exInput.value = '{"command": "rm -rf /"}';
    const exBtn = h("button", { type: "button", class: "btn", id: "explain-run" }, "Explain");
    const exOut = h("div", { id: "explain-result", "aria-live": "polite" });
    async function explain() {
      let input;
      try { input = JSON.parse(exInput.value); } catch (e) { exOut.replaceChildren(h("p", { class: "note bad" }, `The input is not valid JSON: ${e.message}`)); return; }
      try {
        const d = await post("/api/explain", { tool: exTool.value.trim(), input });
        const rows = d.hooks.map((x) => h("li", { "data-status": x.status },
          h("span", { class: `badge ${x.status === "skipped" ? "outline" : "ok"}` }, x.status === "skipped" ? "would not run" : "would run"), " ",
          h("strong", {}, `${x.dialect} ${x.event}[${x.entry}]`), " ", h("code", {}, x.command),
          h("div", { class: x.status === "skipped" ? "muted" : "faint" }, x.reason_message || x.verdict || (x.matcher ? `matcher ${x.matcher} matches` : "selected"))));
        exOut.replaceChildren(
          d.hooks_enabled ? null : h("p", { class: "note warn" }, "External hooks are off: nothing runs (`copse-hooks enable`)."),
          rows.length ? h("ul", { class: "explain" }, rows) : h("p", { class: "muted" }, `No hook is configured for ${d.event}.`),
          (d.problems || []).length ? h("ul", {}, d.problems.map((p2) => h("li", { class: "error" }, h("code", {}, p2.source), ": ", p2.message))) : null);
      } catch (e) { exOut.replaceChildren(h("p", { class: "note bad" }, e.message)); }
    }
    exBtn.addEventListener("click", explain);
    const explainPanel = h("div", { class: "panel", id: "explain" }, h("h2", {}, "Why does a hook run, or not?"),
      h("p", { class: "muted" }, "Every configured hook for a tool call, with whether it would run or why not — the same as ", h("code", {}, "copse-hooks gate TOOL --input JSON --explain"), ". Runs nothing."),
      h("div", { class: "explain-form" }, h("label", { class: "field" }, "Tool", exTool), h("label", { class: "field" }, "Input (JSON)", exInput)),
      h("div", { class: "row" }, exBtn), exOut);
    select.addEventListener("change", prefill);
    run.addEventListener("click", go2);
    reset.addEventListener("click", prefill);
    payload.addEventListener("keydown", (e) => { if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); go2(); } });
    setMain(
      h("div", { class: "page-head" }, h("div", {}, h("h1", {}, "Tester"), h("p", { class: "muted" }, "Run one hook with a synthetic payload (the golden fixture for its event) — the same dry run as `copse-hooks test`."))),
      hooks.length ? h("div", { class: "grid2" },
        h("div", { class: "panel" }, h("label", { class: "field" }, "Hook", select), info,
          h("label", { class: "field" }, "Payload (stdin, JSON) — Ctrl+Enter runs", payload),
          h("div", { class: "row" }, run, reset)),
        result) : h("div", { class: "panel" }, h("div", { class: "empty" }, "No hooks to test. Write one with ", h("code", {}, "copse-hooks init"), ", then come back.")),
      explainPanel);
    await prefill();
  }

  // ---------- Trust ----------
  async function pageTrust() {
    const roots = overview ? overview.workspaces : [];
    const panels = [];
    for (const root of roots) {
      const p = await api("/api/trust/preview", { dir: root });
      const list = p.hooks.length ? h("table", { class: "trust-hooks" }, h("thead", {}, h("tr", {}, h("th", {}, "Dialect"), h("th", {}, "Event"), h("th", {}, "Command"), h("th", {}, "Sandbox"))),
        h("tbody", {}, p.hooks.map((x) => h("tr", {}, h("td", {}, x.dialect), h("td", {}, x.event), h("td", { class: "cmd" }, x.command),
          h("td", {}, x.sandboxed ? h("span", { class: "badge outline" }, "sandboxed") : h("span", { class: "badge bad" }, "UNSANDBOXED"))))))
        : h("p", { class: "muted" }, "Trusting would allow no project hooks: none are declared.");
      const trustBtn = h("button", { type: "button", class: "btn primary", "data-action": "trust" }, p.trusted ? "Trust again (re-pin)…" : "Trust this workspace…");
      const untrustBtn = h("button", { type: "button", class: "btn danger", "data-action": "untrust", disabled: !p.trusted }, "Stop trusting…");
      const msg = h("div", { "aria-live": "polite" });
      trustBtn.addEventListener("click", async () => {
        const body = [h("p", {}, "Trusting ", h("code", {}, p.workspace), " pins its hook configs as they are now and allows these project hooks to run:"), list.cloneNode(true)];
        if (p.unsandboxed.length) body.push(h("p", { class: "note bad" }, `${p.unsandboxed.length} of them run OUTSIDE the sandbox, with your full authority.`));
        body.push(h("p", { class: "muted" }, "If any of these files changes, its hooks stop running until you trust the workspace again."));
        if (!(await confirmDialog("Trust this workspace?", body, "Trust"))) return;
        try {
          await post("/api/trust", { dir: p.workspace, fingerprint: p.fingerprint });
          sourcesCache = null;
          await pageTrust();
          document.querySelector("[data-trust-msg]")?.replaceChildren(h("p", { class: "note ok" }, `Trusted ${p.workspace}.`));
        } catch (e) { msg.replaceChildren(h("p", { class: "note bad" }, e.message)); }
      });
      untrustBtn.addEventListener("click", async () => {
        if (!(await confirmDialog("Stop trusting this workspace?", [h("p", {}, "Project hooks of ", h("code", {}, p.workspace), " will no longer run.")], "Stop trusting"))) return;
        try {
          await post("/api/untrust", { dir: p.workspace, confirm: true });
          sourcesCache = null;
          await pageTrust();
          document.querySelector("[data-trust-msg]")?.replaceChildren(h("p", { class: "note ok" }, `${p.workspace} is no longer trusted.`));
        } catch (e) { msg.replaceChildren(h("p", { class: "note bad" }, e.message)); }
      });
      // This workspace's own state: another workspace's edit does not change it.
      const status = p.status || (p.trusted ? (p.all_project_hooks_trusted ? "trusted" : "changed since trusted") : "not trusted");
      const state = status === "trusted" ? h("span", { class: "badge ok", "data-trust-state": status }, "trusted")
        : status === "not trusted" ? h("span", { class: "badge warn", "data-trust-state": status }, "not trusted")
        : h("span", { class: "badge bad", "data-trust-state": status }, "trusted, but changed since");
      const changed = (p.changed || []);
      const changedPanel = changed.length ? h("div", { class: "note bad", "data-changed": "" },
        h("p", {}, h("strong", {}, "Changed since it was trusted"), ` — these hooks do not run until you review and trust the workspace again. What changed is below (in a terminal: `, h("code", { "data-diff-command": "" }, p.diff_command || `copse-hooks trust --diff ${p.workspace}`), "):"),
        h("ul", {}, changed.map((c) => h("li", {}, h("code", {}, c.path), " ", h("span", { class: "faint" }, c.change)))),
        await trustDiffs(p.workspace)) : null;
      panels.push(h("div", { class: "panel", "data-workspace": p.workspace },
        h("div", { class: "row" }, h("h2", { class: "ws" }, h("code", {}, p.workspace)), state),
        changedPanel,
        h("h3", {}, "What trusting allows"), h("div", { class: "table-wrap" }, list),
        p.unsandboxed.length ? h("p", { class: "note bad" }, `These run OUTSIDE the sandbox: ${p.unsandboxed.map((x) => x.command).join(", ")}`) : p.hooks.length ? h("p", { class: "note ok" }, "All of them run in the sandbox.") : null,
        p.warnings.length ? h("ul", {}, p.warnings.map((w) => h("li", { class: "error" }, w.message))) : null,
        h("h3", {}, "Configs"), h("ul", { class: "configs" }, Object.entries(p.configs).map(([path, sha]) => h("li", {}, h("code", {}, path), " ", sha ? h("span", { class: "faint mono" }, `sha256 ${sha.slice(0, 12)}`) : h("span", { class: "faint" }, "absent")))),
        Object.keys(p.scripts || {}).length ? h("div", {}, h("h3", {}, "Scripts its hooks run (pinned too)"),
          h("ul", { class: "configs" }, Object.entries(p.scripts).map(([path, sha]) => h("li", {}, h("code", {}, path), " ", sha ? h("span", { class: "faint mono" }, `sha256 ${sha.slice(0, 12)}`) : h("span", { class: "faint" }, "absent"))))) : null,
        (p.problems || []).length ? h("ul", {}, p.problems.map((x) => h("li", { class: "error" }, x))) : null,
        h("p", { class: "faint" }, "In a terminal: ", h("code", {}, p.trust_command || `copse-hooks trust ${p.workspace}`)),
        h("div", { class: "row" }, trustBtn, untrustBtn), msg));
    }
    if (!panels.length) panels.push(h("div", { class: "panel" }, empty("No workspace: start the page from a project directory, or pass --workspace DIR.")));
    setMain(h("div", { class: "page-head" }, h("div", {}, h("h1", {}, "Trust"), h("p", { class: "muted" }, "Project hooks run only in trusted workspaces. Review exactly what trusting allows before you confirm."))),
      h("div", { "data-trust-msg": "" }), ...panels);
  }

  // The unified diff of each pinned file changed since the workspace was trusted,
  // against the copy kept when it was trusted. Every line is text (textContent), its
  // +/- mark only choosing a CSS class.
  async function trustDiffs(root) {
    let d;
    try { d = await api("/api/trust/diff", { root }); } catch (e) { return h("p", { class: "error" }, `Could not load the diff: ${e.message}`); }
    const files = (d.files || []).filter((f) => f.state !== "unchanged");
    if (!files.length) return null;
    const lineClass = (line) => line.startsWith("+++") || line.startsWith("---") ? "d-head"
      : line.startsWith("+") ? "d-add" : line.startsWith("-") ? "d-del" : line.startsWith("@@") ? "d-hunk" : "d-ctx";
    return h("div", { class: "diffs", "data-diffs": "" }, files.map((f) => h("div", { class: "diff-file", "data-diff-file": f.path },
      h("p", {}, h("strong", {}, `${f.state} ${f.kind}`), " ", h("code", {}, f.path)),
      f.pinned_copy ? null : h("p", { class: "faint" }, "No copy of the pinned content was kept (trusted by an older copse-hooks): showing the file as it is now."),
      f.diff ? h("pre", { class: "code diff", "data-diff": "" }, f.diff.replace(/\n$/, "").split("\n").map((line) => h("span", { class: lineClass(line), text: line })))
        : h("p", { class: "faint" }, f.state === "unreadable" ? "It cannot be read now: its hooks are refused until it can." : "No diff to show."))));
  }

  function confirmDialog(title, body, okLabel) {
    const dlg = document.getElementById("confirm");
    document.getElementById("confirm-title").textContent = title;
    document.getElementById("confirm-body").replaceChildren(...body);
    const ok = document.getElementById("confirm-ok");
    const cancel = document.getElementById("confirm-cancel");
    ok.textContent = okLabel;
    return new Promise((resolve) => {
      const done = (v) => { ok.onclick = cancel.onclick = dlg.oncancel = null; dlg.close(); resolve(v); };
      ok.onclick = () => done(true);
      cancel.onclick = () => done(false);
      dlg.oncancel = (e) => { e.preventDefault(); done(false); };
      dlg.showModal();
      cancel.focus();
    });
  }

  // ---------- Source file ----------
  async function pageSource(params) {
    const path = params.get("path");
    const f = await api("/api/source", { path });
    const pre = h("pre", { class: "code lines", id: "source-text" });
    for (const line of f.text.split("\n")) pre.appendChild(h("span", { class: "l" }, line));
    setMain(h("div", { class: "page-head" }, h("div", {}, h("h1", {}, "Hook config"), h("p", { class: "muted mono" }, f.path)),
      h("div", { class: "row" }, h("button", { type: "button", class: "btn", onclick: () => history.back() }, "← Back"))),
      h("div", { class: "panel" }, pre));
  }

  // ---------- Router ----------
  const PAGES = {
    sources: (r) => pageSources(r.params),
    runs: (r) => pageRuns(r.params),
    run: (r) => pageRun(r.arg),
    sessions: () => pageSessions(),
    session: (r) => pageSession(r.arg),
    charts: (r) => pageCharts(r.params),
    tester: (r) => pageTester(r.params),
    trust: () => pageTrust(),
    source: (r) => pageSource(r.params),
  };
  const NAV = { run: "runs", session: "sessions", source: "sources" };

  async function route() {
    const r = parseHash();
    const page = PAGES[r.page] ? r.page : "sources";
    for (const a of document.querySelectorAll("#nav a")) {
      if (a.dataset.page === (NAV[page] || page)) a.setAttribute("aria-current", "page");
      else a.removeAttribute("aria-current");
    }
    document.title = `${page[0].toUpperCase()}${page.slice(1)} · copse-hooks`;
    main.setAttribute("data-page", page);
    main.setAttribute("aria-busy", "true");
    main.removeAttribute("data-ready");
    try {
      if (!overview) overview = await api("/api/overview");
      await PAGES[page](r);
    } catch (e) { fail(e); }
    main.setAttribute("aria-busy", "false");
    main.setAttribute("data-ready", page);
  }

  // Live updates: server-sent events, polling as a fallback.
  function live() {
    const box = document.getElementById("live");
    const text = document.getElementById("live-text");
    let last = null;
    const onSeq = (seq) => {
      if (last !== null && seq !== last) {
        const r = parseHash();
        if (r.page === "runs") refreshRunsTop().catch(() => {});
        else if (r.page === "session" && main.getAttribute("data-ready") === "session") pageSession(r.arg).catch(() => {});
      }
      last = seq;
    };
    try {
      const es = new EventSource(url("/api/events"));
      es.addEventListener("runs", (e) => { onSeq(JSON.parse(e.data).latest_seq); });
      es.onopen = () => { box.className = "live on"; text.textContent = "live"; };
      es.onerror = () => { box.className = "live off"; text.textContent = "reconnecting"; };
    } catch (e) {
      box.className = "live"; text.textContent = "polling";
      setInterval(() => api("/api/overview").then((o) => onSeq(o.spine.latest_seq)).catch(() => {}), 3000);
    }
  }

  window.addEventListener("hashchange", () => { route(); main.focus({ preventScroll: true }); });
  document.addEventListener("keydown", (e) => {
    if (e.target.matches("input, textarea, select") || e.ctrlKey || e.metaKey || e.altKey) return;
    const keys = { "1": "sources", "2": "runs", "3": "sessions", "4": "charts", "5": "tester", "6": "trust" };
    if (keys[e.key]) go(`#/${keys[e.key]}`);
  });
  route();
  live();
})();
