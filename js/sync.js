// The sync driver and pullSession (design.md, "Sync: a driver, a relay,
// replicas"; the relay protocol in docs/formats.md, "The relay protocol").
//
// startSync(store, { relay }) makes the store its session's driver: it takes
// the relay's lease, then uploads the outbox in batches, several in flight,
// each resubmitted until acknowledged, and trims the outbox only up to what
// the relay acknowledged. Before each batch it uploads the blobs not yet
// uploaded. When its lease is taken over (a push or heartbeat answers
// `fenced`), the store splits off as a separate session (Store::Split): a new
// id, its origin { id, seq } recorded. pullSession downloads a session into
// a new local store (a replica promoted to a driver's store, Store::Promote).
//
// Runtime-neutral: it talks to the relay only through `fetch` (an option, so
// tests pass an in-process relay or a fault-injecting wrapper).

import { ErrorCodes, invalidArgs, isErrorCode, refuseUnknownOptions, StoreError, unwrap } from "./errors.js";
import { MAX_BATCH_DEPTH, encodeJson, parseJsonExact } from "./encode.js";
import { headerToken, relayToken, withDeadline } from "./follow-relay.js";
import { describe } from "./schema.js";
import { makeStore, openShelf, storeInternals, viewCoreOf } from "./store.js";
import { snapshotOptions } from "./snapshots.js";
import { openCore } from "./open.js";
import { makeBlobs } from "./blobs.js";

const STATES = ["connecting", "driving", "offline", "lost"];
const retryMin = 50;     // ms, the first backoff while offline
const retryMax = 5000;   // ms, the longest
const pullLimit = 500;   // commits per pull
const RELAY_TIMEOUT_MS = 30000;  // a call without an answer by then: offline

/** The relay's session URL and its base, from the `relay` option. */
function parseRelay(relay, id, what) {
  if (typeof relay !== "string" || relay === "") {
    throw invalidArgs(`${what}: relay must be the relay's URL ("https://edge.example" or ".../sessions/<id>"), got ${describe(relay)}`);
  }
  let url;
  try { url = new URL(relay); } catch { /* below */ }
  if (!/^https?:$/.test(url?.protocol)) throw invalidArgs(`${what}: relay is not an http(s) URL: ${describe(relay)}`);
  const path = url.pathname.replace(/\/+$/, "");
  const m = /^(.*)\/sessions\/([^/]+)$/.exec(path);
  const basePath = m ? m[1] : path;
  const session = m ? decodeURIComponent(m[2]) : id;
  const base = `${url.origin}${basePath}`;
  return { base, session };
}

function sessionUrl(base, session) {
  return `${base}/sessions/${encodeURIComponent(session)}`;
}

/**
 * The relay as a few calls over `fetch`. Each rejects with a StoreError:
 * the relay's own code for its 4xx answers (fenced, sync/gap, not_found,
 * ...), with `status`, `body` and `offline: false`; a network failure or a
 * 5xx is `offline: true` (retry later).
 */
function relayClient({ fetch, token, timeout = RELAY_TIMEOUT_MS }, base) {
  // The calls in flight, each with its abort: stopAll() ends them (a
  // sync's stop), and each ends by itself after `timeout` ms without an
  // answer (a relay that accepts a connection and never answers held the
  // store's commits, stop() and close() for good).
  const active = new Set();
  function call(session, method, path, body, options) {
    return withDeadline((signal) => callOnce(session, method, path, body, options, signal), timeout, active, (why) => {
      const err = new StoreError(ErrorCodes.StorageFailed, `relay: ${method} ${path || "/"} ${why}`);
      err.offline = true;
      return err;
    });
  }
  async function callOnce(session, method, path, body, { raw = false, binary = null } = {}, signal) {
    const headers = {};
    const tok = await relayToken(token, `relay: ${method} ${path || "/"}`);
    if (tok) headers.authorization = `Bearer ${tok}`;
    let payload;
    if (binary) {
      payload = binary;
      headers["content-type"] = "application/octet-stream";
    } else if (body !== undefined) {
      // A push wraps its batch one level down ({ epoch, batch }): as deep
      // as a batch may nest, plus that level (every value a store took
      // replicates; before, a json value nested 994 levels stopped the sync).
      payload = encodeJson(body, "relay request", MAX_BATCH_DEPTH + 1);
      headers["content-type"] = "application/json";
    }
    let res;
    try {
      res = await fetch(new Request(`${sessionUrl(base, session)}${path}`, { method, headers, body: payload, signal }));
    } catch (e) {
      // No code fits a network failure better: the call's outcome is unknown.
      const err = new StoreError(ErrorCodes.StorageFailed, `relay: ${method} ${path || "/"} could not reach the relay: ${e?.message ?? e}`, { cause: e });
      err.offline = true;
      throw err;
    }
    if (res === null || typeof res !== "object" || typeof res.ok !== "boolean") {
      const err = new StoreError(ErrorCodes.StorageFailed, `relay: ${method} ${path || "/"}: fetch answered ${describe(res)}, not a Response`);
      err.offline = true;
      throw err;
    }
    if (res.ok) {
      if (method === "HEAD" || method === "PUT") return { status: res.status };
      if (raw) return new Uint8Array(await res.arrayBuffer());
      const text = await res.text();
      try {
        return parseJsonExact(text);
      } catch (e) {
        const err = new StoreError(ErrorCodes.InvalidArgs, `relay: ${method} ${path || "/"} answered ${res.status} with a body that is not JSON: ${text.slice(0, 80)}`, { cause: e });
        err.offline = true;  // a proxy's page, say: try again later
        throw err;
      }
    }
    let body2 = null;
    try { body2 = JSON.parse(await res.text()); } catch { /* no JSON body */ }
    const e = body2?.error;
    // Without the relay's own error body (a proxy's page): a 5xx is the
    // server's failure (retried), a 404 a session it does not have.
    const code = isErrorCode(e?.code) ? e.code
      : res.status >= 500 ? ErrorCodes.StorageFailed : res.status === 404 ? ErrorCodes.NotFound : ErrorCodes.InvalidArgs;
    const err = new StoreError(code, `relay: ${method} ${path || "/"} answered ${res.status}: ${typeof e?.message === "string" ? e.message : res.statusText ?? ""}`);
    err.status = res.status;
    err.body = e ?? null;
    err.offline = res.status >= 500 || res.status === 408 || res.status === 429;
    throw err;
  }
  return {
    /** Ends every call in flight (each rejects, offline). */
    stopAll() {
      for (const ac of active) ac.abort();
    },
    info: (s) => call(s, "GET", ""),
    lease: (s, body) => call(s, "POST", "/lease", body),
    push: (s, epoch, batch) => call(s, "POST", "/push", { epoch, batch }),
    pull: (s, after, limit) => call(s, "GET", `/pull?after=${after}&limit=${limit}`),
    hasBlob: async (s, hash) => {
      try {
        await call(s, "HEAD", `/blobs/${hash}`);
        return true;
      } catch (e) {
        if (e.status === 404) return false;
        throw e;
      }
    },
    putBlob: (s, hash, bytes) => call(s, "PUT", `/blobs/${hash}`, undefined, { binary: bytes }),
    getBlob: (s, hash) => call(s, "GET", `/blobs/${hash}`, undefined, { raw: true }),
    listBlobs: (s, after) => call(s, "GET", `/blobs?limit=1000${after ? `&after=${after}` : ""}`),
  };
}

function checkFetch(fetch, what) {
  const f = fetch ?? globalThis.fetch;
  if (typeof f !== "function") throw invalidArgs(`${what}: fetch must be a function like globalThis.fetch, got ${describe(fetch)}`);
  return f;
}

const SYNC_OPTIONS = ["relay", "parallel", "batch", "fetch", "token", "device", "timeout"];

function checkTimeout(timeout, what) {
  if (!Number.isSafeInteger(timeout) || timeout < 1 || timeout > 3600000) {
    throw invalidArgs(`${what}: timeout must be milliseconds from 1 to 3600000, got ${describe(timeout)}`);
  }
}

function checkToken(token, what) {
  if (token !== undefined && typeof token !== "string" && typeof token !== "function") {
    throw invalidArgs(`${what}: token must be a string or a function returning one, got ${describe(token)}`);
  }
  if (typeof token === "string") headerToken(token, what);
}

/** A record as comparable text (the same parse on both sides). */
const recordText = (r) => encodeJson(r, "record");

const sleep = (ms, signal) => new Promise((resolve) => {
  const t = setTimeout(resolve, ms);
  signal.push(() => { clearTimeout(t); resolve(); });
});

/**
 * Makes `store` its session's driver on the relay (see the file comment).
 * Options: `relay` (the relay's URL, or a session's URL `.../sessions/<id>`;
 * the session is the store's id otherwise), `parallel` (batches in flight,
 * default 4), `batch` (commits per push, default 100), `fetch`, `token` (a
 * string or a function giving one, sent as `Authorization: Bearer`),
 * `device` (this device's id for the lease; random by default).
 *
 * @example
 * const sync = startSync(store, { relay: "https://edge.example", parallel: 4 });
 * await sync.settled();
 * await sync.stop();
 */
export function startSync(store, options) {
  const what = "startSync";
  const { sync: core, queue } = storeInternals(store);
  if (options === null || typeof options !== "object") {
    throw invalidArgs(`${what}: options must be { relay, parallel?, batch?, fetch?, token?, device?, timeout? }, got ${describe(options)}`);
  }
  const { relay, parallel = 4, batch: batchSize = 100, token, device = globalThis.crypto.randomUUID(), timeout = RELAY_TIMEOUT_MS } = options;
  refuseUnknownOptions(options, SYNC_OPTIONS, what);
  const fetch = checkFetch(options.fetch, what);
  checkToken(token, what);
  checkTimeout(timeout, what);
  if (!Number.isSafeInteger(parallel) || parallel < 1 || parallel > 64) throw invalidArgs(`${what}: parallel must be an integer from 1 to 64, got ${describe(parallel)}`);
  if (!Number.isSafeInteger(batchSize) || batchSize < 1 || batchSize > 10000) throw invalidArgs(`${what}: batch must be an integer from 1 to 10000, got ${describe(batchSize)}`);
  if (typeof device !== "string" || device === "" || device.length > 200) throw invalidArgs(`${what}: device must be 1 to 200 characters, got ${describe(device)}`);
  const parsed = parseRelay(relay, store.id, what);
  const { base } = parsed;
  let session = parsed.session;
  // A store that split off the session the URL names syncs its own.
  const split = store.origin;
  if (split && split.id === session && store.id !== session) session = store.id;
  const client = relayClient({ fetch: fetch.bind(globalThis), token, timeout }, base);
  if (core.running) throw invalidArgs(`${what}: this store already has a running sync; stop it first`);
  // The store's one sync is this one until letGo(): stopped, failed or
  // lost, it frees the store at once (its own listeners may start the
  // next), and never frees it for a sync started after it.
  const me = {};
  core.running = me;
  const letGo = () => { if (core.running === me) core.running = null; };

  let state = "connecting";
  let acked = 0;
  let epoch = 0;
  let expires = 0;
  let stopped = false;
  let failure = null;           // a fatal error: the sync stopped by itself
  let next = 0;                 // the `from` of the next batch to read
  const inflight = new Set();   // promises of pushes
  const uploaded = new Set();   // blob hashes the relay has
  const waiters = [];           // settled(): { target, resolve, reject }
  const listeners = { lost: new Set(), state: new Set(), error: new Set() };
  const wakers = [];            // sleeps to cut short (stop, a new commit)
  let heartbeat = null;
  let wakeUp = null;            // resolves the idle wait
  let delay = retryMin;
  // Until the lease is taken and the store agrees with the relay (or the
  // first attempt finds the relay unreachable), commits wait: a commit made
  // before a power loss's batches are pulled back would fork the seqs.
  queue.hold();
  let startHold = true;
  const releaseStart = () => {
    if (!startHold) return;
    startHold = false;
    queue.release();
  };

  const emit = (event, value) => {
    for (const fn of [...listeners[event]]) {
      try { fn(value); } catch (e) { globalThis.reportError ? globalThis.reportError(e) : console.error(e); }
    }
  };
  const setState = (s) => {
    if (s === state) return;
    state = s;
    emit("state", s);
  };
  const wakeAll = () => {
    for (const w of wakers.splice(0)) w();
    if (wakeUp) { const w = wakeUp; wakeUp = null; w(); }
  };
  const unlisten = core.onCommit(() => wakeAll());

  const settle = () => {
    for (let i = waiters.length - 1; i >= 0; i--) {
      const w = waiters[i];
      if (acked >= w.target) { waiters.splice(i, 1); w.resolve(acked); }
      else if (failure || stopped || state === "lost") { waiters.splice(i, 1); w.reject(failure ?? new StoreError(ErrorCodes.Closed, state === "lost" ? "sync: the lease was lost; the store is now a separate session" : "sync: stopped")); }
    }
  };

  const ack = async (to) => {
    if (to <= acked) return;
    acked = to;
    settle();
    try { await store.outbox.trim(acked); } catch (e) { if (!stopped) fail(e); }
  };

  function fail(e) {
    if (failure || stopped) return;
    failure = e;
    letGo();
    setState("offline");
    emit("error", e);
    settle();
    wakeAll();
  }

  // The relay answered fenced: another device drives the session now.
  // A fenced answer: another device took the lease, unless the relay's
  // epoch went back below this driver's: then the relay lost the session.
  function fenced(e) {
    const at = e.body?.epoch;
    if (at < epoch) return fail(new StoreError(ErrorCodes.SyncGap, `sync: the relay's lease went back from epoch ${epoch} to ${at}: the relay lost the session`));
    lose();
  }

  function lose(from) {
    if (state === "lost" || stopped) return;
    const origin = from ?? { id: session, seq: acked };
    const id = globalThis.crypto.randomUUID();
    try {
      core.split(id, origin);
    } catch (e) {
      fail(e);
      return;
    }
    letGo();
    setState("lost");
    clearTimeout(heartbeat);
    settle();
    wakeAll();
    emit("lost", { id, origin });
  }

  const running = () => !stopped && !failure && state !== "lost";

  // Runs `fn` until it succeeds; offline answers back off and retry.
  async function retry(fn) {
    for (;;) {
      if (!running()) throw new StoreError(ErrorCodes.Closed, "sync: stopped");
      try {
        const v = await fn();
        if (!failure && (state === "offline" || state === "connecting")) setState(epoch ? "driving" : state);
        delay = retryMin;
        return v;
      } catch (e) {
        if (!e?.offline) throw e;
        releaseStart();
        setState("offline");
        await sleep(delay * (0.5 + Math.random()), wakers);
        delay = Math.min(retryMax, delay * 2);
      }
    }
  }

  function scheduleHeartbeat() {
    clearTimeout(heartbeat);
    if (!running()) return;
    const ms = Math.max(100, Math.min(30000, (expires - Date.now()) / 3));
    heartbeat = setTimeout(async () => {
      try {
        const r = await client.lease(session, { op: "heartbeat", epoch });
        expires = r.expires ?? expires;
        if (state === "offline" && !failure) setState("driving");
      } catch (e) {
        if (e?.code === ErrorCodes.Fenced) return fenced(e);
        if (e?.offline) setState("offline");
      }
      scheduleHeartbeat();
    }, ms);
    heartbeat.unref?.();
  }

  // Every blob the store holds and the relay does not yet: before a batch
  // that could name one of them goes up.
  async function uploadBlobs() {
    let after;
    for (;;) {
      const page = await store.blobs.list(after === undefined ? {} : { after });
      for (const hash of page.hashes) {
        if (uploaded.has(hash)) continue;
        if (!(await retry(() => client.hasBlob(session, hash)))) {
          const bytes = await store.blobs.get(hash);
          await retry(() => client.putBlob(session, hash, bytes));
        }
        uploaded.add(hash);
      }
      if (!page.next) return;
      after = page.next;
    }
  }

  // The relay's records after `after` up to `to`, batch by batch, from
  // session `from` (the origin of a split-off store, or this session).
  async function* pulled(from, after, to) {
    while (after < to) {
      const b = await retry(() => client.pull(from, after, Math.min(pullLimit, to - after)));
      if (b.to <= after || b.from !== after) {
        throw new StoreError(ErrorCodes.SyncGap, `sync: the relay's session ${from} answered a pull after ${after} with ${b.from}..${b.to}`);
      }
      const part = b.to > to ? { from: b.from, to, commits: b.commits.filter((c) => c.seq <= to) } : b;
      yield part;
      after = part.to;
    }
  }

  // The records both the store and the relay's session hold must be the
  // same, else the store forked (it went on committing after another device
  // took the session over): it splits off. Compares the seqs up to
  // min(H, head) not compared yet; false when it split.
  let compared = 0;
  async function compare(H) {
    const first = await store.outbox.read(0, 1);
    const head = store.head;
    const T = first.commits.length ? first.from : head;  // trimmed up to T
    // A split-off store trimmed its origin's records: the session's records
    // up to origin.seq must be the origin session's (someone may have
    // pulled the new session while it was still empty and driven it).
    const origin = core.origin();
    if (origin && origin.id !== session && compared === 0) {
      const upTo = Math.min(H, origin.seq, T);
      for await (const b of pulled(session, 0, upTo)) {
        const theirs = [];
        for await (const o of pulled(origin.id, b.from, b.to)) theirs.push(...o.commits);
        for (let k = 0; k < b.commits.length; k++) {
          if (recordText(b.commits[k]) !== recordText(theirs[k])) {
            // Not this store's session: it splits again, from the same origin.
            lose({ id: origin.id, seq: origin.seq });
            return false;
          }
        }
      }
    }
    const from = Math.max(T, compared);
    const upTo = Math.min(H, head);
    if (from >= upTo) return true;
    let mine = await store.outbox.read(from, Math.min(pullLimit, upTo - from));
    let k = 0;
    for await (const b of pulled(session, from, upTo)) {
      for (const r of b.commits) {
        while (k >= mine.commits.length) { mine = await store.outbox.read(mine.to, Math.min(pullLimit, upTo - mine.to)); k = 0; }
        const m = mine.commits[k++];
        if (m.seq !== r.seq || recordText(m) !== recordText(r)) {
          acked = r.seq - 1;
          lose();
          return false;
        }
      }
    }
    compared = upTo;
    return true;
  }

  // After taking the lease: the store agrees with the relay's session (see
  // compare), the relay's newer records (a power loss) are pulled back, and
  // a split-off store's new session gets its origin's records first.
  async function reconcile(H) {
    if (!(await compare(H))) return false;
    const first = await store.outbox.read(0, 1);
    const head = store.head;
    const T = first.commits.length ? first.from : head;  // trimmed up to T
    if (H < T) {
      // The relay's session lacks records this store has trimmed: only a
      // split-off store's new session may, and then its origin has them.
      const origin = core.origin();
      if (!origin || origin.seq < T) {
        throw new StoreError(ErrorCodes.SyncGap, `sync: the relay's session ${session} ends at seq ${H}, before this store's outbox (trimmed up to ${T}); it cannot continue there`);
      }
      await uploadBlobs();
      for await (const b of pulled(origin.id, H, origin.seq)) await pushHalving(b);
      H = origin.seq;
    }
    if (H > head) {
      // A power loss: the relay acknowledged commits this store lost. Pull
      // them back, holding the commit queue so nothing commits in between.
      queue.hold();
      let blobsPulled = false;
      try {
        for await (const b of pulled(session, head, H)) {
          if (!running()) return false;
          const pulledHead = store.head;
          if (pulledHead !== b.from) throw new StoreError(ErrorCodes.SyncGap, `sync: the store moved to ${pulledHead} while pulling back ${b.from}..${b.to}`);
          if (!blobsPulled) {
            await downloadBlobs(client, session, store.blobs, retry);
            blobsPulled = true;
          }
          core.restoreBatch(b);
        }
      } finally {
        queue.release();
      }
    }
    next = H;
    await ack(Math.max(H, acked));
    return true;
  }

  // One batch of the origin's records, pushed as it is or, too large for
  // the relay in one body (413 limit), in halves, in order.
  async function pushHalving(b) {
    try {
      await retry(() => client.push(session, epoch, b));
    } catch (e) {
      if (!tooLarge(e, b)) throw e;
      for (const half of halves(b)) await pushHalving(half);
    }
  }

  // One batch, resubmitted until acknowledged.
  async function send(b) {
    for (;;) {
      if (!running()) return;
      // What the relay had acknowledged when the last attempt left: its
      // answer says where its head was then, so only this can show a loss.
      // (`acked` may grow while the answer is on its way: another batch in
      // flight landed after the relay answered this one.)
      let ackedAtSend = acked;
      try {
        const r = await retry(() => {
          ackedAtSend = acked;
          return client.push(session, epoch, b);
        });
        await ack(Math.max(b.to, Math.min(r.head ?? 0, store.head)));
        return;
      } catch (e) {
        if (!running()) return;
        if (e?.code === ErrorCodes.Fenced) return fenced(e);
        if (e?.code === ErrorCodes.SyncGap) {
          // An earlier batch has not landed yet (it is in flight or being
          // resubmitted). A relay behind what it acknowledged lost data.
          const relayHead = e.body?.head;
          if (typeof relayHead === "number" && relayHead < ackedAtSend) {
            return fail(new StoreError(ErrorCodes.SyncGap, `sync: the relay's head ${relayHead} is behind what it acknowledged (${ackedAtSend})`));
          }
          if (acked >= b.from) continue;
          await sleep(retryMin, wakers);
          continue;
        }
        if (tooLarge(e, b)) {
          for (const half of halves(b)) if (running()) await send(half);
          return;
        }
        if (e?.code === ErrorCodes.NotFound) {
          // A blob went missing on the relay: upload again, then resubmit
          // (after a pause). A value of a blob's shape that names no blob
          // of the store's is never uploaded: the relay refuses for good.
          const hash = e.body?.hash;
          if (typeof hash === "string" && !(await store.blobs.has(hash))) {
            return fail(new StoreError(ErrorCodes.NotFound, `sync: the relay refuses a commit naming blob ${hash}, which this store does not hold (see createRelay's isBlobName)`));
          }
          uploaded.clear();
          try { await uploadBlobs(); } catch (e2) { return fail(e2); }
          await sleep(retryMin, wakers);
          continue;
        }
        return fail(e);
      }
    }
  }

  async function drive() {
    while (running()) {
      if (inflight.size < parallel && next < store.head) {
        const b = await store.outbox.read(next, batchSize);
        if (b.from !== next || b.commits.length === 0) {
          return fail(new StoreError(ErrorCodes.SyncGap, `sync: the outbox has no records after seq ${next} (trimmed up to ${b.from})`));
        }
        next = b.to;
        await uploadBlobs();
        const p = send(b).finally(() => { inflight.delete(p); wakeAll(); });
        inflight.add(p);
        continue;
      }
      await new Promise((resolve) => {
        wakeUp = resolve;
        if (!running() || (inflight.size < parallel && next < store.head)) { wakeUp = null; resolve(); }
      });
    }
  }

  async function run() {
    try {
      // Compared before taking the lease, so that a forked store never
      // fences the session's rightful driver.
      const info = await retry(() => client.info(session));
      if (!(await compare(info.head))) return;
      // One id for this take, however often the network delivers it.
      const take = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
      // The store's commits past the head compared (made before the sync,
      // or while the relay was out of reach) are its own: the take asks the
      // relay to grant it only while the session is still at that head. If
      // the session moved on meanwhile, the store forked: compared again,
      // it splits off, and the session's driver keeps its lease.
      let compareHead = info.head;
      let lease;
      for (;;) {
        try {
          lease = await retry(() => client.lease(session, { op: "take", device, take, ...(store.head > compareHead ? { ifHead: compareHead } : {}) }));
          break;
        } catch (e) {
          if (e?.code !== ErrorCodes.Fenced || !running()) throw e;
          const again = await retry(() => client.info(session));
          if (!(await compare(again.head))) return;
          compareHead = again.head;
        }
      }
      epoch = lease.epoch;
      expires = lease.expires ?? Date.now() + 30000;
      scheduleHeartbeat();
      const agreed = await reconcile(lease.head);
      releaseStart();
      if (!agreed) return;
      setState("driving");
      await drive();
    } catch (e) {
      if (running()) {
        if (e?.code === ErrorCodes.Fenced) fenced(e);
        else fail(e);
      }
    } finally {
      releaseStart();
    }
  }

  const done = run();

  const sync = {
    /** "connecting" | "driving" | "offline" | "lost" */
    get state() { return state; },
    /** The highest seq the relay acknowledged. */
    get acked() { return acked; },
    /** The relay session this sync drives. */
    get session() { return session; },
    /** The lease epoch this sync holds (0 before it took it). */
    get epoch() { return epoch; },
    /** The error that stopped the sync by itself, or null. */
    get error() { return failure; },
    /**
     * Resolves (to the acked seq) once everything committed so far is
     * acknowledged; rejects when the sync stops, fails or loses the lease
     * first.
     */
    settled() {
      const target = store.head;
      return new Promise((resolve, reject) => {
        waiters.push({ target, resolve, reject });
        settle();
      });
    },
    /** Listens to "lost" ({ id, origin }), "state" (the new state) or "error"; returns a function that stops listening. */
    on(event, fn) {
      if (!listeners[event]) throw invalidArgs(`sync.on: event must be "lost", "state" or "error", got ${describe(event)}`);
      if (typeof fn !== "function") throw invalidArgs(`sync.on: the listener must be a function, got ${describe(fn)}`);
      listeners[event].add(fn);
      return () => listeners[event].delete(fn);
    },
    /** Stops uploading and releases the lease (when it still holds it). */
    async stop() {
      if (stopped) return done;
      const held = running() && epoch > 0;
      stopped = true;
      clearTimeout(heartbeat);
      unlisten();
      wakeAll();
      client.stopAll();
      settle();
      await done;
      await Promise.allSettled([...inflight]);
      letGo();
      // Waited for a second at most: a relay that answers nothing held
      // stop() for the whole timeout. Offline or fenced, the lease expires.
      if (held) await Promise.race([client.lease(session, { op: "release", epoch }).catch(() => {}), sleep(1000, [])]);
    },
  };
  // A failed or lost sync stops listening (it freed the store: letGo).
  done.then(() => { if (!running()) { unlisten(); clearTimeout(heartbeat); } });
  return sync;
}

/**
 * Every blob of the relay's session that `local` (a blobs API with has and
 * putWithHash) lacks, downloaded and checked against its hash. The relay
 * holds a blob before any batch that names it, so after reading the head,
 * this covers every blob the commits up to that head name.
 */
async function downloadBlobs(client, session, local, retry = (fn) => fn()) {
  let after;
  for (;;) {
    const page = await retry(() => client.listBlobs(session, after));
    if (!Array.isArray(page?.hashes)) {
      throw new StoreError(ErrorCodes.InvalidArgs, `relay: the blob list of session ${session} is not { hashes: [...] }: ${describe(page)}`);
    }
    for (const hash of page.hashes) {
      if (await local.has(hash)) continue;
      const bytes = await retry(() => client.getBlob(session, hash));
      await local.putWithHash(hash, bytes);
    }
    if (!page.next) return;
    // The list goes up by hash: a `next` that does not would list for ever.
    if (typeof page.next !== "string" || (after !== undefined && !(page.next > after))) {
      const show = (v) => (typeof v === "string" ? JSON.stringify(v) : describe(v));
      throw new StoreError(ErrorCodes.InvalidArgs, `relay: the blob list of session ${session} does not go on: next ${show(page.next)} after ${show(after)}`);
    }
    after = page.next;
  }
}

/**
 * Downloads a relay's session into a new local store and opens it, with a
 * runtime's loader (each package root binds it as `pullSession`). `remote`
 * is `{ relay, fetch?, token? }` (relay: the session's URL
 * `.../sessions/<id>`); `openOptions` are openStore's. The store has the
 * session's id and head, every table and document, every blob the relay
 * holds for the session, and can continue the session with its own startSync.
 *
 * @example
 * const store = await pullSessionWith(nodeRuntime, { relay: "https://edge.example/sessions/42" }, { backend: "memory" });
 */
export async function pullSessionWith(runtime, remote, openOptions) {
  const what = "pullSession";
  if (remote === null || typeof remote !== "object") throw invalidArgs(`${what}: the first argument must be { relay, fetch?, token? }, got ${describe(remote)}`);
  if (openOptions === null || typeof openOptions !== "object") throw invalidArgs(`${what}: openOptions must be an object such as { backend: "memory" }, got ${describe(openOptions)}`);
  refuseUnknownOptions(remote, ["relay", "fetch", "token", "timeout"], what);
  const fetch = checkFetch(remote.fetch, what);
  checkToken(remote.token, what);
  const { timeout = RELAY_TIMEOUT_MS } = remote;
  checkTimeout(timeout, what);
  // keepSnapshots and snapshotEvery are checked before the relay is asked.
  const snapshotting = snapshotOptions(openOptions, what);
  const { base, session } = parseRelay(remote.relay, undefined, what);
  if (session === undefined) throw invalidArgs(`${what}: relay must name the session (".../sessions/<id>"), got ${describe(remote.relay)}`);
  const client = relayClient({ fetch: fetch.bind(globalThis), token: remote.token, timeout }, base);
  const info = await client.info(session);
  const target = info?.head;
  if (!Number.isSafeInteger(target) || target < 0) {
    throw new StoreError(ErrorCodes.InvalidArgs, `${what}: the relay's session info has no head (a seq): ${describe(info)}`);
  }
  const { core, info: opened, session: held, blobs, snapshots, locks } = await openCore(runtime, { ...openOptions, id: session }, what, { replica: true });
  const closeCore = () => {
    try { core.close(); } catch { /* closing anyway */ }
    try { core.delete(); } catch { /* already freed */ }
    try { held?.release(); } catch { /* released anyway */ }
  };
  try {
    const answer = (s) => unwrap(s);
    const localBlobs = makeBlobs(blobs.backend, { sha256: blobs.sha256, prefix: what, writable: false, checkOpen() {} });
    let head = Number(answer(core.head()));
    // A replica's file already there (of another session, or this one's
    // part pulled before a failure): the pull would put the session's
    // records on top of its rows.
    if (head !== 0 || opened.id !== session) {
      throw invalidArgs(`${what}: the store is not empty (session ${opened.id}, head ${head})`);
    }
    // The store's snapshots, as openStore lists them (refused before the
    // download where the backend takes no snapshotEvery); the catch below
    // closes the core.
    const shelf = await openShelf(snapshots, snapshotting, () => {}, what);
    await downloadBlobs(client, session, localBlobs);
    // Up to the head read before the blobs, whose every blob they hold:
    // the relay's later commits may name blobs listed after.
    while (head < target) {
      const b = await client.pull(session, head, Math.min(pullLimit, target - head));
      if (b.from !== head || b.to <= head) throw new StoreError(ErrorCodes.SyncGap, `${what}: the relay answered a pull after ${head} with ${b.from}..${b.to}`);
      head = JSON.parse(answer(core.applyBatch(encodeJson(b, "batch", MAX_BATCH_DEPTH)))).head;
    }
    answer(core.promote());
    // What openStore gives a store over the same backend: its snapshots,
    // its locks across processes and store.at's views. Without them the
    // pulled store refused store.at and snapshot() until it was reopened.
    const store = makeStore(core, { id: session, head }, held, { blobs, snapshots: shelf, locks, openViewCore: viewCoreOf(runtime), AsyncLocalStorage: runtime.AsyncLocalStorage });
    return store;
  } catch (e) {
    closeCore();
    throw e;
  }
}

// Whether a push failed only because its batch is too large for the relay
// in one body (413 limit) and can be split.
function tooLarge(e, b) {
  return e?.code === ErrorCodes.Limit && e.status === 413 && b.commits.length > 1;
}

// A batch of records in two batches, in order: the first half and the rest.
function halves(b) {
  const mid = Math.ceil(b.commits.length / 2);
  const to = b.commits[mid - 1].seq;
  return [{ from: b.from, to, commits: b.commits.slice(0, mid) }, { from: to, to: b.to, commits: b.commits.slice(mid) }];
}
