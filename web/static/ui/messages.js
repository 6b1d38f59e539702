// Messages rendered as a conversation: LangChain message dicts ({type,
// content, id, name, tool_calls}) and the {role, content} dicts of inputs.
// Long conversations show their last PAGE messages first, with the earlier
// ones a click away, so a 1,000-message thread renders at once.
import { html, useState } from "../vendor/preact-htm.js";
import { Json } from "./json.js";

const PAGE = 50;
const roles = { user: "human", assistant: "ai", developer: "system" };

export function messageType(m) {
  if (!m || typeof m !== "object") return "unknown";
  const t = m.type || roles[m.role] || m.role || "unknown";
  return String(t).replace(/MessageChunk$|Message$/, "").toLowerCase();
}

export function messageText(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content.map((b) => (typeof b === "string" ? b : b && b.type === "text" ? b.text : "")).join("");
  }
  return "";
}

/** Is v a list of messages (every element a message-like dict)? */
export function isMessageList(v) {
  return Array.isArray(v) && v.length > 0 && v.every((m) => m && typeof m === "object" && ("content" in m) && ("type" in m || "role" in m));
}

export function Message({ m, mark }) {
  const type = messageType(m);
  const text = messageText(m.content);
  const blocks = Array.isArray(m.content) && m.content.some((b) => b && typeof b === "object" && b.type !== "text");
  return html`<div class=${`msg msg-${type}${mark ? " " + mark : ""}`} data-testid="message" data-type=${type} data-id=${m.id}>
    <div class="msg-head"><span class="msg-role">${type}${m.name ? ` · ${m.name}` : ""}</span>${m.id && html`<span class="msg-id" title=${m.id}>${String(m.id).slice(0, 12)}</span>`}${mark && html`<span class=${"mark " + mark}>${mark}</span>`}</div>
    ${text && html`<div class="msg-text" data-testid="message-text">${text}</div>`}
    ${blocks && html`<${Json} value=${m.content} open=${0} />`}
    ${Array.isArray(m.tool_calls) && m.tool_calls.length > 0 && html`<div class="msg-tools">${m.tool_calls.map(
      (c) => html`<div class="tool-call"><b>${c.name}</b>(<code>${JSON.stringify(c.args)}</code>)</div>`)}</div>`}
  </div>`;
}

export function Conversation({ messages, testid = "conversation" }) {
  const [shown, setShown] = useState(PAGE);
  const start = Math.max(0, messages.length - shown);
  return html`<div class="conversation" data-testid=${testid}>
    ${start > 0 && html`<button class="link" data-testid="show-earlier" onClick=${() => setShown(shown + PAGE)}>show ${Math.min(PAGE, start)} earlier of ${start}</button>`}
    ${messages.slice(start).map((m, i) => html`<${Message} key=${m.id || start + i} m=${m} />`)}
  </div>`;
}
