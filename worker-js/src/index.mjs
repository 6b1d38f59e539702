// weft-worker: run LangGraph.js graphs on a Weft server.
export { WeftClient, WeftHTTPError, isFenced } from "./client.mjs";
export { WeftSaver, nextVersion } from "./saver.mjs";
export { WeftStore } from "./store.mjs";
export { Worker, jsonLogger } from "./worker.mjs";
export { loadConfig, parseDotenv } from "./load.mjs";
export { describeGraph, graphSchemas } from "./describe.mjs";
export { executeRun, Committer, commandOf } from "./run.mjs";
export { AuthHandlers, loadAuth, serveAuth, containment } from "./auth.mjs";
