// The backend contract: what every backend must do through the public API.
// Each contract-*.test.js file runs it for one backend with
// runBackendContract(name, open).

import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";

import {
  add, and, bool, coalesce, col, compareText, concat, defineTable, eq, gt, gte, inArray, int, isNull, json,
  lt, lte, max, min, ne, not, num, openReplica, or, prefix, query, replacePrefix, str, StoreError, sub, value, when,
} from "../../js/index.js";
import { rejectsWith, throwsWith } from "./helpers.js";

export const Edits = defineTable("edits", {
  version: 1,
  columns: { id: str(), path: str(), entry: int(), at: int(), meta: json().optional() },
  key: ["id"],
  indexes: { byPath: ["path", "at"], byEntry: ["entry"] },
});

export const Items = defineTable("items", {
  columns: {
    id: int(),
    n: int().optional(),
    title: str({ default: "" }),
    note: str().optional(),
    ok: bool().optional(),
    score: num().optional(),
    meta: json().optional(),
  },
  key: ["id"],
});

const person = { kind: "person", id: "ana" };

function ids(rows) {
  return rows.map((r) => r.id);
}

async function all(iterable) {
  const out = [];
  for await (const x of iterable) out.push(x);
  return out;
}

/**
 * Runs the contract against a backend: `open()` gives a fresh, empty store.
 *
 * @example runBackendContract("memory", () => openStore({ backend: "memory" }));
 */
export function runBackendContract(name, open) {
  describe(`the ${name} backend`, () => {
    let store;
    let fileHistory;
    let edits;
    let items;

    beforeEach(async () => {
      store = await open();
      fileHistory = store.object({ host: "session", type: "file-history" });
      edits = fileHistory.table(Edits);
      items = fileHistory.table(Items);
    });

    afterEach(async () => {
      await store.close();
    });

    async function putEdits(rows, ctx) {
      await fileHistory.tx(async (tx) => {
        for (const r of rows) await tx.put(edits, { entry: 0, at: 0, meta: null, ...r });
      }, ctx);
    }

    async function lastRecord() {
      const batch = await store.outbox.read(store.head - 1, 1);
      return batch.commits[0];
    }

    test("a new store has an id and a head that counts its commits", async () => {
      assert.equal(typeof store.id, "string");
      assert.ok(store.id.length > 0);
      const before = store.head;  // the two table declarations
      assert.equal(before, 2);
      await putEdits([{ id: "e1", path: "a" }]);
      assert.equal(store.head, before + 1);
    });

    test("declaring a table records a table op under its full name", async () => {
      const batch = await store.outbox.read(0, 10);
      const first = batch.commits[0];
      assert.equal(first.owner, "file-history");
      assert.equal(first.ops[0].op, "table");
      assert.equal(first.ops[0].table, "file-history/edits");
      assert.equal(edits.name, "file-history/edits");
      const plugin = store.object({ host: "workspace", type: "notes" });
      assert.equal(plugin.table(Edits).name, "workspace:notes/edits");
      const head = store.head;
      fileHistory.table(Edits);
      assert.equal(store.head, head, "opening the same table again commits nothing");
    });

    test("put, get, update and delete work on one row by key", async () => {
      await putEdits([{ id: "e1", path: "a/x.ts", entry: 812, at: 1, meta: { tool: "edit" } }]);
      assert.deepEqual(await edits.get(["e1"]), { id: "e1", path: "a/x.ts", entry: 812, at: 1, meta: { tool: "edit" } });
      assert.deepEqual(await edits.get("e1"), await edits.get(["e1"]), "a one-column key may be given bare");
      await fileHistory.tx(async (tx) => {
        await tx.update(edits, ["e1"], { at: add(col("at"), 1), path: "a/y.ts" });
      });
      const row = await edits.get(["e1"]);
      assert.equal(row.at, 2);
      assert.equal(row.path, "a/y.ts");
      await fileHistory.tx(async (tx) => {
        await tx.delete(edits, "e1");
      });
      assert.equal(await edits.get(["e1"]), undefined);
    });

    test("a put with an omitted default column stores the default, an omitted optional one stores null", async () => {
      await fileHistory.tx(async (tx) => {
        await tx.put(items, { id: 1 });
      });
      assert.deepEqual(await items.get(1), { id: 1, n: null, title: "", note: null, ok: null, score: null, meta: null });
    });

    test("set expressions compute from the row as it was before the update", async () => {
      await fileHistory.tx(async (tx) => {
        await tx.put(items, { id: 1, n: 5, title: "t", note: null });
        await tx.put(items, { id: 2, n: 20, title: "u", note: "x" });
      });
      await fileHistory.tx(async (tx) => {
        await tx.updateWhere(items, undefined, {
          n: sub(max(col("n"), 10), 1),
          title: concat(col("title"), "/", coalesce(col("note"), "none")),
          note: when(gte(col("n"), 10), "big", value("small")),
          score: 1.5,
        });
        await tx.update(items, [1], { meta: { a: [1, 2] } });
      });
      assert.deepEqual(await items.get(1), { id: 1, n: 9, title: "t/none", note: "small", ok: null, score: 1.5, meta: { a: [1, 2] } });
      assert.deepEqual(await items.get(2), { id: 2, n: 19, title: "u/x", note: "big", ok: null, score: 1.5, meta: null });
      await fileHistory.tx(async (tx) => {
        await tx.update(items, [2], { n: min(col("n"), 3) });
      });
      assert.equal((await items.get(2)).n, 3);
    });

    test("integer overflow in a set is refused, not turned into a float", async () => {
      await fileHistory.tx(async (tx) => {
        await tx.put(items, { id: 1, n: 2n ** 63n - 1n });
      });
      const head = store.head;
      await rejectsWith(fileHistory.tx(async (tx) => {
        await tx.update(items, [1], { n: add(col("n"), 1) });
      }), "invalid/args");
      assert.equal(store.head, head);
      assert.equal((await items.get(1)).n, 2n ** 63n - 1n);
    });

    test("updateWhere with replacePrefix renames 10,000 rows in one outbox op of about 150 bytes", async () => {
      const rows = [];
      for (let i = 0; i < 10000; i++) rows.push({ id: `e${i}`, path: `a/f${i}.ts`, at: i });
      rows.push({ id: "other", path: "ab/keep.ts" });
      await putEdits(rows);
      await fileHistory.tx(async (tx) => {
        await tx.updateWhere(edits, (e) => prefix(e.path, "a/"), { path: replacePrefix("a/", "b/") });
      }, { actor: person });
      const record = await lastRecord();
      assert.equal(record.ops.length, 1);
      assert.deepEqual(record.ops[0], {
        op: "update",
        table: "file-history/edits",
        where: { prefix: ["path", "a/"] },
        set: { path: { replacePrefix: ["a/", "b/"] } },
        count: 10000,
      });
      const bytes = Buffer.byteLength(JSON.stringify(record));
      assert.ok(bytes < 300, `the record is ${bytes} bytes`);
      assert.equal(await edits.count(query(Edits).where((e) => prefix(e.path, "b/"))), 10000);
      assert.equal(await edits.count(query(Edits).where((e) => prefix(e.path, "a/"))), 0);
      assert.equal((await edits.get("e42")).path, "b/f42.ts");
      assert.equal((await edits.get("other")).path, "ab/keep.ts");
    });

    test("deleteWhere removes the matching rows and records their count", async () => {
      await putEdits([1, 5, 9, 12, 30].map((at) => ({ id: `e${at}`, path: "p", at })));
      let adopted;
      const owner = store.object({ type: "trash" }, { adopt: (seq, ops) => { adopted = ops; } });
      const t = owner.table(Edits);
      await owner.tx(async (tx) => {
        await tx.put(t, { id: "x", path: "p", entry: 0, at: 1 });
      });
      await fileHistory.tx(async (tx) => {
        await tx.deleteWhere(edits, (e) => lt(e.at, 10));
      });
      assert.equal((await lastRecord()).ops[0].count, 3);
      assert.deepEqual(ids((await edits.page(undefined, 10)).rows).sort(), ["e12", "e30"]);
      await owner.tx(async (tx) => {
        await tx.deleteWhere(t);
      });
      assert.equal(adopted[0].count, 1, "the adopt hook gets the ops with their counts");
      assert.equal(await t.count(), 0);
    });

    test("every predicate selects the rows it should", async () => {
      await fileHistory.tx(async (tx) => {
        await tx.put(items, { id: 1, n: 1, title: "a/1", note: "x" });
        await tx.put(items, { id: 2, n: 2, title: "a/2", note: null });
        await tx.put(items, { id: 3, n: 3, title: "b/3", note: "y" });
        await tx.put(items, { id: 4, n: null, title: "b/4", note: "x" });
      });
      const where = async (w) => ids(await all(items.rows(query(Items).where(w)))).sort();
      assert.deepEqual(await where((e) => eq(e.n, 2)), [2]);
      assert.deepEqual(await where((e) => ne(e.n, 2)), [1, 3], "a null cell never matches a comparison");
      assert.deepEqual(await where((e) => lt(e.n, 2)), [1]);
      assert.deepEqual(await where((e) => lte(e.n, 2)), [1, 2]);
      assert.deepEqual(await where((e) => gt(e.n, 2)), [3]);
      assert.deepEqual(await where((e) => gte(e.n, 2)), [2, 3]);
      assert.deepEqual(await where((e) => inArray(e.note, ["x", "z"])), [1, 4]);
      assert.deepEqual(await where((e) => isNull(e.n)), [4]);
      assert.deepEqual(await where((e) => isNull(e.note)), [2]);
      assert.deepEqual(await where((e) => prefix(e.title, "a/")), [1, 2]);
      assert.deepEqual(await where((e) => and(prefix(e.title, "b/"), eq(e.note, "x"))), [4]);
      assert.deepEqual(await where((e) => or(eq(e.n, 1), eq(e.title, "b/4"))), [1, 4]);
      assert.deepEqual(await where((e) => not(eq(e.note, "x"))), [3], "not of unknown stays unknown");
      assert.deepEqual(await where((e) => eq(e.title, "nothing")), []);
    });

    test("orderBy asc and desc page through every row with cursors", async () => {
      const rows = [];
      for (let i = 0; i < 23; i++) rows.push({ id: `e${String(i).padStart(2, "0")}`, path: `p${i % 4}`, at: (i * 7) % 11 });
      await putEdits(rows);
      const expect = (dir) =>
        [...rows]
          .sort((a, b) => (a.path !== b.path ? compareText(a.path, b.path) : a.at - b.at || compareText(a.id, b.id)) * (dir === "desc" ? -1 : 1))
          .map((r) => r.id);
      for (const dir of ["asc", "desc"]) {
        const q = query(Edits).orderBy((e) => e.path, dir).orderBy((e) => e.at, dir);
        const got = [];
        let after;
        let pages = 0;
        do {
          const page = await edits.page(q, 5, undefined, { after });
          got.push(...ids(page.rows));
          after = page.next;
          pages++;
        } while (after);
        assert.deepEqual(got, expect(dir), `order ${dir}`);
        assert.ok(pages >= 5);
      }
      const single = await edits.page(query(Edits).orderBy((e) => e.at, "desc"), 3);
      assert.deepEqual(single.rows.map((r) => r.at), rows.map((r) => r.at).sort((a, b) => b - a).slice(0, 3));
    });

    test("rows() iterates over every page of a query", async () => {
      const rows = [];
      for (let i = 0; i < 250; i++) rows.push({ id: `e${String(i).padStart(3, "0")}`, path: i % 2 ? "odd" : "even", at: i });
      await putEdits(rows);
      const got = await all(edits.rows(query(Edits).where((e) => eq(e.path, "odd")).orderBy((e) => e.at, "desc")));
      assert.equal(got.length, 125);
      assert.equal(got[0].at, 249);
      assert.equal(got.at(-1).at, 1);
      assert.equal((await all(edits.rows())).length, 250);
    });

    test("count counts the rows of a query", async () => {
      await putEdits([{ id: "a", path: "x" }, { id: "b", path: "x" }, { id: "c", path: "y" }]);
      assert.equal(await edits.count(query(Edits).where((e) => eq(e.path, "x"))), 2);
      assert.equal(await edits.count(), 3);
    });

    test("a query over another table is refused", async () => {
      await rejectsWith(edits.page(query(Items), 10), "invalid/args", ["items"]);
      await rejectsWith(edits.count(query(Items)), "invalid/args");
    });

    test("adopt runs inside the commit step, before commit returns", async () => {
      const events = [];
      const promise = store.commit(
        [{ op: "put", table: "file-history/edits", row: { id: "s1", path: "p", entry: 1, at: 1, meta: null } }],
        (seq) => events.push(["adopt", seq]),
      );
      events.push(["returned"]);
      const seq = await promise;
      assert.deepEqual(events, [["adopt", seq], ["returned"]]);
      assert.equal(seq, store.head);
    });

    test("an owner's adopt hook runs once per commit, inside the step, with the ops", async () => {
      const seen = [];
      const notes = store.object({ type: "notes" }, { adopt: (seq, ops) => seen.push({ seq, ops: ops.map((o) => o.op) }) });
      const t = notes.table(Items);
      const value = await notes.tx(async (tx) => {
        await tx.put(t, { id: 1 });
        await tx.update(t, 1, { title: "x" });
        return "done";
      });
      assert.equal(value, "done", "tx resolves to the callback's value");
      assert.deepEqual(seen.map((s) => s.ops), [["table"], ["put", "update"]]);
      assert.equal(seen[1].seq, store.head);
      await notes.tx(async () => "no writes");
      assert.equal(seen.length, 2, "a tx without writes commits nothing");
    });

    test("commits asked for inside adopt run right after, in order, and seq order is adopt order", async () => {
      const order = [];
      const put = (id) => [{ op: "put", table: "file-history/edits", row: { id, path: "p", entry: 0, at: 0, meta: null } }];
      let nested;
      const first = store.commit(put("a"), (seq) => {
        order.push(["a", seq, "start"]);
        nested = [
          store.commit(put("b"), (s) => order.push(["b", s])),
          store.commit(put("c"), (s) => order.push(["c", s])),
        ];
        order.push(["a", seq, "end"]);
      });
      const seqs = await Promise.all([first, ...nested]);
      assert.deepEqual(order.map((o) => o[0] + (o[2] ? `:${o[2]}` : "")), ["a:start", "a:end", "b", "c"]);
      assert.deepEqual(seqs, [seqs[0], seqs[0] + 1, seqs[0] + 2]);
      assert.deepEqual(order.filter((o) => !o[2] || o[2] === "start").map((o) => o[1]), seqs);
      assert.equal(order.length, 4, "each adopt ran exactly once");
    });

    test("the tx callbacks of one owner never overlap", async () => {
      const events = [];
      const one = fileHistory.tx(async (tx) => {
        events.push("1 in");
        await sleep(20);
        await tx.put(edits, { id: "one", path: "p", entry: 0, at: 0 });
        events.push("1 out");
      });
      const two = fileHistory.tx(async (tx) => {
        events.push("2 in");
        assert.ok(await tx.get(edits, "one"), "the second tx sees the first one's commit");
        events.push("2 out");
      });
      await Promise.all([one, two]);
      assert.deepEqual(events, ["1 in", "1 out", "2 in", "2 out"]);
    });

    test("a failed tx does not block the owner's line", async () => {
      await assert.rejects(fileHistory.tx(async () => { throw new Error("boom"); }), /boom/);
      await putEdits([{ id: "after", path: "p" }]);
      assert.ok(await edits.get("after"));
    });

    test("tx.get sees the tx's own writes while tx.page sees committed state", async () => {
      await putEdits([{ id: "e1", path: "old", at: 1 }]);
      await fileHistory.tx(async (tx) => {
        await tx.put(edits, { id: "e2", path: "new", entry: 0, at: 2 });
        await tx.update(edits, ["e1"], { path: "changed" });
        assert.equal((await tx.get(edits, ["e2"])).path, "new");
        assert.equal((await tx.get(edits, "e1")).path, "changed");
        await tx.delete(edits, ["e2"]);
        assert.equal(await tx.get(edits, ["e2"]), undefined);
        const page = await tx.page(edits, query(Edits), 10);
        assert.deepEqual(page.rows.map((r) => [r.id, r.path]), [["e1", "old"]]);
        assert.equal(await tx.count(edits, query(Edits)), 1);
        assert.equal((await all(tx.rows(edits, query(Edits)))).length, 1);
      });
      assert.equal((await edits.get("e1")).path, "changed");
      assert.equal(await edits.get("e2"), undefined);
    });

    test("tx.get after a bulk op on the table throws read_after_bulk", async () => {
      await putEdits([{ id: "e1", path: "a/1" }]);
      await fileHistory.tx(async (tx) => {
        await tx.updateWhere(edits, (e) => prefix(e.path, "a/"), { path: replacePrefix("a/", "b/") });
        await rejectsWith(tx.get(edits, ["e1"]), "read_after_bulk", ["file-history/edits"]);
        await tx.put(items, { id: 1 });
        assert.ok(await tx.get(items, 1), "other tables can still be read");
      });
      assert.equal((await edits.get("e1")).path, "b/1", "the tx still commits after the refused read");
    });

    test("ops staged after a bulk op wait for the commit: tx.get on another table returns its row and the tx commits", async () => {
      // issue 9: the update by key was evaluated against the row as stored
      // (x null), so tx.get(u) threw "the expression gave null" and the tx
      // could not commit.
      const T = defineTable("t", { columns: { id: int(), n: int(), x: int().optional() }, key: ["id"] });
      const U = defineTable("u", { columns: { id: int(), v: str() }, key: ["id"] });
      const t = fileHistory.table(T);
      const u = fileHistory.table(U);
      await fileHistory.tx(async (tx) => {
        await tx.put(t, { id: 1, n: 0, x: null });
        await tx.put(u, { id: 1, v: "u1" });
      });
      await fileHistory.tx(async (tx) => {
        await tx.updateWhere(t, undefined, { x: 5 });
        await tx.update(t, 1, { n: add(col("x"), 10) });
        assert.deepEqual(await tx.get(u, 1), { id: 1, v: "u1" });
        await rejectsWith(tx.get(t, 1), "read_after_bulk", ["file-history/t"]);
        await tx.update(t, 1, { n: add(col("n"), col("x")) });
        assert.deepEqual(await tx.get(u, 1), { id: 1, v: "u1" });
      });
      assert.deepEqual(await t.get(1), { id: 1, n: 20, x: 5 });
    });

    test("names that could collide on some backend are refused with invalid/args on every backend", async () => {
      // issue 9: these worked on memory and failed on sqlite (or the reverse).
      const head = store.head;
      const cols = { id: str(), v: str() };
      throwsWith(() => fileHistory.table(defineTable("edits/byPath", { columns: cols, key: ["id"] })), "invalid/args", ["edits/byPath"]);
      throwsWith(() => store.object({ host: "session", type: "sqlite_x" }).table(defineTable("t", { columns: cols, key: ["id"] })), "invalid/args", ["sqlite_"]);
      throwsWith(() => store.object({ host: "session", type: "a\uD800" }), "invalid/args", ["lone surrogate"]);
      throwsWith(() => fileHistory.table(defineTable("Edits", { columns: cols, key: ["id"] })), "invalid/args", ["letter case"]);
      const wide = Object.fromEntries([["id", int()], ...Array.from({ length: 2000 }, (_, i) => [`c${i}`, int().optional()])]);
      throwsWith(() => fileHistory.table(defineTable("wide", { columns: wide, key: ["id"] })), "invalid/args", ["2001 columns"]);
      // The core is the authority: the low-level seam refuses them too.
      await rejectsWith(store.commit([{ op: "table", table: "file-history/edits/byPath", columns: { id: { type: "str" } }, key: ["id"] }]), "invalid/args");
      await rejectsWith(store.commit([{ op: "table", table: "a\uD800/t", columns: { id: { type: "str" } }, key: ["id"] }]), "invalid/args", ["U+FFFD"]);
      assert.equal(store.head, head, "nothing was committed");
      await putEdits([{ id: "e1", path: "a" }]);
      assert.equal((await edits.get("e1")).path, "a");
    });

    test("an index that lists key columns is recorded as declared and declaring it again commits nothing", async () => {
      // issue 9: byB was refused, byCB recorded as ["c"].
      const AB = defineTable("ab", {
        columns: { a: str(), b: int(), c: str() },
        key: ["a", "b"],
        indexes: { byB: ["b"], byCB: ["c", "b"] },
      });
      const ab = fileHistory.table(AB);
      await fileHistory.tx(async (tx) => {
        await tx.put(ab, { a: "x", b: 2, c: "k" });
        await tx.put(ab, { a: "y", b: 1, c: "k" });
      });
      const recorded = async (name) => (await store.outbox.read(0, 100)).commits.flatMap((c) => c.ops).filter((op) => op.op === "table" && op.table === name);
      assert.deepEqual((await recorded("file-history/ab")).map((op) => op.indexes), [{ byB: ["b"], byCB: ["c", "b"] }]);
      const page = await ab.page(query(AB).orderBy((r) => r.c).orderBy((r) => r.b), 10);
      assert.deepEqual(page.rows.map((r) => r.a), ["y", "x"]);
      const K = defineTable("k", { columns: { id: str() }, key: ["id"], indexes: { byId: ["id"] } });
      await fileHistory.table(K).count();
      assert.deepEqual((await recorded("file-history/k")).map((op) => op.indexes), [{ byId: ["id"] }]);
    });

    test("a throwing callback commits nothing and rethrows its error", async () => {
      const head = store.head;
      const boom = new Error("boom");
      const error = await fileHistory.tx(async (tx) => {
        await tx.put(edits, { id: "x", path: "p", entry: 0, at: 0 });
        await tx.get(edits, "x");  // opens the wasm tx
        throw boom;
      }).catch((e) => e);
      assert.equal(error, boom);
      assert.equal(store.head, head);
      assert.equal((await store.outbox.read(head, 10)).commits.length, 0);
      assert.equal(await edits.get("x"), undefined);
    });

    test("the actor of the context is recorded with the commit", async () => {
      const actor = { kind: "agent", id: "claude", for: { kind: "person", id: "ana" }, via: "tool:edit" };
      await putEdits([{ id: "e1", path: "p" }], { actor });
      const record = await lastRecord();
      assert.deepEqual(record.actor, actor);
      assert.equal(record.owner, "file-history");
      assert.equal(record.seq, store.head);
      assert.equal(record.from, store.head - 1);
      assert.equal(typeof record.at, "number");
      await store.commit([{ op: "delete", table: edits.name, key: ["nope"] }], undefined, { actor: person });
      assert.equal((await lastRecord()).owner, "store");
      await rejectsWith(putEdits([{ id: "e2", path: "p" }], { actor: "ana" }), "invalid/args", ["actor"]);
    });

    test("mintId hands out ids above the highest stored id", async () => {
      await fileHistory.tx(async (tx) => {
        await tx.put(items, { id: 41 });
        await tx.put(items, { id: 7 });
      });
      await fileHistory.tx(async (tx) => {
        const a = tx.mintId(items);
        const b = tx.mintId(Items);
        assert.ok(a > 41, `minted ${a}`);
        assert.ok(b > a);
        await tx.put(items, { id: a });
      });
      await rejectsWith(fileHistory.tx(async (tx) => tx.mintId(edits)), "invalid/args");
    });

    test("mintId is above every id the same transaction has put, staged or not", async () => {
      const ids = await fileHistory.tx(async (tx) => {
        const floor = tx.mintId(items);
        await tx.put(items, { id: floor + 5 });  // written, not yet staged
        const a = tx.mintId(items);
        assert.equal(await tx.get(items, floor + 5) !== undefined, true);  // stages what was written
        await tx.put(items, { id: a + 10 });
        const b = tx.mintId(items);
        const c = tx.mintId(items);  // nothing written since: the tx's staged puts still count
        await tx.put(items, { id: a });
        await tx.put(items, { id: b });
        await tx.put(items, { id: c });
        return { floor, a, b, c };
      });
      assert.equal(ids.a, ids.floor + 6);
      assert.equal(ids.b, ids.a + 11);
      assert.equal(ids.c, ids.b + 1);
      for (const id of [ids.floor + 5, ids.a, ids.a + 10, ids.b, ids.c]) assert.equal((await items.get(id))?.id, id);
      // A transaction that fails to stage cannot commit: nothing it wrote lands.
      const head = store.head;
      await rejectsWith(fileHistory.tx(async (tx) => {
        await tx.put(items, { id: ids.c + 1 });
        await tx.put(items, { id: ids.c + 2, n: "two" });  // refused by the core's check, at the staging
        assert.throws(() => tx.mintId(items), (e) => e.code === "invalid/args" && /"two"/.test(e.message));
      }), "invalid/args", ["two"]);
      assert.equal(store.head, head);
      assert.equal(await items.get(ids.c + 1), undefined);
    });

    test("mintId beyond 2^53 gives the exact BigInt, and at 2^63-1 throws limit", async () => {
      await fileHistory.tx(async (tx) => { await tx.put(items, { id: 2 ** 53 - 1 }); });
      const past = await fileHistory.tx(async (tx) => {
        const id = tx.mintId(items);
        await tx.put(items, { id });
        return id;
      });
      assert.equal(past, 2n ** 53n);
      assert.deepEqual((await items.get(2n ** 53n))?.id, 2n ** 53n);
      await fileHistory.tx(async (tx) => { await tx.put(items, { id: 2n ** 63n - 1n }); });
      const head = store.head;
      await rejectsWith(fileHistory.tx(async (tx) => tx.mintId(items)), "limit", ["9223372036854775807", items.name]);
      assert.equal(store.head, head);
      await fileHistory.tx(async (tx) => { await tx.deleteWhere(items); });
    });

    describe("refusals", () => {
      const putItem = (row) => fileHistory.tx(async (tx) => { await tx.put(items, { id: 1, ...row }); });

      test("a non-integer int is refused naming the value", async () => {
        await rejectsWith(putItem({ n: 1.5 }), "invalid/args", ["1.5", "n"]);
      });

      test("an unsafe integer number is refused, a BigInt is taken and read back as a BigInt", async () => {
        const e = await rejectsWith(putItem({ n: 2 ** 53 + 2 }), "invalid/args", ["n"]);
        assert.match(e.message, /9\.?007199254740994/);
        await putItem({ n: 2n ** 60n });
        const row = await items.get(1);
        assert.equal(typeof row.n, "bigint");
        assert.equal(row.n, 2n ** 60n);
        await putItem({ n: 2 ** 53 - 1 });
        assert.equal((await items.get(1)).n, 2 ** 53 - 1);
        assert.equal(typeof (await items.get(1)).n, "number");
        assert.equal(await items.count(query(Items).where((e) => gt(e.n, 2n ** 52n))), 1);
      });

      test("a value of the wrong type is refused", async () => {
        await rejectsWith(putItem({ n: "7" }), "invalid/args", ['"7"']);
        await rejectsWith(putItem({ ok: 1 }), "invalid/args", ["ok"]);
        await rejectsWith(putItem({ title: 5 }), "invalid/args", ["title"]);
        await rejectsWith(putItem({ score: NaN }), "invalid/args", ["score", "NaN"]);
      });

      test("null in a non-optional column is refused", async () => {
        await rejectsWith(putEdits([{ id: "e1", path: null }]), "invalid/args", ["path"]);
        await rejectsWith(putEdits([{ id: "e1", path: "p", entry: undefined }]), "invalid/args", ["entry"]);
      });

      test("a where nested too deep is refused, and the wasm instance goes on", async () => {
        const w = (e) => {
          let p = eq(e.path, "p");
          for (let i = 0; i < 200; i++) p = not(p);
          return p;
        };
        await rejectsWith(edits.count(query(Edits).where(w)), "invalid/args", ["deeper than 64"]);
        await putEdits([{ id: "e1", path: "p" }]);
        assert.equal(await edits.count(query(Edits).where((e) => not(not(eq(e.path, "p"))))), 1);
      });

      test("NUL in a str is refused", async () => {
        await rejectsWith(putEdits([{ id: "e1", path: "a\u0000b" }]), "invalid/args", ["NUL"]);
        await putEdits([{ id: "e1", path: "p", meta: { text: "a\u0000b" } }]);
        assert.equal((await edits.get("e1")).meta.text, "a\u0000b", "json columns hold NUL");
      });

      test("a json column in a where, an orderBy, a key or an index is refused", async () => {
        await rejectsWith(edits.page(query(Edits).where((e) => eq(e.meta, "x")), 10), "invalid/args", ["meta"]);
        await rejectsWith(edits.page(query(Edits).where((e) => isNull(e.meta)), 10), "invalid/args", ["meta"]);
        await rejectsWith(edits.page(query(Edits).orderBy((e) => e.meta), 10), "invalid/args", ["meta"]);
        const JsonKey = defineTable("jk", { columns: { id: json() }, key: ["id"] });
        throwsWith(() => fileHistory.table(JsonKey), "invalid/args", ["id"]);
        const JsonIndex = defineTable("ji", { columns: { id: str(), m: json() }, key: ["id"], indexes: { byM: ["m"] } });
        throwsWith(() => fileHistory.table(JsonIndex), "invalid/args", ["m"]);
        await rejectsWith(fileHistory.tx(async (tx) => {
          await tx.updateWhere(edits, (e) => eq(e.meta, 1), { path: "x" });
        }), "invalid/args", ["meta"]);
      });

      test("an unknown column is refused naming it", async () => {
        await rejectsWith(edits.page(query(Edits).where((e) => eq(e.nope, 1)), 10), "invalid/args", ["nope"]);
        await rejectsWith(edits.page(query(Edits).orderBy("nope"), 10), "invalid/args", ["nope"]);
        await rejectsWith(putEdits([{ id: "e1", path: "p", nope: 1 }]), "invalid/args", ["nope"]);
        await rejectsWith(fileHistory.tx(async (tx) => {
          await tx.update(edits, ["e1"], { nope: 1 });
        }), "invalid/args", ["nope"]);
      });

      test("an unknown table is refused naming it", async () => {
        await rejectsWith(store.commit([{ op: "put", table: "x/unknown", row: { id: "a" } }]), "invalid/args", ["x/unknown"]);
        await rejectsWith(store.commit([{ op: "fly", table: "file-history/edits" }]), "invalid/args", ["fly"]);
        await rejectsWith(store.commit("nope"), "invalid/args");
      });

      test("a bad key, limit or argument is refused", async () => {
        await rejectsWith(edits.get([1]), "invalid/args");
        await rejectsWith(edits.get(["a", "b"]), "invalid/args");
        await rejectsWith(edits.get(), "invalid/args");
        await rejectsWith(edits.page(query(Edits), 0), "invalid/args", ["limit"]);
        await rejectsWith(edits.page(query(Edits), 2.5), "invalid/args", ["limit"]);
        await rejectsWith(edits.page("everything", 10), "invalid/args");
        await rejectsWith(fileHistory.tx(async (tx) => { await tx.put(edits, "row"); }), "invalid/args");
        await rejectsWith(fileHistory.tx("not a function"), "invalid/args");
        await rejectsWith(store.outbox.read(-1, 10), "invalid/args");
        throwsWith(() => store.object({ type: "" }), "invalid/args");
        throwsWith(() => fileHistory.table({ name: "x" }), "invalid/args");
      });

      test("a cursor from another query, from the other direction or from nowhere is refused", async () => {
        const rows = [];
        for (let i = 0; i < 10; i++) rows.push({ id: `e${i}`, path: `p${i % 2}`, at: i });
        await putEdits(rows);
        const byAt = query(Edits).orderBy((e) => e.at);
        const { next } = await edits.page(byAt, 3);
        assert.ok(next);
        await rejectsWith(edits.page(query(Edits).orderBy((e) => e.path), 3, undefined, { after: next }), "invalid/cursor");
        await rejectsWith(edits.page(byAt.where((e) => eq(e.path, "p1")), 3, undefined, { after: next }), "invalid/cursor");
        await rejectsWith(edits.page(query(Edits).orderBy((e) => e.at, "desc"), 3, undefined, { after: next }), "invalid/cursor");
        await rejectsWith(edits.page(byAt, 3, undefined, { after: "garbage" }), "invalid/cursor");
        await rejectsWith(edits.page(byAt, 3, undefined, { after: 42 }), "invalid/cursor");
        await rejectsWith(items.page(query(Items).orderBy((e) => e.id), 3, undefined, { after: next }), "invalid/cursor");
      });

      test("a failed commit leaves the store usable", async () => {
        const head = store.head;
        await rejectsWith(putItem({ n: 1.5 }), "invalid/args");
        assert.equal(store.head, head);
        await putItem({ n: 1 });
        assert.equal(store.head, head + 1);
      });

      test("every operation on a closed store is refused with closed", async () => {
        const tx = fileHistory.tx(async (t) => { await sleep(5); await t.put(items, { id: 9 }); });
        await store.close();
        await rejectsWith(tx, "closed");
        await rejectsWith(edits.get("e1"), "closed");
        await rejectsWith(edits.page(query(Edits), 10), "closed");
        await rejectsWith(edits.count(), "closed");
        await rejectsWith(all(edits.rows()), "closed");
        await rejectsWith(fileHistory.tx(async () => 1), "closed");
        await rejectsWith(store.commit([]), "closed");
        await rejectsWith(store.read(async () => 1), "closed");
        await rejectsWith(store.outbox.read(0, 1), "closed");
        await rejectsWith(store.outbox.trim(1), "closed");
        throwsWith(() => store.object({ type: "late" }), "closed");
        throwsWith(() => fileHistory.table(Edits), "closed");
        assert.equal(typeof store.head, "number");
        await store.close();  // twice is fine
      });
    });

    test("a lone surrogate is stored as U+FFFD, in values and in query operands", async () => {
      await putEdits([{ id: "k\uD800", path: "x\uDC00y" }]);
      const row = await edits.get("k\uFFFD");
      assert.ok(row);
      assert.equal(row.path, "x\uFFFDy");
      assert.equal(await edits.count(query(Edits).where((e) => eq(e.path, "x\uDFFFy"))), 1);
      assert.ok(await edits.get("k\uDBFF"), "a key with a lone surrogate finds it too");
    });

    test("text orders by code point: fullwidth forms before emoji", async () => {
      const texts = ["测试😀", "测试（一）", "测试", "a", "～", "😀"];
      await putEdits(texts.map((path, i) => ({ id: `e${i}`, path })));
      const asc = (await edits.page(query(Edits).orderBy((e) => e.path), 10)).rows.map((r) => r.path);
      assert.deepEqual(asc, [...texts].sort(compareText));
      assert.ok(asc.indexOf("测试（一）") < asc.indexOf("测试😀"));
      const desc = (await edits.page(query(Edits).orderBy((e) => e.path, "desc"), 10)).rows.map((r) => r.path);
      assert.deepEqual(desc, [...asc].reverse());
      assert.equal(await edits.count(query(Edits).where((e) => prefix(e.path, "测试"))), 3);
      assert.equal(await edits.count(query(Edits).where((e) => gt(e.path, "测试（一）"))), 3, "测试😀, ～ and 😀");
    });

    test("store.read sees one consistent state while commits wait", async () => {
      await putEdits([{ id: "e1", path: "p" }]);
      let committed = false;
      const [before, after, head] = await store.read(async (r) => {
        const a = await r.count(edits);
        const pending = fileHistory.tx(async (tx) => { await tx.put(edits, { id: "e2", path: "p", entry: 0, at: 0 }); });
        pending.then(() => { committed = true; });
        await sleep(10);
        const b = await r.count(edits, query(Edits));
        assert.equal(committed, false, "the commit waits for the read");
        assert.equal((await r.page(edits, query(Edits), 10)).rows.length, 1);
        assert.ok(await r.get(edits, "e1"));
        assert.equal((await all(r.rows(edits))).length, 1);
        return [a, b, store.head];
      });
      assert.equal(before, after);
      await sleep(0);
      await fileHistory.tx(async () => undefined);  // after the queued one
      assert.equal(committed, true);
      assert.equal(store.head, head + 1);
      assert.equal(await edits.count(), 2);
    });

    test("the outbox is read in batches and trimmed up to a seq", async () => {
      const start = store.head;
      for (let i = 0; i < 3; i++) await putEdits([{ id: `e${i}`, path: "p" }]);
      const batch = await store.outbox.read(start, 2);
      assert.equal(batch.from, start);
      assert.equal(batch.to, start + 2);
      assert.deepEqual(batch.commits.map((c) => c.seq), [start + 1, start + 2]);
      assert.equal(batch.commits[0].ops[0].op, "put");
      assert.equal(batch.commits[0].ops[0].row.id, "e0");
      const removed = await store.outbox.trim(start + 2);
      assert.equal(removed, start + 2);
      const rest = await store.outbox.read(0, 100);
      assert.deepEqual(rest.commits.map((c) => c.seq), [start + 3]);
      assert.equal(await store.outbox.trim(start + 2), 0);
      // Trimmed whole, a read from behind starts at the head: the reader
      // sees the gap (sync/gap), as it does behind a part trimmed. Before,
      // it got { from: after, to: after }, an empty batch that says
      // "caught up" while commits were missing.
      await store.outbox.trim(store.head);
      const behind = await store.outbox.read(start, 100);
      assert.deepEqual([behind.from, behind.to, behind.commits.length], [store.head, store.head, 0]);
      const replica = await openReplica({ backend: "memory" });
      await rejectsWith(replica.applyBatch(behind), "sync/gap");
      await replica.close();
      const ahead = await store.outbox.read(store.head, 100);
      assert.deepEqual([ahead.from, ahead.to], [store.head, store.head]);
    });

    test("an int beyond 2^53 in an outbox record reads back exact", async () => {
      await fileHistory.tx(async (tx) => { await tx.put(items, { id: 1, n: 2n ** 60n + 1n }); });
      const record = await lastRecord();
      assert.equal(record.ops[0].row.n, 2n ** 60n + 1n);
    });

    test("a table opened with another definition under the same name is refused", async () => {
      const Other = defineTable("edits", { columns: { id: str(), x: int() }, key: ["id"] });
      throwsWith(() => fileHistory.table(Other), "invalid/args", ["edits"]);
      const other = store.object({ type: "elsewhere" });
      const t = other.table(Edits);
      await rejectsWith(fileHistory.tx(async (tx) => { await tx.put(t, { id: "a", path: "p", entry: 0, at: 0 }); }), "invalid/args", ["elsewhere"]);
    });

    test("errors are StoreErrors with a code", async () => {
      const e = await rejectsWith(edits.get([1]), "invalid/args");
      assert.ok(e instanceof StoreError);
      assert.ok(e instanceof Error);
      assert.equal(e.name, "StoreError");
    });
  });
}

export { bool, int, json, num, str };
