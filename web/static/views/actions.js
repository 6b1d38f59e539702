// Time travel from a checkpoint: edit its state and fork (update_state with
// as_node chosen from the graph's nodes), run again from it (with input, a
// command.update, or a command.resume for an interrupt), resume an interrupt.
// Every form shows the exact API call it makes as curl, updated as it is
// edited, and what the server answered.
import { html, useState } from "../vendor/preact-htm.js";
import { get, request } from "../lib/api.js";
import { href, navigate } from "../lib/router.js";
import { Curl, ErrorBox, Field, interruptsOf, useAsync } from "../ui/common.js";

/** The stream modes a run started from the UI logs, so its timeline is rich. */
export const UI_STREAM_MODES = ["values", "updates", "debug", "messages-tuple", "custom"];

function parseJSON(text, what) {
  if (!text.trim()) return { value: undefined, error: null };
  try {
    return { value: JSON.parse(text), error: null };
  } catch (e) {
    return { value: undefined, error: `${what}: ${e.message}` };
  }
}

/** Sends a request built by the form and reports the answer. */
function useSubmit() {
  const [st, setSt] = useState({ busy: false, error: null, answer: null });
  const submit = async (method, path, body, then) => {
    setSt({ busy: true, error: null, answer: null });
    try {
      const res = await request(method, path, { body });
      setSt({ busy: false, error: null, answer: { status: res.status, data: res.data } });
      then?.(res.data);
    } catch (error) {
      setSt({ busy: false, error, answer: null });
    }
  };
  return [st, submit];
}

function Answer({ st, testid }) {
  return html`<${ErrorBox} error=${st.error} testid=${testid + "-error"} />
    ${st.answer && html`<div class="answer" data-testid=${testid + "-answer"}>${st.answer.status} OK</div>`}`;
}

export function TimeTravel({ threadId, thread, state, checkpointId, ns, isHead }) {
  const graphId = (state.metadata && state.metadata.graph_id) || (thread && thread.metadata && thread.metadata.graph_id);
  const graph = useAsync((signal) => (graphId ? get(`/assistants/${encodeURIComponent(graphId)}/graph`, null, { signal }) : Promise.resolve(null)), [graphId]);
  const nodes = graph.data ? graph.data.nodes.map((n) => n.id).filter((id) => id !== "__end__") : [];
  return html`<div class="travel" data-testid="travel-tab">
    ${!graphId && html`<div class="error-box">This thread has no graph yet (metadata.graph_id): runs set it; update_state needs it.</div>`}
    ${interruptsOf(state).length > 0 && html`<${Resume} threadId=${threadId} graphId=${graphId} state=${state} checkpointId=${checkpointId} isHead=${isHead} />`}
    <${EditFork} threadId=${threadId} state=${state} checkpointId=${checkpointId} ns=${ns} nodes=${nodes} isHead=${isHead} />
    <${RunFrom} threadId=${threadId} graphId=${graphId} state=${state} checkpointId=${checkpointId} isHead=${isHead} />
  </div>`;
}

function EditFork({ threadId, state, checkpointId, ns, nodes, isHead }) {
  const [text, setText] = useState("{}");
  const [asNode, setAsNode] = useState("");
  const [st, submit] = useSubmit();
  const parsed = parseJSON(text, "values");
  const body = { values: parsed.value ?? null, checkpoint_id: checkpointId };
  if (ns) body.checkpoint_ns = ns;
  if (asNode) body.as_node = asNode;
  const path = `/threads/${threadId}/state`;
  const go = () => submit("POST", path, body, (data) => navigate(href(["threads", threadId, "checkpoints", data.checkpoint.checkpoint_id], { ns })));
  return html`<section class="action" data-testid="edit-fork">
    <h4>Edit state ${isHead ? "" : "and fork"}</h4>
    <p class="muted small">Writes a new checkpoint whose parent is this one${isHead ? "" : " (a new branch: this is not the head)"}: the values go through the channels' reducers as if <code>as_node</code> had written them (an append channel appends, messages merge by id), and <code>next</code> follows the graph's edges out of that node.</p>
    <${Field} label="values (JSON)"><textarea rows="5" value=${text} onInput=${(e) => setText(e.target.value)} data-testid="edit-values" spellcheck="false"></textarea><//>
    <div class="row">
      <button class="link small" onClick=${() => setText(JSON.stringify(state.values, null, 2))} data-testid="fill-values">fill with this checkpoint's values</button>
    </div>
    <${Field} label="as_node">
      <select value=${asNode} onChange=${(e) => setAsNode(e.target.value)} data-testid="edit-as-node">
        <option value="">(default: the node that ran last)</option>
        ${nodes.map((n) => html`<option value=${n}>${n}</option>`)}
        <option value="__copy__">__copy__ (fork unchanged)</option>
      </select>
    <//>
    ${parsed.error && html`<div class="error-box">${parsed.error}</div>`}
    <${Curl} method="POST" path=${path} body=${body} testid="edit-curl" />
    <${Answer} st=${st} testid="edit" />
    <button class="primary" disabled=${st.busy || !!parsed.error} onClick=${go} data-testid="edit-submit">${isHead ? "Update state" : "Fork with this state"}</button>
  </section>`;
}

function RunFrom({ threadId, graphId, state, checkpointId, isHead }) {
  const [mode, setMode] = useState("input");
  const [text, setText] = useState("null");
  const [fromHere, setFromHere] = useState(!isHead);
  const [strategy, setStrategy] = useState("enqueue");
  const [st, submit] = useSubmit();
  const parsed = parseJSON(text, mode);
  const body = { assistant_id: graphId || "", stream_mode: UI_STREAM_MODES, multitask_strategy: strategy };
  if (fromHere) body.checkpoint_id = checkpointId;
  if (mode === "input") body.input = parsed.value === undefined ? null : parsed.value;
  if (mode === "update") body.command = { update: parsed.value ?? {} };
  if (mode === "resume") body.command = { resume: parsed.value ?? null };
  const path = `/threads/${threadId}/runs`;
  const go = () => submit("POST", path, body, (run) => navigate(href(["threads", threadId, "runs", run.run_id])));
  return html`<section class="action" data-testid="run-from">
    <h4>Run again from here</h4>
    <p class="muted small">Creates a run of <code>${graphId || "?"}</code> in the background and opens its live timeline. From an older checkpoint the run forks: its first checkpoint's parent is this one. Input <code>null</code> continues (replays the next tasks); an input starts a new turn; <code>command.update</code> is applied first; <code>command.resume</code> answers an interrupt.</p>
    <div class="radios">
      ${[["input", "input"], ["update", "command.update"], ["resume", "command.resume"]].map(([v, l]) => html`<label><input type="radio" name="runmode" checked=${mode === v} onChange=${() => { setMode(v); setText(v === "input" ? "null" : v === "update" ? "{}" : '"yes"'); }} data-testid=${"run-mode-" + v} /> ${l}</label>`)}
    </div>
    <${Field} label=${mode + " (JSON)"}><textarea rows="4" value=${text} onInput=${(e) => setText(e.target.value)} data-testid="run-input" spellcheck="false"></textarea><//>
    <label class="inline"><input type="checkbox" checked=${fromHere} onChange=${(e) => setFromHere(e.target.checked)} data-testid="run-from-here" /> start from this checkpoint (<code>checkpoint_id</code>)${isHead ? " — it is the head: unchecked continues the thread as well" : ""}</label>
    <label class="inline">if the thread is busy <select value=${strategy} onChange=${(e) => setStrategy(e.target.value)} data-testid="run-strategy">
      ${["enqueue", "reject", "interrupt", "rollback"].map((s) => html`<option value=${s}>${s}</option>`)}</select></label>
    ${parsed.error && html`<div class="error-box">${parsed.error}</div>`}
    <${Curl} method="POST" path=${path} body=${body} testid="run-curl" />
    <${Answer} st=${st} testid="run" />
    <button class="primary" disabled=${st.busy || !!parsed.error || !graphId} onClick=${go} data-testid="run-submit">Start run</button>
  </section>`;
}

function Resume({ threadId, graphId, state, checkpointId, isHead }) {
  const first = interruptsOf(state)[0];
  const [text, setText] = useState('"yes"');
  const [st, submit] = useSubmit();
  const parsed = parseJSON(text, "resume");
  const body = { assistant_id: graphId || "", command: { resume: parsed.value ?? null }, stream_mode: UI_STREAM_MODES };
  if (!isHead) body.checkpoint_id = checkpointId;
  const path = `/threads/${threadId}/runs`;
  const go = () => submit("POST", path, body, (run) => navigate(href(["threads", threadId, "runs", run.run_id])));
  return html`<section class="action highlight" data-testid="resume">
    <h4>Resume the interrupt</h4>
    <p class="muted small">The graph asked: <code>${JSON.stringify(first.value)}</code>. The answer becomes the value <code>interrupt()</code> returns when the node runs again.</p>
    <${Field} label="resume value (JSON)"><textarea rows="2" value=${text} onInput=${(e) => setText(e.target.value)} data-testid="resume-value" spellcheck="false"></textarea><//>
    ${parsed.error && html`<div class="error-box">${parsed.error}</div>`}
    <${Curl} method="POST" path=${path} body=${body} testid="resume-curl" />
    <${Answer} st=${st} testid="resume" />
    <button class="primary" disabled=${st.busy || !!parsed.error || !graphId} onClick=${go} data-testid="resume-submit">Resume</button>
  </section>`;
}
