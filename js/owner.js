// Owners (`store.object(address, hooks)`) and their table handles
// (`owner.table(def)`).
//
// An owner has one line of transactions (js/tx.js) and an optional adopt
// hook, which runs inside each of its commit steps with the commit's ops as
// the core recorded them. Opening a new or changed table commits its table
// record in a step of its own; the handle's reads wait for that step.

import { invalidArgs, refuseUnknownOptions } from "./errors.js";
import { parseJsonExact } from "./encode.js";
import { declarationText, describe, isTableDef, tableName, versionedJson } from "./schema.js";
import { hasRowsStep, migrateRows } from "./migrate.js";
import { runTx } from "./tx.js";
import { checkpointOf, ownerDocuments } from "./documents.js";
import { isEdgesDef, neighbours } from "./edges.js";
import { reportListenerError } from "./watch.js";

/**
 * The table handles of one store: public handle -> state, and full name ->
 * state (for derives and links, which name tables by their full name).
 *
 * @example
 * const handles = makeHandles();
 * const h = handles.of(edits, "read.get");
 */
export function makeHandles() {
  const byHandle = new WeakMap();
  const byFullName = new Map();
  return {
    add(handle, h) {
      byHandle.set(handle, h);
      byFullName.set(h.name, h);
    },
    /** Forgets a handle whose declaration failed (if it is still the one named). */
    drop(h) {
      if (byFullName.get(h.name) === h) byFullName.delete(h.name);
    },
    /** The state of a public handle; invalid/args for anything else. */
    of(t, what) {
      const h = t !== null && typeof t === "object" ? byHandle.get(t) : undefined;
      if (h) return h;
      throw invalidArgs(`${what}: expected a table handle from owner.table(${isTableDef(t) ? t.name : "..."}), got ${describe(t)}`);
    },
    byName(name) {
      return byFullName.get(name);
    },
    /** The full name of the table open with definition `def`, if one owner has it open. */
    nameOfDef(def) {
      let name;
      for (const h of byFullName.values()) {
        if (h.def !== def) continue;
        if (name) return undefined;  // open by several owners: the caller must say which
        name = h.name;
      }
      return name;
    },
  };
}

/**
 * An owner. `parts` is the store's { gate, queue, reads, handles, watches,
 * adopters } (adopters: owner name -> adopt hook, for restores).
 *
 * @example
 * const notes = makeOwner(parts, "notes", { type: "notes" }, { adopt(seq, ops) { view.apply(ops); } });
 */
export function makeOwner(parts, name, address, hooks) {
  const { gate, queue, reads, handles, watches } = parts;
  const tables = new Map();
  let line = Promise.resolve();
  const settled = () => undefined;  // the line goes on whatever a tx gave

  // The owner's hook gets the commit's ops: fetched from the core only when
  // there is a hook to give them to.
  const adopt = hooks?.adopt ? (seq, ops) => hooks.adopt(seq, ops()) : undefined;
  // A restore (js/snapshots.js) changes every owner's tables: the store
  // hands it to each adopt hook too.
  if (hooks?.adopt) parts.adopters?.set(name, hooks.adopt);

  // What the package itself reads of a definition, beside the core's
  // declaration: its json columns' versions (the envelope tx.put writes)
  // and an edges table's kinds (the kinds a write may use).
  function packageSide(def) {
    const versions = versionedJson(def).map(([c, col]) => [c, col.version]);
    return JSON.stringify([versions, isEdgesDef(def) ? def.edges.kinds : null]);
  }

  function table(def, options) {
    gate.checkOpen(`${name}.table`);
    if (!isTableDef(def)) throw invalidArgs(`${name}.table: expected a table made by defineTable, got ${describe(def)}`);
    if (options !== undefined && (options === null || typeof options !== "object")) {
      throw invalidArgs(`${name}.table(${def.name}): options must be { onProgress? }, got ${describe(options)}`);
    }
    refuseUnknownOptions(options, ["onProgress"], `${name}.table(${def.name})`);
    const onProgress = options?.onProgress;
    if (onProgress !== undefined && typeof onProgress !== "function") {
      throw invalidArgs(`${name}.table(${def.name}): onProgress must be a function ({ table, version, done, total }) => void, got ${describe(onProgress)}`);
    }
    const known = tables.get(def.name);
    if (known) {
      // Another object of the same declaration (a definition made in a
      // function, a module loaded again) is the same table.
      if (known.def !== def && (declarationText(known.name, known.def) !== declarationText(known.name, def) || packageSide(known.def) !== packageSide(def))) {
        throw invalidArgs(`${name}.table: table ${JSON.stringify(def.name)} is already open with another definition (other columns, key, indexes, version, json column versions or edge kinds)`);
      }
      return known;
    }
    const full = tableName(name, def);
    const recordText = declarationText(full, def);
    const records = gate.call(`${name}.table(${def.name})`, () => gate.core.declare(recordText));
    // The handle's own state stays here; users get the frozen `handle`.
    // `sameAt`: the schema generation at which the declare found the stored
    // table of this version and shape (""), whose columns are then the
    // definition's, in its order (TableSchema::SameShape): the first read
    // decodes by them without asking the core (js/reads.js, columnsOf).
    // "[]": the same, declared in another order: nothing to commit, and rows
    // decode by the stored order.
    const h = { owner, name: full, def, settled: true, pending: null, failed: null, decode: null, sameAt: records === "" ? gate.schema : -1 };
    const handle = Object.freeze({
      /** The table's full name in the store ("file-history/edits"). */
      name: full,
      /** The definition it was opened with. */
      def,
      /** The owner that opened it. */
      owner,
      /**
       * The row with this key, or undefined. Committed state. A one-column
       * key may be given bare.
       * @example const e1 = await edits.get(["e1"], ctx);
       */
      get: (key, ctx) => reads.get(h, key),
      /**
       * One page of a query: { rows, next? }. Pass `next` as `after` for the
       * following page.
       * @example const { rows, next } = await edits.page(q, 20, ctx, { after: cursor });
       */
      // page(q, limit, { after }), the shape of tx.page and read.page, is
      // taken too: a cursor passed as ctx would be dropped, and a pager
      // loop would never end. So is a third argument that is no ctx (no
      // actor, some key): a misspelt { afer } is refused, not dropped.
      page: (q, limit, ctx, options) => reads.page(h, q, limit, options ?? (ctx !== null && typeof ctx === "object" && !("actor" in ctx) && Object.keys(ctx).length ? ctx : undefined)),
      /**
       * Every row of a query, page by page.
       * @example for await (const row of edits.rows(q, ctx)) console.log(row.path);
       */
      rows: (q, ctx) => reads.rows(h, q),
      /**
       * The number of rows of a query.
       * @example const n = await edits.count(query(Edits).where((e) => prefix(e.path, "a/")), ctx);
       */
      count: (q, ctx) => reads.count(h, q),
      // Tables made by defineEdges (js/edges.js).
      ...(isEdgesDef(def)
        ? {
          /**
           * The edges of a node, one page: { rows, next? }. out: by kind,
           * then to; in: by kind, then from; both: by kind, then the other
           * node, out before in.
           * @example const { rows, next } = await links.neighbours("a", { kind: "cites", direction: "out", limit: 20 });
           */
          neighbours: (node, options) => {
            gate.checkOpen("neighbours");
            return neighbours(reads, h, node, options);
          },
        }
        : {}),
      /**
       * The k rows whose vector column is nearest `vector`: [{ row, distance }],
       * nearest first, equal distances in key order. Options: metric
       * ("cosine", the default, "l2" or "dot") and where. docs/guide.md,
       * "Search by meaning".
       * @example const hits = await docs.nearest((e) => e.embedding, queryVector, 10, { metric: "cosine", where: (e) => eq(e.kind, "message") });
       */
      nearest: (column, vector, k, options) => reads.nearest(h, column, vector, k, options),
    });
    handles.add(handle, h);
    tables.set(def.name, handle);
    if (records !== "" && records !== "[]") {

      h.settled = false;
      h.pending = queue.step(
        () => {
          try {
            const what = `${name}.table(${def.name})`;
            const seq = hasRowsStep(records)
              ? migrateRows({ gate, owner: name, full, def, records: parseJsonExact(records), onProgress })
              : gate.commitOps(what, name, null, records);
            gate.schema++;
            return seq;
          } catch (e) {
            h.failed = e;
            h.settled = true;
            if (tables.get(def.name) === handle) tables.delete(def.name);
            handles.drop(h);
            throw e;
          }
        },
        (seq, ops) => {
          h.settled = true;
          // No call awaits this commit to reject: a throwing hook is
          // reported as a listener's error is (the commit stands).
          try { adopt?.(seq, ops); } catch (e) { reportListenerError(e, `${name} adopt`); }
        },
      ).then(() => undefined, () => undefined);
      if (h.failed) throw h.failed;  // the step ran at once and failed
    }
    return handle;
  }

  function resolveTable(t, what) {
    const h = handles.of(isTableDef(t) ? table(t) : t, what);
    if (h.owner !== owner) {
      throw invalidArgs(`${what}: table ${h.name} belongs to owner ${JSON.stringify(h.owner.name)}, not ${JSON.stringify(name)}`);
    }
    return h;
  }

  // What a transaction of this owner needs (js/tx.js).
  const checkpoint = checkpointOf(hooks?.checkpointWhen, `store.object(${name})`);
  const txParts = { name, gate, queue, reads, resolveTable, adopt, checkpoint };

  const owner = {
    /** The owner's name: its type, or "<host>:<type>". */
    name,
    /** The object address it was opened with. */
    address: Object.freeze({ host: "session", ...address }),
    /**
     * The owner's documents, committed state: find, load (at a past seq),
     * list, versions (js/documents.js). Writes go through tx.documents.
     * @example const doc = await notes.documents.find({ kind: "note", key: "n1" });
     */
    documents: ownerDocuments(gate, name),
    /**
     * Opens one of the owner's tables ("<owner>/<name>" in the store). A new
     * or changed table is declared in a commit of its own.
     * @example const edits = fileHistory.table(Edits);
     */
    table,
    /**
     * Runs a transaction on the owner's line: the tx callbacks of one
     * owner never overlap. Resolves to the callback's value once the
     * commit is durable and the owner's adopt hook has run; a throwing
     * callback commits nothing and the tx rejects with its error. A tx
     * without writes commits nothing (no seq). If the adopt hook throws,
     * the commit stays (it is durable) and the tx rejects with the hook's
     * error. A write refused in the callback fails the whole tx, caught
     * or not. Do not await another tx of the same owner inside the
     * callback: it waits for this one (until close(), which rejects both).
     * @example await fileHistory.tx(async (tx) => { await tx.put(edits, row); }, ctx);
     */
    tx(fn, ctx) {
      // Behind the owner's last tx, or until close() (which then refuses
      // it): a tx that awaits another of its own owner never ends, and
      // neither would the ones queued behind it.
      const run = gate.behind(line).then(() => runTx(txParts, fn, ctx));
      line = run.then(settled, settled);
      return run;
    },
    /**
     * Calls `listener(ops, seq)` after the flush of each commit that
     * touched the table, in seq order, with that commit's ops for it.
     * Returns the unsubscribe function. (js/watch.js)
     * @example const off = fileHistory.watch(edits, (ops, seq) => console.log(seq, ops.length));
     */
    watch(t, listener) {
      gate.checkOpen(`${name}.watch`);
      if (!isTableDef(t)) {
        const h = resolveTable(t, `${name}.watch`);
        return watches().add(h.name, listener, `${name}.watch(${h.name})`);
      }
      // A definition: the watch is added before the table is opened, so
      // that it sees the commit that declares or migrates it (which runs
      // within table() when the owner's line is idle).
      const full = tableName(name, t);
      const off = watches().add(full, listener, `${name}.watch(${full})`);
      try {
        resolveTable(t, `${name}.watch`);
      } catch (e) {
        off();
        throw e;
      }
      return off;
    },
  };
  return Object.freeze(owner);
}
