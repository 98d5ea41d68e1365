// Checks edges through the public package in Node beyond the conformance
// vectors (tests/conformance/edges.json): defineEdges's checks and the plain
// table it declares, neighbours only on edge tables, a large fan-out paged
// in every direction against a plain JS list, and edges carried by a
// replica and by export/import with no op of their own.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import {
  defineEdges, defineTable, importStore, int, openReplica, openStore, str, compareText,
} from "../../js/index.js";
import { rejectsWith } from "./helpers.js";

const Links = defineEdges("links", { kinds: ["cites", "replies"], data: { at: int({ default: 0 }) } });

async function all(handle, node, options) {
  const rows = [];
  let after;
  for (;;) {
    const page = await handle.neighbours(node, { ...options, after });
    rows.push(...page.rows);
    if (!page.next) return rows;
    after = page.next;
  }
}

describe("defineEdges", () => {
  test("refuses missing, empty, repeated or non-string kinds, naming the value", () => {
    for (const [spec, mention] of [
      [{}, "kinds"],
      [{ kinds: [] }, "kinds"],
      [{ kinds: ["a", "a"] }, '"a"'],
      [{ kinds: ["a", 3] }, "3"],
      [{ kinds: ["a", ""] }, '""'],
    ]) {
      assert.throws(() => defineEdges("links", spec), (e) => e.code === "invalid/args" && e.message.includes(mention), JSON.stringify(spec));
    }
  });

  test("refuses a data column named from, to or kind, and an unknown option", () => {
    assert.throws(() => defineEdges("links", { kinds: ["a"], data: { to: str() } }), (e) => e.code === "invalid/args" && e.message.includes('"to"'));
    assert.throws(() => defineEdges("links", { kinds: ["a"], key: ["from"] }), (e) => e.code === "invalid/args" && e.message.includes('"key"'));
  });

  test("declares the same table record as the equivalent defineTable, so the wire knows no new kind of table", async () => {
    const Plain = defineTable("links", {
      columns: { from: str(), to: str(), kind: str(), at: int({ default: 0 }) },
      key: ["from", "kind", "to"],
      indexes: { byTo: ["to", "kind", "from"] },
    });
    const store = await openStore({ backend: "memory" });
    try {
      const a = store.object({ type: "a" }).table(Links);
      const b = store.object({ type: "b" }).table(Plain);
      await a.count();
      await b.count();
      const batch = await store.outbox.read(0, 2);
      const [ra, rb] = batch.commits.map((c) => c.ops[0]);
      assert.deepEqual({ ...ra, table: "x" }, { ...rb, table: "x" });
    } finally {
      await store.close();
    }
  });
});

describe("an edges handle", () => {
  test("has neighbours, and a plain table's handle has none; deleteEdges refuses a plain table", async () => {
    const store = await openStore({ backend: "memory" });
    try {
      const owner = store.object({ type: "s" });
      const links = owner.table(Links);
      const Items = defineTable("items", { columns: { id: str() }, key: ["id"] });
      const items = owner.table(Items);
      assert.equal(typeof links.neighbours, "function");
      assert.equal(items.neighbours, undefined);
      await rejectsWith(owner.tx((tx) => tx.deleteEdges(items, "a")), "invalid/args", ["s/items", "defineEdges"]);
    } finally {
      await store.close();
    }
  });

  test("pages 300 edges of one node in each direction exactly as a sorted JS list of them", async () => {
    const store = await openStore({ backend: "sqlite", path: ":memory:" });
    try {
      const owner = store.object({ type: "s" });
      const links = owner.table(Links);
      const want = { out: [], in: [], both: [] };
      await owner.tx(async (tx) => {
        for (let i = 0; i < 300; i++) {
          const other = `n${(i * 7919) % 150}`;
          const kind = i % 3 === 0 ? "replies" : "cites";
          const out = i % 2 === 0;
          const row = out ? { from: "hub", to: other, kind, at: i } : { from: other, to: "hub", kind, at: i };
          await tx.put(links, row);
        }
        await tx.put(links, { from: "hub", to: "hub", kind: "cites", at: -1 });
      });
      const rows = [];
      for await (const r of links.rows()) rows.push(r);
      const key = (r) => `${r.from}|${r.kind}|${r.to}`;
      const cmp = (f) => (x, y) => compareText(x.kind, y.kind) || compareText(f(x), f(y)) || (x.from === "hub" ? 0 : 1) - (y.from === "hub" ? 0 : 1);
      want.out = rows.filter((r) => r.from === "hub").sort(cmp((r) => r.to));
      want.in = rows.filter((r) => r.to === "hub").sort(cmp((r) => r.from));
      want.both = rows.filter((r) => r.from === "hub" || r.to === "hub").sort(cmp((r) => (r.from === "hub" ? r.to : r.from)));
      for (const direction of ["out", "in", "both"]) {
        for (const limit of [1, 7, 100, 1000]) {
          const got = await all(links, "hub", { direction, limit });
          assert.deepEqual(got.map(key), want[direction].map(key), `${direction} limit ${limit}`);
        }
        const cites = await all(links, "hub", { direction, kind: "cites", limit: 13 });
        assert.deepEqual(cites.map(key), want[direction].filter((r) => r.kind === "cites").map(key), `${direction} cites`);
      }
    } finally {
      await store.close();
    }
  });

  test("refuses neighbours once the store is closed", async () => {
    const store = await openStore({ backend: "memory" });
    const links = store.object({ type: "s" }).table(Links);
    await links.count();
    await store.close();
    await rejectsWith(() => links.neighbours("a"), "closed");
  });
});

describe("edges travel as rows", () => {
  async function seeded() {
    const store = await openStore({ backend: "memory" });
    const owner = store.object({ type: "s" });
    const links = owner.table(Links);
    await owner.tx(async (tx) => {
      await tx.put(links, { from: "a", to: "b", kind: "cites" });
      await tx.put(links, { from: "c", to: "a", kind: "replies", at: 4 });
      await tx.put(links, { from: "b", to: "c", kind: "cites" });
    });
    await owner.tx((tx) => tx.deleteEdges(links, "b", { direction: "out" }));
    return { store, links };
  }

  test("a replica applies the puts and the deleteEdges op and holds the same edges", async () => {
    const { store, links } = await seeded();
    const replica = await openReplica({ backend: "memory" });
    try {
      await replica.applyBatch(await store.outbox.read(0, 100));
      const got = [];
      for await (const r of replica.table("s/links").rows()) got.push(r);
      const want = [];
      for await (const r of links.rows()) want.push(r);
      assert.deepEqual(got, want);
      assert.equal(want.length, 2);
      assert.equal(await replica.fingerprint(), await store.fingerprint());
      // neighbours on the replica's table: the store's pages, in every
      // direction, and its cursors work across them.
      const table = replica.table("s/links");
      for (const node of ["a", "b", "c"]) {
        for (const direction of ["out", "in", "both"]) {
          assert.deepEqual(await table.neighbours(node, { direction }), await links.neighbours(node, { direction }), `${node} ${direction}`);
          const first = await table.neighbours(node, { direction, limit: 1 });
          const whole = await links.neighbours(node, { direction });
          assert.deepEqual(first.rows, whole.rows.slice(0, 1));
          if (whole.rows.length > 1) assert.deepEqual((await table.neighbours(node, { direction, after: first.next })).rows, whole.rows.slice(1));
        }
      }
      // A node that is not a string is refused, as on the store.
      await rejectsWith(() => replica.table("s/links").neighbours(5), "invalid/args");
    } finally {
      await replica.close();
      await store.close();
    }
  });

  test("an export imported into a new store answers neighbours as the original does", async () => {
    const { store, links } = await seeded();
    const back = await importStore(store.export(), { backend: "memory" });
    try {
      const again = back.object({ type: "s" }).table(Links);
      for (const direction of ["out", "in", "both"]) {
        for (const node of ["a", "b", "c"]) {
          assert.deepEqual(await again.neighbours(node, { direction }), await links.neighbours(node, { direction }), `${node} ${direction}`);
        }
      }
    } finally {
      await back.close();
      await store.close();
    }
  });
});
