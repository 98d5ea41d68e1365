// store.log and store.at(seq) on the durable backend inside real workerd:
// the history of tests/history/scenario.js on a Durable Object's SQLite,
// where a view at every seq reads what the store read then, the log answers
// and filters each commit, a trimmed seq is not_found; and the same states
// and fingerprints as Node's memory store.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import * as api from "../../js/index.js";
import { runHistory } from "../history/scenario.js";
import { checkHistory, checkTrim } from "../history/checks.js";
import { startWorkerd } from "./harness.js";

let workerd;
before(async () => { workerd = await startWorkerd(); });
after(async () => { await workerd?.dispose(); });

test("a durable store's views at every seq, its log and a trim answer as Node's memory store does", async () => {
  const node = await api.openStore({ backend: "memory" });
  const expected = await runHistory(api, node);
  await node.close();
  const { run, trim } = await workerd.call("history", "history", {});
  checkHistory(run);
  checkTrim(trim);
  assert.deepEqual(run.live, expected.live);
  assert.deepEqual(run.fingerprints, expected.fingerprints);
});
