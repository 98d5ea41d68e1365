// Runs the example Worker the way `npm run edge` does (examples/edge/start.mjs:
// workerd through Miniflare, the package resolved through its "workerd"
// export condition) and uses its HTTP API: notes added, renamed and removed
// through the owner's methods, a page walked with its cursor, the outbox.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";

import { repoRoot } from "./harness.js";

let child;
let base;
let data;

before(async () => {
  data = mkdtempSync(join(tmpdir(), "onestore-edge-example-"));
  child = spawn(process.execPath, [join(repoRoot, "examples", "edge", "start.mjs")], {
    env: { ...process.env, PORT: "0", EDGE_DATA: data },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stderr.on("data", (d) => { err += d; });
  base = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm run edge printed no URL in 60 s:\n${out}\n${err}`)), 60_000);
    child.stdout.on("data", (d) => {
      out += d;
      const m = out.match(/at (http:\/\/\S+)/);
      if (m) { clearTimeout(timer); resolve(m[1]); }
    });
    child.on("exit", (code) => { clearTimeout(timer); reject(new Error(`start.mjs exited with ${code}:\n${out}\n${err}`)); });
  });
});

after(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((r) => child.on("exit", r));
    child.kill("SIGTERM");
    await exited;
  }
  rmSync(data, { recursive: true, force: true });
});

async function call(method, path, body, actor = "ana") {
  const res = await fetch(new URL(path, base), {
    method,
    headers: { "x-actor": actor, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

test("the example Worker serves notes and the outbox from one Durable Object per session", async () => {
  const titles = ["delta", "alpha", "charlie", "bravo", "echo"];
  const added = [];
  for (const title of titles) {
    const r = await call("POST", "sessions/s1/notes", { title });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    added.push(r.body);
  }
  assert.deepEqual(added.map((a) => a.id), [1, 2, 3, 4, 5]);
  assert.deepEqual(added.map((a) => a.head), added.map((a, i) => added[0].head + i));

  // Pages of two by title, walked with the cursor.
  const seen = [];
  let after = "";
  for (let guard = 0; guard < 10; guard++) {
    const r = await call("GET", `sessions/s1/notes?limit=2${after ? `&after=${encodeURIComponent(after)}` : ""}`);
    assert.equal(r.status, 200);
    seen.push(...r.body.rows.map((n) => n.title));
    if (!r.body.next) break;
    after = r.body.next;
  }
  assert.deepEqual(seen, [...titles].sort());

  const renamed = await call("PATCH", "sessions/s1/notes/2", { title: "zulu" }, "bo");
  assert.equal(renamed.status, 200);
  assert.equal((await call("DELETE", "sessions/s1/notes/1")).status, 200);
  assert.equal((await call("PATCH", "sessions/s1/notes/99", { title: "x" })).body.error, "not_found");
  const page = await call("GET", "sessions/s1/notes?limit=10&prefix=z");
  assert.deepEqual(page.body.rows.map((n) => [n.id, n.title]), [[2, "zulu"]]);

  // The outbox: one record per commit, in seq order, with its actor.
  const outbox = await call("GET", "sessions/s1/outbox?after=0&limit=100");
  const commits = outbox.body.commits;
  assert.deepEqual(commits.map((c) => Number(c.seq)), commits.map((c, i) => Number(commits[0].seq) + i));
  assert.equal(commits.at(-2).actor.id, "bo");
  assert.deepEqual(commits.at(-2).ops[0].set, { title: { value: "zulu" } });

  // Another session is another object: empty.
  assert.deepEqual((await call("GET", "sessions/s2/notes")).body.rows, []);
  const bad = await call("POST", "sessions/s1/notes", { title: 5 });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error, "invalid/args");
});

test("the example Worker answers a body that is not an object, and a session name that is not a URL component, with 400 and JSON", async () => {
  // Before: 500 and a stack trace as text (README: errors are {"error", "message"}).
  for (const [method, path] of [["POST", "sessions/s3/notes"], ["PATCH", "sessions/s3/notes/1"]]) {
    for (const body of [null, 5, "a", [1]]) {
      const r = await call(method, path, body);
      assert.equal(r.status, 400, `${method} ${JSON.stringify(body)}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.error, "invalid/args");
    }
  }
  const r = await call("GET", "sessions/%E0%A4%A/notes");
  assert.equal(r.status, 400, JSON.stringify(r.body));
  assert.equal(r.body.error, "invalid/args");
});
