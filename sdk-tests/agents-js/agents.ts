/**
 * Real LangChain.js agents, served alike by `weft dev` and LangGraph.js's
 * own dev server (`langgraphjs dev`) in the side-by-side agent suite, with
 * a scripted model (model.ts): no network, deterministic. The JavaScript
 * twin of sdk-tests/py/fixtures/pyagents/agents.py.
 *
 * - agent: LangChain's createAgent with two tools and a
 *   humanInTheLoopMiddleware interrupting on book_flight (approve, edit,
 *   reject), configured with a context schema.
 * - reporter: createAgent with structured output (a toolStrategy).
 * - deep: deepagents' createDeepAgent with todos (todoListMiddleware:
 *   deepagents.js adds write_todos only for some models' profiles, Python's
 *   deepagents always), file tools and a researcher subagent whose lookup
 *   tool interrupts inside its nested graph.
 * - factory: a graph factory taking (config, runtime), as LangGraph.js's
 *   server calls it ({accessContext, executionRuntime}).
 */

import { createAgent, humanInTheLoopMiddleware, todoListMiddleware, toolStrategy, tool } from "langchain";
import { createDeepAgent } from "deepagents";
import { z } from "zod";

import { RESEARCHER_MARK, ScriptedModel } from "./model.ts";

const step = tool(async ({ i }: { i: number }) => `step ${i} done`, {
  name: "step",
  description: "One round of a long task.",
  schema: z.object({ i: z.number().int() }),
});

const bookFlight = tool(async ({ city }: { city: string }) => `flight to ${city} confirmed`, {
  name: "book_flight",
  description: "Books a flight to a city.",
  schema: z.object({ city: z.string() }),
});

const lookup = tool(async ({ query }: { query: string }) => `facts on ${query}`, {
  name: "lookup",
  description: "Looks a fact up.",
  schema: z.object({ query: z.string() }),
});

const Ctx = z.object({ user_name: z.string().default("anon") });

export const agent = createAgent({
  model: new ScriptedModel(),
  tools: [step, bookFlight],
  systemPrompt: "You are a helpful assistant.",
  middleware: [humanInTheLoopMiddleware({ interruptOn: { book_flight: true } })],
  contextSchema: Ctx,
});

const Report = z.object({ title: z.string(), score: z.number().int() }).meta({ title: "Report", description: "A short report." });

export const reporter = createAgent({ model: new ScriptedModel(), tools: [step], responseFormat: toolStrategy(Report) });

export const deep = createDeepAgent({
  model: new ScriptedModel(),
  tools: [],
  systemPrompt: "You are a planner.",
  middleware: [todoListMiddleware()],
  subagents: [
    {
      name: "researcher",
      description: "Finds facts.",
      systemPrompt: RESEARCHER_MARK,
      tools: [lookup],
      model: new ScriptedModel(),
      interruptOn: { lookup: true },
    },
  ],
});

/** A two-parameter factory: the graph depends on who asks and why. */
export function factory(_config: unknown, runtime?: { accessContext?: string }) {
  const who = runtime?.accessContext ?? "unknown";
  return createAgent({ model: new ScriptedModel(), tools: [step], systemPrompt: `made for ${who}` });
}
