// A thread's page: its header (status, graph, hierarchy, storage, copy and
// delete), its checkpoint tree across every fork with the selected
// checkpoint's detail, a diff of two checkpoints, and its runs.
import { html, useEffect, useState } from "../vendor/preact-htm.js";
import { ApiError, base, get, post, request } from "../lib/api.js";
import { href, navigate } from "../lib/router.js";
import { ago, bytes, duration, short, time } from "../lib/format.js";
import { Badge, Copy, Curl, Empty, ErrorBox, KV, Loading, Pager, Status, Tabs, useAsync, useChanged } from "../ui/common.js";
import { CheckpointTree } from "./tree.js";
import { CheckpointDetail } from "./checkpoint.js";
import { DiffView } from "./diff.js";

const PAGE = 100;

/** Fields of the thread the page shows (its values can be large: not loaded here). */
const FIELDS = ["thread_id", "status", "metadata", "created_at", "updated_at", "parent_thread_id"];

export function ThreadView({ threadId, sub, route }) {
  const tab = sub[0] === "runs" ? "runs" : "checkpoints";
  const changed = useChanged();
  // The header, the checkpoint tree and the head's state load in parallel.
  const thread = useAsync(async (signal) => {
    const [found, storage] = await Promise.all([
      post("/threads/search", { ids: [threadId], select: FIELDS, limit: 1 }, { signal }),
      get("/inspect/threads/storage", { thread_id: threadId }, { signal }).then((l) => l[0] || null),
    ]);
    if (!found.length) throw new ApiError(404, `Thread ${threadId} not found`, "GET", `/threads/${threadId}`);
    return [found[0], storage];
  }, [threadId, changed]);
  if (thread.error) return html`<section class="page"><${ErrorBox} error=${thread.error} /><a href="#/threads">← Threads</a></section>`;
  const [t, storage] = thread.data || [null, null];
  return html`<section class="page thread-page" data-testid="thread-view" data-thread-id=${threadId}>
    ${t ? html`<${ThreadHeader} t=${t} storage=${storage} />` : html`<header class="thread-head"><${Loading} what="Loading the thread" /></header>`}
    <${Tabs} active=${tab} tabs=${[
      { id: "checkpoints", label: "Checkpoints", href: href(["threads", threadId]), count: storage ? storage.checkpoints.rows : undefined },
      { id: "runs", label: "Runs", href: href(["threads", threadId, "runs"]), count: storage ? storage.runs : undefined },
    ]} />
    ${tab === "runs"
      ? html`<${RunsList} threadId=${threadId} route=${route} version=${changed} />`
      : sub[0] === "diff"
        ? html`<${DiffView} threadId=${threadId} a=${sub[1]} b=${sub[2]} ns=${route.query.get("ns") || ""} />`
        : html`<${Checkpoints} threadId=${threadId} thread=${t} version=${changed} selected=${sub[0] === "checkpoints" ? sub[1] : null} route=${route} />`}
  </section>`;
}

function ThreadHeader({ t, storage }) {
  const [action, setAction] = useState(null);
  const md = t.metadata || {};
  return html`<header class="thread-head">
    <div class="title-row">
      <a href="#/threads" class="back">← Threads</a>
      <h1><code data-testid="thread-id">${t.thread_id}</code></h1><${Copy} text=${t.thread_id} />
      <${Status} status=${t.status} testid="thread-status" />
      <span class="spacer"></span>
      <button onClick=${() => setAction(action === "copy" ? null : "copy")} data-testid="action-copy-thread">Copy thread</button>
      <button class="danger" onClick=${() => setAction(action === "delete" ? null : "delete")} data-testid="action-delete-thread">Delete…</button>
    </div>
    <${KV} rows=${[
      ["graph", md.graph_id && html`<a href=${href(["assistants", md.graph_id])}><code>${md.graph_id}</code></a>`, "thread-graph"],
      ["parent", t.parent_thread_id && html`<a href=${href(["threads", t.parent_thread_id])}><code>${t.parent_thread_id}</code></a>`],
      ["children", storage && (storage.children ? html`<a href=${href(["threads"], { tree: "1" })}>${storage.children}</a>` : "0")],
      ["created", html`<span title=${time(t.created_at)}>${ago(t.created_at)}</span>`],
      ["updated", html`<span title=${time(t.updated_at)}>${ago(t.updated_at)}</span>`],
      ["storage", storage && html`<span data-testid="thread-bytes" title=${`checkpoints ${storage.checkpoints.rows} rows ${bytes(storage.checkpoints.bytes)} · blobs ${storage.blobs.rows} rows ${bytes(storage.blobs.bytes)} · writes ${storage.writes.rows} rows ${bytes(storage.writes.bytes)} · run events ${storage.run_events.rows} rows ${bytes(storage.run_events.bytes)}`}>${bytes(storage.total_bytes)}</span>`],
      ["assistant", md.assistant_id && html`<a href=${href(["assistants", md.assistant_id])}><code>${short(md.assistant_id)}</code></a>`],
      ["metadata", html`${Object.entries(md).filter(([k]) => k !== "graph_id" && k !== "assistant_id").map(([k, v]) => html`<span class="chip">${k}=${typeof v === "string" ? v : JSON.stringify(v)}</span>`)}`],
    ]} />
    ${action === "copy" && html`<${CopyThread} t=${t} onClose=${() => setAction(null)} />`}
    ${action === "delete" && html`<${DeleteThread} t=${t} onClose=${() => setAction(null)} />`}
  </header>`;
}

function CopyThread({ t, onClose }) {
  const [state, setState] = useState({ busy: false, error: null });
  const path = `/threads/${t.thread_id}/copy`;
  const run = async () => {
    setState({ busy: true, error: null });
    try {
      const { data } = await request("POST", path);
      navigate(href(["threads", data.thread_id]));
    } catch (error) {
      setState({ busy: false, error });
    }
  };
  return html`<div class="action-panel" data-testid="copy-thread-panel">
    <p>Copies the thread with every checkpoint, blob and write (all branches) under a new thread id.</p>
    <${Curl} method="POST" path=${path} />
    <${ErrorBox} error=${state.error} />
    <div class="buttons"><button class="primary" disabled=${state.busy} onClick=${run} data-testid="copy-thread-submit">Copy</button><button onClick=${onClose}>Cancel</button></div>
  </div>`;
}

function DeleteThread({ t, onClose }) {
  const [strategy, setStrategy] = useState("detach");
  const [state, setState] = useState({ busy: false, error: null });
  const path = `/threads/${t.thread_id}?strategy=${strategy}`;
  const run = async () => {
    setState({ busy: true, error: null });
    try {
      await request("DELETE", path);
      navigate("#/threads");
    } catch (error) {
      setState({ busy: false, error });
    }
  };
  return html`<div class="action-panel danger" data-testid="delete-thread-panel">
    <p>Deletes the thread with its checkpoints, runs and events. Its children:</p>
    <div class="radios">
      ${[["detach", "detach: they become roots"], ["reject", "reject: refuse (409) while it has children"], ["cascade", "cascade: delete the whole subtree"]].map(
        ([v, label]) => html`<label><input type="radio" name="strategy" value=${v} checked=${strategy === v} onChange=${() => setStrategy(v)} data-testid=${"strategy-" + v} /> ${label}</label>`)}
    </div>
    <${Curl} method="DELETE" path=${path} />
    <${ErrorBox} error=${state.error} testid="delete-error" />
    <div class="buttons"><button class="danger" disabled=${state.busy} onClick=${run} data-testid="delete-thread-submit">Delete thread</button><button onClick=${onClose}>Cancel</button></div>
  </div>`;
}

/** The checkpoint tree (paged by before) and the selected checkpoint. */
function Checkpoints({ threadId: tid, thread, version, selected, route }) {
  const ns = route.query.get("ns") || "";
  const [pages, setPages] = useState({ key: null, list: [], next: null, head: null, total: 0, namespaces: [""], loading: true, error: null });
  const [compare, setCompare] = useState(null);
  const key = `${tid}|${ns}|${version}`;
  const load = async (before, reset) => {
    setPages((p) => ({ ...p, loading: true, error: null }));
    try {
      const page = await get(`/inspect/threads/${tid}/checkpoints`, { limit: PAGE, before, checkpoint_ns: ns });
      setPages((p) => ({
        key, list: reset ? page.checkpoints : [...p.list, ...page.checkpoints], next: page.next, head: page.head,
        total: page.total, namespaces: page.namespaces, loading: false, error: null,
      }));
    } catch (error) {
      setPages((p) => ({ ...p, loading: false, error }));
    }
  };
  useEffect(() => {
    load(null, true);
  }, [key]);
  // Without a selection the root graph's latest state is shown: it loads at
  // once, in parallel with the tree (other namespaces wait for the head).
  const current = selected || (ns ? pages.head : null);
  const detailKey = `${selected || "latest"}|${ns}|${version}`;
  const onCompare = (id) => {
    if (!compare || compare === id) return setCompare(compare === id ? null : id);
    const [a, b] = [compare, id].sort();
    setCompare(null);
    navigate(href(["threads", tid, "diff", a, b], { ns }));
  };
  return html`<div class="cp-layout">
    <div class="cp-left">
      <div class="cp-toolbar">
        <span data-testid="checkpoint-total">${pages.total} checkpoint${pages.total === 1 ? "" : "s"}</span>
        ${pages.namespaces.length > 1 && html`<select value=${ns} onChange=${(e) => navigate(href(["threads", tid], { ns: e.target.value }))} data-testid="ns-select">
          ${pages.namespaces.map((n) => html`<option value=${n}>${n === "" ? "root graph" : n}</option>`)}</select>`}
        <span class="muted small">${compare ? "pick a second checkpoint to diff" : "click a row · “diff” picks two to compare"}</span>
      </div>
      <${ErrorBox} error=${pages.error} />
      ${pages.list.length === 0 && !pages.loading
        ? html`<${Empty}>No checkpoints yet: start a run (<a href=${href(["threads", tid, "runs"])}>runs</a>) or use update_state.<//>`
        : html`<${CheckpointTree} threadId=${tid} nodes=${pages.list} head=${pages.head} selected=${current || pages.head} compare=${compare} onCompare=${onCompare} ns=${ns} />`}
      ${pages.loading && html`<${Loading} what="Loading checkpoints" />`}
      ${pages.next && !pages.loading && html`<button class="load-more" onClick=${() => load(pages.next, false)} data-testid="load-older">Load older checkpoints (${pages.total - pages.list.length} more)</button>`}
    </div>
    <div class="cp-right">
      ${current || !ns
        ? html`<${CheckpointDetail} key=${detailKey} threadId=${tid} thread=${thread} checkpointId=${current} ns=${ns} head=${pages.head} route=${route} />`
        : !pages.loading && html`<${Empty}>Select a checkpoint.<//>`}
    </div>
  </div>`;
}

const LIMIT = 20;

function RunsList({ threadId, route, version }) {
  const offset = Number(route.query.get("offset") || 0);
  const runs = useAsync(async (signal) => {
    const res = await request("GET", `/inspect/threads/${threadId}/runs?limit=${LIMIT}&offset=${offset}`, { signal });
    return { list: res.data, hasNext: !!res.headers.get("X-Pagination-Next") };
  }, [threadId, offset, version]);
  if (runs.error) return html`<${ErrorBox} error=${runs.error} />`;
  if (!runs.data) return html`<${Loading} what="Loading runs" />`;
  if (!runs.data.list.length) return html`<${Empty}>No runs on this thread yet. Start one from a checkpoint's “Time travel” tab, or: <code>curl -s -X POST ${location.origin}${base}/threads/${threadId}/runs -d '{"assistant_id":"…","input":{}}'</code><//>`;
  return html`<div>
    <table class="grid" data-testid="runs-table">
      <thead><tr><th>run</th><th>status</th><th>graph</th><th>strategy</th><th>created</th><th>queued</th><th>ran</th><th class="num">attempt</th><th class="num">events</th><th>from</th><th>error</th></tr></thead>
      <tbody>${runs.data.list.map((r) => html`<tr data-testid="run-row" data-run-id=${r.run_id} data-status=${r.status}>
        <td><a href=${href(["threads", threadId, "runs", r.run_id])} data-testid="run-link"><code>${short(r.run_id)}</code></a></td>
        <td><${Status} status=${r.status} /></td>
        <td><code>${r.graph_id}</code></td>
        <td>${r.multitask_strategy}</td>
        <td title=${time(r.created_at)}>${ago(r.created_at)}</td>
        <td>${duration(r.created_at, r.started_at)}</td>
        <td>${duration(r.started_at, r.finished_at) || (r.status === "running" ? "running…" : "")}</td>
        <td class="num">${r.attempt}</td>
        <td class="num">${r.events}</td>
        <td>${r.checkpoint_id ? html`<a href=${href(["threads", threadId, "checkpoints", r.checkpoint_id])}>checkpoint</a>` : ""}${r.resume ? html` <${Badge} kind="amber">resume<//>` : ""}</td>
        <td class="err-cell">${r.error ? r.error.message || r.error.error : ""}</td>
      </tr>`)}</tbody>
    </table>
    <${Pager} offset=${offset} limit=${LIMIT} count=${runs.data.list.length} hasNext=${runs.data.hasNext} onPage=${(o) => navigate(href(["threads", threadId, "runs"], { offset: o || "" }))} />
  </div>`;
}
