// store.lock(name, fn, { timeout }): callers of one store queue in order and
// get fn's value or error; a lock held by another Node process sharing the
// sqlite file keeps this one waiting (lock/timeout when it waits too long)
// until that process releases it, or dies (its lock file is taken over);
// names and options are checked.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { test } from "node:test";

import { openStore } from "../../js/index.js";
import { rejectsWith, tempDir } from "./helpers.js";

const holderScript = new URL("./fixtures/store-lock-holder.mjs", import.meta.url).pathname;

function holder(path, name) {
  const child = spawn(process.execPath, [holderScript, path, name], { stdio: ["pipe", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout });
  const queue = [];
  const waiting = [];
  lines.on("line", (l) => (waiting.length ? waiting.shift()(l) : queue.push(l)));
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve(signal ?? code)));
  return {
    child,
    exited,
    next: () => (queue.length ? Promise.resolve(queue.shift()) : new Promise((r) => waiting.push(r))),
  };
}

test("callers of one store take a lock one after another, in order, and get fn's value", async () => {
  const store = await openStore({ backend: "memory" });
  const log = [];
  let release;
  const first = store.lock("a", () => new Promise((r) => { release = r; log.push("first in"); }).then(() => { log.push("first out"); return 1; }));
  const second = store.lock("a", async () => { log.push("second in"); return 2; });
  const other = await store.lock("b", async () => "b runs meanwhile");
  assert.equal(other, "b runs meanwhile");
  await new Promise((r) => setTimeout(r, 0));
  assert.deepEqual(log, ["first in"]);
  await rejectsWith(store.lock("a", async () => 3, { timeout: 0 }), "lock/timeout", ['"a"']);
  release();
  assert.deepEqual(await Promise.all([first, second]), [1, 2]);
  assert.deepEqual(log, ["first in", "first out", "second in"]);
  const mine = new Error("mine");
  await assert.rejects(store.lock("a", async () => { throw mine; }), (e) => e === mine);
  assert.equal(await store.lock("a", () => "free again"), "free again");
  await store.close();
});

test("a lock name with a lone surrogate is taken on a sqlite file as on memory (before: a raw URIError)", async () => {
  const store = await openStore({ backend: "sqlite", path: join(tempDir("onestore-store-lock-"), "s.sqlite") });
  assert.equal(await store.lock("a\uD800b", async () => "ran"), "ran");
  assert.equal(await store.lock("\uDC00", async () => "ran too"), "ran too");
  await store.close();
});

test("a lock held by another process sharing the sqlite file waits for it, and times out with lock/timeout", async (t) => {
  const path = join(tempDir("onestore-store-lock-"), "s.sqlite");
  const other = holder(path, "import");
  // The holder never outlives the test, whatever fails (it would keep the
  // test process, and with it the whole node phase, from exiting).
  t.after(() => other.child.kill("SIGKILL"));
  assert.equal(await other.next(), "held");
  const store = await openStore({ backend: "sqlite", path });
  const e = await rejectsWith(store.lock("import", async () => "no", { timeout: 50 }), "lock/timeout", ['"import"', `process ${other.child.pid}`]);
  // The timeout the caller gave, not what was left of it for the file's lock.
  assert.match(e.message, / within 50 ms /);
  assert.equal(await store.lock("another name", async () => "free"), "free");
  let ran = false;
  const waiting = store.lock("import", async () => { ran = true; return "mine now"; });
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(ran, false, "not while the other process holds it");
  other.child.stdin.write("go\n");
  assert.equal(await other.next(), "released");
  assert.equal(await waiting, "mine now");
  assert.equal(await other.exited, 0);
  await store.close();
  assert.deepEqual(readdirSync(`${path}.locks`), [], "no lock file left");
});

test("a lock whose process was killed is taken over", async (t) => {
  const path = join(tempDir("onestore-store-lock-"), "s.sqlite");
  const other = holder(path, "nightly");
  t.after(() => other.child.kill("SIGKILL"));
  assert.equal(await other.next(), "held");
  other.child.kill("SIGKILL");
  assert.equal(await other.exited, "SIGKILL");
  assert.equal(readdirSync(`${path}.locks`).length, 1, "its lock file stays behind");
  const store = await openStore({ backend: "sqlite", path });
  assert.equal(await store.lock("nightly", async () => "taken over", { timeout: 5000 }), "taken over");
  assert.deepEqual(readdirSync(`${path}.locks`), []);
  await store.close();
  assert.ok(existsSync(path));
});

test("a store.lock file naming this process's pid, written before it started (a restarted container's process 1), is taken over", async () => {
  const { utimesSync, writeFileSync, mkdirSync } = await import("node:fs");
  const path = join(tempDir("onestore-store-lock-pid-"), "s.sqlite");
  const store = await openStore({ backend: "sqlite", path });
  mkdirSync(`${path}.locks`, { recursive: true });
  const file = join(`${path}.locks`, "nightly.lock");
  writeFileSync(file, `${process.pid} 0b5e7d52-2d8c-4b8e-a0c5-0c7a1f7c9d11`);
  const before = new Date(performance.timeOrigin - 60_000);
  utimesSync(file, before, before);
  assert.equal(await store.lock("nightly", async () => "ran", { timeout: 2000 }), "ran");
  await store.close();
});

test("bad names and options are refused with invalid/args", async () => {
  const store = await openStore({ backend: "memory" });
  await rejectsWith(store.lock("", async () => {}), "invalid/args", ["name"]);
  await rejectsWith(store.lock("x".repeat(201), async () => {}), "invalid/args", ["200"]);
  await rejectsWith(store.lock(3, async () => {}), "invalid/args", ["3"]);
  await rejectsWith(store.lock("a", "not fn"), "invalid/args", ["fn"]);
  await rejectsWith(store.lock("a", async () => {}, { timeout: -1 }), "invalid/args", ["timeout", "-1"]);
  await rejectsWith(store.lock("a", async () => {}, null), "invalid/args", ["timeout"]);
  await store.close();
  await rejectsWith(store.lock("a", async () => {}), "closed");
});

test("on a sqlite file, every name the docs allow takes its lock: 200 characters whose encoding passes a file name's 255 bytes too", async () => {
  const dir = tempDir("onestore-lock-names-");
  const store = await openStore({ backend: "sqlite", path: join(dir, "s.sqlite") });
  for (const name of ["é".repeat(200), "/".repeat(100), " ".repeat(90), "a".repeat(200), "%%x"]) {
    let inside = false;
    assert.equal(await store.lock(name, async () => { inside = true; return name.length; }), name.length);
    assert.ok(inside);
  }
  // Two long names that share their first 200 characters' encoding are two locks.
  const a = "é".repeat(199) + "a";
  const b = "é".repeat(199) + "b";
  const order = [];
  await store.lock(a, async () => { await store.lock(b, async () => { order.push("b inside a"); }, { timeout: 1000 }); });
  assert.deepEqual(order, ["b inside a"]);
  await store.close();
});
