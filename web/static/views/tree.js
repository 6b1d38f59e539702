// The checkpoint tree of a thread, drawn like `git log --graph`: newest
// first, one row per checkpoint, a lane per open branch. A fork is a
// checkpoint with several children; its lanes join at its row.
import { html } from "../vendor/preact-htm.js";
import { href } from "../lib/router.js";
import { short, shortCheckpoint, time } from "../lib/format.js";
import { Badge } from "../ui/common.js";

const H = 30; // row height
const W = 14; // lane width
const COLORS = ["#2563eb", "#d97706", "#059669", "#db2777", "#7c3aed", "#0891b2", "#65a30d", "#dc2626"];

/** Lays nodes (newest first) out in lanes: [{node, col, before, after, merges}]. */
export function layout(nodes) {
  const lanes = [];
  return nodes.map((n) => {
    const waiting = [];
    lanes.forEach((e, i) => e === n.checkpoint_id && waiting.push(i));
    let col = waiting.length ? waiting[0] : lanes.indexOf(null);
    if (col < 0) {
      col = lanes.length;
      lanes.push(null);
    }
    const before = lanes.slice();
    for (const i of waiting.slice(1)) lanes[i] = null;
    lanes[col] = n.parent_checkpoint_id || null;
    while (lanes.length && lanes[lanes.length - 1] === null) lanes.pop();
    return { node: n, col, before, after: lanes.slice(), merges: waiting.slice(1), joined: waiting.length > 0 };
  });
}

function Lanes({ row, width, head }) {
  const x = (i) => i * W + W / 2;
  const m = H / 2;
  const parts = [];
  const n = Math.max(row.before.length, row.after.length);
  for (let i = 0; i < n; i++) {
    const color = COLORS[i % COLORS.length];
    const b = row.before[i] ?? null;
    const a = row.after[i] ?? null;
    if (i === row.col) {
      if (row.joined) parts.push(html`<line x1=${x(i)} y1="0" x2=${x(i)} y2=${m} stroke=${color} />`);
      if (a !== null) parts.push(html`<line x1=${x(i)} y1=${m} x2=${x(i)} y2=${H} stroke=${color} />`);
    } else if (row.merges.includes(i)) {
      parts.push(html`<path d=${`M${x(i)} 0 C ${x(i)} ${m} ${x(row.col)} ${m / 2} ${x(row.col)} ${m}`} stroke=${color} fill="none" />`);
    } else if (b !== null && a !== null) {
      parts.push(html`<line x1=${x(i)} y1="0" x2=${x(i)} y2=${H} stroke=${color} />`);
    } else if (b !== null) {
      parts.push(html`<line x1=${x(i)} y1="0" x2=${x(i)} y2=${m} stroke=${color} />`);
    } else if (a !== null) {
      parts.push(html`<line x1=${x(i)} y1=${m} x2=${x(i)} y2=${H} stroke=${color} />`);
    }
  }
  const color = COLORS[row.col % COLORS.length];
  return html`<svg class="lanes" width=${width} height=${H} viewBox=${`0 0 ${width} ${H}`} aria-hidden="true">
    <g stroke-width="2">${parts}</g>
    <circle cx=${x(row.col)} cy=${m} r=${head ? 6 : 4.5} fill=${head ? "#fff" : color} stroke=${color} stroke-width=${head ? 3 : 0} />
  </svg>`;
}

const internal = (ch) => ch.startsWith("branch:") || ch.startsWith("__") || ch.includes(":");

/** The channels a node changed, user channels first. */
function Updated({ list }) {
  const user = list.filter((c) => !internal(c));
  const shown = user.length ? user : list;
  return html`<span class=${"updated" + (user.length ? "" : " muted")} title=${list.join(", ")}>${shown.slice(0, 4).join(", ")}${shown.length > 4 ? ` +${shown.length - 4}` : ""}</span>`;
}

/**
 * nodes: the loaded nodes (newest first); head: the head's id; selected:
 * the selected id; compare: the id picked for a diff (or null).
 */
export function CheckpointTree({ threadId, nodes, head, selected, compare, onCompare, ns }) {
  const rows = layout(nodes);
  const width = Math.max(1, ...rows.map((r) => Math.max(r.before.length, r.after.length, r.col + 1))) * W;
  return html`<ol class="cp-tree" data-testid="checkpoint-tree">${rows.map((r) => {
    const n = r.node;
    const isHead = n.checkpoint_id === head;
    const sel = n.checkpoint_id === selected;
    const link = href(["threads", threadId, "checkpoints", n.checkpoint_id], { ns });
    return html`<li key=${n.checkpoint_id} class=${"cp-row" + (sel ? " selected" : "") + (compare === n.checkpoint_id ? " comparing" : "")}
        data-testid="checkpoint-node" data-checkpoint-id=${n.checkpoint_id} data-source=${n.source} data-step=${n.step}
        data-head=${isHead ? "true" : "false"} data-parent=${n.parent_checkpoint_id || ""}>
      <${Lanes} row=${r} width=${width} head=${isHead} />
      <a class="cp-main" href=${link} title=${`${n.checkpoint_id}\n${time(n.created_at)}`}>
        ${isHead && html`<span class="head-tag" data-testid="head-tag">HEAD</span>`}
        <span class="step">${n.step === null ? "·" : n.step}</span>
        <${Badge} kind=${n.source}>${n.source || "?"}<//>
        <${Updated} list=${n.updated} />
        ${n.errors > 0 && html`<span class="mark error" title="error writes" data-testid="mark-error">error</span>`}
        ${n.interrupts > 0 && html`<span class="mark interrupt" title="interrupt writes" data-testid="mark-interrupt">interrupt</span>`}
        ${n.resumes > 0 && html`<span class="mark resume" title="resume writes" data-testid="mark-resume">resumed</span>`}
      </a>
      <span class="cp-side">
        ${n.run_id ? html`<a class="run-link" href=${href(["threads", threadId, "runs", n.run_id])} title=${"run " + n.run_id}>run ${short(n.run_id)}</a>` : html`<span class="muted small">no run</span>`}
        <button class=${"link small compare-btn" + (compare === n.checkpoint_id ? " on" : "")} title="Pick for a diff: pick a second checkpoint to compare"
          onClick=${() => onCompare(n.checkpoint_id)} data-testid="compare-pick">${compare === n.checkpoint_id ? "picked" : "diff"}</button>
      </span>
    </li>`;
  })}</ol>`;
}

export { shortCheckpoint };
