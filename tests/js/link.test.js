// Checks serve/connect: a tab's link to a store served elsewhere (a
// MessageChannel in this thread, and a real worker_threads Worker). Each
// commit sends at most one message per link, carrying the held tables' ops
// and the recomputed derives together; calls answer with values or with
// StoreErrors that keep their code.

import { test } from "node:test";
import assert from "node:assert/strict";
import { MessageChannel, Worker } from "node:worker_threads";

import { connect, defineTable, int, openStore, prefix, query, replacePrefix, serve, str, StoreError } from "../../js/index.js";
import { rejectsWith, throwsWith } from "./helpers.js";

const Notes = defineTable("notes", { columns: { id: str(), text: str(), n: int({ default: 0 }) }, key: ["id"] });
const Tags = defineTable("tags", { columns: { id: str() }, key: ["id"] });

const tick = () => new Promise((r) => setTimeout(r, 5));
async function until(cond, what) {
  for (let i = 0; i < 2000; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  assert.fail(`timed out waiting for ${what}`);
}

async function setup(extraMethods = {}) {
  const store = await openStore({ backend: "memory" });
  const owner = store.object({ type: "notes" });
  const notes = owner.table(Notes);
  const tags = owner.table(Tags);
  await notes.count();
  await tags.count();
  const { port1, port2 } = new MessageChannel();
  const methods = {
    put: async ({ notesRows = [], tagRows = [] }, ctx) => {
      await owner.tx(async (tx) => {
        for (const r of notesRows) await tx.put(notes, r);
        for (const r of tagRows) await tx.put(tags, r);
      }, ctx);
      return store.head;
    },
    rename: async ({ from, to }) => {
      await owner.tx(async (tx) => { await tx.updateWhere(notes, (n) => prefix(n.text, from), { text: replacePrefix(from, to) }); });
      return store.head;
    },
    ...extraMethods,
  };
  const server = serve(store, { port: port1, methods });
  // Every link message the tab side receives, counted on the port itself.
  const wire = [];
  port2.on("message", (m) => { if (m?.onestore === "link") wire.push(m); });
  const link = connect(port2);
  const done = async () => { link.close(); server.close(); port1.close(); port2.close(); await store.close(); };
  return { store, owner, notes, tags, server, link, wire, done };
}

test("one commit touching two held tables and a derive sends ONE message with all three parts", async () => {
  const t = await setup();
  t.store.derive("total", (read) => read.count(t.notes) + read.count(t.tags));
  const events = [];
  t.link.hold("notes/notes", (e) => events.push(["notes", e]));
  t.link.hold("notes/tags", (e) => events.push(["tags", e]));
  t.link.hold("total", (e) => events.push(["total", e]));
  await until(() => events.length === 3, "the three held answers");
  assert.deepEqual(events.map(([k, e]) => [k, e.rows ?? e.value]), [["notes", []], ["tags", []], ["total", 0]]);
  events.length = 0;
  const before = t.wire.filter((m) => m.t === "commit").length;
  const seq = await t.link.call("put", { notesRows: [{ id: "a", text: "A" }, { id: "b", text: "B" }], tagRows: [{ id: "t" }] });
  // The commit's message arrived before the call's answer.
  const commits = t.wire.filter((m) => m.t === "commit");
  assert.equal(commits.length - before, 1);
  const msg = commits.at(-1);
  assert.equal(msg.seq, seq);
  assert.equal(msg.parts.length, 3);
  assert.deepEqual(events.map(([k]) => k), ["notes", "tags", "total"]);
  assert.deepEqual(events[0][1], { seq, ops: [
    // As the outbox records them: the default of n filled in.
    { op: "put", table: "notes/notes", row: { id: "a", text: "A", n: 0 } },
    { op: "put", table: "notes/notes", row: { id: "b", text: "B", n: 0 } },
  ] });
  assert.deepEqual(events[1][1], { seq, ops: [{ op: "put", table: "notes/tags", row: { id: "t" } }] });
  assert.deepEqual(events[2][1], { seq, value: 3 });
  assert.equal(t.link.seq, seq);
  await t.done();
});

test("a commit touching nothing a link holds sends it nothing; a derive over an untouched table stays quiet", async () => {
  const t = await setup();
  t.store.derive("notesCount", (read) => read.count(t.notes));
  const events = [];
  t.link.hold("notes/notes", (e) => events.push(e));
  t.link.hold("notesCount", (e) => events.push(e));
  await until(() => events.length === 2, "the held answers");
  await t.link.call("put", { tagRows: [{ id: "x" }] });
  await tick();
  assert.equal(t.wire.filter((m) => m.t === "commit").length, 0);
  await t.link.call("put", { notesRows: [{ id: "n", text: "N" }] });
  const commits = t.wire.filter((m) => m.t === "commit");
  assert.equal(commits.length, 1);
  assert.deepEqual(commits[0].parts.map((p) => Object.keys(p).sort()), [["id", "ops"], ["id", "value"]]);
  await t.done();
});

test("a held query gives its current rows in order; a bulk update arrives as one op with its count", async () => {
  const t = await setup();
  await t.link.call("put", { notesRows: [{ id: "1", text: "a/x" }, { id: "2", text: "b/y" }, { id: "3", text: "a/z" }] });
  const events = [];
  t.link.hold("notes/notes", query(Notes).where((n) => prefix(n.text, "a/")).orderBy((n) => n.text, "desc"), (e) => events.push(e));
  await until(() => events.length === 1, "the held rows");
  assert.deepEqual(events[0].rows.map((r) => r.text), ["a/z", "a/x"]);
  const seq = await t.link.call("rename", { from: "a/", to: "c/" });
  assert.deepEqual(events[1], { seq, ops: [{ op: "update", table: "notes/notes", where: { prefix: ["text", "a/"] }, set: { text: { replacePrefix: ["a/", "c/"] } }, count: 2 }] });
  await t.done();
});

test("a throwing derive sends its error in the commit's message, beside the parts that worked", async () => {
  const t = await setup();
  t.store.derive("fragile", (read) => { if (read.count(t.notes) > 0) throw new StoreError("invalid/args", "fragile cannot count past zero"); return 0; });
  t.store.derive("count", (read) => read.count(t.notes));
  const fragile = [];
  const count = [];
  t.link.hold("fragile", (e) => fragile.push(e));
  t.link.hold("count", (e) => count.push(e));
  await until(() => fragile.length === 1 && count.length === 1, "the held derives");
  const seq = await t.link.call("put", { notesRows: [{ id: "a", text: "A" }] });
  assert.equal(t.wire.filter((m) => m.t === "commit").length, 1);
  assert.deepEqual(count[1], { seq, value: 1 });
  assert.ok(fragile[1].error instanceof StoreError);
  assert.equal(fragile[1].error.code, "invalid/args");
  assert.equal(fragile[1].error.message, "fragile cannot count past zero");
  await t.done();
});

// A derive that throws when it is held is held on: the tab used to drop its
// listener on that first error, while the worker went on computing it.
test("a derive that throws when held still sends every later recompute", { timeout: 10000 }, async () => {
  const t = await setup();
  t.store.derive("empty", (read) => { const n = read.count(t.notes); if (n === 0) throw new StoreError("invalid/args", "empty"); return n; });
  const events = [];
  t.link.hold("empty", (e) => events.push(e));
  await until(() => events.length === 1, "the first answer");
  assert.equal(events[0].error.message, "empty");
  const seq = await t.link.call("put", { notesRows: [{ id: "a", text: "A" }] });
  await until(() => events.length === 2, "the recompute after the put");
  assert.deepEqual(events[1], { seq, value: 1 });
  await t.done();
});

test("a derive value structured clone refuses fails only that part", async () => {
  const t = await setup();
  t.store.derive("fn", (read) => (read.count(t.notes) > 0 ? () => 1 : 0));
  t.store.derive("count", (read) => read.count(t.notes));
  const fn = [];
  const count = [];
  t.link.hold("fn", (e) => fn.push(e));
  t.link.hold("count", (e) => count.push(e));
  await until(() => fn.length === 1 && count.length === 1, "the held derives");
  const seq = await t.link.call("put", { notesRows: [{ id: "a", text: "A" }] });
  assert.deepEqual(count[1], { seq, value: 1 });
  assert.equal(fn[1].error.code, "invalid/args");
  assert.match(fn[1].error.message, /structured clone/);
  assert.equal(await t.notes.count(), 1);
  await t.done();
});

test("a derive whose first value structured clone refuses stays held: later values arrive", async () => {
  const t = await setup();
  t.store.derive("fn", (read) => (read.count(t.notes) === 0 ? { render: () => 1 } : { count: read.count(t.notes) }));
  const fn = [];
  t.link.hold("fn", (e) => fn.push(e));
  await until(() => fn.length === 1, "the held derive's first event");
  assert.equal(fn[0].error.code, "invalid/args");
  assert.match(fn[0].error.message, /structured clone.*could not be cloned/);
  const seq = await t.link.call("put", { notesRows: [{ id: "a", text: "A" }] });
  await until(() => fn.length === 2, "the value after the first");
  assert.deepEqual(fn[1], { seq, value: { count: 1 } });
  await t.done();
});

test("call errors arrive as StoreError with their code, or as an Error with the worker error's name", async () => {
  const t = await setup({
    fenced: () => { throw new StoreError("fenced", "another tab took this store over"); },
    typeError: () => null.x,
    fn: () => () => 1,
  });
  await rejectsWith(t.link.call("fenced"), "fenced", ["another tab"]);
  await rejectsWith(t.link.call("nope", {}), "not_found", ["\"nope\"", "\"put\""]);
  await rejectsWith(t.link.call("put", { notesRows: [{ id: "a", text: 5 }] }), "invalid/args", ["text"]);
  // The message names what the clone refused (the function), not the
  // value without it.
  await rejectsWith(t.link.call("fn"), "invalid/args", ["structured clone", "() => 1"]);
  await rejectsWith(t.link.call("put", { f: () => 1 }), "invalid/args", ["arguments"]);
  // Arguments whose reading throws (a getter): before, the getter's raw Error.
  await rejectsWith(t.link.call("put", { get notesRows() { throw new Error("getter threw"); } }), "invalid/args", ["arguments", "getter threw"]);
  await rejectsWith(t.link.call(""), "invalid/args", ["method"]);
  const err = await t.link.call("typeError").catch((e) => e);
  assert.ok(!(err instanceof StoreError));
  assert.equal(err.name, "TypeError");
  await t.done();
});

test("bad holds answer with an error to their listener; unsubscribe and close stop the messages", async () => {
  const t = await setup();
  const events = [];
  t.link.hold("nobody/nothing", (e) => events.push(e));
  t.link.hold("no-such-derive", (e) => events.push(e));
  await until(() => events.length === 2, "the two refusals");
  assert.equal(events[0].error.code, "invalid/args");
  assert.match(events[0].error.message, /nobody\/nothing/);
  assert.equal(events[1].error.code, "not_found");
  throwsWith(() => t.link.hold("notes/notes", "not a query", () => {}), "invalid/args", ["query"]);
  throwsWith(() => t.link.hold("count", query(Notes), () => {}), "invalid/args", ["derive"]);
  throwsWith(() => t.link.hold(42, () => {}), "invalid/args", ["42"]);
  // The listener that is not a function is the one named.
  throwsWith(() => t.link.hold("count", 5), "invalid/args", ["listener", "got 5"]);
  throwsWith(() => t.link.hold("notes/notes", query(Notes), "x"), "invalid/args", ["listener", "got \"x\""]);
  throwsWith(() => t.link.hold("notes/notes", query(Tags), () => {}), "invalid/args", ["\"tags\"", "\"notes\""]);

  const held = [];
  const off = t.link.hold("notes/notes", (e) => held.push(e));
  await until(() => held.length === 1, "the held rows");
  off();
  await t.link.call("put", { notesRows: [{ id: "a", text: "A" }] });
  await tick();
  assert.equal(held.length, 1);
  assert.equal(t.wire.filter((m) => m.t === "commit").length, 0);
  t.link.close();
  await rejectsWith(t.link.call("put", {}), "closed");
  throwsWith(() => t.link.hold("notes/notes", () => {}), "closed");
  await t.done();
});

test("two links on one endpoint each get their own one message per commit", async () => {
  const t = await setup();
  const { port1, port2 } = new MessageChannel();
  const server = serve(t.store, { port: port1, methods: {} });
  const a = connect(port2);
  const b = connect(port2);
  let wire = 0;
  port2.on("message", (m) => { if (m?.t === "commit") wire++; });
  const ea = [];
  const eb = [];
  a.hold("notes/notes", (e) => ea.push(e));
  b.hold("notes/notes", (e) => eb.push(e));
  b.hold("notes/tags", (e) => eb.push(e));
  await until(() => ea.length === 1 && eb.length === 2, "the held rows");
  await t.link.call("put", { notesRows: [{ id: "a", text: "A" }], tagRows: [{ id: "t" }] });
  await until(() => ea.length === 2 && eb.length === 4, "the commit on both links");
  await tick();
  assert.equal(wire, 2);
  assert.equal(server.links, 2);
  a.close(); b.close(); server.close(); port1.close(); port2.close();
  await t.done();
});

test("an endpoint serves one store at a time: a second serve on it is refused (one answer per call) until the first server or its store closes", async () => {
  const first = await openStore({ backend: "memory" });
  const second = await openStore({ backend: "memory" });
  const { port1, port2 } = new MessageChannel();
  const results = [];
  port2.on("message", (m) => { if (m?.t === "result") results.push(m.value); });
  const server = serve(first, { port: port1, methods: { which: () => "first" } });
  throwsWith(() => serve(second, { port: port1, methods: { which: () => "second" } }), "invalid/args", ["already serves a store", "close that server"]);
  throwsWith(() => serve(first, { port: port1, methods: {} }), "invalid/args", ["already serves a store"]);
  const a = connect(port2);
  assert.equal(await a.call("which"), "first");
  await tick();
  assert.deepEqual(results, ["first"], "one server answered the call");
  // Its server closed, the endpoint takes another store.
  server.close();
  const again = serve(second, { port: port1, methods: { which: () => "second" } });
  const b = connect(port2);
  assert.equal(await b.call("which"), "second");
  assert.equal(again.links, 1);
  // So does it once the store it serves is closed.
  await second.close();
  serve(first, { port: port1, methods: { which: () => "first again" } });
  const c = connect(port2);
  assert.equal(await c.call("which"), "first again");
  // Another endpoint was never in the way.
  const other = new MessageChannel();
  const elsewhere = serve(first, { port: other.port1, methods: {} });
  assert.equal(elsewhere.links, 0);
  a.close(); b.close(); c.close(); elsewhere.close();
  port1.close(); port2.close(); other.port1.close(); other.port2.close();
  await first.close();
});

// Before: String(e) of an object of no prototype threw inside the server,
// and an Error whose message was a symbol or an object could not be
// cloned, so each of these calls never settled; a derive throwing such a
// value stopped the commit's messages to every link of the server.
test("whatever a method or a derive throws is answered: calls settle, and the other holds of every link go on", { timeout: 20000 }, async () => {
  const noProto = Object.create(null);
  const symbolMessage = new Error("x");
  symbolMessage.message = Symbol("why");
  const objectMessage = new Error("x");
  objectMessage.message = { toString: () => "an object's text" };
  const t = await setup({
    noProto: () => { throw noProto; },
    rejectNoProto: () => Promise.reject(Object.create(null)),
    symbolMessage: () => { throw symbolMessage; },
    objectMessage: () => { throw objectMessage; },
  });
  for (const [method, text] of [["noProto", /\S/], ["rejectNoProto", /\S/], ["symbolMessage", /Symbol\(why\)/], ["objectMessage", /an object's text/]]) {
    const err = await t.link.call(method).then(() => assert.fail(`${method} resolved`), (e) => e);
    assert.ok(err instanceof Error, method);
    assert.match(err.message, text, method);
  }
  t.store.derive("odd", (read) => { if (read.count(t.notes) > 0) throw Object.create(null); return 0; });
  t.store.derive("count", (read) => read.count(t.notes));
  const odd = [];
  const count = [];
  const rows = [];
  t.link.hold("odd", (e) => odd.push(e));
  t.link.hold("count", (e) => count.push(e));
  t.link.hold("notes/notes", (e) => rows.push(e));
  await until(() => odd.length === 1 && count.length === 1 && rows.length === 1, "the first answers");
  const seq = await t.link.call("put", { notesRows: [{ id: "a", text: "A" }] });
  await until(() => count.length === 2 && rows.length === 2 && odd.length === 2, `the commit's parts: ${JSON.stringify([odd, count])}`);
  assert.deepEqual(count[1], { seq, value: 1 });
  assert.equal(odd[1].seq, seq);
  assert.ok(odd[1].error instanceof Error);
  await t.done();
});

test("serve refuses a store that is closed or fenced, and leaves the endpoint free", async () => {
  const closed = await openStore({ backend: "memory" });
  await closed.close();
  const { port1, port2 } = new MessageChannel();
  throwsWith(() => serve(closed, { port: port1 }), "closed", ["serve"]);
  const { mkdtempSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const path = join(mkdtempSync(join(tmpdir(), "onestore-link-serve-")), "s.sqlite");
  const fenced = await openStore({ backend: "sqlite", path });
  const taker = await openStore({ backend: "sqlite", path });
  throwsWith(() => serve(fenced, { port: port1 }), "fenced");
  // The endpoint is free: the store that holds the file now serves on it.
  const server = serve(taker, { port: port1, methods: { head: () => taker.head } });
  const link = connect(port2);
  assert.equal(await link.call("head"), taker.head);
  link.close(); server.close(); port1.close(); port2.close();
  await fenced.close();
  await taker.close();
});

test("a closed store tells its links: holds get closed, calls reject with closed", async () => {
  const t = await setup();
  const events = [];
  t.link.hold("notes/notes", (e) => events.push(e));
  await until(() => events.length === 1, "the held rows");
  await t.store.close();
  await until(() => events.length === 2, "the closed notice");
  assert.equal(events[1].error.code, "closed");
  assert.equal(t.link.closed, true);
  await rejectsWith(t.link.call("put", {}), "closed");
  await t.done();
});

test("a store fenced in its worker (another opener took its file) tells its links: holds end with why, calls reject", async () => {
  const { mkdtempSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const path = join(mkdtempSync(join(tmpdir(), "onestore-link-fence-")), "s.sqlite");
  const store = await openStore({ backend: "sqlite", path });
  const owner = store.object({ type: "notes" });
  const notes = owner.table(Notes);
  await notes.count();
  store.derive("count", (read) => read.count(notes));
  const { port1, port2 } = new MessageChannel();
  const server = serve(store, { port: port1, methods: { head: () => store.head } });
  const link = connect(port2);
  const rows = [];
  const counts = [];
  link.hold("notes/notes", (e) => rows.push(e));
  link.hold("count", (e) => counts.push(e));
  await until(() => rows.length === 1 && counts.length === 1, "the first answers");
  const taker = await openStore({ backend: "sqlite", path });
  await until(() => rows.length === 2 && counts.length === 2, `the fence notice: ${JSON.stringify([rows, counts])}`);
  for (const e of [rows[1], counts[1]]) {
    assert.equal(e.error.code, "fenced");
    assert.match(e.error.message, /took it over/);
  }
  assert.equal(link.closed, true);
  await rejectsWith(link.call("head"), "fenced");
  await rejectsWith(link.call("head"), "fenced");  // and every later call
  server.close(); port1.close(); port2.close();
  await store.close();
  await taker.close();
});

test("server.close() tells its links: a pending call rejects with closed, holds end, the store stays open", { timeout: 10000 }, async () => {
  let release;
  const t = await setup({ slow: () => new Promise((r) => { release = r; }) });
  const events = [];
  t.link.hold("notes/notes", (e) => events.push(e));
  await until(() => events.length === 1, "the held rows");
  const pending = t.link.call("slow");
  await until(() => release, "the slow call to start");
  t.server.close();
  await rejectsWith(pending, "closed", ["server.close"]);
  await until(() => events.length === 2, "the closed notice");
  assert.equal(events[1].error.code, "closed");
  assert.equal(t.link.closed, true);
  assert.equal(t.server.links, 0);
  await rejectsWith(t.link.call("put", {}), "closed");
  release();
  await t.owner.tx(async (tx) => { await tx.put(t.notes, { id: "after", text: "x" }); });
  assert.equal(await t.notes.count(), 1);
  await t.done();
});

test("a tab that links before the worker serves (the worker listening for its own messages first) is answered; a worker that exits ends the link", { timeout: 20000 }, async () => {
  const worker = new Worker(new URL("./fixtures/link-worker.mjs", import.meta.url));
  try {
    // No wait for the worker: its store is not open, nor served, yet.
    const link = connect(worker);
    const count = [];
    link.hold("count", (e) => count.push(e));
    const first = link.call("add", { id: "a", text: "hi" });
    assert.equal(await first, 1 + 1, "the first call ran (seq 1 declared the table)");
    await until(() => count.length === 2, "the held derive, then its recompute");
    assert.deepEqual(count.map((e) => e.value), [0, 1]);
    // The worker's own messages still reach it.
    worker.postMessage({ app: "ping" });
    await new Promise((ok) => worker.on("message", (m) => { if (m?.app === "pong") ok(); }));

    const exiting = link.call("exit", 3);
    await rejectsWith(exiting, "closed", ["exited", "code 3"]);
    assert.equal(link.closed, true);
    assert.equal(count.at(-1).error.code, "closed");
    await rejectsWith(link.call("head"), "closed");
  } finally {
    await worker.terminate();
  }
});

test("a real worker_threads Worker serves a store: one message per commit with its derives, errors with codes", async () => {
  const worker = new Worker(new URL("./fixtures/link-worker.mjs", import.meta.url));
  try {
    await new Promise((ok, fail) => { worker.once("message", ok); worker.once("error", fail); });
    const wire = [];
    worker.on("message", (m) => { if (m?.t === "commit") wire.push(m); });
    const link = connect(worker);
    const rows = [];
    const count = [];
    const longest = [];
    link.hold("notes/notes", (e) => rows.push(e));
    link.hold("count", (e) => count.push(e));
    link.hold("longest", (e) => longest.push(e));
    await until(() => rows.length && count.length && longest.length, "the held answers");
    const seqs = [];
    for (const [id, text] of [["a", "hi"], ["b", "hello"], ["c", "yo"]]) seqs.push(await link.call("add", { id, text }));
    assert.deepEqual(wire.map((m) => m.seq), seqs);
    assert.ok(wire.every((m) => m.parts.length === 3));
    assert.deepEqual(count.map((e) => e.value), [0, 1, 2, 3]);
    assert.deepEqual(longest.map((e) => e.value), [0, 2, 5, 5]);
    assert.deepEqual(rows.slice(1).map((e) => e.ops[0].row.id), ["a", "b", "c"]);
    await rejectsWith(link.call("fail"), "fenced", ["fenced (test)"]);
    assert.equal(await link.call("head"), seqs.at(-1));
    link.close();
  } finally {
    await worker.terminate();
  }
});

test("serve without a port where the global scope has no postMessage (Node) says to pass one", async () => {
  const store = await openStore({ backend: "memory" });
  throwsWith(() => serve(store, { methods: {} }), "invalid/args", ["no port given", "parentPort"]);
  await store.close();
});

test("a held document hears a store.restore and its undo, which change documents without document ops, and only when they change it", async () => {
  const t = await setup({
    step: async ({ step }) => {
      if (step === "create") await t.owner.tx(async (tx) => { t.id = await tx.documents.create({ kind: "note", key: "n1" }, { title: "Plan" }); });
      if (step === "snapshot") t.snap = (await t.store.snapshot()).id;
      if (step === "change") await t.owner.tx(async (tx) => { await tx.documents.change(t.id, [{ op: "replace", path: "/title", value: "Plan v2" }]); });
      if (step === "restore") t.undo = (await t.store.restore(t.snap)).undo;
      if (step === "undo") await t.store.restore(t.undo);
      if (step === "other") await t.owner.tx(async (tx) => { await tx.documents.create({ kind: "note", key: "n2" }, { title: "Other" }); });
      if (step === "snapshot2") t.snap2 = (await t.store.snapshot()).id;
      if (step === "row") await t.owner.tx(async (tx) => { await tx.put(t.notes, { id: "x", text: "x" }); });
      // Back to snapshot2: a restore that changes a row and not n1.
      if (step === "restore2") await t.store.restore(t.snap2);
      return t.store.head;
    },
  });
  try {
    const events = [];
    const seqs = {};
    for (const step of ["create", "snapshot", "change"]) seqs[step] = await t.link.call("step", { step });
    t.link.hold({ document: { owner: "notes", kind: "note", key: "n1" } }, (e) => events.push(e));
    await until(() => events.length === 1, "the held event");
    for (const step of ["restore", "undo", "other", "snapshot2", "row", "restore2"]) seqs[step] = await t.link.call("step", { step });
    await until(() => events.length === 3, "the restore's and the undo's parts");
    assert.deepEqual(events.map((e) => ({ seq: e.seq, title: e.document?.value.title, version: e.document?.version })), [
      { seq: seqs.change, title: "Plan v2", version: 2 },
      { seq: seqs.restore, title: "Plan", version: 1 },
      { seq: seqs.undo, title: "Plan v2", version: 2 },
    ]);
    // restore2 took the store back past the row and left n1 as it was: the
    // hold heard nothing of it (the last call's seq has been answered, so its
    // commit message, had it a part for this hold, came before).
    assert.ok(seqs.restore2 > seqs.row);
    assert.equal(events.length, 3);
  } finally {
    await t.done();
  }
});

test("a held document gets its value now, then one part with its new value and version per commit that changed, retired or re-created it", async () => {
  const t = await setup({
    doc: async ({ step }) => {
      await t.owner.tx(async (tx) => {
        if (step === "create") t.id = await tx.documents.create({ kind: "note", key: "n1" }, { title: "Plan" });
        if (step === "change") await tx.documents.change(t.id, [{ op: "replace", path: "/title", value: "Plan v2" }]);
        if (step === "other") await tx.documents.create({ kind: "note", key: "n2" }, { title: "Other" });
        if (step === "retire") await tx.documents.retire(t.id);
        if (step === "again") await tx.documents.create({ kind: "note", key: "n1" }, { title: "Again" });
        if (step === "row") await tx.put(t.notes, { id: "x", text: "x" });
      });
      return t.store.head;
    },
  });
  const events = [];
  t.link.hold({ document: { owner: "notes", kind: "note", key: "n1" } }, (e) => events.push(e));
  await until(() => events.length === 1, "the held event");
  assert.deepEqual(events[0], { seq: t.store.head, document: undefined });
  const seqs = {};
  for (const step of ["create", "change", "other", "row", "retire", "again"]) seqs[step] = await t.link.call("doc", { step });
  await until(() => events.length === 5, "four document parts");
  const shown = events.slice(1).map((e) => ({ seq: e.seq, title: e.document?.value.title, version: e.document?.version }));
  assert.deepEqual(shown, [
    { seq: seqs.create, title: "Plan", version: 1 },
    { seq: seqs.change, title: "Plan v2", version: 2 },
    { seq: seqs.retire, title: undefined, version: undefined },
    { seq: seqs.again, title: "Again", version: 1 },
  ]);
  // A commit of another document or of a table sends nothing to this hold.
  assert.ok(!events.some((e) => e.seq === seqs.other || e.seq === seqs.row));
  assert.equal(events[4].document.address.key, "n1");
  throwsWith(() => t.link.hold({ document: { owner: "notes" } }, () => {}), "invalid/args", ["owner, kind, key?"]);
  throwsWith(() => t.link.hold({ document: { owner: "notes", kind: "note" } }), "invalid/args", ["listener"]);
  await t.done();
});
