// Eager migrations: the `rows` steps of a table's migrations.
//
// `owner.table(def)` gets from the core (Store::Declare) the records that
// take the stored table to `def.version`; a step with `rows: (row) => newRow`
// appears there as a marker {"op":"rows","table":t,"version":v}. This module
// replaces each marker with the ops that rewrite every row: it reads the
// committed rows page by page, gives each one to `rows` in the shape of that
// version (the alters up to it, and the `rows` of earlier steps, applied in
// JS), and stages the resulting ops in one core transaction (core.txStage,
// a page at a time) with the other records, committed at the end as one
// commit (core.txCommit). Nothing is written before that commit: a `rows`
// that throws, or a crash, leaves the old table whole.

import { invalidArgs, userThrew } from "./errors.js";
import { encodeJson, rowDecoder } from "./encode.js";
import { vectorWire } from "./vectors.js";
import { toExpr } from "./expr.js";
import { describe, readJson, storedJson } from "./schema.js";
import { plainRow } from "./data.js";

const PAGE = 1000;

/** True when the core's records (JSON text) hold a rows marker. */
export function hasRowsStep(recordsText) {
  return recordsText.includes('"op":"rows"');
}

// The row in the shape after `alter` (drop, then rename, then add). An added
// column holds its default as declared (a versioned json column's too: the
// migration's update puts it in its envelope, js/schema.js, declaration).
function alterRow(row, alter) {
  const out = { ...row };
  for (const c of alter.drop ?? []) delete out[c];
  for (const [from, to] of Object.entries(alter.rename ?? {})) {
    const v = out[from];
    delete out[from];
    out[to] = v;
  }
  for (const [c, spec] of Object.entries(alter.add ?? {})) out[c] = spec.default ?? null;
  return out;
}

/**
 * The json column of `def` that `name`, a column name after the first
 * `from` of `alters` (each { drop?, rename? }, oldest first), becomes:
 * [its name in def, its builder]; undefined if none, or if it is dropped
 * (added back by the same alter, it is a new column that starts from its
 * default: the dropped values are not its own, and never reach its
 * migrate). A view at a past seq reads a table's json columns by it too
 * (js/history.js).
 *
 * @example
 * jsonColumnThrough(V2, [{ rename: { meta: "info" } }], "meta")   // ["info", V2.columns.info]
 */
export function jsonColumnThrough(def, alters, name, from = 0) {
  const own = (o, k) => o !== undefined && o !== null && Object.prototype.hasOwnProperty.call(o, k);
  let n = name;
  for (let i = from; i < alters.length; i++) {
    const a = alters[i];
    if ((a.drop ?? []).includes(n)) return undefined;
    if (own(a.rename, n)) n = a.rename[n];
  }
  const c = own(def.columns, n) ? def.columns[n] : undefined;
  return c?.type === "json" ? [n, c] : undefined;
}

// The json columns through a migration's alters. A `rows` step sees a json
// value as the owner's reads give it (out of its version's envelope,
// migrated: js/schema.js, readJson) and writes it as tx.put and tx.update do
// (storedJson); the column's version and migrate are those of `def`, found
// by following the name through the alters still to come.
function jsonColumns(def, full, alters) {
  const columnOf = (name, from) => jsonColumnThrough(def, alters, name, from);
  return {
    /** A stored value of column `name` (after `from` alters) as a read gives it. */
    read(name, from, v) {
      const c = columnOf(name, from);
      return c === undefined ? v : readJson(c[1], full, c[0], v);
    },
    /** A value (or a value expression) of column `name` as tx.put stores it. */
    write(name, from, v) {
      const c = columnOf(name, from);
      return c === undefined ? v : storedJson(c[1], v);
    },
  };
}

function alterKey(key, alter) {
  return key.map((c) => alter.rename?.[c] ?? c);
}

// Whether `rows` leaves a key column as it is: `next`, the value it
// returned, is undefined (kept) or the stored value, a BigInt as the int
// it equals (tx.put stores either the same).
function sameKeyValue(next, stored) {
  if (next === undefined || next === stored) return true;
  if (typeof next === "bigint" && typeof stored === "number") return Number.isInteger(stored) && next === BigInt(stored);
  if (typeof next === "number" && typeof stored === "bigint") return Number.isInteger(next) && BigInt(next) === stored;
  return false;
}

// `row` with the columns `rows` returned: one returned as undefined keeps
// its value (as in the update a step stages).
function withColumns(row, next) {
  const out = { ...row };
  for (const [c, v] of Object.entries(next)) if (v !== undefined) out[c] = v;
  return out;
}

/**
 * Runs the migration `records` (parsed, markers included) of table `full`
 * inside the current commit step and commits it as one commit. Returns what
 * gate.commit returns. `progress({ table, version, done, total })` is called
 * after each page of each `rows` step.
 *
 * @example
 * const done = migrateRows({ gate, owner: "notes", full: "notes/items", def, records, onProgress });
 */
export function migrateRows({ gate, owner, full, def, records, onProgress }) {
  const { core } = gate;
  const what = `${owner}.table(${def.name})`;
  const stored = JSON.parse(gate.call(what, () => core.tables())).find((t) => t.table === full);
  const decode = rowDecoder(Object.entries(stored.columns).map(([name, c]) => ({ name, type: c.type })));
  const total = Number(gate.call(what, () => core.count(full, "{}")));
  // The JS side of each step up to a marker: the alters and rows to replay.
  const chain = [];
  const json = jsonColumns(def, full, records.filter((r) => r.op === "alter"));
  const tx = Number(gate.call(what, () => core.txOpen()));
  try {
    let pending = [];
    const flush = () => {
      if (pending.length === 0) return;
      const text = "[" + pending.join(",") + "]";
      pending = [];
      gate.call(what, () => core.txStage(tx, text));
    };
    for (const record of records) {
      if (record.op === "alter") chain.push({ alter: record });
      if (record.op !== "rows") {
        pending.push(encodeJson(record, "migration"));
        continue;
      }
      const fn = def.migrations[record.version]?.rows;
      if (typeof fn !== "function") throw invalidArgs(`${what}: migrations.${record.version}.rows must be a function (row) => newRow`);
      flush();
      // The last step of this migration up to this one with an `update`
      // (staged before this step's rows): a row that `rows` moves to a new
      // key is written whole from the row `rows` saw, which lacks it.
      let updatedAt = 0;
      for (let v = stored.version + 1; v <= record.version; v++) if (def.migrations[v]?.update) updatedAt = v;
      rewriteRows({ gate, what, full, total, decode, json, storedKey: stored.key, chain, version: record.version, fn, tx, onProgress, updatedAt });
      chain.push({ rows: fn });
    }
    flush();
    return gate.commitOps(what, owner, null, "[]", tx);
  } finally {
    try { core.txClose(tx); } catch { /* gone with the instance */ }
  }
}

// A row's vector columns (read back as Float32Arrays) in their wire form.
function vectorsAsWire(row, what) {
  for (const [c, v] of Object.entries(row)) if (v instanceof Float32Array) row[c] = vectorWire(v, v.length, `${what}: ${c}`);
  return row;
}

// Reads every committed row, brings it to `version` through `chain`, calls
// `fn` and stages its ops: updates by key (and deletes) a page at a time,
// then the puts of rows whose key changed (after every delete, so that a new
// key never meets an old row that is about to go). A moved row is written
// whole, so it is refused when the migration staged an `update` before this
// step (the put would undo it), and when its new key is another row's (the
// put would replace that row).
function rewriteRows({ gate, what, full, total, decode, json, storedKey, chain, version, fn, tx, onProgress, updatedAt }) {
  const { core } = gate;
  let key = storedKey;
  for (const step of chain) if (step.alter) key = alterKey(key, step.alter);
  // The alters before this step, and each row's stored values as reads give them.
  const altered = chain.filter((step) => step.alter).length;
  const readRow = (raw) => {
    let row = decode(raw);
    for (const c of Object.keys(row)) row[c] = json.read(c, 0, row[c]);
    for (const step of chain) row = step.alter ? alterRow(row, step.alter) : withColumns(row, result(step.rows, row, what, version));
    return row;
  };
  const puts = [];
  const stays = new Set();  // the keys of rows that keep theirs
  const lands = new Map();  // a moved row's new key -> its old key
  const keyText = (k) => encodeJson(k, "key");
  let after = "";
  let done = 0;
  for (;;) {
    const got = gate.call(what, () => core.page(full, "{}", PAGE, after));
    const answer = typeof got === "string" ? JSON.parse(got) : got;  // as in js/reads.js
    const ops = [];
    for (const raw of answer.rows) {
      const row = readRow(raw);
      const next = result(fn, row, what, version);
      const oldKey = key.map((c) => row[c]);
      const moved = key.some((c) => !sameKeyValue(next[c], row[c]));
      if (moved) {
        const whole = withColumns(row, next);
        const newKey = key.map((c) => whole[c]);
        if (updatedAt > 0) {
          throw invalidArgs(`${what}: migrations.${version}.rows moves the row of key ${keyText(oldKey)} to ${keyText(newKey)}, after migrations.${updatedAt}.update, which a moved row would undo: make that change in rows. Nothing was changed`);
        }
        const landing = keyText(newKey);
        if (lands.has(landing)) {
          throw invalidArgs(`${what}: migrations.${version}.rows moves the rows of keys ${lands.get(landing)} and ${keyText(oldKey)} both to ${landing}; one would replace the other. Nothing was changed`);
        }
        lands.set(landing, keyText(oldKey));
        for (const c of Object.keys(whole)) whole[c] = json.write(c, altered, whole[c]);
        ops.push(encodeJson({ op: "delete", table: full, key: oldKey }, "migration"));
        puts.push(encodeJson({ op: "put", table: full, row: vectorsAsWire(whole, what) }, "migration"));
        continue;
      }
      stays.add(keyText(oldKey));
      const set = {};
      for (const [c, v] of Object.entries(next)) {
        if (v === undefined || key.includes(c)) continue;
        set[c] = json.write(c, altered, toExpr(v instanceof Float32Array ? vectorWire(v, v.length, `${what}: ${c}`) : v));
      }
      if (Object.keys(set).length > 0) ops.push(encodeJson({ op: "update", table: full, key: oldKey, set }, "migration"));
    }
    if (ops.length > 0) gate.call(what, () => core.txStage(tx, "[" + ops.join(",") + "]"));
    done += answer.rows.length;
    if (onProgress) onProgress({ table: full, version, done, total });
    if (!answer.next) break;
    after = answer.next;
  }
  for (const [landing, from] of lands) {
    if (stays.has(landing)) {
      throw invalidArgs(`${what}: migrations.${version}.rows moves the row of key ${from} to ${landing}, the key of a row it keeps; the moved row would replace it. Nothing was changed`);
    }
  }
  for (let i = 0; i < puts.length; i += PAGE) {
    gate.call(what, () => core.txStage(tx, "[" + puts.slice(i, i + PAGE).join(",") + "]"));
  }
}

function result(fn, row, what, version) {
  let next;
  try {
    next = fn({ ...row });
  } catch (e) {
    throw userThrew(e, `${what}: migrations.${version}.rows`, "; nothing was changed");
  }
  if (next === null || typeof next !== "object" || Array.isArray(next)) {
    throw invalidArgs(`${what}: migrations.${version}.rows must return the row's new columns as an object, got ${describe(next)}`);
  }
  // Held to tx.put's rule for values (a Date, a Map or a Promise from an
  // async function is refused, not written as its JSON).
  return plainRow(next, `${what}: migrations.${version}.rows(row)`);
}
