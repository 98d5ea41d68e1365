// The one way a store calls its wasm core, and the store's open/closed/broken
// state that every call checks.
//
// A call's answer is unwrapped into its payload or a StoreError
// (wasm/ABI.md); a wasm trap or a failed COMMIT (storage_failed) breaks the
// store: every later call rejects with that error. A commit's answer becomes
// `{ seq, ops }` where `ops()` hands over the commit's ops as the core
// recorded them in the outbox (Core.lastOps), parsed once, on first use: a
// commit that nobody listens to never crosses for them. A commit without an
// actor crosses its context as numbers (Core.commitAs: the owner's number,
// registered once per core, and the time) and gets its seq back as a number.

import { asStoreError, ErrorCodes, invalidArgs, StoreError, unwrap } from "./errors.js";
import { encodeJson, parseJsonExact, wellFormed } from "./encode.js";
import { describe } from "./schema.js";
import { OpsBuffer, opsHeapOf } from "./ops-buffer.js";

/**
 * The `closed` error of a call on a closed (or closing) store.
 *
 * @example
 * throw closedError("store.commit");
 */
export function closedError(what, kind = "store") {
  const reopen = kind === "replica" ? "openReplica()" : "openStore()";
  return new StoreError(ErrorCodes.Closed, `${what}: the ${kind} is closed; open it again with ${reopen}`);
}

/**
 * Gives `core` (a new mod.Core) its common commit and get through exports
 * of their own: its own commitAs and txCommitAs write a binary batch into
 * the core's room in the heap (one TypedArray.set) and commit it with two
 * plain exports (wasm/ABI.md, "The raw commit"), where embind's generic
 * invoker, the ops' handle and two more calls back into JS went before
 * (issue 13, Durable Objects, step six); its get writes the table and key
 * into the room and reads the answer from it ("The raw get"). A
 * transaction's OpsBuffer in this module's heap (`core.opsHeap`,
 * js/ops-buffer.js) is committed where it is, by a third export. Ops of any
 * other kind (JSON text), text that is not ASCII, a core deleted, or a
 * module without the exports: the Core's own methods ("Calls"). Returns
 * `core`.
 *
 * @example
 * const core = withRawCalls(mod, new mod.Core());
 */
const utf8 = new TextDecoder();

// The error of a raw call whose room the heap could not give (the room's
// export answered null: wasm/bindings.cc, ArgumentsRoom); nothing ran.
function roomRefused(what, bytes) {
  return new StoreError(ErrorCodes.Limit, `${what}, ${bytes} bytes: what is left of the wasm heap has no room for them (it grows to at most 2 GB); pass less at a time`);
}

export function withRawCalls(mod, core) {
  const room = mod._onestore_ops_room;
  const commitRoom = mod._onestore_commit_room;
  const commitAt = mod._onestore_commit_at;
  const getRoom = mod._onestore_get_room;
  if ([room, commitRoom, commitAt, getRoom, core.address].some((f) => typeof f !== "function")) return core;
  const heap = opsHeapOf(mod);
  const address = core.address();
  const { commitAs, txCommitAs } = core;  // the Core's own, on the prototype
  const free = core.delete;
  let live = true;
  const ascii = (s, h, at) => {
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c > 127) return false;
      h[at + i] = c;
    }
    return true;
  };
  // A binary batch, or wire JSON text that is ASCII (a replayed commit's,
  // store.commit's), is written into the room; other text goes through
  // the Core's own methods.
  const commitIn = (tx, ops, owner, at) => {
    if (ops instanceof OpsBuffer) {
      // A transaction's buffer in this module's heap is committed where it
      // is (its address and length, no view); one in JS memory is viewed
      // as its batch and goes through the room.
      if (live && ops.heap === heap) return commitAt(address, tx, ops.at + ops.start, ops.len - ops.start, owner, at);
      ops = ops.batchCopy();
    }
    const text = typeof ops === "string";
    if (live && (text || ops instanceof Uint8Array)) {
      const at0 = room(address, ops.length);
      if (!at0) throw roomRefused("the transaction's ops", ops.length);
      const h = mod.HEAPU8;  // the heap as it is after room() (it may have grown)
      if (!text) h.set(ops, at0);
      if (!text || ascii(ops, h, at0)) return commitRoom(address, tx, owner, at);
    }
    return tx ? txCommitAs.call(core, tx, ops, owner, at) : commitAs.call(core, ops, owner, at);
  };
  // get(): the table's name and the key's JSON written into the room when
  // both are ASCII (a key's JSON almost always is: JSON.stringify escapes
  // lone surrogates), the answer read back from it (its length, then its
  // UTF-8); other text goes through the Core's own get.
  const { get } = core;
  core.get = (table, key) => {
    if (live) {
      const at0 = room(address, table.length + key.length);
      if (!at0) throw roomRefused("the key", table.length + key.length);
      const h = mod.HEAPU8;
      if (ascii(table, h, at0) && ascii(key, h, at0 + table.length)) {
        const p = getRoom(address, table.length);
        const a = mod.HEAPU8;  // the answer may have grown the heap
        return utf8.decode(a.subarray(p + 4, p + 4 + a[p] + a[p + 1] * 256 + a[p + 2] * 65536 + a[p + 3] * 16777216));
      }
    }
    return get.call(core, table, key);
  };
  // Where a transaction's OpsBuffer keeps its bytes (js/tx.js).
  core.opsHeap = heap;
  core.commitAs = (ops, owner, at) => commitIn(0, ops, owner, at);
  core.txCommitAs = (tx, ops, owner, at) => commitIn(tx, ops, owner, at);
  core.delete = () => {
    live = false;
    return free.call(core);
  };
  return core;
}

/**
 * The gate in front of one opened core. `head` is the head at open; `kind`
 * ("store" or "replica") names it in the `closed` error.
 *
 * @example
 * const gate = makeGate(core, info.head);
 * const text = gate.call("get", () => core.get(name, key));
 */
export function makeGate(core, head, kind = "store") {
  let commits = 0;  // commits made through this gate: the lazy ops of an older one are gone
  const ownerIds = new Map();  // owner name -> the core's number for it (Core.ownerId)

  let closing = false;
  // The waits of behind() still pending, each told when close() is asked for.
  const waiting = new Set();
  // unwrap, and a failed COMMIT (the core's "the store stopped") stops the
  // gate too: the calls that never reach the core (blobs, locks, the
  // snapshot list) reject with it as the core's do.
  const stopsOn = (answer) => {
    try {
      return unwrap(answer);
    } catch (e) {
      if (e.code === ErrorCodes.StorageFailed && e.message.includes("the store stopped")) gate.broken ??= e;
      throw e;
    }
  };
  const gate = {
    core,
    /** close() was asked for: new calls are refused. */
    get closing() {
      return closing;
    },
    set closing(v) {
      closing = v;
      if (!v) return;
      for (const go of waiting) go();
      waiting.clear();
    },
    /**
     * Resolves once `prev` settles, or once close() is asked for: what
     * waits behind a transaction that never ends (one awaiting a tx of its
     * own owner) stops waiting. Nothing of the wait is held once it ends (a
     * race with one promise that settles only at close kept a reaction on
     * it for every transaction of the store's life, about 300 bytes each).
     */
    behind(prev) {
      return new Promise((resolve) => {
        if (closing) return resolve();
        const go = () => {
          waiting.delete(go);
          resolve();
        };
        waiting.add(go);
        prev.then(go, go);
      });
    },
    /** The core is closed and freed. */
    closed: false,
    /** A StoreError after a trap, a failed COMMIT or fencing: the instance is not trusted any more. */
    broken: null,
    /** The last head seen (kept when the core can no longer answer). */
    lastHead: head,
    /** Moves on with each commit that may change a table's columns (table, alter, index): row decoders are rebuilt. */
    schema: 0,
    /**
     * Asked before each call, when set (fenceWith): a Node store file hands
     * itself over there if another process waits for it.
     */
    poll: null,

    /**
     * Calls the core; returns its payload or throws a StoreError. `poll`
     * false: no hand-over first (a commit's own ops, read inside its step:
     * handed over there, the commit would be durable and yet reported
     * `fenced`, its adopt hook never called).
     */
    call(what, fn, poll = true) {
      if (poll && gate.poll !== null && !gate.closed && !gate.broken) gate.poll();
      if (gate.closed) throw closedError(what, kind);
      if (gate.broken) throw gate.broken;
      let answer;
      try {
        answer = fn();
      } catch (e) {
        const err = asStoreError(e, what);
        if (err.code === ErrorCodes.StorageFailed) gate.broken = err;
        throw err;
      }
      return stopsOn(answer);
    },

    /**
     * Throws `closed` once close() was asked for, and the gate's error
     * (`fenced`, or the `storage_failed` that stopped it) once it is broken.
     */
    checkOpen(what) {
      if (gate.closing || gate.closed) throw closedError(what, kind);
      if (gate.broken) throw gate.broken;
    },

    /**
     * The core's number for the owner `name` (Core.ownerId), registered on
     * the first commit of that owner through this gate. Call it inside a
     * gate.call (it does not check the gate itself).
     */
    ownerId(name) {
      let id = ownerIds.get(name);
      if (id === undefined) {
        id = core.ownerId(wellFormed(name));
        if (id > 0) ownerIds.set(name, id);  // 0: no store (commitAs then answers why)
      }
      return id;
    },

    /**
     * Makes one commit of `ops` (a binary batch or wire JSON text) for the
     * owner `owner` in the core's transaction `tx` (0: none), with `meta`
     * from commitContext: null crosses the context as numbers
     * (Core.commitAs, Core.txCommitAs), a text as it is (Core.commit,
     * Core.txCommit). Returns as gate.commit.
     */
    commitOps(what, owner, meta, ops, tx = 0) {
      return gate.commit(what, () => {
        // A transaction's OpsBuffer goes as it is to the raw commit
        // (withRawCalls: its address) and as a batch of its own to the others,
        // taken here, after any other call into the core (a view of a
        // buffer in the wasm heap lasts only until a call grows the heap).
        if (meta !== null) {
          const batch = typeof ops === "string" ? ops : ops.batchCopy();
          return tx ? core.txCommit(tx, batch, meta) : core.commit(batch, meta);
        }
        const id = gate.ownerId(owner);
        const o = typeof ops === "string" || core.opsHeap !== undefined ? ops : ops.batchCopy();
        return tx ? core.txCommitAs(tx, o, id, Date.now()) : core.commitAs(o, id, Date.now());
      });
    },

    /**
     * Makes one commit: `fn` calls core.commit, core.txCommit (a text
     * answer) or core.commitAs, core.txCommitAs (a number: the seq, or 0
     * with the failure in core.lastError()). Returns { seq, ops } where
     * ops() is the commit's ops from the core, fetched and parsed on the
     * first call (only valid within the commit step).
     */
    commit(what, fn) {
      const answer = gate.call(what, fn);
      let seq;
      if (typeof answer === "number") {
        if (!(answer > 0)) {
          stopsOn(core.lastError());  // throws the failure's StoreError
          throw new StoreError(ErrorCodes.StorageFailed, `${what}: the core answered seq ${answer} without an error`);
        }
        seq = answer;
      } else {
        // {"seq":n,"at":ms,"counts":[…]} (wasm/ABI.md): only the seq is
        // used, read without a JSON parse.
        seq = answer.startsWith('{"seq":') ? Number(answer.slice(7, answer.indexOf(",", 7))) : JSON.parse(answer).seq;
      }
      const mine = ++commits;
      gate.lastHead = seq;
      let ops;
      return {
        seq,
        ops() {
          if (ops === undefined) {
            if (mine !== commits) throw new StoreError(ErrorCodes.InvalidArgs, `${what}: the ops of seq ${seq} were asked for after a later commit; read them inside the commit step`);
            ops = parseJsonExact(gate.call(`${what}: its ops`, () => core.lastOps(), false));
          }
          return ops;
        },
      };
    },
  };
  return gate;
}

/**
 * Closes and frees the core behind `gate` and releases its runtime
 * `session`, whatever fails, and marks the gate closed. Returns null, or
 * the `storage_failed` StoreError of the first failure to release (the
 * core's: a lock or a file not released, wasm/ABI.md `close()`; then the
 * session's), which says that the `kind` ("store", "replica") is closed and
 * keeps every commit it acknowledged. A broken core's failures are not
 * reported again: its error was, on the call that broke it.
 *
 * @example
 * const failed = closeCoreOf(gate, session, "store"); if (failed) throw failed;
 */
export function closeCoreOf(gate, session, kind) {
  const { core } = gate;
  const broken = gate.broken;
  let failed = null;
  try { if (!broken) gate.lastHead = Number(core.head()); } catch { /* keep it */ }
  try { unwrap(core.close()); } catch (e) { if (!broken) failed = e; }
  try { core.delete(); } catch { /* already freed */ }
  try { session?.release(); } catch (e) { failed ??= e; }
  gate.closed = true;
  if (!failed) return null;
  const message = failed instanceof StoreError ? failed.message : `releasing it failed: ${failed?.message ?? failed}`;
  const said = message.includes("every commit it acknowledged is kept") ? message
    : `${kind}.close: the ${kind} is closed and every commit it acknowledged is kept, but ${message}`;
  return new StoreError(ErrorCodes.StorageFailed, said, { cause: failed });
}

/**
 * Lets a runtime session (opfs, a Node sqlite file) fence the core behind
 * `gate` when another owner takes it over: every later call rejects with
 * `err` (fenced), and the core closes now so that the session can release
 * its files. A session with `poll()` is asked before each call of the core
 * (a Node file: whether another process waits for it). Throws the session's
 * `openFailure` when it has one (taken over during the open): the caller's
 * open rejects with it, the core closed and freed.
 *
 * @example
 * if (session) fenceWith(gate, session);
 */
export function fenceWith(gate, session) {
  session.fence = (err) => {
    if (gate.closed || gate.broken) return;
    gate.broken = err;
    try { gate.lastHead = Number(gate.core.head()); } catch { /* keep it */ }
    try { gate.core.close(); } catch { /* closing anyway */ }
  };
  if (typeof session.poll === "function") gate.poll = session.poll;
  // Taken over before the store was made (opfs: another opener stole the
  // store's Web Lock during this open): the session has fenced the core
  // and let go of its files; the open fails with that fenced error rather
  // than resolve with a store that is fenced already.
  const failed = session.openFailure;
  if (failed) {
    try { gate.core.delete(); } catch { /* already freed */ }
    gate.closed = true;
    throw failed;
  }
}

/**
 * The commit context the core records with a commit: { owner, at, actor? }
 * as JSON text. `ctx` is the caller's { actor? }.
 *
 * @example
 * core.commit(ops, commitMeta("notes", { actor: { kind: "person", id: "ana" } }, "notes.tx"))
 */
export function commitMeta(owner, ctx, what) {
  return metaText(owner, checkedActor(ctx, what));
}

function metaText(owner, actor) {
  return encodeJson(actor === undefined ? { owner, at: Date.now() } : { owner, at: Date.now(), actor }, "meta");
}

/**
 * What gate.commitOps takes for the caller's `ctx` ({ actor? }): null
 * without an actor (the commit crosses its owner and time as numbers),
 * else the context's JSON text (commitMeta).
 *
 * @example
 * const meta = commitContext("notes", ctx, "notes.tx");   // null for ctx undefined
 */
export function commitContext(owner, ctx, what) {
  // The actor is checked once (it was twice, through commitMeta).
  if (ctx === undefined) return null;
  const actor = checkedActor(ctx, what);
  return actor === undefined ? null : metaText(owner, actor);
}

function checkedActor(ctx, what) {
  if (ctx !== undefined && ctx !== null && typeof ctx !== "object") {
    throw invalidArgs(`${what}: the context must be an object such as { actor: { kind: "person", id: "ana" } }, got ${describe(ctx)}`);
  }
  const actor = ctx?.actor;
  if (actor !== undefined && (actor === null || typeof actor !== "object" || typeof actor.kind !== "string" || typeof actor.id !== "string")) {
    throw invalidArgs(`${what}: ctx.actor must be { kind, id, for?, via? } with string kind and id (for: another actor), got ${describe(actor)}`);
  }
  return actor;
}
