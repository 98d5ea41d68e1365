// Runs the relay example the way `npm run relay` does (examples/relay/start.mjs:
// workerd through Miniflare, the package resolved through its "workerd"
// export condition, RELAY_TOKEN set) and syncs a Node store's session
// through it over real HTTP: reads are open, driving needs the token, a
// pushed batch comes back by pull and download.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";

import { defineTable, int, openStore, str } from "../../js/index.js";
import { repoRoot } from "./harness.js";

let child;
let base;
let data;

before(async () => {
  data = mkdtempSync(join(tmpdir(), "onestore-relay-example-"));
  child = spawn(process.execPath, [join(repoRoot, "examples", "relay", "start.mjs")], {
    env: { ...process.env, PORT: "0", RELAY_DATA: data, RELAY_TOKEN: "secret" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stderr.on("data", (d) => { err += d; });
  base = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm run relay printed no URL in 60 s:\n${out}\n${err}`)), 60_000);
    child.stdout.on("data", (d) => {
      out += d;
      const m = out.match(/at (http:\/\/\S+)/);
      if (m) { clearTimeout(timer); resolve(m[1]); }
    });
    child.on("exit", (code) => { clearTimeout(timer); reject(new Error(`start.mjs exited with ${code}:\n${out}\n${err}`)); });
  });
  // Answering once before the test: a CI run on a loaded machine had the
  // first request reset (ECONNRESET) right after the URL was printed.
  for (const deadline = Date.now() + 30_000; ;) {
    try {
      await (await fetch(new URL("/sessions/ready", base))).arrayBuffer();
      break;
    } catch (e) {
      if (Date.now() > deadline) throw new Error(`the relay at ${base} never answered: ${e?.cause?.code ?? e}\n${err}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
});

after(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((r) => child.on("exit", r));
    child.kill("SIGTERM");
    await exited;
  }
  rmSync(data, { recursive: true, force: true });
});

async function call(method, path, body, token) {
  const headers = token ? { authorization: `Bearer ${token}` } : {};
  const res = await fetch(new URL(path, base), { method, headers, body: body === undefined ? undefined : body instanceof Uint8Array ? body : JSON.stringify(body) });
  const type = res.headers.get("content-type") ?? "";
  return { status: res.status, body: type.includes("json") ? await res.json() : new Uint8Array(await res.arrayBuffer()) };
}

test("the example relay lets anyone read, only the token drive, and serves back what was pushed", async () => {
  const Notes = defineTable("notes", { version: 1, columns: { id: str(), title: str(), file: str(), n: int() }, key: ["id"] });
  const store = await openStore({ backend: "memory" });
  const owner = store.object({ type: "app" });
  const notes = owner.table(Notes);
  const bytes = new TextEncoder().encode("attachment");
  const hash = await store.blobs.put(bytes);
  assert.equal(hash, createHash("sha256").update(bytes).digest("hex"));
  await owner.tx(async (tx) => tx.put(notes, { id: "a", title: "first", file: hash, n: 1 }));
  const session = `/sessions/${store.id}`;

  assert.deepEqual((await call("GET", session)).body, { session: store.id, head: 0, epoch: 0, driver: null, expires: 0 });
  const refused = await call("POST", `${session}/lease`, { op: "take", device: "laptop" });
  assert.equal(refused.status, 401);
  assert.equal(refused.body.error.code, "unauthorized");
  const { epoch } = (await call("POST", `${session}/lease`, { op: "take", device: "laptop" }, "secret")).body;
  assert.equal(epoch, 1);
  assert.equal((await call("PUT", `${session}/blobs/${hash}`, bytes, "secret")).status, 201);
  const pushed = await call("POST", `${session}/push`, { epoch, batch: await store.outbox.read(0, 100) }, "secret");
  assert.deepEqual(pushed.body, { acked: 2, head: 2 });
  assert.deepEqual((await call("GET", `${session}/pull?after=0`)).body, await store.outbox.read(0, 100));
  const down = (await call("GET", `${session}/download`)).body;
  assert.equal(down.head, 2);
  assert.deepEqual(down.blobs, [hash]);
  assert.deepEqual((await call("GET", `${session}/blobs/${hash}`)).body, bytes);
  await store.close();
});
