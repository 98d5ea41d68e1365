// Real Chromium for the browser tests: Debian's `chromium`, driven by
// playwright-core, against the repository served on a localhost port.
//
//   const h = await startHarness();          // server + browser
//   const page = await h.newPage("/tests/browser/pages/smoke.html");
//   ...
//   await h.close();
//
// Every harness gets a new empty profile (so OPFS starts empty) unless
// `userDataDir` is given, which lets a test restart the browser on the same
// profile.

import { createServer } from "node:http";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync, createReadStream, existsSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, extname, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
import { chromium } from "playwright-core";

export const root = resolve(fileURLToPath(new URL("../..", import.meta.url)));

export const chromiumPath = process.env.ONESTORE_CHROMIUM ?? "/usr/bin/chromium";

// Without the networking flags Chromium's background connections are refused
// by the closed network of these machines, many at a time.
export const chromiumArgs = [
  "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
];

const types = {
  ".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8",
  ".json": "application/json", ".wasm": "application/wasm", ".svg": "image/svg+xml",
  ".png": "image/png", ".map": "application/json",
};

/**
 * Serves `dir` (the repository by default) on 127.0.0.1, on a free port
 * unless `port` is given. "/" serves `index` if given. `isolated`: every
 * response carries COOP same-origin and COEP require-corp, so pages are
 * cross-origin isolated and performance.now() reads to 5 µs instead of
 * 100 (bench/link-figures.mjs). `fallback`: a path of `dir` answered, with
 * 200, for any file that does not exist (a single-page app's dev server:
 * Vite's answers index.html).
 */
export function startServer({ dir = root, port = 0, index = null, isolated = false, fallback = null } = {}) {
  const isolation = isolated ? { "cross-origin-opener-policy": "same-origin", "cross-origin-embedder-policy": "require-corp" } : {};
  const server = createServer((req, res) => {
    let path = decodeURIComponent(new URL(req.url, "http://x").pathname);
    if (path === "/favicon.ico") { res.writeHead(204); res.end(); return; }
    if (path === "/" && index) path = index;
    if (path.endsWith("/")) path += "index.html";
    let file = resolve(join(dir, path));
    if (fallback && !existsSync(file)) file = resolve(join(dir, fallback));
    if (!(file === dir || file.startsWith(dir + sep)) || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404, { "content-type": "text/plain" });
      res.end(`not found: ${path}`);
      return;
    }
    res.writeHead(200, { "content-type": types[extname(file)] ?? "application/octet-stream", "cache-control": "no-store", ...isolation });
    createReadStream(file).pipe(res);
  });
  return new Promise((ok, fail) => {
    server.once("error", fail);
    server.listen(port, "127.0.0.1", () => ok({
      server,
      url: `http://127.0.0.1:${server.address().port}`,
      close: () => new Promise((done) => { server.closeAllConnections?.(); server.close(() => done()); }),
    }));
  });
}

/** Launches headless Chromium on a persistent profile (a new temp one by default). */
export async function launchChromium({ userDataDir, args = [] } = {}) {
  if (!existsSync(chromiumPath)) {
    throw new Error(`Chromium not found at ${chromiumPath}: run \`npm run setup\` (installs Debian's chromium)`);
  }
  const own = !userDataDir;
  const dir = userDataDir ?? mkdtempSync(join(tmpdir(), "onestore-chromium-"));
  const context = await chromium.launchPersistentContext(dir, {
    executablePath: chromiumPath, headless: true, args: [...chromiumArgs, ...args],
  });
  return {
    context,
    userDataDir: dir,
    async close({ keepProfile = false } = {}) {
      await context.close();
      if (own && !keepProfile) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A server plus a browser. `newPage(path)` opens a page of the server and
 * collects its console errors (`page.errors`), which tests can assert empty.
 */
export async function startHarness(options = {}) {
  const srv = await startServer(options);
  let browser;
  try {
    browser = await launchChromium(options);
  } catch (e) {
    await srv.close();
    throw e;
  }
  return {
    url: srv.url,
    context: browser.context,
    userDataDir: browser.userDataDir,
    async newPage(path = "/") {
      const page = await browser.context.newPage();
      page.errors = [];
      page.on("pageerror", (e) => page.errors.push(String(e)));
      page.on("console", (m) => { if (m.type() === "error") page.errors.push(m.text()); });
      await page.goto(srv.url + path);
      return page;
    },
    async close(opts) {
      await browser.close(opts);
      await srv.close();
    },
  };
}

/** The OPFS test page: a dedicated Worker that runs the ops of pages/opfs-worker.js. */
export const OPFS_PAGE = "/tests/browser/pages/opfs.html";

/** A new tab of harness `h` on `path` (the OPFS test page by default), once its worker is ready. */
export async function openTab(h, path = OPFS_PAGE) {
  const page = await h.newPage(path);
  await page.waitForFunction(() => window.ready === true);
  return page;
}

/** Runs one op of a test page's worker (`window.call`): its value, or throws with the worker's error. */
export async function call(page, op, args) {
  const r = await page.evaluate(([o, a]) => window.call(o, a), [op, args]);
  if (!r.ok) throw Object.assign(new Error(`${op}: ${r.error.code ?? r.error.name}: ${r.error.message}`), r.error);
  return r.value;
}

/**
 * PRAGMA integrity_check by the real sqlite3 command on the files of the
 * OPFS store `name` (closed), read by the page's worker op "storeFiles"
 * (pages/opfs-integrity.js) and written to a temporary folder: [["ok"]]
 * when it is whole, else a row per problem.
 *
 * @example assert.deepEqual(await integrity(page, "keep"), [["ok"]]);
 */
export async function integrity(page, name) {
  const files = await call(page, "storeFiles", { name });
  const dir = mkdtempSync(join(tmpdir(), "onestore-opfs-integrity-"));
  try {
    for (const [file, b64] of Object.entries(files)) writeFileSync(join(dir, file), Buffer.from(b64, "base64"));
    const out = execFileSync("sqlite3", [join(dir, "db.sqlite"), "PRAGMA integrity_check"], { encoding: "utf8" });
    return out.trim().split("\n").map((line) => [line]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs one op that must fail: its error `{ code, name, message }`. */
export async function callFails(page, op, args) {
  const r = await page.evaluate(([o, a]) => window.call(o, a), [op, args]);
  assert.equal(r.ok, false, `${op} ${JSON.stringify(args)} should have failed, got ${JSON.stringify(r.value)}`);
  return r.error;
}
