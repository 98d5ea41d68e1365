// Helpers of the sync tests: the relay (createRelay) in process, read
// through its own protocol (a session's info, its records, its content),
// and a fault-injecting wrapper of any fetch.

import { createRelay, pullSession } from "../../js/index.js";

export const origin = "http://relay.test";

/** A relay on memory replicas. */
export const memoryRelay = (options = {}) => createRelay({ open: () => ({ backend: "memory" }), ...options });

async function get(fetch, path) {
  const r = await fetch(new Request(origin + path));
  if (!r.ok) throw new Error(`GET ${path}: ${r.status} ${await r.text()}`);
  return r.json();
}

/** The relay's `{ session, head, epoch, driver }` of a session. */
export const relayInfo = (relay, session) => get(relay.fetch, `/sessions/${session}`);

/** Every record the relay holds for a session, in order. */
export async function relayRecords(relay, session) {
  const out = [];
  for (let after = 0; ;) {
    const b = await get(relay.fetch, `/sessions/${session}/pull?after=${after}&limit=1000`);
    if (b.commits.length === 0) return out;
    out.push(...b.commits);
    after = b.to;
  }
}

/** The fingerprint of the relay's copy of a session (pulled into memory). */
export async function relayFingerprint(relay, session) {
  const copy = await pullSession({ relay: `${origin}/sessions/${session}`, fetch: relay.fetch }, { backend: "memory" });
  try {
    return await copy.fingerprint();
  } finally {
    await copy.close();
  }
}

/** Whether the relay has a blob of a session. */
export async function relayHasBlob(relay, session, hash) {
  return (await relay.fetch(new Request(`${origin}/sessions/${session}/blobs/${hash}`, { method: "HEAD" }))).status === 200;
}

/**
 * A fetch that, by a seeded random choice per request, drops the request
 * (a network error; nothing reaches the relay), loses the response (the
 * relay answered; the caller gets a network error), sends it twice, or
 * delays it. `log` counts what happened; `heal()` stops the faults.
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
  const wrapped = async (request) => {
    log.requests++;
    if (off) return fetch(request);
    const r = rand();
    if (rand() < delay) {
      log.delayed++;
      await new Promise((res) => setTimeout(res, Math.floor(rand() * 20)));
    }
    if (r < drop) {
      log.dropped++;
      throw new TypeError("fetch failed (dropped request)");
    }
    if (r < drop + dup) {
      log.duplicated++;
      const twin = request.clone();
      setTimeout(() => fetch(twin).catch(() => {}), Math.floor(rand() * 10));
    }
    const res = await fetch(request);
    if (r >= drop + dup && r < drop + dup + lose) {
      log.lost++;
      throw new TypeError("fetch failed (lost response)");
    }
    return res;
  };
  wrapped.log = log;
  wrapped.heal = () => { off = true; };
  return wrapped;
}
