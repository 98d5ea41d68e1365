// The Worker of tests/edge/sync.test.js's Durable Object driver: a
// TestDriver object opens a durable store and drives its session with
// startSync through relayFetch to SessionRelay objects of the same Worker.
// POST /driver/<name>/<op> runs <op> on the driver object <name>; any other
// path is the relay's.

import { SessionRelay, defineTable, int, openStore, relayFetch, startSync, str } from "../../js/workerd.js";

const Items = defineTable("items", { version: 1, columns: { id: int(), text: str(), file: str({ default: "" }) }, key: ["id"] });

export class TestRelay extends SessionRelay {
  relayOptions() {
    return { leaseTtl: 3_600_000 };
  }
}

export class TestDriver {
  constructor(ctx, env) {
    this.ctx = ctx;
    this.env = env;
  }

  async fetch(request) {
    const op = new URL(request.url).pathname.split("/").pop();
    const args = await request.json();
    try {
      return Response.json({ ok: true, result: await this[op](args) });
    } catch (e) {
      return Response.json({ ok: false, code: e?.code, message: String(e?.message ?? e) });
    }
  }

  async open() {
    this.store ??= await openStore({ backend: "durable", storage: this.ctx.storage });
    return { id: this.store.id, head: this.store.head };
  }

  async commit({ from, n, blob }) {
    const owner = this.store.object({ type: "notes" });
    const items = owner.table(Items);
    const file = blob ? await this.store.blobs.put(new TextEncoder().encode(blob)) : "";
    for (let i = from; i < from + n; i++) await owner.tx(async (tx) => { await tx.put(items, { id: i, text: `row ${i}`, file }); });
    return { head: this.store.head, file };
  }

  async sync() {
    this.sync_ ??= startSync(this.store, {
      relay: "http://relay.internal",
      fetch: (request) => relayFetch(request, this.env),
      batch: 4,
      parallel: 2,
    });
    const acked = await this.sync_.settled();
    return { acked, state: this.sync_.state, head: this.store.head, fingerprint: await this.store.fingerprint() };
  }

  async stop() {
    await this.sync_?.stop();
    this.sync_ = null;
    return true;
  }
}

export default {
  fetch(request, env) {
    const url = new URL(request.url);
    const m = /^\/driver\/([^/]+)\//.exec(url.pathname);
    if (m) return env.DRIVERS.get(env.DRIVERS.idFromName(m[1])).fetch(request);
    return relayFetch(request, env);
  },
};
