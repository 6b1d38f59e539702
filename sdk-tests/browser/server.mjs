// A tiny static server for the test page: GET / is the HTML shell, GET
// /app.js the bundle; everything else is 404. It listens on 127.0.0.1 on a
// port of its own (chosen by the OS), so the page's origin differs from the
// Weft server's and every API call is a real cross-origin (CORS) request.

import { createServer } from "node:http";

const HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<link rel="icon" href="data:,">
<title>Weft useStream check</title>
<style>
  body { font: 15px/1.4 system-ui, sans-serif; margin: 2rem; max-width: 46rem; }
  li[data-type="human"] b { color: #1d4ed8; } li[data-type="ai"] b { color: #047857; }
  [data-testid="interrupt"] { border: 1px solid #d97706; padding: .5rem 1rem; margin: 1rem 0; }
  [data-testid="error"] { color: #b91c1c; white-space: pre-wrap; }
  input { width: 20rem; }
</style>
</head>
<body><div id="root"></div><script src="/app.js"></script></body>
</html>
`;

/** Starts the server; resolves to {url, close()}. close() drops open connections. */
export function startPageServer(js) {
  const server = createServer((req, res) => {
    const path = new URL(req.url, "http://x").pathname;
    const send = (status, type, body) => {
      res.writeHead(status, { "Content-Type": type, "Cache-Control": "no-store" });
      res.end(body);
    };
    if (req.method !== "GET" && req.method !== "HEAD") return send(405, "text/plain", "method not allowed\n");
    if (path === "/") return send(200, "text/html; charset=utf-8", HTML);
    if (path === "/app.js") return send(200, "text/javascript; charset=utf-8", js);
    return send(404, "text/plain", "not found\n");
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      resolve({
        url: `http://127.0.0.1:${port}`,
        close: () =>
          new Promise((r) => {
            server.closeAllConnections();
            server.close(() => r());
          }),
      });
    });
  });
}
