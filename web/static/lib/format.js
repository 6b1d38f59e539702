// Formatting helpers shared by the views.

/** UUIDv7 ids begin with their timestamp, so ids made together share a prefix: keep both ends. */
export const short = (id) => (id ? `${String(id).slice(0, 4)}…${String(id).slice(-4)}` : "");

/** Checkpoint ids are time-ordered UUIDv6: the last 12 hex digits tell siblings apart. */
export const shortCheckpoint = (id) => (id ? `${String(id).slice(0, 8)}…${String(id).slice(-4)}` : "");

export function bytes(n) {
  if (n === null || n === undefined) return "";
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

export function time(s) {
  if (!s) return "";
  const d = new Date(s);
  if (Number.isNaN(d.getTime())) return String(s);
  return d.toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z");
}

export function ago(s) {
  if (!s) return "";
  const d = new Date(s).getTime();
  if (Number.isNaN(d)) return "";
  const sec = Math.round((Date.now() - d) / 1000);
  if (sec < 5) return "just now";
  if (sec < 60) return `${sec}s ago`;
  if (sec < 3600) return `${Math.round(sec / 60)}m ago`;
  if (sec < 86400) return `${Math.round(sec / 3600)}h ago`;
  return `${Math.round(sec / 86400)}d ago`;
}

export function duration(from, to) {
  if (!from || !to) return "";
  const ms = new Date(to).getTime() - new Date(from).getTime();
  if (!Number.isFinite(ms) || ms < 0) return "";
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(ms < 10000 ? 2 : 1)} s`;
  return `${Math.floor(ms / 60000)}m ${Math.round((ms % 60000) / 1000)}s`;
}

/** A channel version "000…0003.0.123…" as "3·123456" (counter and a suffix). */
export function version(v) {
  if (v === null || v === undefined) return "—";
  const s = String(v);
  const m = /^0*(\d+)\.(.*)$/.exec(s);
  if (!m) return s;
  const tail = m[2].replace(/^0\./, "");
  return `${m[1]}·${tail.slice(0, 6)}`;
}

/** The counter of a version, for ordering versions of mixed formats. */
export function versionCounter(v) {
  if (v === null || v === undefined) return -1;
  const m = /^0*(\d+)/.exec(String(v));
  return m ? Number(m[1]) : -1;
}

export const pretty = (v) => JSON.stringify(v, null, 2);

/** One line of JSON, cut to n characters. */
export function oneLine(v, n = 120) {
  let s;
  try {
    s = typeof v === "string" ? v : JSON.stringify(v);
  } catch {
    s = String(v);
  }
  if (s === undefined) s = "undefined";
  return s.length > n ? s.slice(0, n - 1) + "…" : s;
}
