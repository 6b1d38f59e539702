// The diff of two checkpoints: values (messages matched by id), channel
// versions and versions_seen, so a person sees what changed between them and
// why each side's next tasks are triggered.
import { html } from "../vendor/preact-htm.js";
import { href } from "../lib/router.js";
import { short, shortCheckpoint, version } from "../lib/format.js";
import { Badge, Empty, ErrorBox, Loading, useAsync } from "../ui/common.js";
import { Json } from "../ui/json.js";
import { Message, isMessageList } from "../ui/messages.js";
import { loadCheckpoint, Triggers } from "./checkpoint.js";

const same = (x, y) => JSON.stringify(x) === JSON.stringify(y);

/** Messages of two lists matched by id: [{status, a, b}] in b's order, removed ones after. */
export function diffMessages(as, bs) {
  const byId = (list) => new Map(list.map((m, i) => [m.id ?? `#${i}`, m]));
  const A = byId(as);
  const B = byId(bs);
  const out = [];
  for (const [id, m] of B) {
    if (!A.has(id)) out.push({ status: "added", id, b: m });
    else out.push({ status: same(A.get(id), m) ? "same" : "changed", id, a: A.get(id), b: m });
  }
  for (const [id, m] of A) if (!B.has(id)) out.push({ status: "removed", id, a: m });
  return out;
}

function MessagesDiff({ as, bs }) {
  const rows = diffMessages(as || [], bs || []);
  const counts = rows.reduce((c, r) => ({ ...c, [r.status]: (c[r.status] || 0) + 1 }), {});
  const shown = [];
  let run = 0;
  for (const r of rows) {
    if (r.status === "same") {
      run++;
      continue;
    }
    if (run) shown.push({ status: "skip", n: run });
    run = 0;
    shown.push(r);
  }
  if (run) shown.push({ status: "skip", n: run });
  return html`<div class="msg-diff" data-testid="messages-diff">
    <div class="small">${["added", "changed", "removed", "same"].filter((s) => counts[s]).map((s) => html`<span class=${"mark " + s} data-testid=${"msg-count-" + s}>${counts[s]} ${s}</span> `)}</div>
    ${shown.map((r) => r.status === "skip"
      ? html`<div class="muted small skip">… ${r.n} unchanged message${r.n === 1 ? "" : "s"}</div>`
      : r.status === "changed"
        ? html`<div class="changed-pair" data-testid="msg-diff" data-status="changed"><${Message} m=${r.a} mark="before" /><${Message} m=${r.b} mark="after" /></div>`
        : html`<div data-testid="msg-diff" data-status=${r.status}><${Message} m=${r.status === "added" ? r.b : r.a} mark=${r.status} /></div>`)}
  </div>`;
}

function ValuesDiff({ a, b }) {
  const keys = [...new Set([...Object.keys(a || {}), ...Object.keys(b || {})])].sort();
  const rows = keys.map((k) => {
    const inA = a && k in a;
    const inB = b && k in b;
    const status = !inA ? "added" : !inB ? "removed" : same(a[k], b[k]) ? "same" : "changed";
    return { k, status };
  });
  if (!rows.length) return html`<${Empty}>Both are empty.<//>`;
  return html`<div data-testid="values-diff">${rows.map(({ k, status }) => html`<div class=${"vdiff " + status} data-testid="value-diff" data-channel=${k} data-status=${status}>
    <div class="channel-name"><code>${k}</code> <span class=${"mark " + status}>${status}</span></div>
    ${status !== "same" && ((isMessageList(a?.[k]) || isMessageList(b?.[k]))
      ? html`<${MessagesDiff} as=${a?.[k]} bs=${b?.[k]} />`
      : html`<div class="side-by-side"><div><div class="muted small">A</div>${a && k in a ? html`<${Json} value=${a[k]} open=${2} />` : html`<span class="muted">absent</span>`}</div>
          <div><div class="muted small">B</div>${b && k in b ? html`<${Json} value=${b[k]} open=${2} />` : html`<span class="muted">absent</span>`}</div></div>`)}
  </div>`)}</div>`;
}

function VersionsDiff({ a, b }) {
  const chans = [...new Set([...Object.keys(a.channel_versions), ...Object.keys(b.channel_versions)])].sort();
  const nodes = [...new Set([...Object.keys(a.versions_seen), ...Object.keys(b.versions_seen)])].sort();
  const seenRows = [];
  for (const n of nodes) {
    const sa = a.versions_seen[n] || {};
    const sb = b.versions_seen[n] || {};
    for (const c of [...new Set([...Object.keys(sa), ...Object.keys(sb)])].sort()) {
      if (sa[c] !== sb[c]) seenRows.push({ n, c, from: sa[c], to: sb[c] });
    }
  }
  return html`<h4>channel_versions</h4>
    <table class="grid" data-testid="versions-diff"><thead><tr><th>channel</th><th>A</th><th>B</th><th></th></tr></thead>
      <tbody>${chans.map((c) => {
        const va = a.channel_versions[c];
        const vb = b.channel_versions[c];
        return html`<tr class=${va !== vb ? "changed" : ""} data-testid="version-diff" data-channel=${c} data-changed=${va !== vb ? "true" : "false"}>
          <td><code>${c}</code></td><td title=${va || ""}><code>${version(va)}</code></td><td title=${vb || ""}><code>${version(vb)}</code></td><td>${va !== vb ? "changed" : ""}</td></tr>`;
      })}</tbody></table>
    <h4>versions_seen <span class="muted small">what each node had seen: a node that ran between A and B saw newer versions</span></h4>
    ${seenRows.length === 0 ? html`<p class="muted">No difference.</p>` : html`<table class="grid" data-testid="seen-diff"><thead><tr><th>node</th><th>channel</th><th>A</th><th>B</th></tr></thead>
      <tbody>${seenRows.map((r) => html`<tr data-testid="seen-diff-row" data-node=${r.n}><td><span class="chip node">${r.n}</span></td><td><code>${r.c}</code></td><td><code>${version(r.from)}</code></td><td><code>${version(r.to)}</code></td></tr>`)}</tbody></table>`}`;
}

function Side({ label, tid, id, cp, ns }) {
  const md = cp.state.metadata || {};
  return html`<div class="diff-side" data-testid=${"diff-" + label}>
    <b>${label}</b> <a href=${href(["threads", tid, "checkpoints", id], { ns })}><code>${shortCheckpoint(id)}</code></a>
    <${Badge} kind=${md.source}>${md.source}<//> <span class="muted">step ${md.step}</span>
    ${md.run_id && html`<span class="muted small">run ${short(md.run_id)}</span>`}
    <div class="small">next: ${cp.state.next.length ? cp.state.next.join(", ") : "—"}</div>
  </div>`;
}

export function DiffView({ threadId, a, b, ns }) {
  const d = useAsync((signal) => Promise.all([loadCheckpoint(threadId, a, ns, signal), loadCheckpoint(threadId, b, ns, signal)]), [threadId, a, b, ns]);
  if (d.error) return html`<${ErrorBox} error=${d.error} />`;
  if (!d.data) return html`<${Loading} what="Loading both checkpoints" />`;
  const [A, B] = d.data;
  const relation = B.raw.parent_checkpoint_id === a ? "B is A's child" : A.raw.parent_checkpoint_id === b ? "A is B's child"
    : A.raw.parent_checkpoint_id && A.raw.parent_checkpoint_id === B.raw.parent_checkpoint_id ? "siblings: two branches from one parent" : "";
  return html`<section class="diff" data-testid="diff-view">
    <div class="diff-head">
      <${Side} label="A" tid=${threadId} id=${a} cp=${A} ns=${ns} />
      <span class="arrow">→</span>
      <${Side} label="B" tid=${threadId} id=${b} cp=${B} ns=${ns} />
      <a class="link small" href=${href(["threads", threadId, "diff", b, a], { ns })}>swap</a>
    </div>
    ${relation && html`<p class="muted" data-testid="diff-relation">${relation}</p>`}
    <h3>Values</h3>
    <${ValuesDiff} a=${A.state.values} b=${B.state.values} />
    <h3>Versions</h3>
    <${VersionsDiff} a=${A.raw} b=${B.raw} />
    <h3>Why the next tasks run</h3>
    <div class="side-by-side"><div><b>A</b><${Triggers} state=${A.state} raw=${A.raw} /></div><div><b>B</b><${Triggers} state=${B.state} raw=${B.raw} /></div></div>
  </section>`;
}
