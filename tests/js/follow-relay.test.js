// followRelay against the in-process relay and against fetches that fail:
// a pull that never answers (the relay's, or a token function that never
// settles) ends after `timeout`, and stop() ends the pull under way; a 200
// whose body is not a batch, and a token a header cannot carry, are
// StoreErrors naming them (they were a raw SyntaxError or TypeError, and an
// endless retry).

import assert from "node:assert/strict";
import { test } from "node:test";

import { createRelay, defineTable, followRelay, int, openReplica, openStore, startSync, str } from "../../js/index.js";
import { rejectsWith, throwsWith } from "./helpers.js";

const Items = defineTable("items", { columns: { id: str(), n: int() }, key: ["id"] });
const race = (p, ms) => Promise.race([p.then(() => "settled", (e) => e), new Promise((r) => setTimeout(() => r("pending"), ms))]);

test("a pull that never answers ends after timeout with storage_failed, and stop() ends one under way", { timeout: 30000 }, async () => {
  const replica = await openReplica({ backend: "memory", id: "s1" });
  const never = () => new Promise(() => {});
  for (const options of [{ fetch: never }, { fetch: () => new Response("{}"), token: never }]) {
    const follower = followRelay({ relay: "http://r.test", replica, timeout: 200, ...options });
    const t0 = Date.now();
    await rejectsWith(follower.sync(), "storage_failed", ["had no answer within 200 ms"]);
    assert.ok(Date.now() - t0 >= 150);
    await follower.stop();
  }
  const follower = followRelay({ relay: "http://r.test", replica, fetch: never });  // the default, 30 s
  const syncing = follower.sync();
  assert.equal(await race(syncing, 100), "pending");
  assert.equal(await race(follower.stop(), 2000), "settled", "stop() ended the pull under way");
  await rejectsWith(syncing, "storage_failed", ["was stopped"]);
  throwsWith(() => followRelay({ relay: "http://r.test", replica, timeout: 0 }), "invalid/args", ["timeout"]);
  await replica.close();
});

test("a 200 whose body is not a batch is invalid/args naming it; a token a header cannot carry is invalid/args", async () => {
  const replica = await openReplica({ backend: "memory", id: "s1" });
  for (const [body, says] of [["not json", "not JSON: not json"], ["null", "answer null is not a batch"], ['{"from":0}', 'answer {"from":0} is not a batch']]) {
    const follower = followRelay({ relay: "http://r.test", replica, fetch: async () => new Response(body) });
    await rejectsWith(follower.sync(), "invalid/args", [says]);
  }
  throwsWith(() => followRelay({ relay: "http://r.test", replica, token: "a\nb" }), "invalid/args", ["Authorization header"]);
  const follower = followRelay({ relay: "http://r.test", replica, token: () => "é€", fetch: async () => new Response("{}") });
  await rejectsWith(follower.sync(), "invalid/args", ["Authorization header"]);
  await replica.close();

  // startSync: a string token refused at once; a token function's bad one
  // ends the sync with invalid/args (it was retried as an unreachable relay).
  const store = await openStore({ backend: "memory" });
  const relay = createRelay({ open: () => ({ backend: "memory" }) });
  throwsWith(() => startSync(store, { relay: "http://r.test", fetch: relay.fetch, token: "x\ry" }), "invalid/args", ["Authorization header"]);
  const notes = store.object({ type: "notes" });
  await notes.tx((tx) => tx.put(notes.table(Items), { id: "a", n: 1 }));
  const sync = startSync(store, { relay: "http://r.test", fetch: relay.fetch, token: () => "line\nbreak" });
  await rejectsWith(sync.settled(), "invalid/args", ["Authorization header"]);
  await sync.stop();
  await relay.close();
  await store.close();
});

test("a follower ahead of the relay (its storage reset) gets sync/gap, not an empty batch that says it is caught up", async () => {
  let relay = createRelay({ open: () => ({ backend: "memory" }) });
  const fetch = (request) => relay.fetch(request);
  const store = await openStore({ backend: "memory" });
  const notes = store.object({ type: "notes" });
  for (let i = 0; i < 3; i++) await notes.tx((tx) => tx.put(notes.table(Items), { id: `k${i}`, n: i }));
  const sync = startSync(store, { relay: "http://r.test", fetch });
  assert.equal(await sync.settled(), 4);
  await sync.stop();
  const replica = await openReplica({ backend: "memory", id: store.id });
  const follower = followRelay({ relay: "http://r.test", replica, fetch });
  assert.deepEqual(await follower.sync(), { head: 4, applied: 4 });
  await relay.close();
  relay = createRelay({ open: () => ({ backend: "memory" }) });  // the same relay, its storage gone
  await rejectsWith(follower.sync(), "sync/gap", ["pull after 4", "head is 0"]);
  assert.equal(replica.head, 4);
  await follower.stop();
  await replica.close();
  await relay.close();
  await store.close();
});
