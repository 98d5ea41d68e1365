// Serves the repository on localhost for the demo page (`npm start`):
// http://127.0.0.1:<port>/ opens demo/index.html. Static files only; the
// page imports the package's browser root (js/browser.js) by relative path.
//
//   node scripts/serve-demo.mjs [port]     (default 8080, or $PORT)
import { createServer } from "node:http";
import { createReadStream, existsSync, statSync } from "node:fs";
import { extname, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(fileURLToPath(new URL("..", import.meta.url)));
const port = Number(process.argv[2] ?? process.env.PORT ?? 8080);
const types = {
  ".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8", ".json": "application/json", ".wasm": "application/wasm", ".svg": "image/svg+xml",
};

const server = createServer((req, res) => {
  let path = decodeURIComponent(new URL(req.url, "http://x").pathname);
  if (path === "/") { res.writeHead(302, { location: "/demo/" }); res.end(); return; }
  if (path.endsWith("/")) path += "index.html";
  const file = resolve(join(root, path));
  if (!file.startsWith(root + sep) || !existsSync(file) || !statSync(file).isFile()) {
    res.writeHead(404, { "content-type": "text/plain" });
    res.end(`not found: ${path}`);
    return;
  }
  res.writeHead(200, { "content-type": types[extname(file)] ?? "application/octet-stream", "cache-control": "no-store" });
  createReadStream(file).pipe(res);
});
server.on("error", (e) => {
  console.error(e.code === "EADDRINUSE" ? `port ${port} is in use: run \`npm start -- <another port>\`` : e.message);
  process.exit(1);
});
server.listen(port, "127.0.0.1", () => {
  console.log(`onestore demo: http://127.0.0.1:${port}/  (open it in two tabs to see the take-over; Ctrl+C stops)`);
});
