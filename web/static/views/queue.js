// The dispatch queue by state (queued, claimed, dead letter, …) with each
// dispatch's run, worker, lease and error; a dead letter can be retried.
// Live refresh every 2 s, pausable (as riverui does).
import { html, useEffect, useState } from "../vendor/preact-htm.js";
import { request } from "../lib/api.js";
import { href, navigate } from "../lib/router.js";
import { ago, short, time } from "../lib/format.js";
import { Curl, Empty, ErrorBox, Loading, Pager, Status, Tabs, useAsync } from "../ui/common.js";

const STATES = [["queued", "Queued"], ["claimed", "Claimed"], ["dead_letter", "Dead letter"], ["acked", "Acked"], ["cancelled", "Cancelled"], ["superseded", "Superseded"]];
const LIMIT = 50;

function lease(d) {
  if (d.state !== "claimed" || !d.lease_expires_at) return "";
  const s = Math.round((new Date(d.lease_expires_at).getTime() - Date.now()) / 1000);
  return s >= 0 ? `expires in ${s}s` : `expired ${-s}s ago`;
}

function Retry({ d, onDone }) {
  const [st, setSt] = useState({ busy: false, error: null });
  const path = `/dispatches/${d.dispatch_id}/retry`;
  const go = async () => {
    setSt({ busy: true, error: null });
    try {
      await request("POST", path);
      setSt({ busy: false, error: null });
      onDone();
    } catch (error) {
      setSt({ busy: false, error });
    }
  };
  return html`<div class="action-panel" data-testid="retry-panel">
    <p>Puts the dead letter back in the queue with a fresh attempt budget; its run becomes pending again.</p>
    <${Curl} method="POST" path=${path} testid="retry-curl" />
    <${ErrorBox} error=${st.error} />
    <div class="buttons"><button class="primary" disabled=${st.busy} onClick=${go} data-testid="retry-submit">Retry</button><button onClick=${onDone}>Cancel</button></div>
  </div>`;
}

export function QueueView({ route }) {
  const state = route.query.get("state") || "queued";
  const offset = Number(route.query.get("offset") || 0);
  const [live, setLive] = useState(true);
  const [tick, setTick] = useState(0);
  const [retrying, setRetrying] = useState(null);
  const page = useAsync(async (signal) => {
    const res = await request("GET", `/dispatches?state=${state}&limit=${LIMIT + 1}&offset=${offset}`, { signal });
    return { list: res.data.slice(0, LIMIT), hasNext: res.data.length > LIMIT };
  }, [state, offset, tick]);
  useEffect(() => {
    if (!live) return;
    const t = setInterval(() => setTick((x) => x + 1), 2000);
    return () => clearInterval(t);
  }, [live]);
  return html`<section class="page" data-testid="queue-view">
    <header class="page-head"><h1>Dispatch queue</h1><span class="spacer"></span>
      <button onClick=${() => setLive(!live)} data-testid="live-toggle" class=${live ? "on" : ""}>${live ? "❚❚ Pause live refresh" : "▶ Resume live refresh"}</button></header>
    <p class="muted small">Every run reaches a worker through a dispatch: <code>queued</code> → <code>claimed</code> (a worker holds a lease) → <code>acked</code>; a lost lease or a nack retries it, and after <code>max_attempts</code> it is a dead letter until retried. <code>${`GET /dispatches?state=${state}`}</code></p>
    <${Tabs} active=${state} tabs=${STATES.map(([id, label]) => ({ id, label, href: href(["queue"], { state: id }) }))} />
    <${ErrorBox} error=${page.error} />
    ${!page.data ? html`<${Loading} />` : page.data.list.length === 0 ? html`<${Empty}>No ${state.replace("_", " ")} dispatch.<//>` : html`
      <table class="grid" data-testid="dispatch-table">
        <thead><tr><th>dispatch</th><th>run</th><th>graph</th><th>state</th><th class="num">attempt</th><th>worker</th><th>claimed</th><th>lease</th><th>available</th><th>last error</th><th></th></tr></thead>
        <tbody>${page.data.list.map((d) => html`<tr data-testid="dispatch-row" data-dispatch-id=${d.dispatch_id} data-run-id=${d.run_id} data-state=${d.state}>
          <td><code>${short(d.dispatch_id)}</code></td>
          <td><a href=${href(["threads", d.thread_id, "runs", d.run_id])}><code>${short(d.run_id)}</code></a></td>
          <td><code>${d.graph_id}</code></td>
          <td><${Status} status=${d.state} /></td>
          <td class="num">${d.attempt}/${d.max_attempts}</td>
          <td>${d.claimed_by ? html`<code>${d.claimed_by}</code>` : ""}</td>
          <td title=${time(d.claimed_at)}>${ago(d.claimed_at)}</td>
          <td>${lease(d)}</td>
          <td title=${time(d.available_at)}>${ago(d.available_at)}</td>
          <td class="err-cell" data-testid="dispatch-error">${d.last_error || ""}</td>
          <td>${d.state === "dead_letter" && html`<button onClick=${() => setRetrying(d)} data-testid="retry">Retry…</button>`}</td>
        </tr>`)}</tbody>
      </table>
      <${Pager} offset=${offset} limit=${LIMIT} count=${page.data.list.length} hasNext=${page.data.hasNext} onPage=${(o) => navigate(href(["queue"], { state, offset: o || "" }))} />`}
    ${retrying && html`<${Retry} d=${retrying} onDone=${() => { setRetrying(null); setTick((x) => x + 1); }} />`}
  </section>`;
}
