// Hash routes: every view has a URL (#/threads/<id>/checkpoints/<id>, …)
// that survives a reload and can be shared; the server only ever serves "/".
import { useEffect, useState } from "../vendor/preact-htm.js";

/** The current route: {path: ["threads", id, …], query: URLSearchParams, hash}. */
export function current() {
  const raw = location.hash.replace(/^#/, "") || "/";
  const [p, q = ""] = raw.split("?");
  const path = p.split("/").filter(Boolean).map(decodeURIComponent);
  return { path, query: new URLSearchParams(q), hash: raw };
}

/** A hash URL for path segments and a query object (empty values left out). */
export function href(segments, query) {
  const p = "#/" + segments.map((s) => encodeURIComponent(s)).join("/");
  if (!query) return p;
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== "" && v !== false) q.set(k, v);
  const s = q.toString();
  return s ? `${p}?${s}` : p;
}

export function navigate(url, { replace = false } = {}) {
  if (replace) history.replaceState(null, "", url);
  else location.hash = url.replace(/^#/, "");
  if (replace) window.dispatchEvent(new HashChangeEvent("hashchange"));
}

/** Re-renders the caller on every route change. */
export function useRoute() {
  const [route, setRoute] = useState(current);
  useEffect(() => {
    const on = () => setRoute(current());
    window.addEventListener("hashchange", on);
    return () => window.removeEventListener("hashchange", on);
  }, []);
  return route;
}
