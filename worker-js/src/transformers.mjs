import { convertToProtocolEvent } from "@langchain/langgraph";

/**
 * Graph-level stream transformers (`graph.compile({ transformers })`,
 * LangGraph.js's protocol v2 extensions) for a run of the worker.
 *
 * LangGraph's server runs them inside `streamEvents(…, {version: "v3"})`:
 * each transformer sees the run's protocol events (`process`), is
 * finalized when the run ends, and every final-value projection (a
 * Promise in what its `init()` returned) is sent once, as the event
 * `custom` {name: <projection key>, payload: <value>}, which remote
 * clients read as `thread.extensions.<key>`. The worker does the same
 * from the chunks of its own `graph.stream`: each chunk becomes LangGraph's
 * protocol event (its own `convertToProtocolEvent`) for the transformers,
 * and the final values are returned for the run to record as events named
 * `custom:<key>` (Weft's protocol v2 stream sends them as that `custom`
 * event; the REST run streams do not send them).
 *
 * Returns null when the graph has no transformers.
 */
export function startTransformers(graph) {
  const factories = graph?.streamTransformers;
  if (!Array.isArray(factories) || factories.length === 0) return null;
  const entries = [];
  for (const factory of factories) {
    try {
      const transformer = typeof factory === "function" ? factory() : factory;
      const projection = transformer?.init?.() ?? {};
      entries.push({ transformer, projection });
    } catch {
      // A transformer that cannot start is left out, as a failing one
      // must not fail the run.
    }
  }
  let seq = 0;
  return {
    /** The stream modes the transformers need besides the run's own. */
    modes: ["messages", "tools"],
    /** Feeds one chunk of graph.stream (namespace, mode, payload). */
    process(namespace, mode, payload) {
      let events;
      try {
        events = convertToProtocolEvent({ namespace, mode, payload, seq: seq++ }) ?? [];
      } catch {
        return;
      }
      for (const event of Array.isArray(events) ? events : [events]) {
        for (const { transformer } of entries) {
          try {
            transformer.process?.(event);
          } catch {
            // as above
          }
        }
      }
    },
    /**
     * Ends the transformers (finalize, or fail with the run's error) and
     * returns the final values as [{name, payload}], in projection order;
     * a projection that rejects or does not settle within timeoutMs is left
     * out.
     */
    async finish(error, timeoutMs = 10_000) {
      const out = [];
      for (const { transformer, projection } of entries) {
        try {
          if (error !== undefined) await transformer.fail?.(error);
          else await transformer.finalize?.();
        } catch {
          // as above
        }
        for (const [name, value] of Object.entries(projection ?? {})) {
          if (value == null || typeof value.then !== "function") continue;
          let timer;
          const timeout = new Promise((_, reject) => {
            timer = setTimeout(() => reject(new Error("timeout")), timeoutMs);
          });
          try {
            out.push({ name, payload: await Promise.race([Promise.resolve(value), timeout]) });
          } catch {
            // left out
          } finally {
            clearTimeout(timer);
          }
        }
      }
      return out;
    },
  };
}
