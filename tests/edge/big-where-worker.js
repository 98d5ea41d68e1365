// The Worker of tests/edge/big-where.test.js: wheres of many terms on a
// durable store, whose host SQLite (a Durable Object's) refuses an
// expression tree deeper than 100. POST /<object>/<op> with a JSON body
// runs <op> on the Durable Object named <object> (class TestSession, SQLite
// storage) and answers { ok, result } or { ok: false, code, message }.

import * as api from "../../js/workerd.js";
import { objectRouter, runOp } from "./object-ops.js";
import { wheres } from "./big-wheres.js";

const { defineTable, int, openStore, query, str } = api;

const Items = defineTable("items", { columns: { id: int(), n: int().optional(), name: str() }, key: ["id"] });

export class TestSession {
  constructor(ctx) {
    this.ctx = ctx;
  }

  // `rows` rows, then the ids each where of `terms` terms matches (the
  // wheres of tests/edge/big-wheres.js), read with rows() and count().
  async op_wheres({ rows, terms }) {
    const store = await openStore({ backend: "durable", storage: this.ctx.storage });
    try {
      const owner = store.object({ type: "t" });
      const items = owner.table(Items);
      await owner.tx(async (tx) => {
        for (let i = 0; i < rows; i++) await tx.put(items, { id: i, n: i % 13 === 0 ? null : i * 3, name: `name-${i % 50}` });
      });
      const out = {};
      for (const [label, where] of Object.entries(wheres(api, terms))) {
        const q = query(Items).where(where);
        const ids = [];
        for await (const r of items.rows(q)) ids.push(r.id);
        out[label] = { ids, count: await items.count(q) };
      }
      return out;
    } finally {
      await store.close();
    }
  }

  async fetch(request) {
    return runOp(this, request);
  }
}

export default objectRouter;
