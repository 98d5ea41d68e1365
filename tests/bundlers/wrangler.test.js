// wrangler bundles the edge example (examples/edge/worker.js and
// wrangler.toml, as its README says to copy them) in a project that installed
// onestore from its packed tarball: `wrangler deploy --dry-run --outdir`.
// That output, the files wrangler would upload, then runs in real workerd
// (Miniflare) and commits through a SQLite Durable Object, across a restart.

import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { after, before, test } from "node:test";
import { Miniflare } from "miniflare";

import { installApp, listFiles, repoRoot } from "./harness.js";

const run = promisify(execFile);

let app;
let persist;

before(async () => {
  const example = join(repoRoot, "examples", "edge");
  app = await installApp("edge", [join(example, "worker.js"), join(example, "wrangler.toml")]);
  persist = mkdtempSync(join(tmpdir(), "onestore-wrangler-do-"));
});

after(() => {
  app?.remove();
  if (persist) rmSync(persist, { recursive: true, force: true });
});

// The uploaded Worker as wrangler.toml declares it: its modules, the .wasm a
// compiled module (the rule wrangler applied), the SQLite Durable Object.
async function startBundled(out) {
  const mf = new Miniflare({
    modules: true,
    scriptPath: join(out, "worker.js"),
    modulesRoot: out,
    modulesRules: [{ type: "CompiledWasm", include: ["**/*.wasm"] }],
    compatibilityDate: "2025-01-01",
    durableObjects: { SESSION: { className: "Session", useSQLite: true } },
    durableObjectsPersist: persist,
  });
  await mf.ready;
  const call = async (method, path, body) => {
    const res = await mf.dispatchFetch(`http://edge/${path}`, {
      method, headers: { "x-actor": "ana" }, body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  };
  return { call, dispose: () => mf.dispose() };
}

test("wrangler's bundle of the edge example commits through a Durable Object in workerd, across a restart", async () => {
  const { stdout } = await run(process.execPath, [join(repoRoot, "node_modules", "wrangler", "bin", "wrangler.js"), "deploy", "--dry-run", "--outdir", "out"], {
    cwd: app.dir,
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", NO_COLOR: "1" },
    timeout: 180_000,
  });
  assert.match(stdout, /env\.SESSION \(Session\)\s+Durable Object/);
  const out = join(app.dir, "out");
  const files = listFiles(out);
  const emitted = files.filter((f) => f.endsWith(".wasm"));
  assert.equal(emitted.length, 1, `one .wasm among ${files.join(", ")}`);
  assert.deepEqual(readFileSync(join(out, emitted[0])), readFileSync(join(app.dir, "node_modules", "onestore", "dist", "onestore-core.wasm")));
  // The workerd root (js/workerd.js), not the Node or browser loader.
  const bundle = readFileSync(join(out, "worker.js"), "utf8");
  assert.match(bundle, /transactionSync/);
  assert.doesNotMatch(bundle, /node:fs|navigator\.locks/);

  let w = await startBundled(out);
  try {
    const added = [];
    for (const title of ["alpha", "bravo"]) {
      const r = await w.call("POST", "sessions/s1/notes", { title });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      added.push(r.body);
    }
    assert.deepEqual(added.map((a) => a.id), [1, 2]);
    assert.equal(added[1].head, added[0].head + 1);
    const bad = await w.call("POST", "sessions/s1/notes", { title: 5 });
    assert.deepEqual([bad.status, bad.body.error], [400, "invalid/args"]);
  } finally {
    await w.dispose();
  }
  // workerd restarted on the same Durable Object storage: everything is there.
  w = await startBundled(out);
  try {
    const page = await w.call("GET", "sessions/s1/notes?limit=10");
    assert.deepEqual(page.body.rows.map((n) => n.title), ["alpha", "bravo"]);
    const outbox = await w.call("GET", "sessions/s1/outbox?after=0&limit=100");
    const commits = outbox.body.commits;
    assert.deepEqual(commits.slice(-2).map((c) => c.ops[0].row.title), ["alpha", "bravo"]);
    assert.equal(commits.at(-1).actor.id, "ana");
  } finally {
    await w.dispose();
  }
});

// examples/edge/README.md: "node node_modules/onestore/examples/edge/start.mjs"
// in a project that installed onestore (and Miniflare). Before, the package
// did not ship start.mjs nor examples/miniflare-package.mjs.
test("the installed package's examples/edge/start.mjs runs the edge example in workerd through Miniflare", { timeout: 120_000 }, async () => {
  symlinkSync(join(repoRoot, "node_modules", "miniflare"), join(app.dir, "node_modules", "miniflare"), "dir");
  const child = spawn(process.execPath, [join(app.dir, "node_modules", "onestore", "examples", "edge", "start.mjs")], {
    cwd: app.dir, env: { ...process.env, PORT: "0" }, stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  try {
    const url = await new Promise((resolve, reject) => {
      const look = (d) => {
        output += d;
        const m = /at (http:\/\/\S+)/.exec(output);
        if (m) resolve(m[1]);
      };
      child.stdout.on("data", look);
      child.stderr.on("data", look);
      child.on("exit", (code) => reject(new Error(`start.mjs exited with ${code}: ${output}`)));
    });
    const res = await fetch(new URL("sessions/s9/notes", url), { method: "POST", headers: { "x-actor": "ana" }, body: JSON.stringify({ title: "from start.mjs" }) });
    assert.equal(res.status, 201, await res.clone().text());
    assert.equal((await res.json()).id, 1);
    const page = await (await fetch(new URL("sessions/s9/notes?limit=10", url))).json();
    assert.deepEqual(page.rows.map((n) => n.title), ["from start.mjs"]);
    assert.ok(existsSync(join(app.dir, ".data", "edge")), "the objects' SQLite is kept in .data/edge of the current folder");
  } finally {
    child.kill("SIGTERM");
    await new Promise((resolve) => (child.exitCode === null ? child.on("exit", resolve) : resolve()));
  }
});
