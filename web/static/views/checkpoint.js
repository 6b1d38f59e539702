// One checkpoint: its state (values, messages as a conversation), next,
// tasks, interrupts and errors, metadata, the pending writes of each task
// (the per-node audit view: checkpoint_writes with error, interrupt and
// resume writes), its channel versions and versions_seen, and the time-travel
// actions that start from it.
import { html } from "../vendor/preact-htm.js";
import { get, post } from "../lib/api.js";
import { href } from "../lib/router.js";
import { bytes, oneLine, shortCheckpoint, time, version } from "../lib/format.js";
import { Badge, Copy, Empty, ErrorBox, KV, Loading, Tabs, interruptsOf, useAsync } from "../ui/common.js";
import { Json } from "../ui/json.js";
import { Conversation, isMessageList } from "../ui/messages.js";
import { TimeTravel } from "./actions.js";

/** Loads a checkpoint's state (the state API) and its stored form (inspect). */
export function loadCheckpoint(tid, cid, ns, signal) {
  return Promise.all([
    post(`/threads/${tid}/state/checkpoint`, { checkpoint: { checkpoint_id: cid, checkpoint_ns: ns } }, { signal }),
    get(`/inspect/threads/${tid}/checkpoints/${encodeURIComponent(cid)}`, { checkpoint_ns: ns }, { signal }),
  ]).then(([state, raw]) => ({ state, raw }));
}

/**
 * checkpointId null: the root graph's latest checkpoint (GET /threads/{id}/state,
 * which needs no id, so the page need not wait for the tree). The stored form
 * (writes, versions, children) loads next and fills in when it arrives.
 */
export function CheckpointDetail({ threadId: tid, thread, checkpointId, ns, head, route }) {
  const tab = route.query.get("tab") || "state";
  const cp = useAsync((signal) => (checkpointId
    ? post(`/threads/${tid}/state/checkpoint`, { checkpoint: { checkpoint_id: checkpointId, checkpoint_ns: ns } }, { signal })
    : get(`/threads/${tid}/state`, null, { signal })), [tid, checkpointId, ns]);
  const id = checkpointId || (cp.data && cp.data.checkpoint && cp.data.checkpoint.checkpoint_id) || null;
  const stored = useAsync((signal) => (id ? get(`/inspect/threads/${tid}/checkpoints/${encodeURIComponent(id)}`, { checkpoint_ns: ns }, { signal }) : Promise.resolve(null)), [tid, id, ns]);
  if (cp.error) return html`<${ErrorBox} error=${cp.error} />`;
  if (!cp.data) return html`<${Loading} what="Loading the checkpoint" />`;
  const state = cp.data;
  if (!id) return html`<${Empty}>This thread has no checkpoint yet.<//>`;
  const raw = stored.data;
  const md = state.metadata || {};
  const tabHref = (t) => href(["threads", tid, "checkpoints", id], { ns, tab: t === "state" ? "" : t });
  const errors = raw ? raw.writes.filter((w) => w.channel === "__error__").length : 0;
  const isHead = id === head || (!checkpointId && !ns);
  const parent = state.parent_checkpoint && state.parent_checkpoint.checkpoint_id;
  const needRaw = (body) => (stored.error ? html`<${ErrorBox} error=${stored.error} />` : raw ? body() : html`<${Loading} what="Loading the stored checkpoint" />`);
  return html`<article class="cp-detail" data-testid="checkpoint-detail" data-checkpoint-id=${id}>
    <header>
      <div class="title-row">
        <h2><code title=${id}>${id}</code></h2><${Copy} text=${id} />
        ${isHead && html`<span class="head-tag">HEAD</span>`}
        <${Badge} kind=${md.source}>${md.source || "?"}<//>
        <span class="muted">step ${md.step ?? "?"}</span>
      </div>
      <${KV} rows=${[
        ["created", time(state.created_at)],
        ["parent", parent && html`<a href=${href(["threads", tid, "checkpoints", parent], { ns })} data-testid="parent-link"><code>${parent}</code></a>${" · "}<a href=${href(["threads", tid, "diff", parent, id], { ns })} data-testid="diff-parent">diff with parent</a>`],
        ["children", raw && raw.children.length ? html`${raw.children.map((c) => html`<a href=${href(["threads", tid, "checkpoints", c], { ns })} data-testid="child-link"><code>${shortCheckpoint(c)}</code></a> `)}${raw.children.length > 1 ? html`<${Badge} kind="teal">fork: ${raw.children.length} branches<//>` : ""}` : null],
        ["run", md.run_id && html`<a href=${href(["threads", tid, "runs", md.run_id])} data-testid="checkpoint-run"><code>${md.run_id}</code></a>`],
        ["next", state.next.length ? html`${state.next.map((n) => html`<span class="chip node">${n}</span>`)}` : html`<span class="muted">— (the graph ended here)</span>`, "checkpoint-next"],
      ]} />
    </header>
    <${Tabs} active=${tab} tabs=${[
      { id: "state", label: "State", href: tabHref("state") },
      { id: "writes", label: "Tasks & writes", href: tabHref("writes"), count: raw ? raw.writes.length : undefined },
      { id: "versions", label: "Versions", href: tabHref("versions") },
      { id: "metadata", label: "Metadata", href: tabHref("metadata") },
      { id: "travel", label: "Time travel", href: tabHref("travel") },
    ]} />
    ${errors > 0 && tab !== "writes" && html`<div class="error-box">A task failed here: see <a href=${tabHref("writes")}>Tasks & writes</a>.</div>`}
    ${tab === "state" && html`<${StateTab} state=${state} />`}
    ${tab === "writes" && needRaw(() => html`<${WritesTab} state=${state} raw=${raw} />`)}
    ${tab === "versions" && needRaw(() => html`<${VersionsTab} state=${state} raw=${raw} />`)}
    ${tab === "metadata" && html`<div data-testid="metadata-tab"><${Json} value=${state.metadata} open=${2} testid="metadata-json" /><h4>config</h4><${Json} value=${state.checkpoint} open=${1} /></div>`}
    ${tab === "travel" && html`<${TimeTravel} threadId=${tid} thread=${thread} state=${state} checkpointId=${id} ns=${ns} isHead=${isHead} />`}
  </article>`;
}

function Interrupts({ list }) {
  if (!list || !list.length) return null;
  return html`<div class="interrupts" data-testid="interrupts">
    <h4>Interrupts <span class="muted small">waiting for a human: resume from the Time travel tab or the Inbox</span></h4>
    ${list.map((i) => html`<div class="interrupt" data-testid="interrupt"><code class="muted small">${i.id}</code><${Json} value=${i.value} open=${2} testid="interrupt-value" /></div>`)}
  </div>`;
}

function StateTab({ state }) {
  const values = state.values || {};
  const keys = Object.keys(values);
  return html`<div data-testid="state-tab">
    <${Interrupts} list=${interruptsOf(state)} />
    ${state.tasks.length > 0 && html`<div class="tasks-brief"><h4>Tasks</h4>${state.tasks.map((t) => html`<div class="task-line" data-testid="task-brief">
      <span class="chip node">${t.name}</span> <code class="muted small">${t.id}</code>
      ${t.error && html`<span class="mark error">error: ${oneLine(t.error, 160)}</span>`}
      ${t.interrupts && t.interrupts.length > 0 && html`<span class="mark interrupt">interrupted</span>`}
      ${t.result !== undefined && t.result !== null && html`<span class="muted small">→ ${oneLine(t.result, 100)}</span>`}
    </div>`)}</div>`}
    <h4>Values <span class="muted small">${keys.length} channel${keys.length === 1 ? "" : "s"}</span></h4>
    ${keys.length === 0 && html`<${Empty}>No values.<//>`}
    ${keys.map((k) => html`<div class="channel" data-testid="channel" data-channel=${k}>
      <div class="channel-name">${k}${Array.isArray(values[k]) && html` <span class="muted small">[${values[k].length}]</span>`}</div>
      ${isMessageList(values[k]) ? html`<${Conversation} messages=${values[k]} />` : html`<${Json} value=${values[k]} open=${1} />`}
    </div>`)}
  </div>`;
}

const special = { __error__: "error", __interrupt__: "interrupt", __resume__: "resume", __scheduled__: "scheduled" };

function WritesTab({ state, raw }) {
  const names = Object.fromEntries(state.tasks.map((t) => [t.id, t.name]));
  const groups = new Map();
  for (const w of raw.writes) {
    if (!groups.has(w.task_id)) groups.set(w.task_id, []);
    groups.get(w.task_id).push(w);
  }
  for (const t of state.tasks) if (!groups.has(t.id)) groups.set(t.id, []);
  return html`<div data-testid="writes-tab">
    <p class="muted small">The writes recorded under this checkpoint (<code>checkpoint_writes</code>) by the tasks that started from it: each node's partial update, and the special writes — <code>__error__</code> (the task failed), <code>__interrupt__</code>, <code>__resume__</code>. The next checkpoint applies them through the channels' reducers.</p>
    ${groups.size === 0 && html`<${Empty}>No task started from this checkpoint.<//>`}
    ${[...groups.entries()].map(([taskId, ws]) => {
      const name = names[taskId] || (ws.find((w) => w.channel.startsWith("branch:to:"))?.channel.slice(10)) || "task";
      const failed = ws.some((w) => w.channel === "__error__");
      const interrupted = ws.some((w) => w.channel === "__interrupt__");
      const resumed = ws.some((w) => w.channel === "__resume__");
      return html`<div class=${"task" + (failed ? " failed" : "")} data-testid="task" data-task-name=${name} data-task-id=${taskId}>
        <div class="task-head"><span class="chip node">${name}</span><code class="muted small">${taskId}</code>
          ${failed && html`<span class="mark error">failed</span>`}${interrupted && html`<span class="mark interrupt">interrupted</span>`}${resumed && html`<span class="mark resume">resumed</span>`}
          ${ws.length === 0 && html`<span class="muted small">no writes: pending</span>`}
          <span class="spacer"></span>${ws[0]?.task_path && html`<code class="muted small">${ws[0].task_path}</code>`}</div>
        ${ws.length > 0 && html`<table class="grid writes"><thead><tr><th class="num">idx</th><th>channel</th><th>type</th><th class="num">bytes</th><th>value</th></tr></thead>
          <tbody>${ws.map((w) => html`<tr data-testid="write" data-channel=${w.channel} class=${special[w.channel] ? "w-" + special[w.channel] : ""}>
            <td class="num">${w.idx}</td><td><code>${w.channel}</code>${special[w.channel] && html` <span class=${"mark " + special[w.channel]}>${special[w.channel]}</span>`}</td>
            <td>${w.type}</td><td class="num">${w.bytes}</td>
            <td class="value-cell">${w.value !== null && typeof w.value === "object" ? html`<${Json} value=${w.value} open=${w.channel.startsWith("__") ? 2 : 1} testid="write-value" />` : html`<code data-testid="write-value">${oneLine(w.value, 200)}</code>`}</td>
          </tr>`)}</tbody></table>`}
      </div>`;
    })}
  </div>`;
}

/** Channels whose current version is newer than what node last saw. */
export function unseen(channelVersions, seen) {
  return Object.entries(channelVersions)
    // Versions are unique per write within a thread and only grow along a
    // branch: any difference is an update the node has not seen.
    .filter(([ch, v]) => !seen || seen[ch] === undefined || seen[ch] !== v)
    .map(([ch]) => ch);
}

/** For each next task, the trigger channels it has not seen (why it runs). */
export function Triggers({ state, raw }) {
  if (!state.tasks.length) return html`<p class="muted small">No task is scheduled from this checkpoint.</p>`;
  return html`<ul class="triggers" data-testid="triggers">${state.tasks.map((t) => {
    const seen = raw.versions_seen[t.name];
    const chans = unseen(raw.channel_versions, seen);
    const own = chans.filter((c) => c === `branch:to:${t.name}` || c === t.name || (t.name === "__start__" && c === "__start__"));
    return html`<li data-testid="trigger" data-node=${t.name}><span class="chip node">${t.name}</span> runs: ${own.length
      ? html`its trigger ${own.map((c) => html`<code>${c}</code> (${seen && seen[c] ? `seen ${version(seen[c])}` : "never seen"}, now ${version(raw.channel_versions[c])}) `)}`
      : html`<span class="muted">scheduled (${chans.length ? `unseen: ${chans.join(", ")}` : "no unseen channel: a resume or a Send"})</span>`}</li>`;
  })}</ul>`;
}

function VersionsTab({ state, raw }) {
  const parent = raw.parent_channel_versions || {};
  const changed = new Set(raw.changes.map((c) => c.channel));
  const blobs = Object.fromEntries(raw.blobs.map((b) => [b.channel, b]));
  const channels = Object.keys(raw.channel_versions).sort();
  const nodes = Object.keys(raw.versions_seen).sort();
  const seenChannels = [...new Set(nodes.flatMap((n) => Object.keys(raw.versions_seen[n])))].sort();
  return html`<div data-testid="versions-tab">
    <h4>Why the next tasks run</h4>
    <${Triggers} state=${state} raw=${raw} />
    <h4>channel_versions <span class="muted small">${changed.size} changed since the parent</span></h4>
    <table class="grid" data-testid="channel-versions">
      <thead><tr><th>channel</th><th>version</th><th>parent</th><th>blob</th><th class="num">bytes</th></tr></thead>
      <tbody>${channels.map((ch) => html`<tr class=${changed.has(ch) ? "changed" : ""} data-testid="channel-version" data-channel=${ch} data-changed=${changed.has(ch) ? "true" : "false"}>
        <td><code>${ch}</code></td><td title=${raw.channel_versions[ch]}><code>${version(raw.channel_versions[ch])}</code></td>
        <td title=${parent[ch] || ""}><code>${version(parent[ch])}</code></td>
        <td>${blobs[ch]?.type}</td><td class="num">${blobs[ch] ? bytes(blobs[ch].bytes) : ""}</td></tr>`)}
        ${raw.changes.filter((c) => !c.to).map((c) => html`<tr class="removed"><td><code>${c.channel}</code></td><td>—</td><td><code>${version(c.from)}</code></td><td colspan="2">gone</td></tr>`)}
      </tbody>
    </table>
    <h4>versions_seen <span class="muted small">the version of each channel a node last ran with; a cell older than the channel's version is an update the node has not seen</span></h4>
    ${nodes.length === 0 ? html`<${Empty}>Empty.<//>` : html`<div class="scroll-x"><table class="grid matrix" data-testid="versions-seen">
      <thead><tr><th>node</th>${seenChannels.map((c) => html`<th><code>${c}</code></th>`)}</tr></thead>
      <tbody>${nodes.map((n) => html`<tr data-testid="seen-row" data-node=${n}><td><span class="chip node">${n}</span></td>${seenChannels.map((c) => {
        const v = raw.versions_seen[n][c];
        const stale = v !== undefined && raw.channel_versions[c] !== undefined && raw.channel_versions[c] !== v;
        return html`<td class=${stale ? "stale" : ""} title=${v || ""}>${v === undefined ? "" : html`<code>${version(v)}</code>`}</td>`;
      })}</tr>`)}</tbody></table></div>`}
    ${raw.updated_channels.length > 0 && html`<p class="small">updated_channels (recorded by the writer): ${raw.updated_channels.map((c) => html`<code>${c}</code> `)}</p>`}
  </div>`;
}
