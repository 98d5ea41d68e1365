// Watches: `owner.watch(table, (ops, seq) => …)`.
//
// The commit step only marks: the flush right after it hands each touched
// watch that commit's ops for its table. The listener itself runs afterwards
// (a microtask later), never inside the step, so a slow or throwing listener
// cannot hold up or fail a commit. Each watch has its own line: its calls run
// one at a time in seq order, and a listener that returns a promise is
// awaited before its next call (a routine's handler calls never overlap).

import { invalidArgs } from "./errors.js";
import { describe } from "./schema.js";

/**
 * Reports an error of a listener that has nobody to reject to: the page's
 * error event where there is one (reportError), the console elsewhere.
 *
 * @example
 * reportListenerError(e, "watch(notes/items)");
 */
export function reportListenerError(error, where) {
  if (typeof globalThis.reportError === "function") {
    globalThis.reportError(error);
  } else {
    console.error(`onestore: ${where} listener threw:`, error);
  }
}

/**
 * A line of listener calls: each runs after the previous one settled, in the
 * order they were queued.
 *
 * @example
 * const line = makeLine("watch(notes/items)"); line.push(() => render());
 */
export function makeLine(where) {
  let tail = Promise.resolve();
  return {
    push(fn) {
      tail = tail.then(fn).catch((e) => reportListenerError(e, where));
    },
    /** Settles after every call queued so far has run. */
    idle() {
      return tail;
    },
  };
}

/**
 * The watches of one store, by full table name.
 *
 * @example
 * const watches = makeWatches();
 * const off = watches.add("notes/items", (ops, seq) => console.log(seq, ops));
 * watches.queue(new Map([["notes/items", ops]]), 7);
 */
export function makeWatches() {
  const byTable = new Map();  // table name -> Set of { listener, line }

  return {
    get size() {
      return byTable.size;
    },
    add(table, listener, what) {
      if (typeof listener !== "function") {
        throw invalidArgs(`${what}: the listener must be a function (ops, seq) => ..., got ${describe(listener)}`);
      }
      const w = { listener, line: makeLine(what), live: true };
      let set = byTable.get(table);
      if (!set) byTable.set(table, (set = new Set()));
      set.add(w);
      return function unsubscribe() {
        w.live = false;
        set.delete(w);
        if (set.size === 0 && byTable.get(table) === set) byTable.delete(table);
      };
    },
    /** Queues one call per watch of a touched table (called by the flush). */
    queue(opsByTable, seq) {
      for (const [table, ops] of opsByTable) {
        const set = byTable.get(table);
        if (!set) continue;
        for (const w of set) {
          w.line.push(() => (w.live ? w.listener(ops, seq) : undefined));
        }
      }
    },
    // The store closed: no call is queued after this, and those queued
    // already (each for a commit acknowledged before the close) are still
    // made. Before, they were dropped, so even a synchronous listener
    // missed the commits of the last microtasks before a close.
    clear() {
      byTable.clear();
    },
  };
}
