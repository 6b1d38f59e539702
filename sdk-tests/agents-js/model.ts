/**
 * ScriptedModel: a deterministic chat model for real agents, offline (the
 * JavaScript twin of sdk-tests/py/fixtures/pyagents/model.py: the same
 * script, the same tool calls and ids).
 *
 * What it answers is a function of the conversation it is shown, never of a
 * call counter, so two servers running the same requests in any order see
 * the same answers. It streams its text a word at a time and its tool calls
 * as tool-call chunks, as a provider's model does, and binds tools as
 * createAgent and deepagents ask (bindTools returns the model itself).
 *
 * The script is read from the last human message (and, inside a subagent,
 * from the task it was given):
 *
 * - "rounds N": calls the `step` tool N times in a row (one call a turn),
 *   then answers "done after N rounds".
 * - "book <city>": calls `book_flight` (which humanInTheLoopMiddleware
 *   interrupts on), then answers with what the tool returned.
 * - "report": answers through the structured-output tool `Report`.
 * - "plan <topic>": the deep agent's main script: `write_todos`, then
 *   `write_file` of notes.md, then `task` to the `researcher` subagent,
 *   then a final answer quoting the subagent's result.
 * - inside the researcher (its system prompt says so): calls `lookup`
 *   (which interrupts in the subagent), then answers with its result.
 * - anything else: echoes "ok: <text>".
 */

import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, AIMessageChunk, type BaseMessage } from "@langchain/core/messages";
import { ChatGenerationChunk, type ChatResult } from "@langchain/core/outputs";
import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";

export const RESEARCHER_MARK = "You are the researcher.";

type ToolCall = { name: string; args: Record<string, unknown>; id: string; type: "tool_call" };

function text(m: BaseMessage): string {
  const c = m.content;
  if (typeof c === "string") return c;
  return c.map((p) => (typeof p === "string" ? p : typeof p === "object" && p && "text" in p ? String(p.text ?? "") : "")).join("");
}

const kind = (m: BaseMessage) => m.getType();

function call(name: string, args: Record<string, unknown>, n: number): ToolCall {
  return { name, args, id: `call_${name}_${n}`, type: "tool_call" };
}

/** The script's answer to a conversation: {content, tool_calls}. */
export function plan(messages: BaseMessage[]): { content: string; tool_calls: ToolCall[] } {
  const say = (content: string, ...tool_calls: ToolCall[]) => ({ content, tool_calls });
  const system = messages.filter((m) => kind(m) === "system").map(text).join(" ");
  let lastHuman = -1;
  messages.forEach((m, i) => {
    if (kind(m) === "human") lastHuman = i;
  });
  const ask = lastHuman >= 0 ? text(messages[lastHuman]).trim() : "";
  const since = messages.slice(lastHuman + 1);
  const toolsDone = since.filter((m) => kind(m) === "tool");
  const turn = since.filter((m) => kind(m) === "ai").length;
  const lastTool = () => text(toolsDone[toolsDone.length - 1]);

  if (system.includes(RESEARCHER_MARK)) {
    if (!toolsDone.length) return say("", call("lookup", { query: ask }, turn));
    return say(`research result: ${lastTool()}`);
  }
  let m = /^rounds (\d+)$/.exec(ask);
  if (m) {
    const n = Number(m[1]);
    if (toolsDone.length < n) return say(`round ${toolsDone.length + 1}`, call("step", { i: toolsDone.length + 1 }, turn));
    return say(`done after ${n} rounds`);
  }
  m = /^book (\w+)$/.exec(ask);
  if (m) {
    if (!toolsDone.length) return say("Booking it now.", call("book_flight", { city: m[1] }, turn));
    return say(`Booked: ${lastTool()}`);
  }
  if (ask === "report") return say("", call("Report", { title: "weekly", score: 7 }, turn));
  m = /^plan (\w+)$/.exec(ask);
  if (m) {
    const topic = m[1];
    const script: [string, Record<string, unknown>][] = [
      ["write_todos", { todos: [{ content: `research ${topic}`, status: "in_progress" }, { content: "write notes", status: "pending" }] }],
      ["write_file", { file_path: "/notes.md", content: `# ${topic}\nstarted\n` }],
      ["task", { description: `find facts about ${topic}`, subagent_type: "researcher" }],
    ];
    if (toolsDone.length < script.length) {
      const [name, args] = script[toolsDone.length];
      return say(`Step ${toolsDone.length + 1}.`, call(name, args, turn));
    }
    return say(`Finished ${topic}: ${lastTool()}`);
  }
  return say(`ok: ${ask}`);
}

/** See the module's doc. */
export class ScriptedModel extends BaseChatModel {
  constructor() {
    super({});
  }

  _llmType(): string {
    return "scripted";
  }

  // The script names its tools itself.
  bindTools(): this {
    return this;
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const { content, tool_calls } = plan(messages);
    const message = new AIMessage({ content, tool_calls });
    return { generations: [{ text: content, message }] };
  }

  async *_streamResponseChunks(messages: BaseMessage[], _options: this["ParsedCallOptions"], runManager?: CallbackManagerForLLMRun): AsyncGenerator<ChatGenerationChunk> {
    const { content, tool_calls } = plan(messages);
    for (const w of content ? (content.match(/\S+\s*/g) ?? []) : []) {
      const chunk = new ChatGenerationChunk({ text: w, message: new AIMessageChunk({ content: w }) });
      yield chunk;
      await runManager?.handleLLMNewToken(w, undefined, undefined, undefined, undefined, { chunk });
    }
    for (const [i, tc] of tool_calls.entries()) {
      yield new ChatGenerationChunk({
        text: "",
        message: new AIMessageChunk({
          content: "",
          tool_call_chunks: [{ name: tc.name, args: JSON.stringify(tc.args), id: tc.id, index: i, type: "tool_call_chunk" }],
        }),
      });
    }
    yield new ChatGenerationChunk({
      text: "",
      message: new AIMessageChunk({ content: "", response_metadata: { finish_reason: "stop", model_name: "scripted" } }),
    });
  }
}
