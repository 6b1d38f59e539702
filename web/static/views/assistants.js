// Assistants: the list, and one assistant's versions, config and context,
// its graph drawn as nodes and edges (subgraphs boxed, with xray), and its
// schemas.
import { html, useState } from "../vendor/preact-htm.js";
import { get, post, request } from "../lib/api.js";
import { href, navigate } from "../lib/router.js";
import { ago, short, time } from "../lib/format.js";
import { Empty, ErrorBox, KV, Loading, Pager, Tabs, useAsync } from "../ui/common.js";
import { Json } from "../ui/json.js";

const LIMIT = 50;

export function AssistantsView({ id, route }) {
  return id ? html`<${Assistant} id=${id} route=${route} />` : html`<${List} route=${route} />`;
}

function List({ route }) {
  const offset = Number(route.query.get("offset") || 0);
  const page = useAsync(async (signal) => {
    const res = await request("POST", "/assistants/search", { signal, body: { limit: LIMIT, offset, sort_by: "graph_id", sort_order: "asc" } });
    return { list: res.data, hasNext: !!res.headers.get("X-Pagination-Next") || res.data.length === LIMIT };
  }, [offset]);
  return html`<section class="page" data-testid="assistants-view">
    <header class="page-head"><h1>Assistants</h1></header>
    <p class="muted small">A graph's system assistant has the graph's name; others are configured, versioned uses of a graph.</p>
    <${ErrorBox} error=${page.error} />
    ${!page.data ? html`<${Loading} />` : page.data.list.length === 0 ? html`<${Empty}>No assistant.<//>` : html`
      <table class="grid" data-testid="assistants-table"><thead><tr><th>name</th><th>graph</th><th class="num">version</th><th>assistant id</th><th>updated</th></tr></thead>
        <tbody>${page.data.list.map((a) => html`<tr data-testid="assistant-row" data-graph-id=${a.graph_id}>
          <td><a href=${href(["assistants", a.assistant_id])} data-testid="assistant-link">${a.name}</a></td><td><code>${a.graph_id}</code></td>
          <td class="num">${a.version}</td><td><code class="small">${a.assistant_id}</code></td><td title=${time(a.updated_at)}>${ago(a.updated_at)}</td></tr>`)}</tbody></table>
      <${Pager} offset=${offset} limit=${LIMIT} count=${page.data.list.length} hasNext=${page.data.hasNext} onPage=${(o) => navigate(href(["assistants"], { offset: o || "" }))} />`}
  </section>`;
}

function Assistant({ id, route }) {
  const tab = route.query.get("tab") || "graph";
  const a = useAsync((signal) => get(`/assistants/${encodeURIComponent(id)}`, null, { signal }), [id]);
  if (a.error) return html`<section class="page"><${ErrorBox} error=${a.error} /><a href="#/assistants">← Assistants</a></section>`;
  if (!a.data) return html`<section class="page"><${Loading} /></section>`;
  const as = a.data;
  const t = (x) => href(["assistants", id], { tab: x === "graph" ? "" : x });
  return html`<section class="page" data-testid="assistant-view">
    <header class="thread-head"><div class="title-row"><a class="back" href="#/assistants">← Assistants</a><h1>${as.name}</h1><code>${as.graph_id}</code><span class="muted">v${as.version}</span></div>
      <${KV} rows=${[["assistant id", html`<code>${as.assistant_id}</code>`], ["description", as.description], ["created", time(as.created_at)], ["updated", time(as.updated_at)],
        ["threads", html`<a href=${href(["threads"], { graph: as.graph_id })}>threads of ${as.graph_id}</a>`]]} /></header>
    <${Tabs} active=${tab} tabs=${[{ id: "graph", label: "Graph", href: t("graph") }, { id: "versions", label: "Versions", href: t("versions") },
      { id: "config", label: "Config", href: t("config") }, { id: "schemas", label: "Schemas", href: t("schemas") }]} />
    ${tab === "graph" && html`<${GraphTab} id=${id} />`}
    ${tab === "versions" && html`<${Versions} id=${id} />`}
    ${tab === "config" && html`<div data-testid="assistant-config"><h4>config</h4><${Json} value=${as.config} open=${3} /><h4>context</h4><${Json} value=${as.context} open=${3} /><h4>metadata</h4><${Json} value=${as.metadata} open=${3} /></div>`}
    ${tab === "schemas" && html`<${Schemas} id=${id} />`}
  </section>`;
}

function Versions({ id }) {
  const v = useAsync((signal) => post(`/assistants/${encodeURIComponent(id)}/versions`, { limit: 50 }, { signal }), [id]);
  if (v.error) return html`<${ErrorBox} error=${v.error} />`;
  if (!v.data) return html`<${Loading} />`;
  return html`<div data-testid="versions">${v.data.map((x) => html`<details class="version" data-testid="version"><summary>v${x.version} · ${time(x.created_at)} · ${x.name}</summary>
    <${KV} rows=${[["config", html`<${Json} value=${x.config} open=${2} />`], ["context", html`<${Json} value=${x.context} open=${2} />`], ["metadata", html`<${Json} value=${x.metadata} open=${2} />`]]} /></details>`)}</div>`;
}

function Schemas({ id }) {
  const s = useAsync((signal) => get(`/assistants/${encodeURIComponent(id)}/schemas`, null, { signal }), [id]);
  if (s.error) return html`<${ErrorBox} error=${s.error} />`;
  if (!s.data) return html`<${Loading} />`;
  return html`<div data-testid="schemas">${["input_schema", "output_schema", "state_schema", "config_schema", "context_schema"].map(
    (k) => html`<h4>${k}</h4><${Json} value=${s.data[k]} open=${3} />`)}</div>`;
}

/** Layers nodes by their longest distance from __start__ along forward edges. */
export function layers(nodes, edges) {
  const out = new Map(nodes.map((n) => [n.id, []]));
  for (const e of edges) if (out.has(e.source) && out.has(e.target)) out.get(e.source).push(e.target);
  // Back edges (cycles) are found by a DFS and left out of the layering.
  const state = new Map();
  const back = new Set();
  const dfs = (u) => {
    state.set(u, 1);
    for (const v of out.get(u)) {
      if (state.get(v) === 1) back.add(`${u}->${v}`);
      else if (!state.get(v)) dfs(v);
    }
    state.set(u, 2);
  };
  const start = nodes.find((n) => n.id === "__start__");
  if (start) dfs(start.id);
  for (const n of nodes) if (!state.get(n.id)) dfs(n.id);
  const layer = new Map(nodes.map((n) => [n.id, 0]));
  for (let i = 0; i < nodes.length; i++) {
    for (const e of edges) {
      if (back.has(`${e.source}->${e.target}`) || !layer.has(e.source) || !layer.has(e.target)) continue;
      layer.set(e.target, Math.max(layer.get(e.target), layer.get(e.source) + 1));
    }
  }
  const end = nodes.find((n) => n.id === "__end__");
  if (end) layer.set(end.id, Math.max(...layer.values()));
  return { layer, back };
}

export function GraphDrawing({ graph }) {
  const { nodes, edges } = graph;
  const { layer, back } = layers(nodes, edges);
  const rows = [];
  for (const n of nodes) {
    const l = layer.get(n.id);
    (rows[l] = rows[l] || []).push(n);
  }
  const NW = 150;
  const NH = 36;
  const GX = 40;
  const GY = 56;
  const width = Math.max(...rows.map((r) => (r ? r.length : 0))) * (NW + GX) + 80;
  const pos = new Map();
  rows.forEach((r, l) => (r || []).forEach((n, i) => {
    const rowW = r.length * (NW + GX) - GX;
    pos.set(n.id, { x: (width - rowW) / 2 + i * (NW + GX), y: 20 + l * (NH + GY) });
  }));
  const height = rows.length * (NH + GY) + 20;
  // Subgraph nodes (xray) are named "<parent>:<child>": box each group.
  const groups = new Map();
  for (const n of nodes) {
    const i = n.id.lastIndexOf(":");
    if (i > 0 && !n.id.startsWith("__")) {
      const g = n.id.slice(0, i);
      if (!groups.has(g)) groups.set(g, []);
      groups.get(g).push(pos.get(n.id));
    }
  }
  const label = (n) => (n.data && typeof n.data === "object" && n.data.name) || n.id;
  return html`<svg class="graph" data-testid="graph-drawing" width=${width} height=${height} viewBox=${`0 0 ${width} ${height}`}>
    <defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0 0 L10 5 L0 10 z" fill="#64748b" /></marker></defs>
    ${[...groups.entries()].map(([g, ps]) => {
      const x0 = Math.min(...ps.map((p) => p.x)) - 12;
      const y0 = Math.min(...ps.map((p) => p.y)) - 22;
      const x1 = Math.max(...ps.map((p) => p.x)) + NW + 12;
      const y1 = Math.max(...ps.map((p) => p.y)) + NH + 10;
      return html`<g class="subgraph" data-testid="subgraph"><rect x=${x0} y=${y0} width=${x1 - x0} height=${y1 - y0} rx="10" /><text x=${x0 + 8} y=${y0 + 14}>${g}</text></g>`;
    })}
    ${edges.map((e) => {
      const a = pos.get(e.source);
      const b = pos.get(e.target);
      if (!a || !b) return null;
      const isBack = back.has(`${e.source}->${e.target}`) || b.y <= a.y;
      const x1 = a.x + NW / 2;
      const y1 = a.y + NH;
      const x2 = b.x + NW / 2;
      const y2 = b.y;
      const d = isBack
        ? `M${a.x + NW} ${a.y + NH / 2} C ${a.x + NW + 60} ${a.y + NH / 2}, ${b.x + NW + 60} ${b.y + NH / 2}, ${b.x + NW} ${b.y + NH / 2}`
        : `M${x1} ${y1} C ${x1} ${y1 + GY / 2}, ${x2} ${y2 - GY / 2}, ${x2} ${y2}`;
      return html`<path class=${"edge" + (e.conditional ? " conditional" : "")} d=${d} marker-end="url(#arrow)" data-testid="graph-edge" data-source=${e.source} data-target=${e.target} />`;
    })}
    ${nodes.map((n) => {
      const p = pos.get(n.id);
      const special = n.id === "__start__" || n.id === "__end__";
      return html`<g class=${"gnode" + (special ? " special" : "")} data-testid="graph-node" data-node=${n.id}>
        <rect x=${p.x} y=${p.y} width=${NW} height=${NH} rx=${special ? 18 : 6} />
        <text x=${p.x + NW / 2} y=${p.y + NH / 2 + 4} text-anchor="middle">${label(n)}</text></g>`;
    })}
  </svg>`;
}

function GraphTab({ id }) {
  const [xray, setXray] = useState(true);
  const g = useAsync((signal) => Promise.all([
    get(`/assistants/${encodeURIComponent(id)}/graph`, { xray: xray ? "true" : "false" }, { signal }),
    get(`/assistants/${encodeURIComponent(id)}/subgraphs`, { recurse: "true" }, { signal }).catch(() => ({})),
  ]), [id, xray]);
  if (g.error) return html`<${ErrorBox} error=${g.error} />`;
  if (!g.data) return html`<${Loading} />`;
  const [graph, subgraphs] = g.data;
  // Subgraphs: those the xray drawing boxes ("<parent>:<child>" nodes) and
  // those GET /subgraphs names (with their schemas).
  const drawn = graph.nodes.map((n) => n.id).filter((id) => !id.startsWith("__") && id.lastIndexOf(":") > 0).map((id) => id.slice(0, id.lastIndexOf(":")));
  const names = [...new Set([...drawn, ...Object.keys(subgraphs || {})])].sort();
  return html`<div data-testid="graph-tab">
    <label class="inline"><input type="checkbox" checked=${xray} onChange=${(e) => setXray(e.target.checked)} /> xray (expand subgraphs)</label>
    <div class="graph-wrap"><${GraphDrawing} graph=${graph} /></div>
    <p class="muted small">${graph.nodes.length} nodes, ${graph.edges.length} edges; dashed edges are conditional. Subgraphs: <span data-testid="subgraph-names">${names.length ? names.join(", ") : "none"}</span>.</p>
    <details><summary class="small">graph JSON</summary><${Json} value=${graph} open=${1} /></details>
  </div>`;
}

export { short };
