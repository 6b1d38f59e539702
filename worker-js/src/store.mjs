// The Store of LangGraph.js (BaseStore) on Weft's store API: what a node's
// getStore() / config.store reads and writes in a worker graph, so memory
// graphs work unchanged.

import { BaseStore } from "@langchain/langgraph-checkpoint";

const toItem = (it) =>
  it && {
    namespace: it.namespace,
    key: it.key,
    value: it.value,
    createdAt: new Date(it.created_at),
    updatedAt: new Date(it.updated_at),
    ...(it.score !== undefined ? { score: it.score ?? undefined } : {}),
  };

/**
 * WeftStore is a BaseStore over /store/items: get, put (index false or a
 * field list, and a ttl in minutes when the operation carries one), delete,
 * search (filter, limit, offset, query) and listNamespaces. Operations of
 * one batch go out concurrently; results keep the batch's order.
 */
export class WeftStore extends BaseStore {
  /**
   * headers go with every request: a run's store sends its dispatch id and
   * claim token (forRun), so that the server files its items in the run's
   * tenant, not in the tenant of the worker's own credentials.
   */
  constructor(client, { headers } = {}) {
    super();
    this.client = client;
    this.headers = headers;
  }

  /** The store of one claimed run: the run's tenant's, while the claim holds. */
  forRun(dispatchId, claimToken) {
    return new WeftStore(this.client, { headers: { "x-weft-dispatch-id": dispatchId, "x-weft-claim-token": claimToken } });
  }

  async batch(operations) {
    return Promise.all(operations.map((op) => this._one(op)));
  }

  async _one(op) {
    if ("namespacePrefix" in op) {
      const res = await this.client.post(
        "/store/items/search",
        {
          namespace_prefix: op.namespacePrefix,
          filter: op.filter ?? null,
          limit: op.limit ?? 10,
          offset: op.offset ?? 0,
          query: op.query ?? null,
        },
        { headers: this.headers },
      );
      return (res?.items ?? []).map(toItem);
    }
    if ("matchConditions" in op || ("limit" in op && "offset" in op && !("key" in op))) {
      const body = { limit: op.limit ?? 100, offset: op.offset ?? 0 };
      for (const c of op.matchConditions ?? []) body[c.matchType === "suffix" ? "suffix" : "prefix"] = c.path;
      if (op.maxDepth !== undefined) body.max_depth = op.maxDepth;
      const res = await this.client.post("/store/namespaces", body, { headers: this.headers });
      return res?.namespaces ?? [];
    }
    if ("value" in op) {
      if (op.value === null) {
        await this.client.request("DELETE", "/store/items", { namespace: op.namespace, key: op.key }, { headers: this.headers });
        return undefined;
      }
      const body = { namespace: op.namespace, key: op.key, value: op.value };
      if (op.index !== undefined) body.index = op.index;
      if (op.ttl !== undefined && op.ttl !== null) body.ttl = op.ttl;
      await this.client.request("PUT", "/store/items", body, { headers: this.headers });
      return undefined;
    }
    const q = new URLSearchParams({ namespace: op.namespace.join("."), key: op.key });
    return toItem(await this.client.request("GET", `/store/items?${q}`, undefined, { headers: this.headers }));
  }
}
