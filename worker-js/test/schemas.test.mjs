// Schemas of graphs typed with TypeScript types (Annotation, interfaces),
// read by the worker from the graph's source with the project's
// `typescript`, as LangGraph's JS server reports them: GET
// /assistants/{id}/schemas and /subgraphs through the official SDK.

import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { useWeft } from "./helpers.mjs";
import { loadConfig } from "../src/load.mjs";
import { typeSchemas, graphSchemas } from "../src/describe.mjs";

const CONFIG = join(import.meta.dirname, "fixtures", "schemas", "langgraph.json");
const DRAFT7 = "http://json-schema.org/draft-07/schema#";
const BASE_MESSAGE = "BaseMessage<MessageStructure<MessageToolSet>,MessageType>";
const weft = useWeft();
let worker;
const client = () => new Client({ apiUrl: weft.url });

test("setup: a worker of the TS-typed fixtures starts and says how long reading the types took", async () => {
  worker = await weft.startWorker(["--config", CONFIG]);
  const read = worker.logs().find((l) => l.msg === "graph schemas read from TypeScript types");
  assert.ok(read, worker.lines().join("\n"));
  // the zod graph has runtime schemas: its types are not read
  assert.deepEqual(read.graphs.sort(), ["factory_ts_js", "nested_ts_js", "typed_js"]);
  assert.equal(typeof read.ms, "number");
});

test("an Annotation graph: input and state are the input's update type, output the output's, config and context the context annotation", async () => {
  const a = await client().assistants.create({ graphId: "typed_js" });
  const s = await client().assistants.getSchemas(a.assistant_id);
  const props = {
    messages: { type: "array", items: { $ref: `#/definitions/${BASE_MESSAGE}` } },
    mood: { type: "string", enum: ["happy", "sad"] },
    profile: { anyOf: [{ $ref: "#/definitions/Profile" }, { type: "null" }] },
    count: { type: "number" },
  };
  assert.deepEqual(s.input_schema.properties, { question: { type: "string" }, ...props });
  assert.deepEqual(s.state_schema.properties, s.input_schema.properties);
  assert.deepEqual(s.output_schema.properties, props);
  for (const k of ["input_schema", "output_schema", "state_schema"]) {
    assert.equal(s[k].type, "object");
    assert.equal(s[k].$schema, DRAFT7);
    assert.equal(s[k].required, undefined, "LangGraph's server lists no required keys");
  }
  // an interface: a definition with its doc comments, methods left out
  assert.deepEqual(s.state_schema.definitions.Profile, {
    description: "A user's profile.",
    type: "object",
    properties: { name: { description: "The user's name.", type: "string" }, age: { type: "number" }, tags: { type: "array", items: { type: "string" } } },
  });
  // an abstract class: oneOf the classes extending it as it is
  const base = s.state_schema.definitions[BASE_MESSAGE];
  assert.match(base.description, /Base class for all types of messages/);
  assert.deepEqual(base.oneOf, [{ $ref: "#/definitions/RemoveMessage" }]);
  assert.equal(s.state_schema.definitions.RemoveMessage.type, "object");
  const context = { type: "object", properties: { model: { type: "string", enum: ["large", "small"] }, temperature: { type: "number" } }, $schema: DRAFT7 };
  assert.deepEqual(s.config_schema, context);
  assert.deepEqual(s.context_schema, context);
});

test("subgraphs: each namespace's {state, input, output, config} from the subgraph's own types, nested ones with recurse", async () => {
  const a = await client().assistants.create({ graphId: "nested_ts_js" });
  const top = await client().assistants.getSubgraphs(a.assistant_id);
  assert.deepEqual(Object.keys(top), ["middle"]);
  const middle = { type: "object", properties: { branch: { type: "boolean" }, items: { type: "array", items: { type: "string" } } }, $schema: DRAFT7 };
  assert.deepEqual(top.middle, { state: middle, input: middle, output: middle, config: { type: "object", $schema: DRAFT7 } });
  const all = await client().assistants.getSubgraphs(a.assistant_id, { recurse: true });
  assert.deepEqual(Object.keys(all).sort(), ["middle", "middle|inner"]);
  assert.deepEqual(all["middle|inner"].state.properties, { leaf: { type: "string", enum: ["a", "b"] }, items: { type: "array", items: { type: "string" } } });
  const only = await client().assistants.getSubgraphs(a.assistant_id, { namespace: "middle|inner" });
  assert.deepEqual(Object.keys(only), ["middle|inner"]);
  // the root graph's own schemas
  const s = await client().assistants.getSchemas(a.assistant_id);
  assert.deepEqual(s.state_schema.properties, { items: { type: "array", items: { type: "string" } } });
  assert.deepEqual(s.config_schema, { type: "object", $schema: DRAFT7 });
});

test("a graph factory's types: its (awaited) return type; Date is a date-time string, an optional undefined dropped", async () => {
  const s = await client().assistants.getSchemas("factory_ts_js");
  assert.deepEqual(s.state_schema.properties, { when: { type: "string", format: "date-time" }, note: { type: "string" } });
});

test("a zod graph keeps its runtime schemas (not its types)", async () => {
  const s = await client().assistants.getSchemas("zod_js");
  assert.equal(s.state_schema.properties.n.type, "number");
  assert.equal(s.state_schema.definitions, undefined);
  assert.equal(s.config_schema, null);
});

test("without `typescript` in the project: no schemas from types, one log line saying to install it", async () => {
  const { graphs } = await loadConfig(CONFIG, { only: ["typed_js", "zod_js"] });
  const logs = [];
  const log = (level, msg, attrs) => logs.push({ level, msg, ...attrs });
  for (let i = 0; i < 2; i++) assert.equal((await typeSchemas(graphs, log, { load: async () => null })).size, 0);
  assert.equal(logs.length, 1, JSON.stringify(logs));
  assert.equal(logs[0].level, "warn");
  assert.match(logs[0].msg, /install `typescript`/);
  assert.deepEqual(logs[0].graphs, ["typed_js"]);
  // the graph still has its channels as its state schema, untyped
  const s = graphSchemas(graphs.get("typed_js"), "typed_js");
  assert.deepEqual(Object.keys(s.state_schema.properties).sort(), ["count", "messages", "mood", "profile", "question"]);
  assert.equal(s.config_schema, null);
});
