// Tables: defineTable and the column builders.
//
// A table definition is a plain, frozen value. Its full name in the store
// ("<type>/<name>", or "<host>:<type>/<name>" for a host kind other than
// "session") is known only when an owner opens it; `tableRecord` writes the
// wire `table` record the core declares and stores in the log.

import { ErrorCodes, StoreError, invalidArgs, refuseUnknownOptions, userThrew } from "./errors.js";
import { encodeJson } from "./encode.js";
import { coalesce, isExpr, toExpr, value, when } from "./expr.js";
import { vectorWire } from "./vectors.js";
import { plainData } from "./data.js";

const TYPES = new Set(["str", "int", "bool", "num", "json", "vector"]);
export const TABLE = Symbol.for("onestore.table");

function column(type, opts = {}, isOptional = false, dims = undefined) {
  if (opts === null || typeof opts !== "object") throw invalidArgs(`${type}(): options must be an object, got ${String(opts)}`);
  for (const k of Object.keys(opts)) {
    if (k !== "default" && !(type === "json" && (k === "version" || k === "migrate"))) {
      throw invalidArgs(`${type}(): unknown option ${JSON.stringify(k)}${k === "optional" ? ` (a column that allows null is ${type}().optional())` : ""}; the options are { default${type === "json" ? ", version, migrate" : ""} }`);
    }
  }
  const hasDefault = Object.prototype.hasOwnProperty.call(opts, "default");
  if (hasDefault && opts.default === undefined) {
    throw invalidArgs(`${type}(): default is undefined; leave it out, or give a value`);
  }
  // A default is held to a put's rule (a Date, a Map or a class instance
  // is refused, not stored as what JSON.stringify makes of it), and a json
  // one copied: the definition is frozen.
  let dflt = hasDefault && type !== "vector" && opts.default !== null ? plainData(opts.default, `${type}().default`) : opts.default;
  // A vector default reads as a read gives the column: a Float32Array (its
  // own copy), checked against dims here rather than at the first declare.
  if (hasDefault && type === "vector" && dflt !== null) {
    vectorWire(dflt, dims, "vector().default");
    dflt = Float32Array.from(dflt);
  }
  const versioned = type === "json" && opts.version !== undefined;
  if (versioned && (!Number.isSafeInteger(opts.version) || opts.version < 1)) {
    throw invalidArgs(`json(): version must be a positive integer, got ${describe(opts.version)}`);
  }
  if (versioned && opts.version > 1 && typeof opts.migrate !== "function") {
    throw invalidArgs(`json({ version: ${opts.version} }): migrate must be a function (old, from) => value, got ${describe(opts.migrate)}`);
  }
  const c = {
    type,
    ...(type === "vector" ? { dims } : {}),
    isOptional,
    hasDefault,
    default: hasDefault ? dflt : undefined,
    ...(versioned ? { version: opts.version, migrate: opts.migrate } : {}),
    /** The same column, allowing null. */
    optional() {
      return column(type, opts, true, dims);
    },
  };
  return Object.freeze(c);
}

/**
 * A text column (UTF-8, without NUL; a lone surrogate is stored as U+FFFD).
 *
 * @example
 * defineTable("edits", { columns: { id: str(), path: str({ default: "" }) }, key: ["id"] })
 */
export function str(opts) {
  return column("str", opts);
}

/**
 * A 64-bit integer column. Takes safe integers or BigInts; reads back a
 * number, or a BigInt beyond 2^53.
 *
 * @example
 * defineTable("edits", { columns: { id: int(), at: int({ default: 0 }) }, key: ["id"] })
 */
export function int(opts) {
  return column("int", opts);
}

/**
 * A boolean column.
 *
 * @example
 * defineTable("tasks", { columns: { id: str(), done: bool({ default: false }) }, key: ["id"] })
 */
export function bool(opts) {
  return column("bool", opts);
}

/**
 * A finite floating-point number column.
 *
 * @example
 * defineTable("scores", { columns: { id: str(), score: num() }, key: ["id"] })
 */
export function num(opts) {
  return column("num", opts);
}

/**
 * A JSON column: any JSON value, typed when read, never queried, ordered,
 * keyed or indexed. With `{ version, migrate }` its values carry their
 * version (docs/formats.md, "Versioned json values"): a value of an older
 * version is given to `migrate(old, from)` when it is read, and stored in
 * the new shape the next time the column is written; a newer one is refused
 * with schema/newer.
 *
 * @example
 * defineTable("edits", { columns: { id: str(), meta: json() }, key: ["id"] })
 * json({ version: 2, migrate: (old, from) => ({ ...old, tags: [] }) })
 */
export function json(opts) {
  return column("json", opts);
}

/**
 * A vector column: `dims` float32 (1 to 16384), written from a Float32Array
 * or an array of numbers, read back as a Float32Array; searched with
 * `table.nearest` (docs/guide.md, "Search by meaning"). Never queried,
 * ordered, keyed or indexed.
 *
 * @example
 * defineTable("docs", { columns: { id: str(), text: str(), embedding: vector(384) }, key: ["id"] })
 */
export function vector(dims, opts) {
  if (!Number.isSafeInteger(dims) || dims < 1 || dims > 16384) {
    throw invalidArgs(`vector(): dims must be an integer from 1 to 16384 (the number of float32), got ${describe(dims)}`);
  }
  return column("vector", opts, false, dims);
}

// The envelope of a versioned json value: exactly {"$v": n, "$value": v}.
function isEnvelope(v) {
  if (v === null || typeof v !== "object" || Array.isArray(v) || !Object.prototype.hasOwnProperty.call(v, "$v")) return false;
  const keys = Object.keys(v);
  return keys.length === 2 && keys.includes("$v") && keys.includes("$value") && Number.isSafeInteger(Number(v.$v));
}

const versionedOf = new WeakMap();  // def -> its versioned json columns (tx.put asks on every put)

/** The json columns of `def` that write their version: [[name, column], ...]. */
export function versionedJson(def) {
  let list = versionedOf.get(def);
  if (list === undefined) {
    list = Object.entries(def.columns).filter(([, c]) => c.type === "json" && c.version > 1);
    versionedOf.set(def, list);
  }
  return list;
}

/**
 * A value for a versioned json column as stored: in its envelope.
 *
 * @example
 * storedJson(MetaV2, { a: 1 })   // { $v: 2, $value: { a: 1 } }
 */
export function storedJson(c, v) {
  if (v === null || v === undefined || !(c.version > 1)) return v;
  if (!isExpr(v)) return { $v: c.version, $value: v };
  // An expression: each value it may give is stored in its envelope (a
  // value(), the arms of coalesce and when); a column is copied as stored.
  if ("value" in v) return v.value === null ? v : value({ $v: c.version, $value: v.value });
  if (v.coalesce) return coalesce(...v.coalesce.map((a) => storedJson(c, a)));
  if (v.when) return when(v.when[0], storedJson(c, v.when[1]), storedJson(c, v.when[2]));
  if ("col" in v) return v;
  throw invalidArgs(`a versioned json column takes a value, col(), coalesce() or when(), got ${describe(v)}`);
}

/**
 * A stored json value as this code reads it: out of its envelope, migrated
 * from an older version (a value without one is version 1); a newer version
 * throws schema/newer, a migrate that throws invalid/args.
 *
 * @example
 * readJson({ version: 2, migrate }, "notes/items", "meta", { tags: 1 })   // migrate({ tags: 1 }, 1)
 */
export function readJson(c, table, name, stored) {
  if (stored === null || stored === undefined) return stored;
  const mine = c.version ?? 1;
  let from = 1;
  let value = stored;
  if (isEnvelope(stored)) {
    from = Number(stored.$v);
    value = stored.$value;
  }
  if (from === mine) return value;
  if (from > mine) {
    throw new StoreError(ErrorCodes.SchemaNewer, `${table}: column ${name} holds a json value of version ${from}, newer than version ${mine} that this code declares`);
  }
  try {
    return c.migrate(value, from);
  } catch (e) {
    throw userThrew(e, `${table}: column ${name}: migrate from version ${from}`);
  }
}

/**
 * Defines a table: its columns (a flat record), its key and its indexes.
 * The value is frozen and can be shared by every store and owner. The core
 * checks the names and the column count when an owner opens the table
 * (docs/api.md, "Names and limits").
 *
 * @example
 * const Edits = defineTable("edits", {
 *   version: 2,
 *   columns: { id: str(), path: str(), entry: int(), at: int(), meta: json() },
 *   key: ["id"],
 *   indexes: { byPath: ["path", "at"], byEntry: ["entry"] },
 * });
 */
export function defineTable(name, spec) {
  if (typeof name !== "string" || name === "") throw invalidArgs(`defineTable: the name must be a non-empty string, got ${describe(name)}`);
  if (!wellFormedName(name)) throw invalidArgs(`defineTable: the name ${describe(name)} holds a lone surrogate; a name must be well-formed text`);
  if (spec === null || typeof spec !== "object") throw invalidArgs(`defineTable("${name}"): the second argument must be { columns, key }, got ${describe(spec)}`);
  for (const k of Object.keys(spec)) {
    // `name`: a definition spread into a spec ({ ...Items, migrations }).
    if (!SPEC_FIELDS.includes(k) && k !== "name") throw invalidArgs(`defineTable("${name}"): unknown field ${JSON.stringify(k)}; a table takes ${SPEC_FIELDS.join(", ")}`);
  }
  const { version = 1, columns, key, indexes = {}, migrations = {} } = spec;
  if (columns === null || typeof columns !== "object" || Object.keys(columns).length === 0) {
    throw invalidArgs(`defineTable("${name}"): columns must be an object of str(), int(), ... builders, got ${describe(columns)}`);
  }
  for (const [col, c] of Object.entries(columns)) {
    if (!c || !TYPES.has(c.type) || typeof c.optional !== "function") {
      throw invalidArgs(`defineTable("${name}"): column ${col} must be made with str(), int(), bool(), num(), json() or vector(n), got ${describe(c)}`);
    }
  }
  const keyList = typeof key === "string" ? [key] : key;
  if (!Array.isArray(keyList) || keyList.length === 0) {
    throw invalidArgs(`defineTable("${name}"): key must be a non-empty array of column names, got ${describe(key)}`);
  }
  if (indexes === null || typeof indexes !== "object") throw invalidArgs(`defineTable("${name}"): indexes must be an object, got ${describe(indexes)}`);
  if (migrations === null || typeof migrations !== "object" || Array.isArray(migrations)) {
    throw invalidArgs(`defineTable("${name}"): migrations must be an object keyed by version, got ${describe(migrations)}`);
  }
  for (const [v, m] of Object.entries(migrations)) {
    if (!/^[0-9]+$/.test(v) || Number(v) < 2 || Number(v) > version) {
      throw invalidArgs(`defineTable("${name}"): migrations.${v}: a migration is keyed by the version it makes, from 2 to the declared version ${describe(version)}`);
    }
    if (m === null || typeof m !== "object") throw invalidArgs(`defineTable("${name}"): migrations.${v} must be { alter }, got ${describe(m)}`);
    for (const k of Object.keys(m)) {
      if (k !== "alter" && k !== "update" && k !== "rows") throw invalidArgs(`defineTable("${name}"): migrations.${v}.${k}: a migration takes alter, update and rows`);
    }
    if (m.rows !== undefined && typeof m.rows !== "function") {
      throw invalidArgs(`defineTable("${name}"): migrations.${v}.rows must be a function (row) => newRow, got ${describe(m.rows)}`);
    }
    if (m.update !== undefined && (m.update === null || typeof m.update !== "object" || Array.isArray(m.update))) {
      throw invalidArgs(`defineTable("${name}"): migrations.${v}.update must be an object of column: value or expression, got ${describe(m.update)}`);
    }
  }
  const def = {
    name,
    version,
    columns: Object.freeze({ ...columns }),
    key: Object.freeze([...keyList]),
    indexes: Object.freeze(Object.fromEntries(Object.entries(indexes).map(([k, v]) => [k, Object.freeze(Array.isArray(v) ? [...v] : v)]))),
    migrations: Object.freeze({ ...migrations }),
    [TABLE]: true,
  };
  Object.freeze(def);
  // Its declaration's text is kept (declarationText) unless it reads an
  // object of the caller's at each declare: a migration step's, or an
  // object default (a json default, a vector's Float32Array).
  const fixed = Object.keys(migrations).length === 0 &&
    Object.values(columns).every((c) => c.default === null || typeof c.default !== "object");
  if (fixed) declarationTexts.set(def, new Map());
  return def;
}

// The declaration texts of the definitions whose declaration cannot change,
// by full name: an open of a store file declares each table it reads, and
// the text was about a fifth of the table's part of an open
// (docs/performance.md, "Issue 13, the declare and the first read of an
// open"). An object spread from a definition passes for one, but is the
// caller's to change: it is not here, and is encoded at every declare.
const declarationTexts = new WeakMap();  // def -> Map(full name -> text)

/**
 * `copy`, a frozen definition made from `def` by adding members no
 * declaration reads (defineEdges' `edges`), keeps its declaration's text
 * as `def` does.
 */
export function sameDeclaration(copy, def) {
  if (declarationTexts.has(def)) declarationTexts.set(copy, new Map());
  return copy;
}

// The fields of defineTable's spec.
const SPEC_FIELDS = ["columns", "key", "indexes", "version", "migrations"];

// The core checks every name (src/schema/schema.h, CheckPlainName), but it
// never sees a lone surrogate: the encoder turns it into U+FFFD on its way to
// UTF-8 (which the core then refuses). This early check names the real cause.
function wellFormedName(s) {
  return typeof s.isWellFormed === "function" ? s.isWellFormed() : !/[\uD800-\uDFFF]/.test(s.replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g, ""));
}

/**
 * True for a value made by defineTable.
 *
 * @example
 * isTableDef(Edits)   // true
 */
export function isTableDef(v) {
  return v !== null && typeof v === "object" && v[TABLE] === true;
}

/**
 * The owner name of an object address: its type for host kind "session",
 * else "<host>:<type>".
 *
 * @example
 * ownerName({ host: "session", type: "file-history" })   // "file-history"
 * ownerName({ host: "workspace", type: "notes" })        // "workspace:notes"
 */
export function ownerName(addr) {
  if (addr === null || typeof addr !== "object") throw invalidArgs(`store.object: the address must be { host, type }, got ${describe(addr)}`);
  // A misspelt host would put the owner's writes under another owner.
  refuseUnknownOptions(addr, ["host", "type"], "store.object: the address");
  const { host = "session", type } = addr;
  if (typeof type !== "string" || type === "" || type.includes("/") || type.includes(":")) {
    throw invalidArgs(`store.object: type must be a non-empty string without "/" or ":", got ${describe(type)}`);
  }
  if (typeof host !== "string" || host === "" || host.includes("/") || host.includes(":")) {
    throw invalidArgs(`store.object: host must be a non-empty string without "/" or ":", got ${describe(host)}`);
  }
  for (const [what, v] of [["type", type], ["host", host]]) {
    if (!wellFormedName(v)) throw invalidArgs(`store.object: ${what} ${describe(v)} holds a lone surrogate; a name must be well-formed text`);
  }
  return host === "session" ? type : `${host}:${type}`;
}

/**
 * The full table name of `def` opened by the owner `owner`.
 *
 * @example
 * tableName("file-history", Edits)   // "file-history/edits"
 */
export function tableName(owner, def) {
  return `${owner}/${def.name}`;
}

/**
 * The wire `table` record declaring `def` under its full name.
 *
 * @example
 * tableRecord("file-history/edits", Edits)
 * // { op: "table", table: "file-history/edits", version: 2, columns: { id: { type: "str" }, ... }, key: ["id"], indexes: {...} }
 */
export function tableRecord(fullName, def) {
  // fromEntries, not columns[name] = ...: a column named "__proto__" must
  // reach the core (which refuses it) rather than set the object's prototype.
  const columns = Object.fromEntries(Object.entries(def.columns).map(([name, c]) => [name, wireColumn(c)]));
  return { op: "table", table: fullName, version: def.version, columns, key: [...def.key], indexes: { ...def.indexes } };
}

// A column builder's wire form; anything else is passed on for the core to check.
function wireColumn(c) {
  if (c === null || typeof c !== "object" || !TYPES.has(c.type) || typeof c.optional !== "function") return c;
  const wire = { type: c.type };
  if (c.type === "vector") wire.dims = c.dims;
  if (c.isOptional) wire.optional = true;
  if (c.hasDefault) wire.default = c.type === "vector" ? vectorWire(c.default, c.dims, "vector().default") : c.default;
  return wire;
}

/**
 * What `owner.table(def)` sends the core: the table record, with the alters
 * and updates of its migrations (`{ 4: { alter: { drop, rename, add },
 * update: { col: expr } } }`, added columns in their wire form, updates as
 * wire expressions). The core picks the steps above the stored version.
 *
 * @example
 * declaration("file-history/edits", Edits)
 * // { op: "table", ..., migrations: { 2: { alter: { add: { size: { type: "int", default: 0 } } } } } }
 */
export function declaration(fullName, def) {
  const record = tableRecord(fullName, def);
  const migrations = {};
  for (const [v, m] of Object.entries(def.migrations ?? {})) {
    const step = {};
    if (m.alter !== undefined) {
      const alter = m.alter !== null && typeof m.alter === "object" ? { ...m.alter } : m.alter;
      if (alter && alter.add !== null && typeof alter.add === "object") {
        alter.add = Object.fromEntries(Object.entries(alter.add).map(([n, c]) => [n, wireColumn(c)]));
      }
      step.alter = alter;
    }
    if (m.update !== undefined) {
      // A versioned json column's literal is written in its envelope, as
      // tx.update writes it (storedJson).
      step.update = Object.fromEntries(Object.entries(m.update).filter(([, e]) => e !== undefined).map(([c, e]) => {
        const col = def.columns[c];
        const versioned = Object.prototype.hasOwnProperty.call(def.columns, c) && col?.type === "json" && col.version > 1;
        return [c, versioned ? storedJson(col, toExpr(e)) : toExpr(e)];
      }));
    }
    // A versioned json column added with a default: the rows it is added to
    // hold the default bare (the table record's default, which a put never
    // uses: tx.put writes it in its envelope), which a read would take for
    // version 1 and migrate. The step's update sets it in its envelope.
    for (const [n, c] of Object.entries(m.alter?.add ?? {})) {
      if (c?.type !== "json" || !(c.version > 1) || !c.hasDefault || c.default === null) continue;
      if (step.update !== undefined && Object.prototype.hasOwnProperty.call(step.update, n)) continue;
      step.update = { ...step.update, [n]: storedJson(c, value(c.default)) };
    }
    if (m.rows !== undefined) step.rows = true;  // its ops come from js/migrate.js
    if (Object.keys(step).length > 0) migrations[v] = step;
  }
  if (Object.keys(migrations).length > 0) record.migrations = migrations;
  return record;
}

/**
 * The JSON text of declaration(fullName, def), kept for a definition whose
 * declaration cannot change (defineTable's, with no migration steps and no
 * object default).
 *
 * @example
 * core.declare(declarationText("file-history/edits", Edits));
 */
export function declarationText(fullName, def) {
  const texts = declarationTexts.get(def);
  let text = texts?.get(fullName);
  if (text === undefined) {
    text = encodeJson(declaration(fullName, def), "table");
    texts?.set(fullName, text);
  }
  return text;
}

/**
 * A short human form of a value for error messages: JSON, except that NaN,
 * the infinities and BigInts are printed as JS writes them, also inside
 * objects and arrays (JSON.stringify would write null, or throw), and that
 * it is cut after 60 characters.
 *
 * @example
 * describe("a")              // '"a"'
 * describe({ at: NaN })      // '{"at":NaN}'
 * describe([-Infinity, 2n])  // '[-Infinity,2n]'
 */
export function describe(v) {
  if (typeof v === "string") return JSON.stringify(v.length > 60 ? v.slice(0, 57) + "..." : v);
  if (typeof v === "function") return "a function";
  if (v === undefined) return "undefined";
  if (typeof v === "symbol") return String(v);
  // Bytes in another shape than the one asked for: named by their kind.
  if (ArrayBuffer.isView(v) || v instanceof ArrayBuffer) return `${v.constructor?.name ?? "ArrayBuffer"} of ${v.byteLength} bytes`;
  // An instance of a class (a Map, a Blob, a SharedArrayBuffer) by its
  // class: its own enumerable data, which JSON shows, is most often none
  // ("{}").
  try {
    const proto = v !== null && typeof v === "object" && !Array.isArray(v) ? Object.getPrototypeOf(v) : Object.prototype;
    if (proto !== Object.prototype && proto !== null && typeof v.toJSON !== "function") {
      if (typeof SharedArrayBuffer === "function" && v instanceof SharedArrayBuffer) return `SharedArrayBuffer of ${v.byteLength} bytes`;
      const name = typeof v.constructor === "function" ? v.constructor.name : "";
      return `an object of class ${name || "(anonymous)"}`;
    }
  } catch {
    return Object.prototype.toString.call(v);
  }
  const out = [];
  try {
    shortForm(v, out, { length: 0 });
  } catch {
    return Object.prototype.toString.call(v);
  }
  const s = out.join("");
  return s.length > 60 ? s.slice(0, 57) + "..." : s;
}

// Appends v's short form to out until it holds more than 60 characters.
// Each level of nesting writes a character first, so the recursion stops
// by then, cycles included.
function shortForm(v, out, n) {
  const push = (text) => {
    out.push(text);
    n.length += text.length;
  };
  if (n.length > 60) return;
  switch (typeof v) {
    case "string":
      push(JSON.stringify(v.length > 60 ? v.slice(0, 61) : v));
      return;
    case "number":
    case "boolean":
      push(String(v));
      return;
    case "bigint":
      push(`${v}n`);
      return;
    case "object":
      break;
    default:
      push("null");  // as JSON.stringify writes undefined, a function or a symbol in an array
      return;
  }
  if (v === null) {
    push("null");
    return;
  }
  if (typeof v.toJSON === "function") {
    shortForm(v.toJSON(), out, n);
    return;
  }
  if (Array.isArray(v)) {
    push("[");
    for (let i = 0; i < v.length && n.length <= 60; i++) {
      if (i) push(",");
      shortForm(v[i], out, n);
    }
    push("]");
    return;
  }
  push("{");
  let first = true;
  for (const k of Object.keys(v)) {
    if (n.length > 60) break;
    const x = v[k];
    if (x === undefined || typeof x === "function" || typeof x === "symbol") continue;
    if (!first) push(",");
    first = false;
    push(`${JSON.stringify(k)}:`);
    shortForm(x, out, n);
  }
  push("}");
}
