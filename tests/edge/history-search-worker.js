// The Worker of tests/edge/history-search.test.js: the search history of
// tests/history/search-scenario.js on a durable store (its views of
// store.at(seq) answering nearest and neighbours). POST /<object>/<op> with
// a JSON body runs <op> on the Durable Object named <object> (class
// TestSession, SQLite storage) and answers { ok, result } or { ok: false,
// code, message }.

import * as api from "../../js/workerd.js";
import { objectRouter, runOp } from "./object-ops.js";
import { runSearchHistory, searchTables, vec } from "../history/search-scenario.js";

export class TestSession {
  constructor(ctx) {
    this.ctx = ctx;
  }

  // The history on a fresh store in this object's SQLite.
  async op_history() {
    const store = await api.openStore({ backend: "durable", storage: this.ctx.storage });
    try {
      return await runSearchHistory(api, store);
    } finally {
      await store.close();
    }
  }

  // A view's nearest and neighbours refused as the live ones: the codes and
  // messages of each, and the codes after the view is closed.
  async op_refusals() {
    const { Docs, Links } = searchTables(api);
    const store = await api.openStore({ backend: "durable", storage: this.ctx.storage });
    const codeOf = async (fn) => {
      try {
        await fn();
        return "none";
      } catch (e) {
        return `${e.code}: ${e.message}`;
      }
    };
    try {
      const owner = store.object({ type: "notebook" });
      const docs = owner.table(Docs);
      const links = owner.table(Links);
      await owner.tx((tx) => tx.put(docs, { id: "d1", kind: "msg", embedding: vec(1) }));
      await owner.tx((tx) => tx.put(links, { from: "a", to: "b", kind: "cites" }));
      const view = await store.at(store.head);
      const vdocs = view.table(docs);
      const vlinks = view.table(Links);
      const pairs = [
        [() => docs.nearest((e) => e.embedding, [1, 2, 3], 1), () => vdocs.nearest((e) => e.embedding, [1, 2, 3], 1)],
        [() => links.neighbours("a", { kind: "likes" }), () => vlinks.neighbours("a", { kind: "likes" })],
      ];
      const out = [];
      for (const [live, past] of pairs) out.push([await codeOf(live), await codeOf(past)]);
      await view.close();
      out.push(await codeOf(() => vdocs.nearest((e) => e.embedding, vec(1), 1)));
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
