// An EventSource over fetch, for a server with auth on: EventSource cannot
// send the x-api-key header. It implements what the run view uses —
// addEventListener, onopen, onerror, readyState, close() — and dispatches
// MessageEvents with data and lastEventId like EventSource. It does not
// reconnect by itself: at the end of the stream or on an error it is
// CLOSED and calls onerror (the run view then resumes with Last-Event-ID).

export class KeyedEventSource extends EventTarget {
  static CONNECTING = 0;
  static OPEN = 1;
  static CLOSED = 2;

  constructor(url, { headers = {} } = {}) {
    super();
    this.url = url;
    this.readyState = KeyedEventSource.CONNECTING;
    this.onopen = null;
    this.onerror = null;
    this.abort = new AbortController();
    this.run(headers);
  }

  close() {
    this.readyState = KeyedEventSource.CLOSED;
    this.abort.abort();
  }

  async run(headers) {
    try {
      const res = await fetch(this.url, { headers: { Accept: "text/event-stream", ...headers }, signal: this.abort.signal });
      if (!res.ok || !res.body) throw new Error(`stream: ${res.status}`);
      this.readyState = KeyedEventSource.OPEN;
      this.onopen?.(new Event("open"));
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buf = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += value.replace(/\r\n?/g, "\n");
        let end;
        while ((end = buf.indexOf("\n\n")) >= 0) {
          this.dispatchBlock(buf.slice(0, end));
          buf = buf.slice(end + 2);
        }
      }
    } catch {
      // aborted by close(), or the connection failed: both end below
    }
    if (this.abort.signal.aborted) return;
    this.readyState = KeyedEventSource.CLOSED;
    this.onerror?.(new Event("error"));
  }

  dispatchBlock(block) {
    let type = "message";
    let id = "";
    const data = [];
    for (const line of block.split("\n")) {
      if (!line || line.startsWith(":")) continue;
      const i = line.indexOf(":");
      const field = i < 0 ? line : line.slice(0, i);
      const value = i < 0 ? "" : line.slice(i + 1).replace(/^ /, "");
      if (field === "event") type = value;
      else if (field === "data") data.push(value);
      else if (field === "id") id = value;
    }
    if (!data.length) return;
    this.dispatchEvent(new MessageEvent(type, { data: data.join("\n"), lastEventId: id }));
  }
}
