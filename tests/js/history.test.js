// store.log and store.at(seq) in Node on memory and a sqlite file: a view at
// every seq of one history (tests/history/scenario.js) reads exactly what the
// store itself read at that seq (rows, counts, documents, fingerprint); the
// log answers each commit as the outbox records it and filters by owner,
// actor and range page by page with cursors, a filter's scan is bounded per
// call, trimmed history is not_found, and bad requests are invalid/args.

import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, test } from "node:test";

import * as api from "../../js/index.js";
import { defineTable, int, openStore, str } from "../../js/index.js";
import { afterTrim, runHistory } from "../history/scenario.js";
import { checkHistory, checkTrim } from "../history/checks.js";
import { rejectsWith, tempDir } from "./helpers.js";

let dir;
const backends = {
  memory: () => ({ backend: "memory" }),
  sqlite: () => ({ backend: "sqlite", path: join((dir ??= tempDir("onestore-history-")), `h${Math.random().toString(36).slice(2)}.sqlite`) }),
};

for (const [name, options] of Object.entries(backends)) {
  describe(`store.log and store.at on ${name}`, () => {
    test("a view at every seq reads what the store read then, and the log answers and filters every commit", async () => {
      const store = await openStore(options());
      try {
        checkHistory(await runHistory(api, store));
        checkTrim(await afterTrim(store, 3));
      } finally {
        await store.close();
      }
    });
  });
}

describe("store.at", () => {
  test("a view keeps its seq while the store commits on, and refuses every call once closed", async () => {
    const store = await openStore({ backend: "memory" });
    const owner = store.object({ type: "app" });
    const Items = defineTable("items", { columns: { id: str(), n: int() }, key: ["id"] });
    const items = owner.table(Items);
    await owner.tx(async (tx) => { await tx.put(items, { id: "a", n: 1 }); });
    const view = await store.at(store.head);
    await owner.tx(async (tx) => { await tx.put(items, { id: "a", n: 2 }); await tx.put(items, { id: "b", n: 3 }); });
    // by definition, by the store's handle, by stored name
    assert.deepEqual(await view.table(Items).get("a"), { id: "a", n: 1 });
    assert.equal(await view.table(items).count(), 1);
    assert.deepEqual((await view.table("app/items").page(undefined, 10)).rows, [{ id: "a", n: 1 }]);
    assert.equal(view.seq, 2);
    await view.close();
    await view.close();
    await rejectsWith(() => view.table("app/items"), "closed", ["store.at"]);
    await store.close();
  });

  test("refuses seqs that are not a seq of the store, unknown tables and an ambiguous definition", async () => {
    const store = await openStore({ backend: "memory" });
    const Items = defineTable("items", { columns: { id: str() }, key: ["id"] });
    const a = store.object({ type: "a" }).table(Items);
    const b = store.object({ type: "b" }).table(Items);
    await a.count();
    await b.count();
    await rejectsWith(() => store.at(-1), "invalid/args", ["seq", "-1"]);
    await rejectsWith(() => store.at(1.5), "invalid/args", ["1.5"]);
    await rejectsWith(() => store.at("2"), "invalid/args", ["\"2\""]);
    await rejectsWith(() => store.at(3), "invalid/args", ["beyond the head"]);
    const view = await store.at(1);
    assert.deepEqual(view.tables(), ["a/items"]);
    await rejectsWith(async () => view.table("b/items"), "invalid/args", ["b/items", "seq 1"]);
    await rejectsWith(async () => view.table(42), "invalid/args", ["42"]);
    await view.close();
    const both = await store.at(2);
    await rejectsWith(async () => both.table(defineTable("items", { columns: { id: str() }, key: ["id"] })), "invalid/args", ["a/items", "b/items"]);
    // Items is open by two owners: it names neither (it read a/items).
    await rejectsWith(async () => both.table(Items), "invalid/args", ["several owners", "a/items", "b/items"]);
    await both.close();
    // A definition open by one owner names its table, whatever else is stored.
    const Own = defineTable("items", { columns: { id: str() }, key: ["id"] });
    const c = store.object({ type: "c" }).table(Own);
    await c.count();
    const three = await store.at(3);
    assert.equal(three.table(Own).name, "c/items", "the definition open in the store names its table");
    await three.close();
    await store.close();
  });
});

describe("store.log", () => {
  test("refuses malformed requests with invalid/args naming the value", async () => {
    const store = await openStore({ backend: "memory" });
    await store.commit([{ op: "table", table: "t/x", version: 1, columns: { id: { type: "str" } }, key: ["id"] }]);
    await rejectsWith(() => store.log({ seq: 0 }), "invalid/args", ["seq", "0"]);
    await rejectsWith(() => store.log({ seq: 1, owner: "t" }), "invalid/args", ["no filter"]);
    await rejectsWith(() => store.log({ bogus: 1 }), "invalid/args", ["bogus"]);
    await rejectsWith(() => store.log({ limit: 0 }), "invalid/args", ["limit", "0"]);
    await rejectsWith(() => store.log({ limit: 1001 }), "invalid/args", ["1001"]);
    await rejectsWith(() => store.log({ actor: "ana" }), "invalid/args", ["actor", "ana"]);
    await rejectsWith(() => store.log({ actor: { name: "ana" } }), "invalid/args", ["actor"]);
    await rejectsWith(() => store.log({ after: -2 }), "invalid/args", ["after", "-2"]);
    await rejectsWith(() => store.log(null), "invalid/args", ["null"]);
    assert.equal((await store.log({ seq: 1 })).ops[0].op, "table");
    assert.deepEqual(await store.log(), { commits: [await store.log({ seq: 1 })] });
    // An actor field set to undefined is left out, as the request's own are
    // (before, { kind: undefined, id } was refused); with none left, refused.
    await store.commit([{ op: "put", table: "t/x", row: { id: "a" } }], undefined, { actor: { kind: "person", id: "ana" } });
    assert.deepEqual((await store.log({ actor: { kind: undefined, id: "ana" } })).commits.map((c) => c.seq), [2]);
    assert.deepEqual((await store.log({ actor: { kind: "person", id: undefined } })).commits.map((c) => c.seq), [2]);
    await rejectsWith(() => store.log({ actor: { kind: undefined } }), "invalid/args", ["actor", "one at least"]);
    await store.close();
    await rejectsWith(() => store.log({ seq: 1 }), "closed");
  });

  test("a filter that matches rarely answers short pages with a next instead of walking the whole outbox in one call", async () => {
    const store = await openStore({ backend: "memory" });
    const busy = store.object({ type: "busy" });
    const Items = defineTable("items", { columns: { id: int() }, key: ["id"] });
    const items = busy.table(Items);
    await items.count();
    const rare = store.object({ type: "rare" });
    const other = rare.table(defineTable("other", { columns: { id: int() }, key: ["id"] }));
    await other.count();
    const writes = [];
    for (let i = 0; i < 4500; i++) writes.push(busy.tx(async (tx) => { await tx.put(items, { id: i }); }));
    await Promise.all(writes);
    await rare.tx(async (tx) => { await tx.put(other, { id: 1 }); });
    const first = await store.log({ owner: "rare", after: 2, limit: 10 });
    assert.deepEqual(first.commits, [], "the first 4096 records after seq 2 hold no commit of rare");
    assert.equal(first.next, 2 + 4096);
    const second = await store.log({ owner: "rare", after: first.next, limit: 10 });
    assert.deepEqual(second.commits.map((c) => c.seq), [store.head]);
    assert.equal(second.next, undefined);
    await store.close();
  });
});
