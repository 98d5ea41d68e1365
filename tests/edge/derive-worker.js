// The Worker of tests/edge/derive.test.js: held derives over pages and alls
// read by a column that is not the key, on a durable store, through random
// commits. A durable store's pages of a table with no bool or vector
// column stay with the host (SqliteBackend::HoldNextPage); the package's
// wrapper names the row after such a page, so the derives keep windows and
// the flush patches their pages (js/derive.js, "pages patched in place").
// POST /<object>/<op> with a JSON body runs <op> on the Durable Object named
// <object> and answers { ok, result } or { ok: false, code, message }.

import * as api from "../../js/workerd.js";
import { objectRouter, runOp } from "./object-ops.js";

const { and, defineTable, eq, gte, int, lt, ne, openStore, query, str } = api;

const Items = defineTable("items", {
  columns: { id: str(), grp: str(), n: int({ default: 0 }), tag: str().optional() },
  key: ["id"],
  indexes: { byN: ["n"], byGrp: ["grp"] },
});

const tick = () => new Promise((r) => setTimeout(r, 0));

export class TestSession {
  constructor(ctx) {
    this.ctx = ctx;
  }

  // `commits` random commits of puts, updates and deletes by key (and now
  // and then an updateWhere); after each, every held derive against a fresh
  // read. Answers the mismatches and how many fresh first pages had a next.
  async op_random({ commits, seed }) {
    const store = await openStore({ backend: "durable", storage: this.ctx.storage });
    try {
      const owner = store.object({ type: "t" });
      const items = owner.table(Items);
      await items.count();
      const pages = [
        [query(Items).where((r) => gte(r.n, 3)).orderBy((r) => r.n, "desc"), 3],
        [query(Items).where((r) => eq(r.grp, "a")), 2],
        [query(Items).where((r) => ne(r.grp, "b")).orderBy((r) => r.grp).orderBy((r) => r.n), 4],
        [query(Items).where((r) => and(gte(r.n, 0), lt(r.n, 6))).orderBy((r) => r.tag, "desc"), 2],
        [query(Items).orderBy((r) => r.n), 100],
      ];
      const every = query(Items).where((r) => eq(r.tag, "x")).orderBy((r) => r.n);
      const values = {};
      pages.forEach(([q, limit], i) => store.derive(`p${i}`, (read) => read.page(items, q, limit)).hold(({ value, error }) => { values[`p${i}`] = error ? `error: ${error.message}` : value; }));
      store.derive("all", (read) => read.all(items, every)).hold(({ value, error }) => { values.all = error ? `error: ${error.message}` : value; });
      let s = seed;
      const rand = (n) => { s = (s * 1103515245 + 12345) % 2147483648; return s % n; };
      const grps = ["a", "b", "c"];
      const mismatches = [];
      let withNext = 0;
      for (let i = 0; i < commits; i++) {
        await owner.tx(async (t) => {
          for (let k = rand(3) + 1; k > 0; k--) {
            const id = `k${rand(25)}`;
            const pick = rand(20);
            if (pick < 11) await t.put(items, { id, grp: grps[rand(3)], n: rand(10), ...(rand(2) ? { tag: rand(2) ? "x" : "y" } : {}) });
            else if (pick < 14) await t.delete(items, [id]);
            else if (pick < 19) {
              if (await t.get(items, [id])) await t.update(items, [id], [{ n: rand(10) }, { grp: grps[rand(3)] }, { tag: null }][rand(3)]);
            } else await t.updateWhere(items, (r) => eq(r.grp, grps[rand(3)]), { n: i % 10 });
          }
        });
        await tick();
        for (let q = 0; q < pages.length; q++) {
          const fresh = await items.page(...pages[q]);
          if (fresh.next) withNext++;
          if (JSON.stringify(values[`p${q}`]) !== JSON.stringify(fresh)) mismatches.push({ commit: i, derive: `p${q}`, held: values[`p${q}`], fresh });
        }
        const all = [];
        for await (const r of items.rows(every)) all.push(r);
        if (JSON.stringify(values.all) !== JSON.stringify(all)) mismatches.push({ commit: i, derive: "all", held: values.all, fresh: all });
      }
      return { mismatches: mismatches.slice(0, 3), count: mismatches.length, withNext };
    } finally {
      await store.close();
    }
  }

  async fetch(request) {
    return runOp(this, request);
  }
}

export default objectRouter;
