// A minimal chat page built on the official useStream hook
// (@langchain/langgraph-sdk/react; the 1.x line is swapped in by an esbuild
// alias, see bundle.mjs). browser.test.mjs drives it in Chromium.
//
// Query string:
//   apiUrl       the Weft server (required)
//   assistantId  graph id or assistant id (required)
//   threadId     the thread to show; set by the hook's onThreadId on the first submit
//   inputKey     when set, a send submits {[inputKey]: text} (e.g. hitl's "input");
//   input=json   a send submits the text parsed as JSON (e.g. slow's {"ms": 3000});
//                otherwise a send submits {messages: [{type: "human", content: text}]}
//
// Everything a test reads carries a data-testid. window.__weftRenders records
// one entry per render ({isLoading, messages: ["type:text", …]}) so a test can
// tell what the page showed while a run was still streaming.

import { useState } from "react";
import { createRoot } from "react-dom/client";
import { useStream } from "@langchain/langgraph-sdk/react";

const params = new URLSearchParams(window.location.search);
const apiUrl = params.get("apiUrl");
const assistantId = params.get("assistantId");
const inputKey = params.get("inputKey");
const jsonInput = params.get("input") === "json";

window.__weftRenders = [];

/** The text of a message's content: a string, or the text blocks of a list. */
function contentText(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content.map((b) => (typeof b === "string" ? b : b?.type === "text" ? b.text : "")).join("");
  }
  return content == null ? "" : JSON.stringify(content);
}

function App() {
  const [threadId, setThreadId] = useState(params.get("threadId"));
  const [draft, setDraft] = useState("");

  const stream = useStream({
    apiUrl,
    assistantId,
    threadId,
    fetchStateHistory: true,
    messagesKey: "messages",
    onThreadId: (id) => {
      setThreadId(id);
      const url = new URL(window.location.href);
      url.searchParams.set("threadId", id);
      window.history.replaceState(null, "", url);
    },
  });

  const messages = stream.messages ?? [];
  window.__weftRenders.push({
    isLoading: stream.isLoading,
    messages: messages.map((m) => `${m.type}:${contentText(m.content)}`),
  });

  const send = (e) => {
    e.preventDefault();
    const text = draft;
    setDraft("");
    const input = jsonInput
      ? JSON.parse(text)
      : inputKey
        ? { [inputKey]: text }
        : { messages: [{ type: "human", content: text }] };
    stream.submit(input);
  };

  const values = stream.values ?? {};
  const others = Object.keys(values).filter((k) => k !== "messages" && k !== "__interrupt__").sort();

  return (
    <main>
      <h1>Weft useStream check</h1>
      <p>
        assistant <code data-testid="assistant-id">{assistantId}</code>, thread{" "}
        <code data-testid="thread-id">{threadId ?? ""}</code>, status{" "}
        <code data-testid="status">{stream.isLoading ? "loading" : "idle"}</code>
      </p>
      {stream.error != null && <pre data-testid="error">{String(stream.error?.message ?? stream.error)}</pre>}
      <ol data-testid="messages">
        {messages.map((m, i) => (
          <li key={m.id ?? i} data-testid="message" data-type={m.type}>
            <b data-testid="message-type">{m.type}</b>: <span data-testid="message-text">{contentText(m.content)}</span>
          </li>
        ))}
      </ol>
      <dl data-testid="values">
        {others.map((k) => (
          <div key={k}>
            <dt>{k}</dt>
            <dd data-testid={`value-${k}`}>{typeof values[k] === "string" ? values[k] : JSON.stringify(values[k])}</dd>
          </div>
        ))}
      </dl>
      {stream.interrupt != null && (
        <section data-testid="interrupt">
          <pre data-testid="interrupt-value">{JSON.stringify(stream.interrupt.value)}</pre>
          <button
            data-testid="resume"
            onClick={() => stream.submit(undefined, { command: { resume: "yes" } })}
          >
            resume
          </button>
        </section>
      )}
      <form onSubmit={send}>
        <input data-testid="input" value={draft} onChange={(e) => setDraft(e.target.value)} placeholder="message" />
        <button data-testid="send" type="submit" disabled={stream.isLoading}>
          send
        </button>
        <button data-testid="stop" type="button" onClick={() => stream.stop()} disabled={!stream.isLoading}>
          stop
        </button>
      </form>
    </main>
  );
}

createRoot(document.getElementById("root")).render(<App />);
