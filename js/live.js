// The flush after each commit step (seed W1: adopt and mark in the step,
// flush right after). The store calls `flush(seq, opsOf)` synchronously at
// the end of every step, after adoption and before the next step or any other
// code runs. The flush groups the commit's ops by table, recomputes the dirty
// derives someone holds, hands each link server the commit (it sends at most
// one message per link), and queues the watch listeners, which run later.
//
// Nothing here can fail a commit: the commit is durable before the flush
// starts, so an error in a derive, a link or a listener is reported to its
// own holder and the flush goes on.

import { makeDerives } from "./derive.js";
import { makeWatches, reportListenerError } from "./watch.js";

const NO_DERIVES = new Set();

/**
 * Groups wire ops by their table: Map<table name, ops[]>, in commit order.
 *
 * @example
 * opsByTable([{ op: "put", table: "a/b", row: {} }])   // Map { "a/b" => [op] }
 */
export function opsByTable(ops) {
  const out = new Map();
  for (const op of ops) {
    if (!op || typeof op.table !== "string") continue;
    let list = out.get(op.table);
    if (!list) out.set(op.table, (list = []));
    list.push(op);
  }
  return out;
}

/**
 * The watches, derives and link sinks of one store, and its flush.
 *
 * @example
 * const live = makeLive(io);
 * live.flush(seq, () => ops);   // at the end of the commit step
 */
export function makeLive(io) {
  const watches = makeWatches();
  const derives = makeDerives(io);
  const sinks = new Set();  // { commit(seq, opsByTable, recomputed, docOps), closed() }, one per link server

  return {
    watches,
    derives,
    /** Adds a link server's sink; returns its removal. */
    addSink(sink) {
      sinks.add(sink);
      return () => sinks.delete(sink);
    },
    flush(seq, opsOf) {
      if (watches.size === 0 && derives.size === 0 && sinks.size === 0) return;
      let byTable;
      let docOps;
      try {
        const ops = opsOf();
        byTable = opsByTable(ops);
        // Document ops name no table: links that hold a document read them.
        docOps = sinks.size > 0 ? ops.filter((op) => typeof op?.op === "string" && op.op.startsWith("doc.")) : [];
      } catch (e) {
        reportListenerError(e, `flush of seq ${seq}`);
        return;
      }
      const recomputed = derives.size > 0 ? derives.flush(byTable, seq) : NO_DERIVES;
      for (const sink of sinks) {
        try {
          sink.commit(seq, byTable, recomputed, docOps);
        } catch (e) {
          reportListenerError(e, `link flush of seq ${seq}`);
        }
      }
      watches.queue(byTable, seq);
    },
    close(err) {
      watches.clear();
      derives.clear();
      for (const sink of [...sinks]) {
        try { sink.closed(err); } catch (e) { reportListenerError(e, "link close"); }
      }
      sinks.clear();
    },
  };
}
