// Snapshots and restore (design.md, "Archives, snapshots, history";
// src/snapshot/snapshot.h for the core's part).
//
// The core copies (a memory store's maps into a second memory store kept in
// the core; a sqlite store's database into a file, with SQLite's backup API,
// or holds the file while the runtime copies it: Node)
// and restores (one commit: a marker op, then the puts and deletes that give
// back the snapshot's rows). This file names the snapshots, keeps their
// list and labels (in memory, `<file>.snapshots/<id>.json` beside a Node
// sqlite store: js/snapshots-node.js, or the store's OPFS folder
// snapshots/: js/snapshots-opfs.js), keeps the last N and takes one every
// K commits.

import { ErrorCodes, invalidArgs, refuseUnknownOptions, StoreError } from "./errors.js";
import { commitMeta } from "./core-calls.js";
import { encodeJson } from "./encode.js";
import { describe } from "./schema.js";

/** The default of the `keepSnapshots` open option. */
export const DEFAULT_KEEP_SNAPSHOTS = 10;

/**
 * Checks the `keepSnapshots` and `snapshotEvery` open options; resolves
 * them to `{ keep, every }` (every: 0 for never).
 *
 * @example
 * snapshotOptions({ keepSnapshots: 3 }, "openStore")   // { keep: 3, every: 0 }
 */
export function snapshotOptions(options, what) {
  const { keepSnapshots = DEFAULT_KEEP_SNAPSHOTS, snapshotEvery = 0 } = options ?? {};
  if (!Number.isSafeInteger(keepSnapshots) || keepSnapshots < 1) {
    throw invalidArgs(`${what}: keepSnapshots must be an integer >= 1 (how many snapshots to keep), got ${describe(keepSnapshots)}`);
  }
  if (!Number.isSafeInteger(snapshotEvery) || snapshotEvery < 0) {
    throw invalidArgs(`${what}: snapshotEvery must be an integer >= 0 (a snapshot every K commits; 0: never), got ${describe(snapshotEvery)}`);
  }
  return { keep: keepSnapshots, every: snapshotEvery };
}

/**
 * Where a memory store's snapshots are listed: only here, in this process
 * (the copies themselves are in the core).
 *
 * @example
 * const shelf = memorySnapshots();
 */
export function memorySnapshots() {
  return {
    fileOf: () => "",
    async list() { return []; },
    async save() {},
    async remove() {},
  };
}

// "20261130-201802.512": the UTC time of a snapshot, sortable as text.
function stamp(at) {
  const d = new Date(at).toISOString();  // 2026-11-30T20:18:02.512Z
  return `${d.slice(0, 4)}${d.slice(5, 7)}${d.slice(8, 10)}-${d.slice(11, 13)}${d.slice(14, 16)}${d.slice(17, 23)}`;
}

/**
 * The snapshots of one store. `shelf` says where they are listed
 * (`{ fileOf(id), copyFile?(id), take?(meta), copiesOf?(id), prepare?({
 * make, read }), prepareEvery?, noEvery?, list(), save(meta), remove(id) }`;
 * with copyFile the runtime copies the store's file itself while the core
 * holds it; with take the shelf copies the tables inside the store's own
 * database and answers the seq, and copiesOf(id) gives those copies to the
 * core's restore and to store.at; prepare runs before each step that writes
 * the snapshots `make` or reads the snapshots `read`, and may resolve to a
 * release() called after that step; prepareEvery: snapshotEvery's copies
 * need prepare too, so each is taken right after its commit's step with the
 * queue held; noEvery: why snapshotEvery is refused), `known` is its list
 * at open; `adoptAll(seq, ops)` hands a restore to every owner's adopt hook.
 *
 * @example
 * const snaps = makeSnapshots({ gate, queue, shelf, known, keep: 10, every: 0, adoptAll });
 */
export function makeSnapshots({ gate, queue, shelf, known, keep, every, adoptAll }) {
  const list = [...known].sort((a, b) => a.n - b.n);  // oldest first
  let chain = Promise.resolve();  // list writes, in order
  let failed = null;              // the first failed list write: reported by the next call
  const reserved = new Set();     // ids of snapshots prepared, not taken yet

  // Within one millisecond the ids go on counting, past any that were taken
  // then: a snapshot that keepSnapshots dropped had its id given again to
  // another state (two restore markers naming one id for two contents).
  let lastBase = null;
  let lastK = 1;
  function newId(at) {
    const base = stamp(at);
    let k = base === lastBase ? lastK + 1 : 1;
    const idOf = (n) => (n === 1 ? base : `${base}-${n}`);
    while (reserved.has(idOf(k)) || list.some((s) => s.id === idOf(k))) k++;
    lastBase = base;
    lastK = k;
    return idOf(k);
  }

  // Runs `step(slot)` between the shelf's prepare and release, with the new
  // snapshot's id `make` reserved meanwhile. `slot` is the call's place in
  // the commit queue, taken when it was called (queue.place()): a commit
  // asked for after a snapshot() or restore() comes after it, however long
  // the files take to prepare (before, a sqlite store's restore let a tx
  // asked for after it commit first, and then undid it).
  async function prepared(make, read, step) {
    const place = queue.place();
    let slot = null;
    try {
      return await preparedAt(make, read, async () => step(slot = await place));
    } finally {
      if (slot === null) place.then((s) => s.skip());
      else slot.skip();
    }
  }
  async function preparedAt(make, read, step) {
    reserved.add(make);
    try {
      let release;
      try {
        release = await shelf.prepare?.({ make: [make], read });
      } catch (e) {
        throw e instanceof StoreError ? e : new StoreError(ErrorCodes.StorageFailed, `cannot open the snapshot files: ${e?.name}: ${e?.message}`, { cause: e });
      }
      try {
        return await step();
      } finally {
        release?.();
      }
    } catch (e) {
      // Files the shelf made for a snapshot not taken go.
      if (!list.some((s) => s.id === make)) later(() => shelf.remove(make));
      throw e;
    } finally {
      reserved.delete(make);
    }
  }

  // A list write. A shelf whose writes are synchronous (Node) makes them at
  // once, inside the step: a snapshot is listed once taken (a kill right
  // after keeps it) and keepSnapshots holds during a loop of commits.
  function later(fn) {
    if (shelf.sync) {
      try { fn(); } catch (e) { failed ??= e; }
    } else {
      chain = chain.then(fn).catch((e) => { failed ??= e; });
    }
  }

  function prune() {
    while (list.length > keep) {
      const old = list.shift();
      try { gate.core.snapshotDrop(old.id); } catch { /* the core is gone */ }
      later(() => shelf.remove(old.id));
    }
  }

  // Takes a snapshot now, synchronously, at the current head: called inside
  // a step of the commit queue (or between steps), so no commit is half made.
  function takeNow(label, what, pruneNow = true, id = undefined) {
    const at = Date.now();
    id ??= newId(at);
    const n = list.length > 0 ? list[list.length - 1].n + 1 : 1;
    let seq;
    if (shelf.take) {
      // The shelf copies the tables inside the store's own database
      // (durable: js/snapshots-durable.js), synchronously, at this head.
      try {
        seq = shelf.take({ id, at, label: label ?? null, n });
      } catch (e) {
        throw e instanceof StoreError ? e : new StoreError(ErrorCodes.StorageFailed, `${what}: cannot copy the store's tables: ${e?.message ?? e}`, { cause: e });
      }
    } else if (shelf.copyFile) {
      // The runtime copies the file (Node: the kernel), while the core holds
      // SQLite's shared lock so that no commit of any process lands.
      seq = JSON.parse(gate.call(what, () => gate.core.snapshotHold())).seq;
      try {
        shelf.copyFile(id);
      } catch (e) {
        throw new StoreError(ErrorCodes.StorageFailed, `${what}: cannot copy the store's file: ${e?.message ?? e}`, { cause: e });
      } finally {
        gate.core.snapshotRelease();
      }
    } else {
      seq = JSON.parse(gate.call(what, () => gate.core.snapshotTake(id, shelf.fileOf(id)))).seq;
    }
    const meta = { id, seq, at, label: label ?? null, n };
    list.push(meta);
    later(() => shelf.save(meta));
    if (pruneNow) prune();
    return meta;
  }

  // Resolves once every list write is made, those added meanwhile too (a
  // snapshotEvery copy taken in the chain adds its writes to it then).
  async function drained() {
    for (let c; c !== chain;) await (c = chain);
  }

  async function settled(what) {
    await drained();
    if (failed) {
      const e = failed;
      failed = null;
      throw e;
    }
    return what;
  }

  const pub = (s) => ({ id: s.id, seq: s.seq, at: s.at, label: s.label });

  return {
    /** Resolves once the list writes asked for so far are made (store.close waits for them). */
    idle: drained,
    /**
     * Where a view at `seq` can start (store.at, js/history.js): the newest
     * snapshot with snapshot.seq <= seq as `{ id, seq, file, copies }`
     * (file "" for a memory copy; copies: the tables copied inside the
     * store's database, js/snapshots-durable.js), or null. Synchronous, so
     * that no prune comes between the choice and the copy; `prepare()` first (Node: the folder's path).
     */
    startFor(seq) {
      for (let i = list.length - 1; i >= 0; i--) {
        const s = list[i];
        if (s.seq <= seq) return { id: s.id, seq: s.seq, file: shelf.fileOf(s.id), copies: shelf.copiesOf?.(s.id) };
      }
      return null;
    },
    /**
     * Readies the shelf for startFor's file when some snapshot is at or
     * below `seq` (OPFS: that copy's handles): resolves to the release to
     * call once the view is seeded, or undefined.
     */
    async prepareStart(seq) {
      const start = list.findLast((s) => s.seq <= seq);
      if (start) return shelf.prepare?.({ read: [start.id] });
    },
    /**
     * Takes one after the commit of `seq` when `snapshotEvery` says so
     * (inside the commit step). A shelf with `prepareEvery` (OPFS: the copy's
     * handles are made asynchronously) holds the commit queue from the end of
     * this step until its snapshot is taken, so the snapshot is still exactly
     * at `seq`; snapshots() waits for it.
     */
    afterCommit(seq) {
      if (every > 0 && seq % every === 0 && !gate.broken && !gate.closed) {
        const label = `every ${every} commits`;
        if (shelf.prepareEvery) {
          queue.hold();
          const id = newId(Date.now());
          const taken = preparedAt(id, [], async () => {
            if (!gate.broken && !gate.closed) takeNow(label, "snapshotEvery", true, id);
          }).catch((e) => { failed ??= e; }).finally(() => queue.release());
          chain = chain.then(() => taken);
          return;
        }
        try {
          takeNow(label, "snapshotEvery");
        } catch (e) {
          failed ??= e;
        }
      }
    },
    async snapshot(options = {}) {
      gate.checkOpen("store.snapshot");
      if (options === null || typeof options !== "object") {
        throw invalidArgs(`store.snapshot: options must be { label? }, got ${describe(options)}`);
      }
      refuseUnknownOptions(options, ["label"], "store.snapshot");
      const { label } = options;
      if (label !== undefined && typeof label !== "string") {
        throw invalidArgs(`store.snapshot: label must be a string, got ${describe(label)}`);
      }
      const id = newId(Date.now());
      const meta = await prepared(id, [], (slot) => slot.run(() => takeNow(label, "store.snapshot", true, id)));
      return settled(pub(meta));
    },
    async snapshots() {
      gate.checkOpen("store.snapshots");
      await settled();
      return list.map(pub).reverse();
    },
    async restore(id, ctx) {
      gate.checkOpen("store.restore");
      if (id !== undefined && (typeof id !== "string" || id === "")) {
        throw invalidArgs(`store.restore: id must be a snapshot id from store.snapshots(), or omitted for the newest, got ${describe(id)}`);
      }
      const meta = commitMeta("store", ctx, "store.restore");
      // The newest when omitted: the newest now, before the step.
      const want = id ?? list[list.length - 1]?.id;
      const beforeId = newId(Date.now());
      let before;
      let target;
      const seq = await prepared(beforeId, want !== undefined && list.some((s) => s.id === want) ? [want] : [], (slot) => slot.step(
        () => {
          target = want === undefined ? undefined : list.find((s) => s.id === want);
          if (!target) {
            // The newest when restore() was called may be gone by its turn:
            // a snapshot queued before it dropped it (keepSnapshots). It is
            // named, where "no snapshot yet" was said of a store that
            // lists one.
            throw invalidArgs(id !== undefined
              ? `store.restore: no snapshot ${JSON.stringify(id)}; store.snapshots() lists them`
              : want === undefined
                ? "store.restore: the store has no snapshot yet; take one with store.snapshot()"
                : `store.restore: the newest snapshot when restore() was called, ${JSON.stringify(want)}, was dropped by keepSnapshots (${keep}) for a later one; pass an id from store.snapshots()`);
          }
          const from = target;
          // The current state first, so that this restore can be undone.
          // (Kept N are counted after the restore: the one restored from
          // may be the oldest.)
          before = takeNow(`before restore of ${from.id}`, "store.restore", false, beforeId);
          const marker = encodeJson({ op: "restore", snapshot: from.id, seq: from.seq, undo: before.id }, "restore");
          try {
            const copies = shelf.copiesOf?.(from.id);
            return gate.commit("store.restore", () => (copies !== undefined
              ? gate.core.snapshotRestoreCopies(copies, marker, meta)
              : gate.core.snapshotRestore(from.id, shelf.fileOf(from.id), marker, meta)));
          } catch (e) {
            // Refused (or failed): no restore to undo, so no undo snapshot
            // either (prepared removes its copy once it is off the list).
            list.splice(list.indexOf(before), 1);
            try { gate.core.snapshotDrop(before.id); } catch { /* the core is gone */ }
            throw e;
          } finally {
            prune();
          }
        },
        (seq, ops) => adoptAll(seq, ops),
      ));
      return settled({ seq, snapshot: target.id, undo: before.id });
    },
  };
}
