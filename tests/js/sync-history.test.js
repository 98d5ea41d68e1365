// A history checker in the style of Jepsen's Elle for sync: randomized
// schedules of commits, sync restarts, takeovers (a second device pulls the
// session and drives it; the first splits off), power losses (a device
// comes back from an earlier archive of itself, its newer commits gone,
// uploaded or not) and settles, over a fetch
// that drops, loses, duplicates and delays requests and responses, against
// the relay in process. After every step and at the end it checks that
// every relay session's state equals some driver's state at that seq (a
// prefix of a driver's history), that every acknowledged seq is on the
// relay, that the relay holds each seq exactly once, and that no two
// devices ever had pushes accepted under one session's epoch. It prints the
// number of schedules and operations checked.

import assert from "node:assert/strict";
import { test } from "node:test";

import { defineTable, importStore, int, openStore, pullSession, startSync, str } from "../../js/index.js";
import { faultyFetch, memoryRelay, origin, relayInfo, relayRecords } from "./sync-helpers.js";

const Items = defineTable("items", { version: 1, columns: { id: int(), v: str() }, key: ["id"] });
const schedules = Number(process.env.ONESTORE_SYNC_SCHEDULES ?? 6);
const steps = Number(process.env.ONESTORE_SYNC_STEPS ?? 20);

function rng(seed) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
    return x / 2 ** 32;
  };
}

async function runSchedule(seed) {
  const rand = rng(seed * 7919);
  const pick = (a) => a[Math.floor(rand() * a.length)];
  const relay = memoryRelay();
  const states = new Map();    // fingerprint -> Set of seqs some device had it at
  const accepted = new Map();  // `${session} ${epoch}` -> Set of device names
  const devices = [];
  const ops = [];
  let operations = 0;

  const note = async (d) => {
    const fp = await d.store.fingerprint();
    if (!states.has(fp)) states.set(fp, new Set());
    states.get(fp).add(d.store.head);
  };
  // Each device's fetch: faults, and a log of the pushes the relay accepted.
  const fetchFor = (name) => {
    const faulty = faultyFetch(relay.fetch, { seed: seed * 31 + devices.length, drop: 0.1, lose: 0.1, dup: 0.15, delay: 0.3 });
    const f = async (request) => {
      const push = request.url.endsWith("/push") ? await request.clone().json() : null;
      const session = decodeURIComponent(new URL(request.url).pathname.split("/")[2]);
      const response = await faulty(request);
      if (push && response.ok) {
        const key = `${session} ${push.epoch}`;
        if (!accepted.has(key)) accepted.set(key, new Set());
        accepted.get(key).add(name);
      }
      return response;
    };
    f.heal = faulty.heal;
    return f;
  };
  const start = (d) => {
    d.sync = startSync(d.store, { relay: origin, fetch: d.fetch, parallel: 1 + Math.floor(rand() * 4), batch: 1 + Math.floor(rand() * 4), device: d.name });
    d.sync.on("lost", () => { d.lost = true; });
    d.sync.settled().catch(() => {});
  };
  const commit = async (d) => {
    const owner = d.store.object({ type: "app" });
    const items = owner.table(Items);
    await owner.tx(async (tx) => {
      await tx.put(items, { id: Math.floor(rand() * 5), v: `${d.name}:${ops.length}` });
    });
    await note(d);
  };

  // Relay sessions' states are some device's state at that seq; each seq once.
  const check = async (when) => {
    for (const session of new Set(devices.map((d) => d.sync?.session).filter(Boolean))) {
      const records = await relayRecords(relay, session);
      assert.deepEqual(records.map((r) => r.seq), records.map((_, i) => i + 1), `${when}: the relay's seqs of ${session}`);
      const info = await relayInfo(relay, session);
      if (info.head === 0) continue;
      const copy = await pullSession({ relay: `${origin}/sessions/${session}`, fetch: relay.fetch }, { backend: "memory" });
      const fp = await copy.fingerprint();
      assert.ok(states.get(fp)?.has(copy.head), `${when}: the relay's ${session} at seq ${copy.head} is no device's state at that seq (schedule ${seed}: ${ops.join(" ")})`);
      await copy.close();
    }
    for (const d of devices) {
      if (!d.sync) continue;
      const info = await relayInfo(relay, d.sync.session);
      assert.ok(info.head >= d.sync.acked, `${when}: ${d.name} was acked ${d.sync.acked} but the relay's head is ${info.head}`);
    }
    for (const [key, names] of accepted) assert.equal(names.size, 1, `${when}: pushes of ${[...names]} accepted under one epoch (${key})`);
    operations++;
  };

  const first = { name: "d0", store: await openStore({ backend: "memory" }) };
  first.fetch = fetchFor(first.name);
  devices.push(first);
  await note(first);
  // The table's record is a commit of its own (seq 1): a state to know.
  first.store.object({ type: "app" }).table(Items);
  await first.store.commit([]);
  await note(first);
  start(first);

  for (let i = 0; i < steps; i++) {
    const live = devices.filter((d) => !d.closed);
    const d = pick(live);
    const r = rand();
    if (r < 0.5) {
      ops.push(`commit(${d.name})`);
      await commit(d);
    } else if (r < 0.7) {
      ops.push(`restart(${d.name})`);
      await d.sync.stop();
      start(d);
    } else if (r < 0.78) {
      // A power loss: the device comes back as it was at its last snapshot
      // (an archive of the store), its newer commits gone, uploaded or not.
      if (d.snapshot) {
        ops.push(`crash(${d.name})`);
        await d.sync.stop();
        await d.store.close();
        d.store = await importStore(d.snapshot, { backend: "memory" });
        d.lost = false;
        start(d);
      }
      ops.push(`snapshot(${d.name})`);
      d.snapshot = new Uint8Array(await new Response(d.store.export()).arrayBuffer());
    } else if (r < 0.86 && devices.length < 4) {
      // Another device pulls the session the driver of `d` syncs and takes it over.
      const session = d.sync.session;
      ops.push(`takeover(${session.slice(0, 4)})`);
      const name = `d${devices.length}`;
      const fetch = fetchFor(name);
      fetch.heal();  // the download itself is not under test here
      const store = await pullSession({ relay: `${origin}/sessions/${session}`, fetch: relay.fetch }, { backend: "memory" });
      const n = { name, store, fetch };
      devices.push(n);
      await note(n);
      start(n);
    } else {
      ops.push(`settle(${d.name})`);
      if (!d.lost) {
        await Promise.race([d.sync.settled().catch(() => {}), new Promise((res) => setTimeout(res, 200))]);
      }
    }
    operations++;
    await check(`after step ${i} (${ops.at(-1)})`);
  }
  // Heal, settle everyone that still drives, check once more.
  for (const d of devices) d.fetch.heal();
  for (const d of devices) {
    if (d.lost || d.sync.state === "lost") {
      // A split-off store syncs its own session: its whole history arrives.
      await d.sync.stop();
      start(d);
    }
  }
  for (const d of devices) {
    if (d.sync.state !== "lost") {
      const acked = await d.sync.settled().catch(() => null);
      if (acked !== null) assert.equal(acked, d.store.head, `${d.name} settled at ${acked}, its head is ${d.store.head}`);
    }
  }
  await check("at the end");
  for (const d of devices) {
    await d.sync.stop();
    await d.store.close();
  }
  await relay.close();
  return { operations, ops };
}

test("randomized schedules of commits, restarts and takeovers over a faulty network keep every relay session a prefix of some driver's history", async () => {
  let operations = 0;
  const kinds = {};
  const only = process.env.ONESTORE_SYNC_SEED ? Number(process.env.ONESTORE_SYNC_SEED) : 0;
  for (let s = only || 1; s <= (only || schedules); s++) {
    const r = await runSchedule(s);
    operations += r.operations;
    for (const op of r.ops) { const k = op.slice(0, op.indexOf("(")); kinds[k] = (kinds[k] ?? 0) + 1; }
  }
  console.log(`sync history: ${only ? 1 : schedules} schedules, ${operations} operations and checks (${Object.entries(kinds).map(([k, n]) => `${n} ${k}`).join(", ")})`);
  assert.ok(operations > (only ? 1 : schedules) * steps);
});
