// The inbox: every interrupted thread waiting for a human, with what its
// graph asked and a resume form (POST /threads/{id}/runs with
// command.resume). One page at a time, oldest question first.
import { html, useState } from "../vendor/preact-htm.js";
import { request } from "../lib/api.js";
import { href, navigate } from "../lib/router.js";
import { ago, time } from "../lib/format.js";
import { Curl, Empty, ErrorBox, Loading, Pager, useAsync } from "../ui/common.js";
import { Json } from "../ui/json.js";
import { UI_STREAM_MODES } from "./actions.js";

const LIMIT = 20;

function interruptsOf(t) {
  const all = [];
  for (const [task, list] of Object.entries(t.interrupts || {})) for (const i of list || []) all.push({ task, ...i });
  return all;
}

function Card({ t }) {
  const graph = t.metadata && t.metadata.graph_id;
  const [text, setText] = useState('"yes"');
  const [st, setSt] = useState({ busy: false, error: null, run: null });
  let value;
  let parseError = null;
  try {
    value = JSON.parse(text);
  } catch (e) {
    parseError = e.message;
  }
  const ints = interruptsOf(t);
  // A question is answered with command.resume; a thread stopped before a
  // node (a breakpoint, or a fork that left tasks) continues with input null.
  const asking = ints.length > 0;
  const path = `/threads/${t.thread_id}/runs`;
  const body = asking
    ? { assistant_id: graph || "", command: { resume: value ?? null }, stream_mode: UI_STREAM_MODES }
    : { assistant_id: graph || "", input: null, stream_mode: UI_STREAM_MODES };
  const go = async () => {
    setSt({ busy: true, error: null, run: null });
    try {
      const res = await request("POST", path, { body });
      setSt({ busy: false, error: null, run: res.data });
    } catch (error) {
      setSt({ busy: false, error, run: null });
    }
  };
  return html`<div class="card" data-testid="inbox-item" data-thread-id=${t.thread_id}>
    <div class="card-head"><a href=${href(["threads", t.thread_id])}><code>${t.thread_id}</code></a> <code class="muted">${graph || ""}</code>
      <span class="spacer"></span><span class="muted small" title=${time(t.updated_at)}>waiting since ${ago(t.updated_at)}</span></div>
    ${!asking && html`<p class="muted small">Stopped before a node, without a question (a breakpoint, or a fork that left tasks to run): Continue runs them (input <code>null</code>).</p>`}
    ${ints.map((i) => html`<div class="interrupt"><span class="muted small">task ${i.task.slice(0, 8)} asks:</span><${Json} value=${i.value} open=${2} testid="inbox-question" /></div>`)}
    ${st.run
      ? html`<div class="answer" data-testid="inbox-resumed">Resumed: <a href=${href(["threads", t.thread_id, "runs", st.run.run_id])} data-testid="inbox-run-link">run ${st.run.run_id.slice(0, 8)}</a></div>`
      : html`<div class="resume-row">
          ${asking && html`<input value=${text} onInput=${(e) => setText(e.target.value)} data-testid="inbox-resume-value" spellcheck="false" />`}
          <button class="primary" disabled=${st.busy || (asking && !!parseError) || !graph} onClick=${go} data-testid="inbox-resume">${asking ? "Resume" : "Continue"}</button>
        </div>
        ${asking && parseError && html`<div class="error-box small">resume: ${parseError}</div>`}
        <details class="small"><summary>API call</summary><${Curl} method="POST" path=${path} body=${body} testid="inbox-curl" /></details>`}
    <${ErrorBox} error=${st.error} />
  </div>`;
}

export function InboxView({ route }) {
  const offset = Number(route.query.get("offset") || 0);
  // Not reloaded when a card resumes its thread (the card keeps the run's
  // link); Refresh reloads the list.
  const page = useAsync(async (signal) => {
    const res = await request("POST", "/threads/search", { signal, body: { status: "interrupted", limit: LIMIT, offset, sort_by: "updated_at", sort_order: "asc",
      select: ["thread_id", "metadata", "interrupts", "updated_at", "status"] } });
    return { list: res.data, hasNext: !!res.headers.get("X-Pagination-Next") };
  }, [offset]);
  return html`<section class="page" data-testid="inbox-view">
    <header class="page-head"><h1>Inbox</h1><span class="spacer"></span><button onClick=${page.reload} data-testid="inbox-refresh">Refresh</button></header>
    <p class="muted small">Threads whose graph stopped to ask a human (status <code>interrupted</code>), oldest first.</p>
    <${ErrorBox} error=${page.error} />
    ${!page.data ? html`<${Loading} />` : page.data.list.length === 0 ? html`<${Empty}>Nobody is waiting.<//>` : html`
      <div class="cards">${page.data.list.map((t) => html`<${Card} key=${t.thread_id} t=${t} />`)}</div>
      <${Pager} offset=${offset} limit=${LIMIT} count=${page.data.list.length} hasNext=${page.data.hasNext} onPage=${(o) => navigate(href(["inbox"], { offset: o || "" }))} />`}
  </section>`;
}
