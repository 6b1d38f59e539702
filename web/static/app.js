// Weft's time-travel UI: the shell (navigation, routes, the API call log)
// and the views, each reading Weft's own HTTP API.
import { html, render, useEffect, useState } from "./vendor/preact-htm.js";
import { apiKey, calls, curl, get, onAuthRequired, onCalls, post, setApiKey } from "./lib/api.js";
import { useRoute } from "./lib/router.js";
import { Copy, useChanged } from "./ui/common.js";
import { ThreadsView } from "./views/threads.js";
import { ThreadView } from "./views/thread.js";
import { RunView } from "./views/run.js";
import { QueueView } from "./views/queue.js";
import { InboxView } from "./views/inbox.js";
import { AssistantsView } from "./views/assistants.js";
import { StoreView } from "./views/store.js";

function NavLink({ href, active, children, testid }) {
  return html`<a href=${href} class=${active ? "active" : ""} data-testid=${testid}>${children}</a>`;
}

/**
 * Shown when the server answers 401 (auth on): the user pastes an API key
 * (weft keys create) or a token; it is kept in sessionStorage for this tab
 * and sent as x-api-key with every call.
 */
function KeyPrompt({ detail }) {
  const [key, setKey] = useState("");
  const save = (e) => {
    e.preventDefault();
    setApiKey(key.trim());
    location.reload();
  };
  return html`<div class="auth-prompt" data-testid="auth-prompt">
    <form onSubmit=${save}>
      <strong>This server requires an API key.</strong>
      <span class="muted">${apiKey() ? `The key of this tab was refused (${detail || "401"}).` : "Paste a key (weft keys create --tenant NAME) or a token."}
        It is kept in this tab only (sessionStorage) and sent as x-api-key.</span>
      <input type="password" autocomplete="off" placeholder="weft_…" value=${key} onInput=${(e) => setKey(e.target.value)} data-testid="auth-key" />
      <button type="submit" disabled=${!key.trim()} data-testid="auth-save">Use this key</button>
    </form>
  </div>`;
}

function Shell({ config }) {
  const route = useRoute();
  const [authDetail, setAuthDetail] = useState(null);
  useEffect(() => onAuthRequired((d) => setAuthDetail(d || "401")), []);
  const [info, setInfo] = useState(null);
  const [inbox, setInbox] = useState(null);
  const changed = useChanged();
  useEffect(() => {
    get("/info").then(setInfo, () => {});
  }, []);
  // The inbox count: at start, after each change the UI makes, every 15 s.
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const t = setInterval(() => setTick((x) => x + 1), 15000);
    return () => clearInterval(t);
  }, []);
  useEffect(() => {
    post("/threads/count", { status: "interrupted" }).then(setInbox, () => {});
  }, [changed, tick]);
  const [section = "threads", ...rest] = route.path;
  let view;
  switch (section) {
    case "threads":
      if (rest.length === 0) view = html`<${ThreadsView} route=${route} />`;
      else if (rest[1] === "runs" && rest[2]) view = html`<${RunView} key=${rest[2]} threadId=${rest[0]} runId=${rest[2]} route=${route} />`;
      else view = html`<${ThreadView} key=${rest[0]} threadId=${rest[0]} sub=${rest.slice(1)} route=${route} />`;
      break;
    case "inbox":
      view = html`<${InboxView} route=${route} />`;
      break;
    case "queue":
      view = html`<${QueueView} route=${route} />`;
      break;
    case "assistants":
      view = html`<${AssistantsView} id=${rest[0]} route=${route} />`;
      break;
    case "store":
      view = html`<${StoreView} route=${route} />`;
      break;
    default:
      view = html`<div class="empty">No such page: <code>#${route.hash}</code>. <a href="#/threads">Threads</a></div>`;
  }
  return html`<div class="shell">
    <aside class="nav">
      <a class="brand" href="#/threads"><img src="ui/favicon.svg" alt="" width="22" height="22" /> Weft</a>
      <${NavLink} href="#/threads" active=${section === "threads"} testid="nav-threads">Threads<//>
      <${NavLink} href="#/inbox" active=${section === "inbox"} testid="nav-inbox">Inbox${inbox ? html` <span class="count amber" data-testid="inbox-count">${inbox}</span>` : null}<//>
      <${NavLink} href="#/queue" active=${section === "queue"} testid="nav-queue">Dispatch queue<//>
      <${NavLink} href="#/assistants" active=${section === "assistants"} testid="nav-assistants">Assistants<//>
      <${NavLink} href="#/store" active=${section === "store"} testid="nav-store">Store<//>
      <div class="nav-foot">
        <div>${info ? `v${info.version}` : ""}</div>
        <div class="muted" title="content hash of the UI files">ui ${config.build.slice(0, 8)}</div>
        <a href="openapi.yaml" target="_blank">OpenAPI</a>
        ${apiKey() && html`<a href="#" onClick=${(e) => { e.preventDefault(); setApiKey(""); location.reload(); }} data-testid="auth-forget">Forget key</a>`}
      </div>
    </aside>
    <main class="main" data-testid="main">${authDetail && html`<${KeyPrompt} detail=${authDetail} />`}${view}</main>
    <${CallLog} />
  </div>`;
}

/** The API calls the UI made, newest first, each as curl. */
function CallLog() {
  const [open, setOpen] = useState(false);
  const [list, setList] = useState(calls());
  useEffect(() => onCalls((l) => setList(l.slice())), []);
  return html`<div class=${"calllog" + (open ? " open" : "")} data-testid="call-log">
    <button class="calllog-toggle" onClick=${() => setOpen(!open)} data-testid="call-log-toggle">API calls <span class="count">${list.length}</span></button>
    ${open && html`<div class="calllog-list">${list.slice().reverse().slice(0, 100).map(
      (c) => html`<div class="call" key=${c.id}>
        <span class="method">${c.method}</span>
        <code class="call-path">${c.path}</code>
        <span class=${"call-status s" + String(c.status)[0]}>${c.status}</span>
        <span class="muted">${c.ms !== null ? c.ms + " ms" : ""}</span>
        <${Copy} text=${curl(c.method, c.path, c.body)} label="curl" />
      </div>`)}</div>`}
  </div>`;
}

export function start(config) {
  const root = document.getElementById("app");
  root.textContent = "";
  render(html`<${Shell} config=${config} />`, root);
}
