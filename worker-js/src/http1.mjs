// A keep-alive HTTP/1.1 client for plain-TCP (http:) connections to Weft.
//
// A worker run makes a request or two to Weft (its commit, a share of a
// claim); node:http spends about 0.2 ms of CPU on each (a ClientRequest, an
// OutgoingMessage, a parser from the pool, several writes and events), a
// tenth of the CPU LangGraph.js itself spends on a small run. This client
// writes each request with one socket write on an idle connection of its
// pool and parses the answer itself: a status line, headers, and a body of
// Content-Length bytes, chunked (what Go's net/http sends), none (204, 304)
// or up to the end of the connection. One request
// at a time per connection (no pipelining); a connection the server closed
// is dropped from the pool, and a request that meets a closed connection
// fails like node:http's does, for the caller's retry.

import net from "node:net";

const CRLF = Buffer.from("\r\n");
const HEAD_END = Buffer.from("\r\n\r\n");
const LAST_CHUNK = Buffer.from("0\r\n\r\n");

/** The error of a connection that failed or closed before the answer. */
function connectionError(message, cause) {
  const err = new Error(message);
  err.code = "ECONNRESET";
  if (cause) err.cause = cause;
  return err;
}

/** One keep-alive connection and the request it is answering, if any. */
class Conn {
  constructor(pool) {
    this.pool = pool;
    this.socket = net.connect({ host: pool.host, port: pool.port });
    this.socket.setNoDelay(true);
    this.parts = []; // what arrived of the answer, not yet joined
    this.len = 0;
    this.buf = null; // the parts joined (by _join)
    this.pending = null; // {resolve, reject, status, retryAfter, bodyStart, length, chunked, untilClose}
    this.closed = false;
    this.socket.on("data", (d) => this._data(d));
    this.socket.on("error", (err) => this._close(err));
    this.socket.on("close", () => this._close(null));
  }

  send(text, resolve, reject) {
    this.pending = { resolve, reject, status: 0, retryAfter: undefined, bodyStart: -1, length: -1, chunked: false, untilClose: false };
    this.socket.write(text);
  }

  _close(err) {
    if (this.closed) return;
    this.closed = true;
    this.pool._forget(this);
    const p = this.pending;
    this.pending = null;
    this.socket.destroy();
    if (p?.untilClose && !err) {
      p.resolve({ status: p.status, retryAfter: p.retryAfter, text: this._join().subarray(p.bodyStart).toString("utf8") });
      return;
    }
    if (p) p.reject(connectionError(err ? `connection to Weft failed: ${err.message}` : "Weft closed the connection before answering", err));
  }

  _data(d) {
    const p = this.pending;
    if (!p) {
      this._close(new Error("data without a request"));
      return;
    }
    this.parts.push(d);
    this.len += d.length;
    // A big answer arrives in many pieces: they are joined once it may be
    // whole (its length reached, or the last chunk's terminator seen).
    if (p.bodyStart >= 0 && (p.untilClose || (p.chunked ? !this._endsChunked() : this.len < p.bodyStart + p.length))) return;
    try {
      this._parse();
    } catch (err) {
      this._close(err);
    }
  }

  /** The parts as one buffer. */
  _join() {
    if (this.parts.length !== 1) this.parts = [Buffer.concat(this.parts, this.len)];
    this.buf = this.parts[0];
    return this.buf;
  }

  /** Whether what arrived ends like a chunked body's last chunk ("0\r\n\r\n"). */
  _endsChunked() {
    const tail = [];
    let n = 0;
    for (let i = this.parts.length - 1; i >= 0 && n < LAST_CHUNK.length; i--) {
      tail.unshift(this.parts[i]);
      n += this.parts[i].length;
    }
    const t = tail.length === 1 ? tail[0] : Buffer.concat(tail);
    return t.length >= LAST_CHUNK.length && t.subarray(t.length - LAST_CHUNK.length).equals(LAST_CHUNK);
  }

  _parse() {
    const p = this.pending;
    this._join();
    if (p.bodyStart < 0) {
      const end = this.buf.indexOf(HEAD_END);
      if (end < 0) return;
      const lines = this.buf.subarray(0, end).toString("latin1").split("\r\n");
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0]);
      if (!m) throw new Error(`bad status line: ${lines[0].slice(0, 80)}`);
      p.status = Number(m[1]);
      p.keepAlive = true;
      for (let i = 1; i < lines.length; i++) {
        const c = lines[i].indexOf(":");
        if (c < 0) continue;
        const name = lines[i].slice(0, c).trim().toLowerCase();
        const value = lines[i].slice(c + 1).trim();
        if (name === "content-length") p.length = Number(value);
        else if (name === "transfer-encoding") p.chunked = value.toLowerCase().includes("chunked");
        else if (name === "retry-after") p.retryAfter = value;
        else if (name === "connection") p.keepAlive = value.toLowerCase() !== "close";
      }
      if (p.status >= 100 && p.status < 200) {
        this.parts = [this.buf.subarray(end + 4)]; // an interim answer: the real one follows
        this.len = this.parts[0].length;
        p.length = -1;
        p.chunked = false;
        return this.len ? this._parse() : undefined;
      }
      if (p.status === 204 || p.status === 304) p.length = 0;
      p.bodyStart = end + 4;
      if (!p.chunked && p.length < 0) {
        p.untilClose = true; // the body runs to the end of the connection
        p.keepAlive = false;
        return;
      }
    }
    if (p.untilClose || (p.chunked && !this._endsChunked())) return;
    let body;
    let rest;
    if (!p.chunked) {
      if (this.buf.length < p.bodyStart + p.length) return;
      body = this.buf.subarray(p.bodyStart, p.bodyStart + p.length);
      rest = p.bodyStart + p.length;
    } else {
      const parts = [];
      let at = p.bodyStart;
      for (;;) {
        const eol = this.buf.indexOf(CRLF, at);
        if (eol < 0) return;
        const size = Number.parseInt(this.buf.subarray(at, eol).toString("latin1"), 16);
        if (!Number.isFinite(size)) throw new Error("bad chunk size");
        if (size === 0) {
          const end = this.buf.indexOf(HEAD_END, eol); // no trailers are sent: "0\r\n\r\n"
          if (end < 0) return;
          rest = end + 4;
          break;
        }
        if (this.buf.length < eol + 2 + size + 2) return;
        parts.push(this.buf.subarray(eol + 2, eol + 2 + size));
        at = eol + 2 + size + 2;
      }
      body = parts.length === 1 ? parts[0] : Buffer.concat(parts);
    }
    const text = body.toString("utf8");
    if (rest !== this.buf.length) throw new Error("more data than the answer");
    this.parts = [];
    this.len = 0;
    this.buf = null;
    this.pending = null;
    if (p.keepAlive) this.pool._idle(this);
    else this._close(null);
    p.resolve({ status: p.status, retryAfter: p.retryAfter, text });
  }
}

/** Pool of keep-alive connections to one host:port. */
export class HTTP1Pool {
  constructor(host, port) {
    this.host = host;
    this.port = Number(port) || 80;
    this.hostHeader = `${host.includes(":") ? `[${host}]` : host}:${this.port}`;
    this.idle = [];
    this.all = new Set();
  }

  /**
   * Sends one request and resolves to {status, retryAfter, text}. It fails
   * when the answer is not complete within timeoutMs or signal aborts (the
   * connection is then closed, not reused).
   */
  request(method, path, headers, payload, signal, timeoutMs) {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason ?? new Error("aborted"));
        return;
      }
      let conn = this.idle.pop();
      if (!conn) {
        conn = new Conn(this);
        this.all.add(conn);
      }
      let head = `${method} ${path} HTTP/1.1\r\nHost: ${this.hostHeader}\r\n`;
      for (const name in headers) head += `${name}: ${headers[name]}\r\n`;
      const c = conn;
      let timer;
      const onAbort = () => c._close(signal.reason ?? new Error("aborted"));
      const done = (fn) => (v) => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        fn(v);
      };
      timer = setTimeout(() => {
        const err = Object.assign(new Error(`${method} ${path}: no answer within ${timeoutMs} ms`), { name: "TimeoutError" });
        const p = c.pending;
        c.pending = null;
        c._close(null);
        p?.reject(err);
      }, timeoutMs);
      signal?.addEventListener("abort", onAbort, { once: true });
      c.send(head + "\r\n" + (payload ?? ""), done(resolve), done(reject));
    });
  }

  _idle(conn) {
    this.idle.push(conn);
  }

  _forget(conn) {
    this.all.delete(conn);
    const i = this.idle.indexOf(conn);
    if (i >= 0) this.idle.splice(i, 1);
  }

  /** Closes every connection (requests in flight fail). */
  close() {
    for (const c of [...this.all]) c._close(null);
  }
}
