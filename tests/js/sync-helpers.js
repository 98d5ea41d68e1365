// Helpers of the sync tests: a small in-process relay that speaks the relay
// protocol of docs/formats.md (a replica per session on memory, the lease,
// blobs in a Map) through a fetch(url, init) function, and a fault-injecting
// wrapper of any fetch. The real relay (createRelay, on the relay branch)
// replaces the first where available; the tests use only the protocol.

import { createHash } from "node:crypto";

import { openReplica } from "../../js/index.js";

const json = (status, body) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
const error = (status, code, message, extra = {}) => json(status, { error: { code, message, ...extra } });

/**
 * An in-process relay: `{ fetch, sessions }`; `sessions` maps a session id
 * to `{ replica, epoch, driver, blobs, pushes }` (pushes: every accepted
 * push as { epoch, from, to }, for the history checks).
 *
 * @example const relay = protocolRelay(); const sync = startSync(store, { relay: "http://relay.test", fetch: relay.fetch });
 */
export function protocolRelay({ ttl = 60000 } = {}) {
  const sessions = new Map();
  async function session(id) {
    let s = sessions.get(id);
    if (!s) {
      s = { replica: null, epoch: 0, driver: null, expires: 0, blobs: new Map(), pushes: [] };
      sessions.set(id, s);
      s.replica = openReplica({ backend: "memory" });
    }
    if (s.replica instanceof Promise) s.replica = await s.replica;
    return s;
  }
  // One request at a time per relay, like a Durable Object's input gate.
  let line = Promise.resolve();
  async function handle(url, init = {}) {
    const u = new URL(url);
    const m = /^\/sessions\/([^/]+)(\/[^?]*)?$/.exec(u.pathname);
    if (!m) return error(404, "not_found", `no route ${u.pathname}`);
    const s = await session(decodeURIComponent(m[1]));
    const rest = m[2] ?? "";
    const method = init.method ?? "GET";
    const body = async () => JSON.parse(typeof init.body === "string" ? init.body : new TextDecoder().decode(init.body));
    if (rest === "" && method === "GET") return json(200, { session: m[1], head: s.replica.head, epoch: s.epoch, driver: s.driver });
    if (rest === "/lease") {
      const b = await body();
      if (b.op === "take") {
        s.epoch++;
        s.driver = b.device;
        s.expires = Date.now() + ttl;
        return json(200, { epoch: s.epoch, head: s.replica.head, expires: s.expires });
      }
      if (b.epoch !== s.epoch) return error(409, "fenced", `epoch ${b.epoch} is not the lease's (${s.epoch})`);
      if (b.op === "heartbeat") { s.expires = Date.now() + ttl; return json(200, { epoch: s.epoch, expires: s.expires }); }
      if (b.op === "release") { s.driver = null; return json(200, { released: true }); }
      return error(400, "invalid/args", "unknown op");
    }
    if (rest === "/push") {
      const { epoch, batch } = await body();
      if (epoch !== s.epoch) return error(409, "fenced", `epoch ${epoch} is not the lease's (${s.epoch})`);
      const head = s.replica.head;
      if (batch.to <= head) return json(200, { acked: batch.to, head });
      if (batch.from > head) return error(409, "sync/gap", `the batch starts at ${batch.from}, after the head ${head}`, { head });
      for (const c of batch.commits) {
        for (const h of JSON.stringify(c).match(/[0-9a-f]{64}/g) ?? []) {
          if (h.length === 64 && !s.blobs.has(h) && c.seq > head && blobNamed(c, h)) return error(409, "not_found", `blob ${h} is missing`);
        }
      }
      try {
        await s.replica.applyBatch(batch);
      } catch (e) {
        return error(409, e.code ?? "invalid/args", e.message);
      }
      s.pushes.push({ epoch, from: batch.from, to: batch.to });
      return json(200, { acked: batch.to, head: s.replica.head });
    }
    if (rest === "/pull") {
      const after = Number(u.searchParams.get("after"));
      const limit = Number(u.searchParams.get("limit") ?? 100);
      return json(200, await s.replica.outbox.read(after, limit));
    }
    const b = /^\/blobs\/([0-9a-f]{64})$/.exec(rest);
    if (b) {
      const hash = b[1];
      if (method === "PUT") {
        const bytes = new Uint8Array(init.body);
        if (createHash("sha256").update(bytes).digest("hex") !== hash) return error(400, "invalid/args", "hash differs");
        const had = s.blobs.has(hash);
        s.blobs.set(hash, bytes);
        return new Response(null, { status: had ? 200 : 201 });
      }
      if (!s.blobs.has(hash)) return error(404, "not_found", `no blob ${hash}`);
      if (method === "HEAD") return new Response(null, { status: 200 });
      return new Response(s.blobs.get(hash), { status: 200 });
    }
    return error(404, "not_found", `no route ${method} ${rest}`);
  }
  return {
    sessions,
    session,
    fetch(url, init) {
      const p = line.then(() => handle(String(url), init));
      line = p.catch(() => {});
      return p;
    },
  };
}

// A hash that is a whole string value of the record (what a row names).
function blobNamed(record, hash) {
  let found = false;
  const walk = (v) => {
    if (v === hash) found = true;
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === "object") Object.values(v).forEach(walk);
  };
  walk(record);
  return found;
}

/**
 * A fetch that, by a seeded random choice per request, drops the request
 * (a network error, nothing reaches the relay), drops the response (the
 * relay applied it, the caller gets a network error), delays it, or sends
 * it twice. `log` counts what happened.
 *
 * @example const faulty = faultyFetch(relay.fetch, { seed: 7, drop: 0.2, lose: 0.2, dup: 0.2 });
 */
export function faultyFetch(fetch, { seed = 1, drop = 0.15, lose = 0.15, dup = 0.15, delay = 0.3 } = {}) {
  let x = seed >>> 0 || 1;
  const rand = () => {
    x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
    return x / 2 ** 32;
  };
  const log = { requests: 0, dropped: 0, lost: 0, duplicated: 0, delayed: 0 };
  let off = false;
  const wrapped = async (url, init) => {
    log.requests++;
    if (off) return fetch(url, init);
    const r = rand();
    if (rand() < delay) { log.delayed++; await new Promise((res) => setTimeout(res, Math.floor(rand() * 20))); }
    if (r < drop) { log.dropped++; throw new TypeError("fetch failed (dropped request)"); }
    if (r < drop + dup) { log.duplicated++; fetch(url, init).catch(() => {}); }
    const res = await fetch(url, init);
    if (r >= drop + dup && r < drop + dup + lose) { log.lost++; throw new TypeError("fetch failed (lost response)"); }
    return res;
  };
  wrapped.log = log;
  wrapped.heal = () => { off = true; };
  return wrapped;
}
