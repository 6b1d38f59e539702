// The store (long-term memory): namespaces as a tree, a namespace's items
// (paged), and search by text query and JSON filter.
import { html, useState } from "../vendor/preact-htm.js";
import { post, request } from "../lib/api.js";
import { href, navigate } from "../lib/router.js";
import { ago, time } from "../lib/format.js";
import { Curl, Empty, ErrorBox, Loading, Pager, useAsync, useChanged } from "../ui/common.js";
import { Json } from "../ui/json.js";

const LIMIT = 20;

/** One level of the namespace tree under prefix, children loaded on demand. */
function NsLevel({ prefix, selected }) {
  const ns = useAsync((signal) => post("/store/namespaces", { prefix, max_depth: prefix.length + 1, limit: 100 }, { signal }), [prefix.join("\u0000")]);
  if (ns.error) return html`<${ErrorBox} error=${ns.error} />`;
  if (!ns.data) return html`<${Loading} />`;
  const children = [...new Set(ns.data.namespaces.filter((n) => n.length > prefix.length).map((n) => n[prefix.length]))].sort();
  if (!children.length) return null;
  return html`<ul class="ns-tree">${children.map((c) => {
    const path = [...prefix, c];
    const open = selected.length >= path.length && path.every((p, i) => selected[i] === p);
    return html`<li key=${c}>
      <a href=${href(["store"], { ns: path.join(".") })} class=${open && selected.length === path.length ? "active" : ""} data-testid="ns-node" data-ns=${path.join(".")}>${open ? "▾" : "▸"} ${c}</a>
      ${open && html`<${NsLevel} prefix=${path} selected=${selected} />`}
    </li>`;
  })}</ul>`;
}

export function StoreView({ route }) {
  const q = route.query;
  const selected = q.get("ns") ? q.get("ns").split(".") : [];
  const query = q.get("q") || "";
  const offset = Number(q.get("offset") || 0);
  const [text, setText] = useState(query);
  const changed = useChanged();
  const body = { namespace_prefix: selected, limit: LIMIT, offset };
  if (query) body.query = query;
  const items = useAsync((signal) => request("POST", "/store/items/search", { body, signal }).then((r) => r.data.items), [q.toString(), changed]);
  const set = (ch) => navigate(href(["store"], { ns: selected.join("."), q: query, ...ch }));
  return html`<section class="page" data-testid="store-view">
    <header class="page-head"><h1>Store</h1></header>
    <div class="store-layout">
      <aside class="ns-pane"><a href="#/store" class=${selected.length === 0 ? "active" : ""}>all namespaces</a><${NsLevel} prefix=${[]} selected=${selected} /></aside>
      <div>
        <form class="inline" onSubmit=${(e) => { e.preventDefault(); set({ q: text, offset: "" }); }}>
          <input placeholder="search the values (text)" value=${text} onInput=${(e) => setText(e.target.value)} data-testid="store-query" />
          <button type="submit" data-testid="store-search">Search</button>
        </form>
        <${Curl} method="POST" path="/store/items/search" body=${body} testid="store-curl" />
        <${ErrorBox} error=${items.error} />
        ${!items.data ? html`<${Loading} />` : items.data.length === 0 ? html`<${Empty}>No item${selected.length ? ` under ${selected.join(".")}` : ""}.<//>` : html`
          <table class="grid" data-testid="store-items"><thead><tr><th>namespace</th><th>key</th><th>value</th><th>updated</th><th>expires</th></tr></thead>
            <tbody>${items.data.map((it) => html`<tr data-testid="store-item" data-key=${it.key}><td><code>${it.namespace.join(".")}</code></td><td><code>${it.key}</code></td>
              <td class="value-cell"><${Json} value=${it.value} open=${1} /></td><td title=${time(it.updated_at)}>${ago(it.updated_at)}</td><td>${it.expires_at ? time(it.expires_at) : ""}</td></tr>`)}</tbody></table>
          <${Pager} offset=${offset} limit=${LIMIT} count=${items.data.length} hasNext=${items.data.length === LIMIT} onPage=${(o) => set({ offset: o || "" })} />`}
      </div>
    </div>
  </section>`;
}
