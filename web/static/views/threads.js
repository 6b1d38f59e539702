// Threads: search and filter (status, graph, metadata), counts per status,
// the parent/child hierarchy as a tree, each thread's storage, and a link to
// every thread's page. One page of threads at a time.
import { html, useEffect, useState } from "../vendor/preact-htm.js";
import { base, get, post, request } from "../lib/api.js";
import { current, href, navigate } from "../lib/router.js";
import { ago, bytes, short, time } from "../lib/format.js";
import { Empty, ErrorBox, Loading, Pager, Status, useAsync } from "../ui/common.js";

const LIMIT = 25;
const STATUSES = ["idle", "busy", "interrupted", "error"];

function filterOf(q) {
  let metadata = {};
  let metaError = null;
  const raw = q.get("metadata");
  if (raw) {
    try {
      metadata = JSON.parse(raw);
      if (!metadata || typeof metadata !== "object" || Array.isArray(metadata)) throw new Error("not an object");
    } catch (e) {
      metaError = `metadata filter: ${e.message}`;
      metadata = {};
    }
  }
  if (q.get("graph")) metadata = { ...metadata, graph_id: q.get("graph") };
  const f = {};
  if (Object.keys(metadata).length) f.metadata = metadata;
  if (q.get("tree") === "1") f.root_only = true;
  return { filter: f, metaError };
}

/** Storage, children and runs of a list of threads, by id (one request). */
async function storageOf(ids, signal) {
  if (!ids.length) return {};
  const list = await get("/inspect/threads/storage", { thread_id: ids.join(",") }, { signal });
  return Object.fromEntries(list.map((s) => [s.thread_id, s]));
}

function Row({ t, s, depth, tree }) {
  const [open, setOpen] = useState(false);
  const children = s ? s.children : 0;
  const md = t.metadata || {};
  return html`
    <tr data-testid="thread-row" data-thread-id=${t.thread_id} data-status=${t.status}>
      <td class="tree-cell" style=${{ paddingLeft: `${depth * 18 + 6}px` }}>
        ${tree && children > 0
          ? html`<button class="j-toggle" data-testid="expand-children" onClick=${() => setOpen(!open)} aria-expanded=${open}>${open ? "▾" : "▸"}</button>`
          : html`<span class="j-toggle-space"></span>`}
        <a href=${href(["threads", t.thread_id])} data-testid="thread-link"><code>${t.thread_id}</code></a>
      </td>
      <td><${Status} status=${t.status} /></td>
      <td>${md.graph_id ? html`<code>${md.graph_id}</code>` : html`<span class="muted">—</span>`}</td>
      <td class="meta-cell">${Object.entries(md).filter(([k]) => !["graph_id", "assistant_id"].includes(k)).slice(0, 3).map(
        ([k, v]) => html`<span class="chip">${k}=${typeof v === "string" ? v : JSON.stringify(v)}</span>`)}</td>
      <td title=${time(t.updated_at)}>${ago(t.updated_at)}</td>
      <td class="num" data-testid="thread-storage" title=${s ? `checkpoints ${bytes(s.checkpoints.bytes)} · blobs ${bytes(s.blobs.bytes)} · writes ${bytes(s.writes.bytes)} · run events ${bytes(s.run_events.bytes)}` : ""}>${s ? bytes(s.total_bytes) : ""}</td>
      <td class="num">${s ? s.checkpoints.rows : ""}</td>
      <td class="num">${s ? s.runs : ""}</td>
      <td class="num" data-testid="thread-children">${s ? s.children : ""}</td>
    </tr>
    ${open && html`<${Children} parent=${t.thread_id} depth=${depth + 1} />`}`;
}

function Children({ parent, depth }) {
  const { loading, error, data } = useAsync(async (signal) => {
    const list = await get(`/threads/${parent}/children`, { limit: 100 }, { signal });
    return { list, storage: await storageOf(list.map((t) => t.thread_id), signal) };
  }, [parent]);
  if (loading) return html`<tr><td colspan="9" style=${{ paddingLeft: `${depth * 18 + 6}px` }}><${Loading} /></td></tr>`;
  if (error) return html`<tr><td colspan="9"><${ErrorBox} error=${error} /></td></tr>`;
  return data.list.map((t) => html`<${Row} key=${t.thread_id} t=${t} s=${data.storage[t.thread_id]} depth=${depth} tree=${true} />`);
}

export function ThreadsView({ route }) {
  const q = route.query;
  const offset = Number(q.get("offset") || 0);
  const status = q.get("status") || "";
  const tree = q.get("tree") === "1";
  const { filter, metaError } = filterOf(q);
  const [metaText, setMetaText] = useState(q.get("metadata") || "");
  const [goto, setGoto] = useState("");
  useEffect(() => setMetaText(q.get("metadata") || ""), [q.get("metadata")]);

  // From the URL as it is now, not as this render saw it: a second change
  // made before the first re-rendered (clear the metadata filter, then pick
  // a graph) keeps the first.
  const set = (changes) => {
    const next = Object.fromEntries(current().query.entries());
    Object.assign(next, changes);
    if (!("offset" in changes)) delete next.offset;
    navigate(href(["threads"], next));
  };

  const graphs = useAsync(async (signal) => {
    const list = await post("/assistants/search", { limit: 100, select: ["graph_id"] }, { signal });
    return [...new Set(list.map((a) => a.graph_id))].sort();
  }, []);

  const counts = useAsync(async (signal) => {
    const all = await Promise.all([null, ...STATUSES].map((s) =>
      post("/threads/count", s ? { ...filter, status: s } : filter, { signal })));
    return { all: all[0], ...Object.fromEntries(STATUSES.map((s, i) => [s, all[i + 1]])) };
  }, [JSON.stringify(filter)]);

  const page = useAsync(async (signal) => {
    const body = { ...filter, limit: LIMIT, offset, sort_by: "updated_at", sort_order: "desc",
      select: ["thread_id", "status", "metadata", "created_at", "updated_at", "parent_thread_id"] };
    if (status) body.status = status;
    const res = await request("POST", "/threads/search", { body, signal });
    const list = res.data;
    return { list, hasNext: !!res.headers.get("X-Pagination-Next"), storage: await storageOf(list.map((t) => t.thread_id), signal) };
  }, [JSON.stringify(filter), status, offset]);

  const c = counts.data;
  return html`<section class="page" data-testid="threads-view">
    <header class="page-head">
      <h1>Threads</h1>
      <form class="goto" onSubmit=${(e) => { e.preventDefault(); if (goto.trim()) navigate(href(["threads", goto.trim()])); }}>
        <input placeholder="Go to thread id…" value=${goto} onInput=${(e) => setGoto(e.target.value)} data-testid="goto-thread" />
      </form>
    </header>
    <div class="filters">
      <div class="chips" data-testid="status-filter">
        <a href=${href(["threads"], { ...Object.fromEntries(q.entries()), status: "", offset: "" })} class=${"chip-btn" + (!status ? " active" : "")} data-testid="status-all">all <span class="count" data-testid="count-all">${c ? c.all : "…"}</span></a>
        ${STATUSES.map((s) => html`<a href=${href(["threads"], { ...Object.fromEntries(q.entries()), status: s, offset: "" })} class=${"chip-btn" + (status === s ? " active" : "")} data-testid=${"status-" + s}>${s} <span class="count" data-testid=${"count-" + s}>${c ? c[s] : "…"}</span></a>`)}
      </div>
      <label class="inline">graph
        <select value=${q.get("graph") || ""} onChange=${(e) => set({ graph: e.target.value })} data-testid="graph-filter">
          <option value="">any</option>
          ${(graphs.data || []).map((g) => html`<option value=${g}>${g}</option>`)}
        </select>
      </label>
      <form class="inline meta-filter" onSubmit=${(e) => { e.preventDefault(); set({ metadata: metaText.trim() }); }}>
        <input placeholder='metadata contains, e.g. {"user":"ana"}' value=${metaText} onInput=${(e) => setMetaText(e.target.value)} data-testid="metadata-filter" />
        <button type="submit" data-testid="metadata-apply">Filter</button>
      </form>
      <label class="inline"><input type="checkbox" checked=${tree} onChange=${(e) => set({ tree: e.target.checked ? "1" : "" })} data-testid="tree-toggle" /> hierarchy (roots, expand children)</label>
    </div>
    ${metaError && html`<div class="error-box">${metaError}</div>`}
    <${ErrorBox} error=${page.error} />
    ${page.loading && !page.data ? html`<${Loading} what="Loading threads" />` : page.data && (page.data.list.length === 0
      ? html`<${Empty}>No thread matches. Create one with <code>curl -s -X POST ${location.origin}${base}/threads</code>.<//>`
      : html`<table class="grid" data-testid="threads-table">
          <thead><tr><th>thread</th><th>status</th><th>graph</th><th>metadata</th><th>updated</th><th class="num">storage</th><th class="num">checkpoints</th><th class="num">runs</th><th class="num">children</th></tr></thead>
          <tbody>${page.data.list.map((t) => html`<${Row} key=${t.thread_id} t=${t} s=${page.data.storage[t.thread_id]} depth=${0} tree=${tree} />`)}</tbody>
        </table>
        <${Pager} offset=${offset} limit=${LIMIT} count=${page.data.list.length} hasNext=${page.data.hasNext} onPage=${(o) => set({ offset: o || "" })} />`)}
  </section>`;
}

export { short };
