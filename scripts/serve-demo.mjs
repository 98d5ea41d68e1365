// Serves the repository on localhost for the demo page (`npm start`):
// http://127.0.0.1:<port>/ opens demo/index.html. Static files only; the
// page imports the package's browser root (js/browser.js) by relative path.
//
// Beside it, it starts a local sync relay in workerd (examples/relay/start.mjs,
// on $RELAY_PORT or 8788, its data in .data/relay/) and tells the page where
// it is (/demo/relay.json), so the page shows the relay's head for its
// session. `--no-relay` (or ONESTORE_RELAY=off) serves the page alone.
//
//   node scripts/serve-demo.mjs [port] [--no-relay]     (default 8080, or $PORT)
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { createReadStream, existsSync, statSync } from "node:fs";
import { extname, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(fileURLToPath(new URL("..", import.meta.url)));
const args = process.argv.slice(2);
const noRelay = args.includes("--no-relay") || process.env.ONESTORE_RELAY === "off";
const port = Number(args.find((a) => !a.startsWith("--")) ?? process.env.PORT ?? 8080);

// The local relay: a child process, stopped with this one.
let relayUrl = null;
let relay = null;
if (!noRelay) {
  relay = spawn(process.execPath, [join(root, "examples", "relay", "start.mjs")], {
    env: { ...process.env, PORT: process.env.RELAY_PORT ?? "8788" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  relay.stdout.on("data", (d) => {
    out += d;
    const m = !relayUrl && out.match(/at (http:\/\/\S+)/);
    if (m) {
      relayUrl = m[1];
      console.log(`onestore relay: ${relayUrl}  (workerd; the demo page shows its head for the session)`);
    }
  });
  relay.on("exit", (code) => {
    if (code) console.error(`the local relay stopped (exit ${code}); the page shows "off" (\`npm start -- --no-relay\` skips it)`);
    relayUrl = null;
  });
  const stop = () => { relay?.kill("SIGTERM"); process.exit(0); };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}
const types = {
  ".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8", ".json": "application/json", ".wasm": "application/wasm", ".svg": "image/svg+xml",
};

const server = createServer((req, res) => {
  let path = decodeURIComponent(new URL(req.url, "http://x").pathname);
  if (path === "/") { res.writeHead(302, { location: "/demo/" }); res.end(); return; }
  if (path === "/demo/relay.json") {  // demo/relay.json says "no relay" when served as a file
    res.writeHead(200, { "content-type": "application/json", "cache-control": "no-store" });
    res.end(JSON.stringify({ relay: relayUrl }));
    return;
  }
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
