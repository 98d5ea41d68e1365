// The relay: the server side of sync (design.md, "Sync: a driver, a relay,
// replicas"; the protocol is docs/formats.md, "The relay protocol").
//
// Runtime-neutral: it speaks the standard Request and Response (Node 20,
// browsers and workerd all have them) and keeps each session in a onestore
// replica of any backend, opened with the runtime's openReplica:
//   - the acknowledged batches are the replica's own outbox (a replica keeps
//     the records it applied, byte for byte the driver's: docs/formats.md,
//     "What a replica stores"), and a push is one replica.applyBatch: the
//     rows, the records and the head in one backend transaction;
//   - the lease is a host note of the replica (replica.hostNotes,
//     "relay.lease"), written in a transaction of its own by take,
//     heartbeat and release;
//   - the blobs are the replica's blobs (replica.blobs.putWithHash).
// SessionRelay (js/relay-durable.js) runs the same code in a Durable Object
// over the durable backend; tests run it in Node on memory replicas.
//
// Every check that must not interleave with another request (the lease's
// epoch against a push, a take's read-modify-write) runs synchronously
// between awaits: the lease note and the replica's apply are synchronous
// calls into the core, so no other request of the same relay can run
// between the check and the write.

import { ErrorCodes, StoreError, invalidArgs, refuseUnknownOptions } from "./errors.js";
import { MAX_BATCH_DEPTH, encodeJson, parseJsonExact } from "./encode.js";
import { MAX_BLOB_BYTES } from "./blobs.js";
import { describe } from "./schema.js";

/** The largest JSON body a relay takes by default (8 MiB); larger: 413 `limit`. */
export const RELAY_MAX_BODY = 8 * 1024 * 1024;
/** The lease's time to live by default, in ms (30 s); a heartbeat renews it. */
export const RELAY_LEASE_TTL = 30_000;
/** The commits a pull answers by default, and at most. */
export const RELAY_PULL_DEFAULT = 100;
export const RELAY_PULL_MAX = 1000;

const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;
const SHA256_HEX = /^[0-9a-f]{64}$/;
const LEASE_NOTE = "relay.lease";
const DEVICE_MAX = 200;
const DOWNLOAD_PAGE = 1000;

// The HTTP status of each error code (docs/formats.md, "Errors").
const STATUS = {
  [ErrorCodes.InvalidArgs]: 400,
  [ErrorCodes.InvalidCursor]: 400,
  [ErrorCodes.ReadAfterBulk]: 400,
  [ErrorCodes.InvalidArchive]: 400,
  [ErrorCodes.Unauthorized]: 401,
  [ErrorCodes.NotFound]: 404,
  [ErrorCodes.Fenced]: 409,
  [ErrorCodes.SyncGap]: 409,
  [ErrorCodes.SyncDiverged]: 409,
  [ErrorCodes.SchemaNewer]: 409,
  [ErrorCodes.Limit]: 413,
  [ErrorCodes.StorageFailed]: 500,
  [ErrorCodes.Closed]: 503,
};

/** A refusal with its HTTP status and extra fields for the error body. */
class Refusal extends StoreError {
  constructor(status, code, message, extra) {
    super(code, message);
    this.status = status;
    this.extra = extra;
  }
}

const refuse = (status, code, message, extra) => new Refusal(status, code, message, extra);

/** Whether a string value in a commit names a blob, by default: a sha256 in hex. */
export function isSha256Hex(value) {
  return typeof value === "string" && value.length === 64 && SHA256_HEX.test(value);
}

function checkOptions(options) {
  if (options === null || typeof options !== "object") {
    throw invalidArgs(`createRelay: expected options { open, authorize?, maxBody?, leaseTtl?, isBlobName?, cors?, now? }, got ${describe(options)}`);
  }
  // A misspelt authorize would leave the relay open to every request.
  refuseUnknownOptions(options, ["open", "authorize", "maxBody", "maxBlob", "leaseTtl", "isBlobName", "cors", "now"], "createRelay");
  const {
    open, authorize, maxBody = RELAY_MAX_BODY, maxBlob = MAX_BLOB_BYTES, leaseTtl = RELAY_LEASE_TTL,
    isBlobName = isSha256Hex, cors = true, now = Date.now,
  } = options;
  if (typeof open !== "function") throw invalidArgs(`createRelay: open must be a function (sessionId) => openOptions, got ${describe(open)}`);
  if (authorize !== undefined && typeof authorize !== "function") throw invalidArgs(`createRelay: authorize must be a function ({ request, session, access, token }) => boolean, got ${describe(authorize)}`);
  for (const [name, v] of [["maxBody", maxBody], ["maxBlob", maxBlob], ["leaseTtl", leaseTtl]]) {
    if (!Number.isSafeInteger(v) || v < 1) throw invalidArgs(`createRelay: ${name} must be a positive integer, got ${describe(v)}`);
  }
  if (maxBlob > MAX_BLOB_BYTES) throw invalidArgs(`createRelay: maxBlob must be at most ${MAX_BLOB_BYTES} (a blob's limit), got ${maxBlob}`);
  if (isBlobName !== false && typeof isBlobName !== "function") throw invalidArgs(`createRelay: isBlobName must be a function (value) => boolean or false, got ${describe(isBlobName)}`);
  // A string is sent as a header value: one that no header can hold would fail every answer.
  if (typeof cors !== "boolean" && !(typeof cors === "string" && /^[\x20-\x7e]+$/.test(cors))) throw invalidArgs(`createRelay: cors must be true, false or an origin, got ${describe(cors)}`);
  if (typeof now !== "function") throw invalidArgs(`createRelay: now must be a function () => ms, got ${describe(now)}`);
  return { open, authorize, maxBody, maxBlob, leaseTtl, isBlobName, cors, now };
}

/**
 * A relay over replicas opened with `openReplica` (each package root binds
 * it: `createRelay(options)`). `options.open(sessionId)` gives the open
 * options of a session's replica (its `id` defaults to the session id);
 * `authorize({ request, session, access, token })` (sync or async; access
 * "read" or "drive") decides who may do what, and allows everything when
 * omitted. Resolves nothing: it returns `{ fetch(request), close() }`.
 *
 * @example
 * const relay = createRelayWith(openReplica, { open: (id) => ({ backend: "sqlite", path: `.data/relay/${id}.sqlite` }) });
 * const response = await relay.fetch(new Request("http://relay/sessions/s1"));
 */
export function createRelayWith(openReplica, options) {
  const o = checkOptions(options);
  const sessions = new Map();  // session id -> Promise<replica>
  let closed = false;

  function replicaOf(session) {
    // A request that was on its way when close() ran opens nothing: the
    // replica would stay open, its file locked, after close() resolved.
    if (closed) return Promise.reject(refuse(503, ErrorCodes.Closed, "relay: the relay is closed"));
    let p = sessions.get(session);
    if (!p) {
      p = (async () => {
        const opts = await o.open(session);
        if (opts === null || typeof opts !== "object") throw invalidArgs(`createRelay: open(${JSON.stringify(session)}) must give open options, got ${describe(opts)}`);
        const replica = await openReplica({ id: session, ...opts });
        // Storage that already holds another session (two ids opened on one
        // file, or one Durable Object reached by two names) is refused: its
        // batches and lease are not this session's.
        if (opts.id === undefined && replica.id !== session) {
          await replica.close();
          throw invalidArgs(`relay: the storage of session ${JSON.stringify(session)} holds session ${JSON.stringify(replica.id)}; open(sessionId) must give each session its own storage`);
        }
        return replica;
      })();
      sessions.set(session, p);
      p.catch(() => { if (sessions.get(session) === p) sessions.delete(session); });
    }
    return p;
  }

  // A replica whose storage failed or that was closed under us is dropped, so
  // the next request opens it again.
  async function forget(session) {
    const p = sessions.get(session);
    sessions.delete(session);
    try { await (await p)?.close(); } catch { /* dropped anyway */ }
  }

  function corsHeaders(request) {
    if (o.cors === false) return {};
    const origin = o.cors === true ? "*" : o.cors;
    const h = { "access-control-allow-origin": origin, "access-control-expose-headers": "content-length, content-type" };
    if (request.method === "OPTIONS") {
      h["access-control-allow-methods"] = "GET, HEAD, POST, PUT, OPTIONS";
      h["access-control-allow-headers"] = "authorization, content-type";
      h["access-control-max-age"] = "600";
    }
    return h;
  }

  async function fetch(request) {
    let extra = {};
    try {
      extra = corsHeaders(request);
      if (closed) throw refuse(503, ErrorCodes.Closed, "relay: the relay is closed");
      if (request.method === "OPTIONS") return new Response(null, { status: 204, headers: extra });
      return headOnly(request, withHeaders(await route(request), extra));
    } catch (e) {
      return headOnly(request, withHeaders(errorResponse(e), extra));
    }
  }

  // A HEAD is answered as its GET would be, without the body (HTTP's rule:
  // RFC 9110, 9.3.2).
  function headOnly(request, response) {
    if (request?.method !== "HEAD" || response.body === null) return response;
    response.body.cancel().catch(() => {});
    return new Response(null, { status: response.status, headers: response.headers });
  }

  async function route(request) {
    const { url, session, rest } = parsePath(request);
    const endpoint = endpointOf(rest, request.method, url.pathname);
    await checkAccess(request, session, endpoint.access);
    const replica = await replicaOf(session);
    try {
      return await endpoint.run({ request, url, session, replica, arg: endpoint.arg });
    } catch (e) {
      if (e instanceof StoreError && !(e instanceof Refusal)) {
        if (e.code === ErrorCodes.Fenced) {
          // The replica's storage was taken over (another store opened its
          // file: a second session open() sent to the same file, say). That
          // is not the lease's fence, which tells a driver to split off:
          // answered as a relay that is briefly away, and the replica is
          // opened again (taking its file back) by the next request.
          await forget(session);
          throw refuse(503, ErrorCodes.Closed, `relay: session ${JSON.stringify(session)}: its storage was taken over; it is opened again by the next request`);
        }
        if (e.code === ErrorCodes.Closed || e.code === ErrorCodes.StorageFailed) await forget(session);
      }
      throw e;
    }
  }

  async function checkAccess(request, session, access) {
    if (!o.authorize) return;
    const header = request.headers.get("authorization");
    const m = header === null ? null : /^Bearer\s+(\S.*)$/i.exec(header);
    const token = m ? m[1].trim() : undefined;
    let allowed;
    try {
      allowed = await o.authorize({ request, session, access, token });
    } catch (e) {
      if (e instanceof StoreError) throw e;
      throw new StoreError(ErrorCodes.StorageFailed, `relay: authorize threw: ${e?.message ?? e}`, { cause: e });
    }
    if (allowed === true) return;
    if (token === undefined) {
      throw refuse(401, ErrorCodes.Unauthorized, `relay: ${access} access to session ${JSON.stringify(session)} needs a token (Authorization: Bearer <token>)`);
    }
    throw refuse(403, ErrorCodes.Unauthorized, `relay: the token may not ${access} session ${JSON.stringify(session)}`);
  }

  function endpointOf(rest, method, path) {
    const one = (allowed, access, run, arg) => {
      // Where a GET is taken, so is a HEAD (answered without the body).
      if (allowed.includes("GET") && !allowed.includes("HEAD")) allowed.push("HEAD");
      if (!allowed.includes(method)) {
        const e = refuse(405, ErrorCodes.InvalidArgs, `relay: ${path} takes ${allowed.join(" or ")}, not ${method}`);
        e.allow = allowed.join(", ");
        throw e;
      }
      return { access, run, arg };
    };
    if (rest === "") return one(["GET"], "read", info);
    if (rest === "lease") return one(["POST"], "drive", lease);
    if (rest === "push") return one(["POST"], "drive", push);
    if (rest === "pull") return one(["GET"], "read", pull);
    if (rest === "download") return one(["GET"], "read", download);
    if (rest === "blobs") return one(["GET"], "read", listBlobs);
    if (rest.startsWith("blobs/")) {
      const hash = rest.slice(6);
      if (!SHA256_HEX.test(hash)) throw invalidArgs(`relay: a blob is named by its sha256 as 64 lowercase hex digits, got ${JSON.stringify(hash.slice(0, 100))}`);
      if (method === "PUT") return one(["PUT"], "drive", putBlob, hash);
      return one(["GET", "HEAD", "PUT"], "read", method === "HEAD" ? headBlob : getBlob, hash);
    }
    throw refuse(404, ErrorCodes.NotFound, `relay: no such path ${JSON.stringify(path.slice(0, 200))}`);
  }

  // ---- the lease (a host note of the replica) ----

  function readLease(replica) {
    const text = replica.hostNotes.get(LEASE_NOTE);
    if (text === undefined) return { epoch: 0, device: null, expires: 0, released: true };
    return JSON.parse(text);
  }

  function writeLease(replica, lease) {
    replica.hostNotes.set(LEASE_NOTE, JSON.stringify(lease));
  }

  function checkEpoch(lease, epoch, what) {
    if (!Number.isSafeInteger(epoch) || epoch < 0) throw invalidArgs(`relay: ${what}: epoch must be an integer >= 0, got ${describe(epoch)}`);
    if (lease.epoch === 0 || epoch !== lease.epoch) {
      throw refuse(409, ErrorCodes.Fenced,
        lease.epoch === 0
          ? `relay: ${what} under epoch ${epoch}: nobody took the lease yet (take it first)`
          : `relay: ${what} under epoch ${epoch}: the lease is at epoch ${lease.epoch} (held by ${JSON.stringify(lease.device)}); this driver was fenced`,
        { epoch: lease.epoch });
    }
  }

  function info({ session, replica }) {
    const lease = readLease(replica);
    const live = !lease.released && lease.expires > o.now();
    const out = { session, head: replica.head, epoch: lease.epoch, driver: live ? lease.device : null, expires: lease.expires };
    const diverged = replica.diverged;
    if (diverged !== undefined) out.diverged = diverged;
    return json(200, out);
  }

  async function lease({ request, replica }) {
    const body = await readJsonBody(request, o.maxBody, "lease");
    // Synchronous from here: read, check, write and answer with no await.
    const current = readLease(replica);
    switch (body.op) {
      case "take": {
        const { device } = body;
        if (typeof device !== "string" || device === "" || device.length > DEVICE_MAX) {
          throw invalidArgs(`relay: lease take: device must be a string of 1 to ${DEVICE_MAX} characters, got ${describe(device)}`);
        }
        // `take`: the driver's id for this take; a retry or a duplicate of
        // the same take (a network's retransmit) gets the same epoch, not a
        // new one that would fence its own driver.
        const { take } = body;
        if (take !== undefined && (typeof take !== "string" || take === "" || take.length > DEVICE_MAX)) {
          throw invalidArgs(`relay: lease take: take must be a string of 1 to ${DEVICE_MAX} characters, got ${describe(take)}`);
        }
        const same = take !== undefined && current.take === take && !current.released;
        // `ifHead`: a device that holds commits the session has not seen
        // takes it only while the session is where it compared them
        // (js/sync.js); moved on, the device forked, and the driver keeps it.
        const { ifHead } = body;
        if (ifHead !== undefined && (!Number.isSafeInteger(ifHead) || ifHead < 0)) {
          throw invalidArgs(`relay: lease take: ifHead must be an integer >= 0, got ${describe(ifHead)}`);
        }
        if (ifHead !== undefined && !same && replica.head !== ifHead) {
          throw refuse(409, ErrorCodes.Fenced,
            `relay: lease take at head ${ifHead}: the head is ${replica.head}; the lease stays`,
            { epoch: current.epoch, head: replica.head });
        }
        const next = { epoch: current.epoch + (same ? 0 : 1), device, take, expires: o.now() + o.leaseTtl, released: false };
        writeLease(replica, next);
        return json(200, { epoch: next.epoch, head: replica.head, expires: next.expires });
      }
      case "heartbeat": {
        checkEpoch(current, body.epoch, "lease heartbeat");
        const next = { ...current, expires: o.now() + o.leaseTtl, released: false };
        writeLease(replica, next);
        return json(200, { epoch: next.epoch, expires: next.expires });
      }
      case "release": {
        checkEpoch(current, body.epoch, "lease release");
        if (!current.released) writeLease(replica, { ...current, released: true });
        return json(200, { released: true });
      }
      default:
        throw invalidArgs(`relay: lease: op must be "take", "heartbeat" or "release", got ${describe(body.op)}`);
    }
  }

  // ---- batches ----

  async function push({ request, replica }) {
    const body = await readJsonBody(request, o.maxBody, "push");
    const { epoch, batch } = body;
    checkEpoch(readLease(replica), epoch, "push");
    if (batch === null || typeof batch !== "object" || Array.isArray(batch)) {
      throw invalidArgs(`relay: push: batch must be { from, to, commits } as store.outbox.read gives it, got ${describe(batch)}`);
    }
    const { from, to, commits } = batch;
    if (!Number.isSafeInteger(from) || from < 0 || !Number.isSafeInteger(to) || to < from || !Array.isArray(commits)) {
      throw invalidArgs(`relay: push: batch needs seqs from <= to and a list of commits, got from ${describe(from)}, to ${describe(to)}, commits ${describe(commits)}`);
    }
    let head = replica.head;
    if (to <= head) return json(200, { acked: to, head });
    if (from > head) throw refuse(409, ErrorCodes.SyncGap, `relay: push: the batch starts at seq ${from}, after the relay's head ${head}; push from ${head}`, { head });

    if (o.isBlobName !== false) {
      for (const hash of namedBlobs(commits, head, o.isBlobName)) {
        if (!(await replica.blobs.has(hash))) {
          throw refuse(409, ErrorCodes.NotFound, `relay: push: a commit names blob ${hash}, which the relay does not have; upload it first (PUT /blobs/${hash})`, { hash });
        }
      }
    }

    // Synchronous from here to the core's apply: the epoch is checked again
    // (a take may have run while the blobs were checked), then
    // replica.applyBatch crosses into the core before its first await.
    checkEpoch(readLease(replica), epoch, "push");
    let result;
    try {
      result = await replica.applyBatch(batch);
    } catch (e) {
      if (e instanceof StoreError && e.code === ErrorCodes.SyncGap) {
        throw refuse(409, ErrorCodes.SyncGap, `relay: push: ${e.message}`, { head: replica.head });
      }
      throw e;
    }
    head = result.head;
    return json(200, { acked: to, head });
  }

  async function pull({ url, replica }) {
    const after = intParam(url, "after", 0, 0, Number.MAX_SAFE_INTEGER);
    const limit = intParam(url, "limit", RELAY_PULL_DEFAULT, 1, RELAY_PULL_MAX);
    // A reader past the head holds records the session does not: the relay
    // lost them (its storage reset) or the reader follows another session.
    // An empty batch would tell it it is caught up.
    if (after > replica.head) {
      throw refuse(409, ErrorCodes.SyncGap, `relay: pull after ${after}: the session's head is ${replica.head}; the relay lost what the reader has, or it reads another session`, { head: replica.head });
    }
    const batch = await replica.outbox.read(after, limit);
    return json(200, batch);
  }

  async function download({ session, replica }) {
    // The head is fixed first: every commit up to it is immutable, so the
    // pages read below are one consistent state even while pushes land.
    const head = replica.head;
    const commits = [];
    let at = 0;
    while (at < head) {
      const page = await replica.outbox.read(at, Math.min(DOWNLOAD_PAGE, head - at));
      if (page.commits.length === 0) break;
      for (const c of page.commits) if (commits.length < head) commits.push(c);
      at = page.to;
    }
    const blobs = [];
    let after;
    for (;;) {
      const { hashes, next } = await replica.blobs.list(after === undefined ? { limit: 10000 } : { after, limit: 10000 });
      blobs.push(...hashes);
      if (!next) break;
      after = next;
    }
    return json(200, { format: 1, session, head, batch: { from: 0, to: commits.length, commits }, blobs });
  }

  // ---- blobs ----

  async function listBlobs({ url, replica }) {
    const after = url.searchParams.get("after");
    if (after !== null && !SHA256_HEX.test(after)) throw invalidArgs(`relay: blobs: after must be a blob's hash, got ${JSON.stringify(after.slice(0, 100))}`);
    const limit = intParam(url, "limit", 1000, 1, 10000);
    return json(200, await replica.blobs.list(after === null ? { limit } : { after, limit }));
  }

  async function putBlob({ request, replica, arg: hash }) {
    const bytes = await readBody(request, o.maxBlob, `blob ${hash}`);
    const had = await replica.blobs.has(hash);
    await replica.blobs.putWithHash(hash, bytes);
    return json(had ? 200 : 201, { hash, size: bytes.byteLength });
  }

  async function getBlob({ replica, arg: hash }) {
    const bytes = await replica.blobs.get(hash);
    if (bytes === undefined) throw refuse(404, ErrorCodes.NotFound, `relay: no blob ${hash}`, { hash });
    return new Response(bytes, { status: 200, headers: { "content-type": "application/octet-stream" } });
  }

  async function headBlob({ replica, arg: hash }) {
    return new Response(null, { status: (await replica.blobs.has(hash)) ? 200 : 404 });
  }

  return Object.freeze({
    /**
     * Answers one request of the relay protocol (docs/formats.md).
     * @example const response = await relay.fetch(request);
     */
    fetch,
    /**
     * Closes every open replica; later requests get 503 `closed`.
     * @example await relay.close();
     */
    async close() {
      closed = true;
      const open = [...sessions.keys()];
      await Promise.all(open.map(forget));
    },
  });
}

// The session and the rest of a request's path: /sessions/<id>[/rest].
function parsePath(request) {
  const url = new URL(request.url);
  const parts = url.pathname.split("/");
  if (parts.length < 3 || parts[0] !== "" || parts[1] !== "sessions") {
    throw refuse(404, ErrorCodes.NotFound, `relay: no such path ${JSON.stringify(url.pathname.slice(0, 200))}; a session is /sessions/<id>`);
  }
  const session = parts[2];
  if (!SESSION_ID.test(session)) {
    throw invalidArgs(`relay: a session id is 1 to 128 of A-Z a-z 0-9 _ . - starting with a letter or digit, got ${JSON.stringify(session.slice(0, 200))}`);
  }
  return { url, session, rest: parts.slice(3).join("/") };
}

/**
 * The session id a relay request names, or the error answer for a path
 * that names none (for a router such as relayFetch).
 *
 * @example
 * const { session, error } = sessionOf(request); if (error) return error;
 */
export function sessionOf(request) {
  try {
    return { session: parsePath(request).session };
  } catch (e) {
    return { error: withHeaders(errorResponse(e), { "access-control-allow-origin": "*" }) };
  }
}

/**
 * An error answer of the protocol: `status` with `{ error: { code, message } }`.
 *
 * @example return relayError(request, 500, "invalid/args", "no SESSIONS binding");
 */
export function relayError(request, status, code, message) {
  return withHeaders(errorResponse(refuse(status, code, message)), { "access-control-allow-origin": "*" });
}

/** The blob names among the values written by the commits after `head`. */
function namedBlobs(commits, head, isBlobName) {
  const out = new Set();
  // Deeper than the core reads (1000 levels: docs/formats.md) is the
  // replica's invalid/args; it was a stack overflow here, answered 500.
  const walk = (v, depth = 0) => {
    if (typeof v === "string") {
      if (isBlobName(v)) out.add(v);
    } else if (v !== null && typeof v === "object") {
      if (depth > 1000) throw invalidArgs("relay: push: a value nests deeper than 1000 levels");
      for (const x of Array.isArray(v) ? v : Object.values(v)) walk(x, depth + 1);
    }
  };
  for (const c of commits) {
    if (c === null || typeof c !== "object" || !Array.isArray(c.ops)) continue;  // the replica refuses it
    if ((typeof c.seq === "number" || typeof c.seq === "bigint") && c.seq <= head) continue;
    for (const op of c.ops) {
      if (op === null || typeof op !== "object" || op.op === "table") continue;
      for (const [k, v] of Object.entries(op)) if (k !== "op" && k !== "table" && k !== "where") walk(v);
    }
  }
  return out;
}

function intParam(url, name, fallback, min, max) {
  const text = url.searchParams.get(name);
  if (text === null) return fallback;
  const n = /^\d{1,16}$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw invalidArgs(`relay: ${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(text.slice(0, 40))}`);
  }
  return n;
}

async function readBody(request, max, what) {
  const declared = request.headers.get("content-length");
  if (declared !== null && /^\d+$/.test(declared) && Number(declared) > max) {
    // The body is read and dropped (up to 64 MiB, then cancelled) before
    // the answer, here and below: workerd resets the connection of an
    // answer given while its request's body is still coming, and the
    // client saw ECONNRESET, not this 413 that tells a driver to send half.
    if (request.body) await drain(request.body.getReader(), DRAIN_MOST);
    throw refuse(413, ErrorCodes.Limit, `relay: ${what}: a body holds at most ${max} bytes, got ${declared}`);
  }
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      await drain(reader, DRAIN_MOST - total);
      throw refuse(413, ErrorCodes.Limit, `relay: ${what}: a body holds at most ${max} bytes, got more`);
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

// The most bytes of a refused body read (and dropped) before the answer.
const DRAIN_MOST = 64 * 2 ** 20;

// Reads and drops the rest of a body, up to `most` bytes; cancels a longer
// one.
async function drain(reader, most) {
  try {
    for (let n = 0; ;) {
      const { done, value } = await reader.read();
      if (done) return;
      n += value.byteLength;
      if (n > most) { await reader.cancel(); return; }
    }
  } catch { /* refused anyway */ }
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

async function readJsonBody(request, max, what) {
  const bytes = await readBody(request, max, what);
  let text;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw invalidArgs(`relay: ${what}: the body is not UTF-8 text`);
  }
  let value;
  try {
    value = parseJsonExact(text);
  } catch {
    throw invalidArgs(`relay: ${what}: the body is not JSON: ${JSON.stringify(text.slice(0, 60))}`);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw invalidArgs(`relay: ${what}: the body must be a JSON object, got ${describe(value)}`);
  }
  return value;
}

// An answer holds at most a batch's records ({ commits: [..] }, a pull's),
// which nest as deep as a batch may (MAX_BATCH_DEPTH), one level for its
// wrapper to spare: a record the relay took is always served back (before,
// one holding a json value nested 997 levels made every pull a 400).
function json(status, value) {
  return new Response(encodeJson(value, "answer", MAX_BATCH_DEPTH + 1), { status, headers: { "content-type": "application/json" } });
}

function errorResponse(e) {
  let err = e;
  if (!(err instanceof StoreError)) {
    err = new StoreError(ErrorCodes.StorageFailed, `relay: ${e?.name ?? "Error"}: ${e?.message ?? e}`, { cause: e });
  }
  const status = err instanceof Refusal ? err.status : (STATUS[err.code] ?? 500);
  const body = { error: { code: err.code, message: err.message, ...(err.extra ?? {}) } };
  const headers = { "content-type": "application/json" };
  if (status === 401) headers["www-authenticate"] = "Bearer";
  if (err.allow) headers.allow = err.allow;  // a 405 names the methods taken
  return new Response(JSON.stringify(body), { status, headers });
}

function withHeaders(response, extra) {
  for (const [k, v] of Object.entries(extra)) response.headers.set(k, v);
  return response;
}
