// wrangler bundles the relay example (examples/relay/worker.js and
// wrangler.toml, as its README says to copy them) in a project that
// installed onestore from its packed tarball: `wrangler deploy --dry-run
// --outdir`. That output, the files wrangler would upload, then runs in real
// workerd (Miniflare) with a RELAY_TOKEN secret: a Node store's session is
// driven through it, and is still there after a restart.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { after, before, test } from "node:test";
import { Miniflare } from "miniflare";

import { defineTable, int, openStore, str } from "../../js/index.js";
import { installApp, listFiles, repoRoot } from "./harness.js";

const run = promisify(execFile);

let app;
let persist;

before(async () => {
  const example = join(repoRoot, "examples", "relay");
  app = await installApp("relay", [join(example, "worker.js"), join(example, "wrangler.toml")]);
  persist = mkdtempSync(join(tmpdir(), "onestore-wrangler-relay-"));
});

after(() => {
  app?.remove();
  if (persist) rmSync(persist, { recursive: true, force: true });
});

async function startBundled(out) {
  const mf = new Miniflare({
    modules: true,
    scriptPath: join(out, "worker.js"),
    modulesRoot: out,
    modulesRules: [{ type: "CompiledWasm", include: ["**/*.wasm"] }],
    compatibilityDate: "2025-01-01",
    durableObjects: { SESSIONS: { className: "Sessions", useSQLite: true } },
    durableObjectsPersist: persist,
    bindings: { RELAY_TOKEN: "secret" },
  });
  await mf.ready;
  const call = async (method, path, body, token) => {
    const res = await mf.dispatchFetch(`http://relay/${path}`, {
      method,
      headers: token ? { authorization: `Bearer ${token}` } : {},
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  };
  return { call, dispose: () => mf.dispose() };
}

test("wrangler's bundle of the relay example takes a session's batches in workerd, with a token, across a restart", async () => {
  const { stdout } = await run(process.execPath, [join(repoRoot, "node_modules", "wrangler", "bin", "wrangler.js"), "deploy", "--dry-run", "--outdir", "out"], {
    cwd: app.dir,
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", NO_COLOR: "1" },
    timeout: 180_000,
  });
  assert.match(stdout, /env\.SESSIONS \(Sessions\)\s+Durable Object/);
  const out = join(app.dir, "out");
  assert.equal(listFiles(out).filter((f) => f.endsWith(".wasm")).length, 1);
  assert.match(readFileSync(join(out, "worker.js"), "utf8"), /transactionSync/);

  const Items = defineTable("items", { version: 1, columns: { id: str(), n: int() }, key: ["id"] });
  const store = await openStore({ backend: "memory" });
  const owner = store.object({ type: "app" });
  const items = owner.table(Items);
  for (const id of ["a", "b", "c"]) await owner.tx(async (tx) => tx.put(items, { id, n: 1 }));
  const session = `sessions/${store.id}`;

  let w = await startBundled(out);
  try {
    const refused = await w.call("POST", `${session}/lease`, { op: "take", device: "laptop" });
    assert.deepEqual([refused.status, refused.body.error.code], [401, "unauthorized"]);
    const taken = await w.call("POST", `${session}/lease`, { op: "take", device: "laptop" }, "secret");
    assert.equal(taken.body.epoch, 1);
    const pushed = await w.call("POST", `${session}/push`, { epoch: 1, batch: await store.outbox.read(0, 100) }, "secret");
    assert.deepEqual(pushed.body, { acked: 4, head: 4 });
  } finally {
    await w.dispose();
  }
  w = await startBundled(out);
  try {
    const info = await w.call("GET", session);
    assert.deepEqual([info.body.session, info.body.head, info.body.epoch], [store.id, 4, 1]);
    assert.deepEqual((await w.call("GET", `${session}/pull?after=0`)).body, await store.outbox.read(0, 100));
  } finally {
    await w.dispose();
  }
  await store.close();
});
