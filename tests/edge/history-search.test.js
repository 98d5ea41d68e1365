// store.at(seq)'s nearest and neighbours on the durable backend inside real
// workerd: the search history of tests/history/search-scenario.js on a
// Durable Object's SQLite, where a view at every seq answers as the live
// store did then and as Node's memory store answers the same history; and
// the view refuses bad arguments with the live store's codes and messages,
// and every call once closed.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import * as api from "../../js/index.js";
import { runSearchHistory } from "../history/search-scenario.js";
import { startWorkerd } from "./harness.js";

let workerd;
before(async () => { workerd = await startWorkerd({ script: "history-search-worker.js" }); });
after(async () => { await workerd?.dispose(); });

test("a durable store's views at every seq answer nearest and neighbours as the live store and Node's memory store do", async () => {
  const node = await api.openStore({ backend: "memory" });
  const expected = await runSearchHistory(api, node);
  await node.close();
  const { live, views } = await workerd.call("search", "history", {});
  assert.deepEqual(live, expected.live);
  for (const [i, { seq, answers }] of live.entries()) {
    assert.deepEqual(views[i].byHandle, answers, `by the store's handles at seq ${seq}`);
    assert.deepEqual(views[i].byName, answers, `by definition and stored name at seq ${seq}`);
  }
});

test("a durable store's view refuses nearest and neighbours as the live store does, and after it is closed", async () => {
  const [[liveNearest, pastNearest], [liveKind, pastKind], closed] = await workerd.call("refusals", "refusals", {});
  assert.match(liveNearest, /^invalid\/args: /);
  assert.equal(pastNearest, liveNearest);
  assert.match(liveKind, /^invalid\/args: .*likes/);
  assert.equal(pastKind, liveKind);
  assert.match(closed, /^closed: /);
});
