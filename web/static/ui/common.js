// Small shared components: badges, the curl block, loading and error
// states, tabs, a pager, and the useAsync hook every view loads data with.
import { html, useCallback, useEffect, useRef, useState } from "../vendor/preact-htm.js";
import { curl, onChanged } from "../lib/api.js";

/**
 * Runs fn (an async function of an AbortSignal) when deps change and
 * returns {loading, error, data, reload}. A newer call aborts the older one.
 */
/** A state's pending interrupts: its own list, or (a LangGraph.js graph's
 * state, which has none) its tasks'. */
export function interruptsOf(state) {
  return state.interrupts ?? state.tasks.flatMap((t) => t.interrupts ?? []);
}

export function useAsync(fn, deps) {
  const [state, setState] = useState({ loading: true, error: null, data: undefined });
  const [tick, setTick] = useState(0);
  const ctl = useRef(null);
  useEffect(() => {
    ctl.current?.abort();
    const c = new AbortController();
    ctl.current = c;
    setState((s) => ({ ...s, loading: true, error: null }));
    fn(c.signal).then(
      (data) => !c.signal.aborted && setState({ loading: false, error: null, data }),
      (error) => !c.signal.aborted && setState({ loading: false, error, data: undefined }),
    );
    return () => c.abort();
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

/** A counter that grows each time the UI writes something (see onChanged). */
export function useChanged() {
  const [n, setN] = useState(0);
  useEffect(() => onChanged(() => setN((x) => x + 1)), []);
  return n;
}

const statusClass = {
  idle: "gray", busy: "blue", interrupted: "amber", error: "red",
  pending: "gray", running: "blue", success: "green", timeout: "red",
  queued: "gray", claimed: "blue", acked: "green", cancelled: "gray", superseded: "gray", dead_letter: "red",
  input: "violet", loop: "blue", update: "amber", fork: "teal",
};

export function Badge({ kind, children, title, testid }) {
  return html`<span class=${`badge ${statusClass[kind] || kind || "gray"}`} title=${title} data-testid=${testid}>${children}</span>`;
}

export const Status = ({ status, testid }) => html`<${Badge} kind=${status} testid=${testid}>${status}<//>`;

export function Copy({ text, label = "copy" }) {
  const [done, setDone] = useState(false);
  const onClick = async (e) => {
    e.preventDefault();
    e.stopPropagation();
    try {
      await navigator.clipboard.writeText(text);
      setDone(true);
      setTimeout(() => setDone(false), 1200);
    } catch {
      // clipboard refused (not a secure context): the text is selectable anyway
    }
  };
  return html`<button class="link small" onClick=${onClick} title="Copy to the clipboard">${done ? "copied" : label}</button>`;
}

/** The API call an action makes, as a curl command a person can repeat. */
export function Curl({ method, path, body, headers, testid = "curl" }) {
  const cmd = curl(method, path, body, headers);
  return html`<div class="curl" data-testid=${testid}>
    <div class="curl-head"><span class="method">${method}</span> <code>${path}</code><${Copy} text=${cmd} /></div>
    <pre data-testid=${testid + "-text"}>${cmd}</pre>
  </div>`;
}

export function Loading({ what = "Loading" }) {
  return html`<div class="loading" data-testid="loading">${what}…</div>`;
}

export function ErrorBox({ error, testid = "error" }) {
  if (!error) return null;
  const msg = error.detail ? `${error.status}: ${error.detail}` : String(error.message || error);
  return html`<div class="error-box" data-testid=${testid}>${msg}</div>`;
}

export function Empty({ children }) {
  return html`<div class="empty" data-testid="empty">${children}</div>`;
}

/** Tabs as links, so every tab has its URL. */
export function Tabs({ tabs, active }) {
  return html`<nav class="tabs">${tabs.map(
    (t) => html`<a href=${t.href} class=${t.id === active ? "active" : ""} data-testid=${"tab-" + t.id}>${t.label}${
      t.count !== undefined ? html` <span class="count">${t.count}</span>` : null}</a>`,
  )}</nav>`;
}

/** Offset pager: prev / next, with the range shown. */
export function Pager({ offset, limit, count, hasNext, onPage, testid = "pager" }) {
  if (offset === 0 && !hasNext) return null;
  return html`<div class="pager" data-testid=${testid}>
    <button disabled=${offset === 0} onClick=${() => onPage(Math.max(0, offset - limit))} data-testid=${testid + "-prev"}>← Newer</button>
    <span>${count ? `${offset + 1}–${offset + count}` : "none"}</span>
    <button disabled=${!hasNext} onClick=${() => onPage(offset + limit)} data-testid=${testid + "-next"}>Older →</button>
  </div>`;
}

export function Field({ label, children }) {
  return html`<label class="field"><span>${label}</span>${children}</label>`;
}

/** Key / value rows. */
export function KV({ rows }) {
  return html`<dl class="kv">${rows.filter(Boolean).map(
    ([k, v, testid]) => html`<dt>${k}</dt><dd data-testid=${testid}>${v ?? html`<span class="muted">—</span>`}</dd>`,
  )}</dl>`;
}
