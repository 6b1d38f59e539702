// A collapsible JSON view: objects and arrays open to `open` levels, long
// arrays in chunks of 100, long strings cut with a toggle. Rendering is lazy:
// a closed node renders none of its children, so a 1,000-message state costs
// one line until someone opens it.
import { html, useState } from "../vendor/preact-htm.js";

const CHUNK = 100;
const LONG = 240;

function Str({ s }) {
  const [all, setAll] = useState(false);
  if (s.length <= LONG || all) return html`<span class="j-str">${JSON.stringify(s)}</span>`;
  return html`<span class="j-str">${JSON.stringify(s.slice(0, LONG))}<button class="link small" onClick=${() => setAll(true)}>+${s.length - LONG} chars</button></span>`;
}

function Leaf({ v }) {
  if (v === null) return html`<span class="j-null">null</span>`;
  switch (typeof v) {
    case "string":
      return html`<${Str} s=${v} />`;
    case "number":
      return html`<span class="j-num">${String(v)}</span>`;
    case "boolean":
      return html`<span class="j-bool">${String(v)}</span>`;
    default:
      return html`<span class="j-other">${String(v)}</span>`;
  }
}

function summary(v) {
  if (Array.isArray(v)) return `[${v.length}]`;
  const n = Object.keys(v).length;
  return `{${n} key${n === 1 ? "" : "s"}}`;
}

function Node({ name, v, depth, open }) {
  const composite = v !== null && typeof v === "object";
  const [expanded, setExpanded] = useState(depth < open);
  const [shown, setShown] = useState(CHUNK);
  const label = name !== undefined ? html`<span class="j-key">${name}</span>: ` : null;
  if (!composite) return html`<div class="j-row">${label}<${Leaf} v=${v} /></div>`;
  const entries = Array.isArray(v) ? v.map((x, i) => [i, x]) : Object.entries(v);
  const empty = entries.length === 0;
  return html`<div class="j-row">
    <button class="j-toggle" onClick=${() => setExpanded(!expanded)} disabled=${empty} aria-expanded=${expanded}>${empty ? "·" : expanded ? "▾" : "▸"}</button>${label}<span class="j-sum" onClick=${() => !empty && setExpanded(!expanded)}>${summary(v)}</span>
    ${expanded && !empty && html`<div class="j-children">
      ${entries.slice(0, shown).map(([k, x]) => html`<${Node} key=${k} name=${k} v=${x} depth=${depth + 1} open=${open} />`)}
      ${entries.length > shown && html`<button class="link small" onClick=${() => setShown(shown + CHUNK)}>show ${Math.min(CHUNK, entries.length - shown)} more of ${entries.length - shown}</button>`}
    </div>`}
  </div>`;
}

/** value as a tree; open: how many levels start expanded (default 1). */
export function Json({ value, open = 1, testid = "json" }) {
  return html`<div class="json" data-testid=${testid}><${Node} v=${value} depth=${0} open=${open} /></div>`;
}
