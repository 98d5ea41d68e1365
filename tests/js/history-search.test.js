// Checks that a view of store.at(seq) answers nearest and neighbours as the
// live store answered them at that seq, on memory and on a sqlite file
// (tests/history/search-scenario.js: a history of vector rows and edges,
// the live answers recorded after every commit, then every seq's view asked
// the same questions, paging included; tests/edge/history-search.test.js
// runs it on a durable store); and that these calls are refused as the live
// ones are (bad arguments, a closed view).
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, test } from "node:test";

import * as api from "../../js/index.js";
import { runSearchHistory, searchTables, vec } from "../history/search-scenario.js";
import { rejectsWith, tempDir } from "./helpers.js";

const { openStore } = api;
const { Docs, Links } = searchTables(api);

let dir;
let counter = 0;
const backends = [
  ["memory", () => ({ backend: "memory" })],
  ["a sqlite file", () => ({ backend: "sqlite", path: join(dir ??= tempDir("onestore-history-search-"), `h${counter++}.sqlite`) })],
];

for (const [name, options] of backends) {
  describe(`store.at(seq) search on ${name}`, () => {
    test("a view at every seq answers nearest and neighbours as the live store did at that seq", async () => {
      const store = await openStore(options());
      const { live, views } = await runSearchHistory(api, store);
      await store.close();
      assert.ok(live.length > 15);
      assert.notDeepEqual(live[3].answers, live.at(-1).answers, "the answers change along the history");
      for (const [i, { seq, answers }] of live.entries()) {
        assert.equal(views[i].seq, seq);
        assert.deepEqual(views[i].byHandle, answers, `by the store's handles at seq ${seq}`);
        assert.deepEqual(views[i].byName, answers, `by definition and stored name at seq ${seq}`);
      }
    });

    test("a view refuses nearest and neighbours as the live store does, and after it is closed", async () => {
      const store = await openStore(options());
      const owner = store.object({ type: "notebook" });
      const docs = owner.table(Docs);
      const links = owner.table(Links);
      await owner.tx((tx) => tx.put(docs, { id: "d1", kind: "msg", embedding: vec(1) }));
      await owner.tx((tx) => tx.put(links, { from: "a", to: "b", kind: "cites" }));
      const view = await store.at(store.head);
      const vdocs = view.table(docs);
      const vlinks = view.table(Links);
      for (const [t, live] of [[vdocs, docs]]) {
        for (const args of [[(e) => e.embedding, [1, 2, 3], 1], [(e) => e.embedding, vec(1), 0], [(e) => e.kind, vec(1), 1]]) {
          const want = await rejectsWith(() => live.nearest(...args), "invalid/args");
          const got = await rejectsWith(() => t.nearest(...args), "invalid/args");
          assert.equal(got.message, want.message);
        }
      }
      for (const opts of [{ kind: "likes" }, { direction: "up" }, { limit: 0 }, { after: "n1.nope" }]) {
        const want = await rejectsWith(() => links.neighbours("a", opts), opts.after ? "invalid/cursor" : "invalid/args");
        const got = await rejectsWith(() => vlinks.neighbours("a", opts), want.code);
        assert.equal(got.message, want.message);
      }
      // A table that is not made of edges has no neighbours to read.
      await rejectsWith(() => vdocs.neighbours("a"), "invalid/args", ["from"]);
      await view.close();
      await rejectsWith(() => vdocs.nearest((e) => e.embedding, vec(1), 1), "closed");
      await rejectsWith(() => vlinks.neighbours("a"), "closed");
      await store.close();
    });
  });
}
