// Following a relay: a server process keeps a replica (a PostgreSQL mirror
// above all, js/replica-postgres.js) up to date with one session of a relay
// by pulling the records after the replica's head (`GET
// /sessions/<id>/pull`, docs/formats.md, "The relay protocol") and applying
// them. The head lives in the replica, in the transaction of each batch, so
// a follower that restarts goes on from where the replica is: nothing is
// applied twice, nothing is skipped.

import { ErrorCodes, invalidArgs, isErrorCode, refuseUnknownOptions, StoreError } from "./errors.js";
import { parseJsonExact } from "./encode.js";
import { describe } from "./schema.js";

/**
 * The bearer token of a relay call: `token` itself, or what the function
 * `token` gives (sync or async). A function that throws (its provider is
 * down, say) is a relay not reachable yet: a `storage_failed` StoreError
 * marked `offline`, which a sync retries; one that gives other than a
 * string or nothing is `invalid/args`.
 * @param {string | (() => string | undefined | Promise<string | undefined>) | undefined} token
 * @param {string} what  the call, for messages
 * @returns {Promise<string | undefined>}
 */
export async function relayToken(token, what) {
  // A string token was checked once, when the sync or follower was made.
  if (typeof token !== "function") return token || undefined;
  let tok;
  try {
    tok = await token();
  } catch (e) {
    const err = new StoreError(ErrorCodes.StorageFailed, `${what}: the token function threw: ${e?.message ?? e}`, { cause: e });
    err.offline = true;
    throw err;
  }
  if (tok != null && typeof tok !== "string") throw invalidArgs(`${what}: the token function must return a string (or nothing), got ${describe(tok)}`);
  return headerToken(tok, what);
}

/**
 * Runs `run(signal)` until it settles, or until `timeout` ms pass or the
 * call is aborted (through `active`, which holds it meanwhile): then it
 * rejects with `fail("had no answer within <timeout> ms")` or
 * `fail("was stopped")`. A `run` that ignores the signal is left behind,
 * not waited for (a relay that takes a connection and never answers, or a
 * token function that never settles, held a sync for good).
 * @template T
 * @param {(signal: AbortSignal) => Promise<T>} run
 * @param {number} timeout
 * @param {Set<AbortController>} active
 * @param {(why: string) => Error} fail
 * @returns {Promise<T>}
 */
export async function withDeadline(run, timeout, active, fail) {
  const ac = new AbortController();
  let timer;
  const gone = new Promise((_, reject) => {
    timer = setTimeout(() => { reject(fail(`had no answer within ${timeout} ms`)); ac.abort(); }, timeout);
    ac.signal.addEventListener("abort", () => reject(fail("was stopped")));
  });
  gone.catch(() => {});
  active.add(ac);
  try {
    return await Promise.race([run(ac.signal), gone]);
  } finally {
    clearTimeout(timer);
    active.delete(ac);
  }
}

/**
 * `token` as a header may carry it: a string of Latin-1 without a line
 * break or NUL (the Fetch API refuses others), else `invalid/args`; it was
 * taken for an unreachable relay and retried for good. Empty: no token.
 * @param {string | null | undefined} token
 * @param {string} what
 * @returns {string | undefined}
 */
export function headerToken(token, what) {
  if (token == null || token === "") return undefined;
  if (/[\r\n\0]|[^\x00-\xff]/.test(token)) {
    throw invalidArgs(`${what}: the token ${describe(token.length > 40 ? `${token.slice(0, 40)}...` : token)} cannot go in an Authorization header (a line break, NUL or character above U+00FF)`);
  }
  return token;
}

// How long a pull may go without an answer (the relay's, or the token
// function's), as startSync's relay calls (js/sync.js, RELAY_TIMEOUT_MS).
const FOLLOW_TIMEOUT_MS = 30000;

const SESSION_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

/**
 * Follows one session of a relay into `replica`. Options: `relay` (the
 * relay's base URL), `replica` (an opened replica), `session` (default: the
 * replica's id, which a postgres replica's session is), `token` (sent as a
 * bearer token), `limit` (records a pull, default 500), `interval` (ms: pull
 * again this often until stop(); without it, only sync() pulls), `onError`
 * (called with a failed background pull's StoreError; polling stops on
 * sync/diverged), `fetch` (default globalThis.fetch).
 *
 * Returns `{ sync(), stop(), head }`: sync() pulls and applies until the
 * replica has the relay's records and resolves to `{ head, applied }`.
 *
 * @example
 * const follower = followRelay({ relay: "http://127.0.0.1:8787", replica });
 * await follower.sync();
 */
export function followRelay(options) {
  if (options === null || typeof options !== "object") throw invalidArgs(`followRelay: options must be { relay, replica }, got ${describe(options)}`);
  // A misspelt interval would follow nothing, and say nothing.
  refuseUnknownOptions(options, ["relay", "replica", "session", "token", "limit", "interval", "onError", "fetch", "timeout"], "followRelay");
  const { relay, replica, token, limit = 500, interval, onError, timeout = FOLLOW_TIMEOUT_MS } = options;
  const fetchFn = options.fetch ?? globalThis.fetch;
  if (typeof relay !== "string" || !/^https?:\/\//.test(relay)) throw invalidArgs(`followRelay: relay must be the relay's http(s) URL, got ${describe(relay)}`);
  if (replica === null || typeof replica !== "object" || typeof replica.applyBatch !== "function") {
    throw invalidArgs(`followRelay: replica must be an opened replica (openReplica), got ${describe(replica)}`);
  }
  const session = options.session ?? replica.id;
  if (typeof session !== "string" || !SESSION_RE.test(session)) throw invalidArgs(`followRelay: session must be a relay session id (1 to 128 of A-Z a-z 0-9 _ . -), got ${describe(session)}`);
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > 1000) throw invalidArgs(`followRelay: limit must be an integer from 1 to 1000, got ${describe(limit)}`);
  if (interval !== undefined && (!Number.isFinite(interval) || interval < 1)) throw invalidArgs(`followRelay: interval must be a number of ms >= 1, got ${describe(interval)}`);
  if (typeof fetchFn !== "function") throw invalidArgs("followRelay: no fetch here; pass options.fetch");
  // As startSync takes it: a string, or a function giving one (sync or async).
  if (token !== undefined && typeof token !== "string" && typeof token !== "function") {
    throw invalidArgs(`followRelay: token must be a string or a function returning one, got ${describe(token)}`);
  }
  if (typeof token === "string") headerToken(token, "followRelay");
  if (onError !== undefined && typeof onError !== "function") throw invalidArgs(`followRelay: onError must be a function, got ${describe(onError)}`);
  if (!Number.isSafeInteger(timeout) || timeout < 1 || timeout > 3_600_000) throw invalidArgs(`followRelay: timeout must be a number of ms from 1 to 3600000, got ${describe(timeout)}`);
  const base = `${relay.replace(/\/+$/, "")}/sessions/${session}`;
  const active = new Set();  // the pulls under way: stop() aborts them

  // One pull, ended after `timeout` ms without an answer (a relay that
  // takes the connection and never answers, or a token function that never
  // settles, held sync() and stop() for good).
  function pull(after) {
    return withDeadline((signal) => pullOnce(after, signal), timeout, active,
      (why) => new StoreError(ErrorCodes.StorageFailed, `followRelay: pull after ${after} from ${base} ${why}`));
  }

  async function pullOnce(after, signal) {
    const tok = await relayToken(token, `followRelay: pull after ${after}`);
    let answer;
    let text;
    try {
      answer = await fetchFn(new Request(`${base}/pull?after=${after}&limit=${limit}`, {
        headers: tok ? { authorization: `Bearer ${tok}` } : {},
        signal,
      }));
      if (typeof answer?.text !== "function") throw new TypeError(`fetch answered ${describe(answer)}, not a Response`);
      text = await answer.text();
    } catch (e) {
      throw new StoreError(ErrorCodes.StorageFailed, `followRelay: the relay at ${relay} did not answer: ${e?.message ?? e}`, { cause: e });
    }
    if (!answer.ok) {
      let error;
      try { error = JSON.parse(text).error; } catch { /* not the relay's error body */ }
      const message = typeof error?.message === "string" ? error.message : text.slice(0, 200);
      throw new StoreError(isErrorCode(error?.code) ? error.code : ErrorCodes.StorageFailed, `followRelay: pull after ${after} from ${base}: ${answer.status} ${message}`);
    }
    return text;
  }

  let running = Promise.resolve();
  let stopped = false;
  let timer;

  async function syncOnce() {
    let applied = 0;
    for (;;) {
      const text = await pull(replica.head);
      let batch;
      try {
        batch = parseJsonExact(text);
      } catch (e) {
        throw invalidArgs(`followRelay: a pull's answer is not JSON: ${text.slice(0, 80)}`, { cause: e });
      }
      if (batch === null || typeof batch !== "object" || Array.isArray(batch) || !Number.isSafeInteger(Number(batch.from)) || !Number.isSafeInteger(Number(batch.to))) {
        throw invalidArgs(`followRelay: a pull's answer ${text.slice(0, 80)} is not a batch`);
      }
      if (Number(batch.to) <= Number(batch.from)) return { head: replica.head, applied };
      // The text itself: ints beyond 2^53 reach the replica as written.
      const result = await replica.applyBatch(text);
      applied += result.applied;
      if (stopped) return { head: replica.head, applied };
    }
  }

  function sync() {
    const next = running.then(syncOnce, syncOnce);
    running = next.catch(() => {});
    return next;
  }

  function schedule() {
    if (stopped || interval === undefined) return;
    timer = setTimeout(async () => {
      try {
        await sync();
      } catch (e) {
        try { onError?.(e); } catch { /* the caller's */ }
        if (e?.code === ErrorCodes.SyncDiverged) return;
      }
      schedule();
    }, interval);
  }
  schedule();

  return Object.freeze({
    /** Pulls and applies until the replica holds the relay's records. */
    sync,
    /** Stops polling and the pulls under way; resolves when the sync under way has ended. */
    async stop() {
      stopped = true;
      clearTimeout(timer);
      for (const ac of active) ac.abort();
      await running;
    },
    /** The replica's head. */
    get head() {
      return replica.head;
    },
  });
}
