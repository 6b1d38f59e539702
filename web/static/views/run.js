// A run: status, strategy and timings, its input, cancel (interrupt or
// rollback), its dispatch attempts, and its event log as a timeline — the
// join stream replayed from the first event and followed live with an
// EventSource (modes selectable, resumed with Last-Event-ID after a drop),
// with the raw SSE frames one click away.
import { html, useEffect, useRef, useState } from "../vendor/preact-htm.js";
import { apiKey, apiURL, authHeaders, get, recordStream, request } from "../lib/api.js";
import { KeyedEventSource } from "../lib/sse.js";
import { href, navigate } from "../lib/router.js";
import { ago, duration, oneLine, short, time } from "../lib/format.js";
import { Badge, Curl, ErrorBox, KV, Loading, Status, useAsync, useChanged } from "../ui/common.js";
import { Json } from "../ui/json.js";
import { messageText } from "../ui/messages.js";

const MODES = ["values", "updates", "messages-tuple", "custom", "debug", "tasks", "checkpoints"];
const EVENT_NAMES = ["metadata", "values", "updates", "messages", "custom", "debug", "tasks", "checkpoints", "error"];
const finished = (s) => s && s !== "pending" && s !== "running";

export function RunView({ threadId, runId, route }) {
  const changed = useChanged();
  const [tick, setTick] = useState(0);
  const data = useAsync((signal) => Promise.all([
    get(`/threads/${threadId}/runs/${runId}`, null, { signal }),
    get(`/inspect/threads/${threadId}/runs/${runId}`, null, { signal }),
    get(`/threads/${threadId}/runs/${runId}/dispatches`, null, { signal }),
  ]), [threadId, runId, changed, tick]);
  const status = data.data && data.data[1].status;
  // While the run is in flight its record and attempts refresh every second.
  useEffect(() => {
    if (!status || finished(status)) return;
    const t = setTimeout(() => setTick((x) => x + 1), 1000);
    return () => clearTimeout(t);
  }, [status, data.data]);
  if (data.error) return html`<section class="page"><${ErrorBox} error=${data.error} /><a href=${href(["threads", threadId, "runs"])}>← Runs</a></section>`;
  if (!data.data) return html`<section class="page"><${Loading} what="Loading the run" /></section>`;
  const [run, sum, dispatches] = data.data;
  const kw = run.kwargs || {};
  return html`<section class="page run-page" data-testid="run-view" data-run-id=${runId}>
    <header class="thread-head">
      <div class="title-row">
        <a class="back" href=${href(["threads", threadId, "runs"])}>← Thread's runs</a>
        <h1>Run <code>${runId}</code></h1>
        <${Status} status=${sum.status} testid="run-status" />
        <span class="spacer"></span>
      </div>
      <${KV} rows=${[
        ["thread", html`<a href=${href(["threads", threadId])} data-testid="run-thread"><code>${threadId}</code></a>`],
        ["graph", html`<a href=${href(["assistants", sum.assistant_id])}><code>${sum.graph_id}</code></a>`],
        ["strategy", sum.multitask_strategy],
        ["created", html`<span title=${time(sum.created_at)}>${ago(sum.created_at)}</span>`],
        ["queued for", duration(sum.created_at, sum.started_at) || (sum.status === "pending" ? "waiting…" : "")],
        ["ran for", duration(sum.started_at, sum.finished_at) || (sum.status === "running" ? "running…" : ""), "run-duration"],
        ["attempt", String(sum.attempt)],
        ["from", sum.checkpoint_id && html`<a href=${href(["threads", threadId, "checkpoints", sum.checkpoint_id])}>checkpoint <code>${short(sum.checkpoint_id)}</code></a>`],
        ["resume", sum.resume ? html`<${Badge} kind="amber">command.resume<//>` : null],
      ]} />
      ${sum.error && html`<div class="error-box" data-testid="run-error"><b>${sum.error.error}</b>: ${sum.error.message}</div>`}
    </header>
    ${!finished(sum.status) && html`<${Cancel} threadId=${threadId} runId=${runId} />`}
    <div>
      <h3>Input</h3>
      ${kw.command ? html`<div class="small muted">command</div><${Json} value=${kw.command} open=${2} testid="run-command" />` : null}
      <div class="small muted">input</div>
      <${Json} value=${kw.input ?? null} open=${1} testid="run-input-json" />
      ${kw.checkpoint_id && html`<div class="small">checkpoint_id <code>${kw.checkpoint_id}</code></div>`}
    </div>
    <${Attempts} dispatches=${dispatches} />
    <${Events} threadId=${threadId} runId=${runId} status=${sum.status} route=${route} onEnded=${() => setTick((x) => x + 1)} />
  </section>`;
}

function Cancel({ threadId, runId }) {
  const [action, setAction] = useState("interrupt");
  const [st, setSt] = useState({ busy: false, error: null, done: null });
  const path = `/threads/${threadId}/runs/${runId}/cancel?action=${action}`;
  const go = async () => {
    setSt({ busy: true, error: null, done: null });
    try {
      const res = await request("POST", path);
      setSt({ busy: false, error: null, done: res.status });
    } catch (error) {
      setSt({ busy: false, error, done: null });
    }
  };
  return html`<section class="action" data-testid="cancel">
    <h4>Cancel this run</h4>
    <div class="radios">
      <label><input type="radio" name="cancel" checked=${action === "interrupt"} onChange=${() => setAction("interrupt")} data-testid="cancel-interrupt" /> interrupt: stop at the next step boundary, keep its checkpoints (run ends <code>interrupted</code>)</label>
      <label><input type="radio" name="cancel" checked=${action === "rollback"} onChange=${() => setAction("rollback")} data-testid="cancel-rollback" /> rollback: stop, then delete the run and every checkpoint it wrote</label>
    </div>
    <${Curl} method="POST" path=${path} testid="cancel-curl" />
    <${ErrorBox} error=${st.error} />
    ${st.done && html`<div class="answer" data-testid="cancel-answer">${st.done}: cancellation requested</div>`}
    <button class="danger" disabled=${st.busy} onClick=${go} data-testid="cancel-submit">Cancel run</button>
  </section>`;
}

/** "+1.20 s" after the attempt's claim, with the time itself as a tooltip. */
function since(claimed, at) {
  if (!at) return html`<span class="muted">—</span>`;
  return html`<span title=${time(at)}>+${duration(claimed, at) || "0 ms"}</span>`;
}

/**
 * A run's dispatches and each attempt (one claim): its worker, when it
 * claimed, the lease it held, its heartbeats, when and how it ended, and
 * the commits and nacks the fence refused it after it had lost the claim.
 */
export function Attempts({ dispatches }) {
  return html`<div data-testid="attempts"><h3>Dispatch attempts</h3>
    ${dispatches.length === 0 && html`<p class="muted">No dispatch (a rolled-back or stateless run).</p>`}
    ${dispatches.map((d) => html`<div class="dispatch" data-testid="dispatch" data-state=${d.state}>
      <div><${Status} status=${d.state} /> <code class="small">${d.dispatch_id}</code> <span class="muted small">attempt ${d.attempt}/${d.max_attempts}</span>
        ${d.claimed_by && html` <span class="small">claimed by <code>${d.claimed_by}</code></span>`}
        ${d.state === "dead_letter" && html` <a href=${href(["queue"], { state: "dead_letter" })}>retry in the queue</a>`}
      </div>
      ${d.last_error && html`<div class="error-box small">${d.last_error}</div>`}
      <table class="grid small" data-testid="attempt-table"><thead><tr><th class="num">#</th><th>worker</th><th>claimed</th>
          <th title="the lease the attempt held: renewed by heartbeats and commits; past it the claim is lost">lease until</th>
          <th title="accepted heartbeats, and the last one">heartbeats</th><th>ended</th><th>outcome</th>
          <th class="num" title="commits and nacks sent after the claim was lost: refused (409), nothing written">fenced writes</th><th>error</th></tr></thead>
        <tbody>${d.attempts.map((a) => html`<tr data-testid="attempt" data-outcome=${a.outcome || ""} data-heartbeats=${a.heartbeats} data-fenced=${a.fenced_writes}>
          <td class="num">${a.attempt}</td><td><code>${a.worker}</code></td>
          <td title=${time(a.claimed_at)}>${time(a.claimed_at).slice(11)}</td>
          <td data-testid="attempt-lease">${since(a.claimed_at, a.lease_expires_at)}</td>
          <td data-testid="attempt-heartbeats">${a.heartbeats ? html`${a.heartbeats} · last ${since(a.claimed_at, a.heartbeat_at)}` : html`<span class="muted">none</span>`}</td>
          <td>${a.ended_at ? since(a.claimed_at, a.ended_at) : html`<span class="muted">running</span>`}</td>
          <td>${a.outcome ? html`<${Badge} kind=${a.outcome === "success" ? "green" : a.outcome === "nacked" || a.outcome === "error" || a.outcome === "lease_expired" ? "red" : "gray"}>${a.outcome}<//>` : html`<span class="muted">running</span>`}</td>
          <td class="num" data-testid="attempt-fenced">${a.fenced_writes ? html`<span title=${"last refused " + time(a.fenced_at)}><${Badge} kind="red">${a.fenced_writes} refused<//></span>` : html`<span class="muted">0</span>`}</td>
          <td class="err-cell">${a.error || ""}</td></tr>`)}</tbody></table>
    </div>`)}
  </div>`;
}

/** Renders one stored event as a frame exactly as the server sent it. */
const frame = (e) => `event: ${e.event}\ndata: ${e.rawData}\nid: ${e.id}\n`;

function summary(e) {
  const d = e.data;
  switch (e.event) {
    case "metadata":
      return `run ${short(d.run_id)} attempt ${d.attempt}`;
    case "updates":
      return Object.entries(d || {}).map(([node, v]) => `${node}: ${v && typeof v === "object" && !Array.isArray(v) ? Object.keys(v).join(", ") || "{}" : oneLine(v, 80)}`).join(" · ");
    case "values":
      return `state: ${Object.keys(d || {}).join(", ")}`;
    case "messages": {
      const [m] = Array.isArray(d) ? d : [d];
      return `${m?.type || "message"} ${m?.id ? short(m.id) : ""}: ${oneLine(messageText(m?.content), 100)}`;
    }
    case "debug":
      if (d.type === "checkpoint") return `checkpoint · step ${d.step} · next ${(d.payload.next || []).join(", ") || "—"}`;
      if (d.type === "task") return `task ${d.payload.name} starts · triggers ${(d.payload.triggers || []).join(", ")}`;
      if (d.type === "task_result") return `task ${d.payload.name} ${d.payload.error ? "failed: " + oneLine(d.payload.error, 80) : (d.payload.interrupts || []).length ? "interrupted" : "done"}`;
      return d.type;
    case "tasks":
      return "input" in d ? `task ${d.name} starts` : `task ${d.name} ${d.error ? "failed" : "done"}`;
    case "checkpoints":
      return `checkpoint · step ${d.metadata?.step} · next ${(d.next || []).join(", ") || "—"}`;
    case "error":
      return `${d.error}: ${d.message}`;
    default:
      return oneLine(d, 120);
  }
}

/**
 * The superstep of an event that names one, else undefined: a debug event's
 * step (its tasks' step, or the step whose end a checkpoint records), a
 * checkpoints event's metadata.step. Other events belong to the step shown
 * before them.
 */
function stepOf(e) {
  if (e.event === "checkpoints") return e.data?.metadata?.step;
  if (e.event === "debug") return e.data?.step;
  return undefined;
}

/** Milliseconds since the first timestamped (debug) event, for the timeline. */
function offsets(events) {
  let t0 = null;
  const out = new Map();
  for (const e of events) {
    const ts = e.event === "debug" && e.data && e.data.timestamp ? Date.parse(e.data.timestamp) : NaN;
    if (Number.isNaN(ts)) continue;
    if (t0 === null) t0 = ts;
    out.set(e.id, ts - t0);
  }
  return out;
}

function Events({ threadId, runId, status, route, onEnded }) {
  const [modes, setModes] = useState(() => (route.query.get("modes") ? route.query.get("modes").split(",") : MODES));
  const [view, setView] = useState("timeline");
  const [events, setEvents] = useState([]);
  const [conn, setConn] = useState("connecting");
  const [resumes, setResumes] = useState([]);
  const [shown, setShown] = useState(500);
  const es = useRef(null);
  const lastId = useRef(null);
  const statusRef = useRef(status);
  statusRef.current = status;

  const open = (after) => {
    es.current?.close();
    const q = new URLSearchParams({ stream_mode: modes.join(","), last_event_id: String(after) });
    const path = `/threads/${threadId}/runs/${runId}/stream?${q}`;
    recordStream(path);
    // EventSource cannot send the API key: with one, the same over fetch.
    const source = apiKey() ? new KeyedEventSource(apiURL(path), { headers: authHeaders() }) : new EventSource(apiURL(path));
    es.current = source;
    setConn("connecting");
    source.onopen = () => setConn("live");
    const on = (ev) => {
      // The server's "error" events carry data; EventSource's own connection
      // errors are plain Events on the same name (handled by onerror).
      if (!(ev instanceof MessageEvent)) return;
      const id = Number(ev.lastEventId);
      lastId.current = ev.lastEventId || lastId.current;
      let data;
      try {
        data = JSON.parse(ev.data);
      } catch {
        data = ev.data;
      }
      setEvents((list) => (list.some((x) => x.id === id && id) ? list : [...list, { id, event: ev.type, data, rawData: ev.data, at: new Date() }]));
    };
    for (const name of EVENT_NAMES) source.addEventListener(name, on);
    source.onerror = async () => {
      if (es.current !== source) return;
      // The server closes the stream when the run ends; EventSource would
      // reconnect (sending Last-Event-ID): look at the run first.
      try {
        const run = await get(`/threads/${threadId}/runs/${runId}`);
        if (finished(run.status)) {
          source.close();
          setConn("ended");
          onEnded?.();
          return;
        }
      } catch {
        // the run is gone (rolled back) or the server is away
      }
      if (source.readyState === EventSource.CLOSED) { // KeyedEventSource.CLOSED is the same 2
        // The browser gave up: resume ourselves after the last event we hold.
        setConn("reconnecting");
        setTimeout(() => es.current === source && open(lastId.current ?? -1), 1000);
      } else {
        setConn(`reconnecting (Last-Event-ID ${lastId.current ?? "none"})`);
      }
    };
  };

  useEffect(() => {
    setEvents([]);
    lastId.current = null;
    open(-1);
    return () => {
      es.current?.close();
      es.current = null;
    };
  }, [threadId, runId, modes.join(",")]);

  const drop = () => {
    // Simulates a dropped connection: close it, then resume after the last id.
    const after = lastId.current ?? -1;
    setResumes((r) => [...r, after]);
    es.current?.close();
    open(after);
  };
  const toggle = (m) => {
    const next = modes.includes(m) ? modes.filter((x) => x !== m) : [...modes, m];
    if (next.length) setModes(MODES.filter((x) => next.includes(x)));
  };

  // Message chunks of one message are merged into one row.
  const rows = [];
  for (const e of events) {
    const prev = rows[rows.length - 1];
    if (e.event === "messages" && prev && prev.event === "messages" && Array.isArray(e.data) && Array.isArray(prev.data) && e.data[0]?.id && prev.data[0]?.id === e.data[0].id) {
      prev.chunks.push(e);
      prev.text += messageText(e.data[0].content);
      prev.lastId = e.id;
      continue;
    }
    rows.push({ ...e, chunks: [e], text: e.event === "messages" && Array.isArray(e.data) ? messageText(e.data[0]?.content) : "", lastId: e.id });
  }
  const at = offsets(events);
  // The step in force before each row (a divider marks each new one).
  const stepBefore = [];
  let cur;
  for (const r of rows) {
    stepBefore.push(cur);
    const s = stepOf(r);
    if (s !== undefined) cur = s;
  }
  return html`<section class="events" data-testid="events">
    <div class="events-head">
      <h3>Events</h3>
      <span class=${"conn " + conn.split(" ")[0]} data-testid="stream-state">${conn}</span>
      <span class="muted small" data-testid="event-count">${events.length} event${events.length === 1 ? "" : "s"}</span>
      <span class="spacer"></span>
      <button class=${view === "timeline" ? "on" : ""} onClick=${() => setView("timeline")} data-testid="view-timeline">Timeline</button>
      <button class=${view === "raw" ? "on" : ""} onClick=${() => setView("raw")} data-testid="view-raw">Raw SSE frames</button>
      <button onClick=${drop} disabled=${conn === "ended"} title="Close the connection and resume after the last event id" data-testid="stream-drop">Drop & resume</button>
    </div>
    <div class="modes" data-testid="stream-modes">stream_mode: ${MODES.map((m) => html`<label><input type="checkbox" checked=${modes.includes(m)} onChange=${() => toggle(m)} data-testid=${"mode-" + m} /> ${m}</label>`)}</div>
    <${Curl} method="GET" path=${`/threads/${threadId}/runs/${runId}/stream?stream_mode=${modes.join(",")}`} headers=${{ "Last-Event-ID": "-1" }} testid="stream-curl" />
    ${resumes.length > 0 && html`<p class="small muted" data-testid="resumes">resumed after Last-Event-ID ${resumes.join(", ")}</p>`}
    ${view === "raw"
      ? html`<pre class="raw-frames" data-testid="raw-frames">${events.map(frame).join("\n")}</pre>`
      : rows.length === 0
        ? html`<p class="empty small" data-testid="no-events">${conn === "ended" ? "The run's event log is empty: no worker ran a step of it." : "No event yet: waiting for the run's first event…"}</p>`
        : html`<ol class="timeline" data-testid="timeline">${rows.slice(0, shown).map((r, i) => {
          const step = stepOf(r);
          const divider = step !== undefined && step !== stepBefore[i];
          return html`${divider && html`<li class="step-divider" data-testid="step-divider">step ${step}${step === -1 ? " · input" : ""}</li>`}
          <li class=${"ev ev-" + r.event} data-testid="event" data-event=${r.event} data-id=${r.id}>
            <details>
              <summary><span class="ev-id">${r.lastId !== r.id ? `${r.id}–${r.lastId}` : r.id}</span><span class="ev-at" title="since the run's first debug event">${at.has(r.id) ? `+${at.get(r.id)} ms` : ""}</span><span class="ev-name">${r.event}</span>
                <span class="ev-sum">${r.event === "messages" ? `${r.data[0]?.type || ""}: ${r.text}` : summary(r)}</span>
                ${r.chunks.length > 1 && html`<span class="muted small">${r.chunks.length} chunks</span>`}</summary>
              <${Json} value=${r.chunks.length > 1 ? r.chunks.map((c) => c.data) : r.data} open=${2} />
            </details>
          </li>`;
        })}</ol>
        ${rows.length > shown && html`<button class="load-more" onClick=${() => setShown(shown + 500)} data-testid="timeline-more">show ${Math.min(500, rows.length - shown)} more of ${rows.length - shown} rows</button>`}`}
  </section>`;
}
