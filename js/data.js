// What a write takes from the caller's values: their own data, read once.
//
// A row's properties are each read once (tx.put reads them straight into its
// batch: readRow), and every json value inside it, and the value of a set, is
// copied into a fresh plain tree before anything else looks at it, so the
// store, the encoder and the core all see one answer even when the caller's
// object is a Proxy or has getters. The rule (docs/api.md, "What a row may hold"):
// - strings, numbers, booleans, null, BigInts and undefined (an absent
//   property) are taken as they are (js/encode.js then checks them);
// - an array: its length and each element, read once;
// - an object whose prototype is Object.prototype or null: its own enumerable
//   string-keyed properties, each read once (a getter is called once);
// - a Float32Array (for a vector column) is copied;
// - anything else is refused with invalid/args: a class instance, a Date, a
//   Map, another typed array, a function, a symbol, and an object with a `toJSON`
//   method (the store keeps data, not what `toJSON` would make of it);
// - a getter or Proxy trap that throws gives invalid/args naming the value,
//   with the thrown error as `cause`.

import { ErrorCodes, invalidArgs, StoreError, userThrew } from "./errors.js";

const MAX_DEPTH = 1000;
// A row's json value sits three levels down in its commit's ops text (the
// list of ops, the op, the row), which nests at most MAX_DEPTH levels.
const ROW_VALUE_LEVELS = MAX_DEPTH - 3;

function where(root, path) {
  let s = root;
  for (const p of path) s += typeof p === "number" ? `[${p}]` : /^[A-Za-z_$][\w$]*$/.test(p) ? `.${p}` : `[${JSON.stringify(p)}]`;
  return s;
}

// A short name for a refused object's kind, without calling its code.
function kindOf(v, proto) {
  let name;
  try {
    const d = proto && Object.getOwnPropertyDescriptor(proto, "constructor");
    name = d && typeof d.value === "function" ? d.value.name : undefined;
  } catch { /* a Proxy prototype that throws: no name */ }
  return name ? `an object of class ${name}` : "an object with a prototype";
}

// A StoreError the user's code threw passes as it is (docs/api.md, "Errors").
function valueThrew(root, path, e, doing) {
  return userThrew(e, `${where(root, path)}: ${doing}`);
}

// Whether `v` (an object) is a Float32Array. instanceof asks a Proxy's
// getPrototypeOf trap, which may throw: that is the user's error, named.
function isFloat32Array(v, root, path) {
  try {
    return v instanceof Float32Array;
  } catch (e) {
    throw valueThrew(root, path, e, "reading the value");
  }
}

// A copy of a Float32Array; one whose buffer was transferred away
// (detached) is refused by name.
function copyFloat32(v, root, path) {
  if (v.length === 0 && isDetached(v.buffer)) {  // a detached view reads as empty
    throw invalidArgs(`${where(root, path)}: the Float32Array's buffer was transferred away (detached); pass one that still holds its numbers`);
  }
  return new Float32Array(v);
}
function isDetached(buffer) {
  try {
    buffer.slice(0, 0);
    return false;
  } catch {
    return true;
  }
}

// `seen`: the objects being copied, outermost first (a short array: values are
// shallow, and includes() on it is cheaper than a Set). The value may nest
// `levels` levels of arrays and objects; its own path starts after the
// first `lead` entries of `path`.
// A value built with shared references (`e = { a: e, b: e }`, twenty times)
// is small in memory and huge written out: JSON writes a shared object each
// time it is reached. A copy counts the items it reaches (array elements and
// object properties; a shared one each time), `made`. Past WATCH_ITEMS it
// keeps the copies it makes, by their source object (`copies`), and hands the
// same copy out when it meets that object again, so that the copy stays as
// small as the caller's value; past MAX_ITEMS it refuses the value with
// `limit`: written out, each item takes two chars at least ("0,"), and the
// text would be longer than a JS string may be (2^29-24 chars), which no
// encoder could write and no read could hand back. Before this count a copy
// expanded such a value in full and the process ran out of memory.
const WATCH_ITEMS = 1 << 22;
const MAX_ITEMS = 1 << 28;
let made = 0;
let copies = null;

function tooManyItems(root, path) {
  return new StoreError(ErrorCodes.Limit,
    `${where(root, path.slice(0, 3))}: the value holds more than 2^28 items written out (a value reached through shared references counts each time): its JSON text would be longer than a JavaScript string may be`);
}

// The walk copy() is in: the value's name in messages, the levels it may
// nest and the path entries above it. Module state, not arguments, so that
// copy()'s frame stays small: a Worker's stack must hold a value nested
// 997 levels.
let root = "value";
let levels = MAX_DEPTH;
let lead = 0;

// copy() as a walk of its own: the count, the kept copies and the walk of
// one that is under way (a getter that writes meanwhile) are put back after.
function copyValue(v, name, path, seen, depth, above) {
  const outerMade = made;
  const outerCopies = copies;
  const outerRoot = root;
  const outerLevels = levels;
  const outerLead = lead;
  made = 0;
  copies = null;
  root = name;
  levels = depth;
  lead = above;
  try {
    return copy(v, path, seen);
  } finally {
    made = outerMade;
    copies = outerCopies;
    root = outerRoot;
    levels = outerLevels;
    lead = outerLead;
  }
}

function copy(v, path, seen) {
  switch (typeof v) {
    case "string":
    case "number":
    case "boolean":
    case "bigint":
    case "undefined":
      return v;
    case "function":
      throw invalidArgs(`${where(root, path)}: a function cannot be stored`);
    case "symbol":
      throw invalidArgs(`${where(root, path)}: a symbol cannot be stored`);
    default:
      break;
  }
  if (v === null) return null;
  // A Float32Array (a vector column's value) is copied as it is; anywhere
  // but a vector column the encoder refuses it (js/encode.js).
  if (isFloat32Array(v, root, path)) return copyFloat32(v, root, path);
  if (copies !== null && copies.has(v)) return keptCopy(v, root, path);
  const from = made;
  if (seen.includes(v)) throw invalidArgs(`${where(root, path)}: the value refers to itself`);
  if (path.length - lead >= levels) throw invalidArgs(`${where(root, path.slice(0, 3))}...: the value is nested deeper than ${levels} levels`);
  let isArray;
  let proto;
  try {
    isArray = Array.isArray(v);
    proto = isArray ? Array.prototype : Object.getPrototypeOf(v);
  } catch (e) {
    throw valueThrew(root, path, e, "reading the value");
  }
  seen.push(v);
  let out;
  if (isArray) {
    let n;
    try {
      n = v.length;
    } catch (e) {
      throw valueThrew(root, path, e, "reading length");
    }
    made += n;
    if (made > MAX_ITEMS) throw tooManyItems(root, path);
    out = new Array(n);
    for (let i = 0; i < n; i++) {
      let item;
      try {
        item = v[i];
      } catch (e) {
        throw valueThrew(root, [...path, i], e, "reading the element");
      }
      path.push(i);
      out[i] = copy(item, path, seen);
      path.pop();
    }
  } else {
    if (proto !== Object.prototype && proto !== null) {
      throw invalidArgs(`${where(root, path)}: ${kindOf(v, proto)} is not plain data; pass a plain object, array or primitive (a Date as date.getTime() or date.toISOString())`);
    }
    // The spread reads each own enumerable property once (getters and Proxy
    // traps included) into a fresh object; only its object values are walked.
    try {
      out = { ...v };
    } catch (e) {
      throw valueThrew(root, path, e, "reading its properties");
    }
    for (const k in out) {
      const item = out[k];
      made++;
      if (item === null || typeof item !== "object") {
        if (typeof item === "function") {
          if (k === "toJSON") {
            throw invalidArgs(`${where(root, path)}: the object has a toJSON method; the store keeps an object's own data, not what toJSON makes of it: pass the data itself`);
          }
          throw invalidArgs(`${where(root, [...path, k])}: a function cannot be stored`);
        }
        if (typeof item === "symbol") throw invalidArgs(`${where(root, [...path, k])}: a symbol cannot be stored`);
        continue;
      }
      path.push(k);
      const value = copy(item, path, seen);
      path.pop();
      // defineProperty, not assignment, for "__proto__": it stays a key.
      if (k === "__proto__") Object.defineProperty(out, k, { value, enumerable: true, writable: true, configurable: true });
      else out[k] = value;
    }
  }
  seen.pop();
  if (made > WATCH_ITEMS) keepCopy(v, out, made - from, root, path);
  return out;
}

// copy()'s steps past WATCH_ITEMS, apart so that its frame stays small (a
// Worker's stack holds a value nested 997 levels).
function keptCopy(v, root, path) {
  const kept = copies.get(v);
  made += kept.items;
  if (made > MAX_ITEMS) throw tooManyItems(root, path);
  return kept.copy;
}

function keepCopy(v, out, items, root, path) {
  if (made > MAX_ITEMS) throw tooManyItems(root, path);
  (copies ??= new Map()).set(v, { copy: out, items });
}

/**
 * A plain copy of `v` made by the rule above: each property read once, the
 * copy shares nothing with `v`. `root` names the value in messages.
 *
 * @example
 * plainData({ a: [1, { b: 2n }] }, "meta")   // a fresh { a: [1, { b: 2n }] }
 * plainData(new Date(0), "meta")             // throws invalid/args "meta: an object of class Date is not plain data; ..."
 */
export function plainData(v, root = "value", levels = MAX_DEPTH) {
  return copyValue(v, root, [], [], levels, 0);
}

/**
 * Whether no object of prototype Object.prototype inherits an enumerable
 * property, so that for-in over it yields its own enumerable string keys,
 * as Object.keys does, without making an array (for-in walks the object's
 * enum cache). Only a property someone made enumerable on Object.prototype
 * breaks that; then the callers take Object.keys.
 */
export function plainProtoClean() {
  for (const _ in Object.prototype) return false;
  return true;
}

// Whether the own enumerable string keys of `row` (of prototype
// Object.prototype or null) are `names`, in order: readRow's bulk-loop case,
// checked with no array made. Reads no value: getters run later, once.
function sameKeys(row, names) {
  let i = 0;
  for (const k in row) if (k !== names[i++]) return false;
  return i === names.length && plainProtoClean();
}

// The row check plainRow and readRow share: a row is an object, not an array.
function checkRow(row, root) {
  let isArray = false;
  try {
    isArray = Array.isArray(row);
  } catch { /* a revoked Proxy: the read after says so */ }
  if (row === null || typeof row !== "object" || isArray) {
    const shown = isArray ? "an array" : row === null ? "null" : typeof row === "string" ? JSON.stringify(row.slice(0, 60)) : typeof row === "bigint" ? `${row}n` : String(row);
    throw invalidArgs(`${root}: the row must be an object such as { id: "e1", ... }, got ${shown}`);
  }
}

/**
 * A row as a plain copy of an object's own data (plainData). A row must be
 * an object, not an array. tx.put reads rows with readRow, which gives the
 * same values and errors without the copy; plainRow is that rule written
 * plainly, the reference the tests hold readRow to.
 *
 * @example
 * plainRow({ id: "e1", get path() { return "p"; } }, "tx.put(notes/items): row")   // { id: "e1", path: "p" }
 */
export function plainRow(row, root = "row") {
  checkRow(row, root);
  return copyValue(row, root, [], [], ROW_VALUE_LEVELS, 1);
}

// The (empty) path and seen arrays of readRow's copies of object values,
// kept for the next one (a getter that puts a row meanwhile takes fresh ones).
let spareWalk = null;

/**
 * The row a put takes, read by plainRow's rule without copying it into an
 * object of its own (tx.put's loop, issue 13): returns the row's own
 * enumerable string-keyed names and sets vals[i] to the value of names[i],
 * each property read once, all of them before any is checked (as
 * plainRow's spread reads them); an object value is copied by plainData's
 * rule. The same errors as plainRow, in the same order. `vals` is the
 * caller's scratch array: entries past names.length are stale. The names
 * are `prev` itself when the row's keys are prev's, in order (a bulk
 * loop's rows have the keys of the row before: no array is made), else a
 * fresh array.
 *
 * @example
 * const vals = [];
 * readRow({ id: "e1", meta: { a: 1 } }, "row", vals)   // ["id", "meta"], vals: ["e1", { a: 1 } (a copy)]
 */
export function readRow(row, root, vals, prev = null) {
  checkRow(row, root);
  let proto;
  if (isFloat32Array(row, root, [])) {
    row = copyFloat32(row, root, []);  // as copy() takes it: a Float32Array copied
  } else {
    try {
      proto = Object.getPrototypeOf(row);
    } catch (e) {
      throw valueThrew(root, [], e, "reading the value");
    }
    if (proto !== Object.prototype && proto !== null) {
      throw invalidArgs(`${root}: ${kindOf(row, proto)} is not plain data; pass a plain object, array or primitive (a Date as date.getTime() or date.toISOString())`);
    }
  }
  let names;
  try {
    names = prev !== null && proto !== undefined && sameKeys(row, prev) ? prev : Object.keys(row);
    for (let i = 0; i < names.length; i++) vals[i] = row[names[i]];
  } catch (e) {
    throw valueThrew(root, [], e, "reading its properties");
  }
  for (let i = 0; i < names.length; i++) {
    const item = vals[i];
    if (item === null || typeof item !== "object") {
      if (typeof item === "function") {
        if (names[i] === "toJSON") {
          throw invalidArgs(`${root}: the object has a toJSON method; the store keeps an object's own data, not what toJSON makes of it: pass the data itself`);
        }
        throw invalidArgs(`${where(root, [names[i]])}: a function cannot be stored`);
      }
      if (typeof item === "symbol") throw invalidArgs(`${where(root, [names[i]])}: a symbol cannot be stored`);
      continue;
    }
    // copy() leaves both arrays as it found them, but for a throw: then the
    // walk is dropped and the next row takes fresh ones.
    const walk = spareWalk ?? { path: [], seen: [] };
    spareWalk = null;
    walk.path.push(names[i]);
    walk.seen.push(row);
    vals[i] = copyValue(item, root, walk.path, walk.seen, ROW_VALUE_LEVELS, 1);
    walk.path.pop();
    walk.seen.pop();
    spareWalk = walk;
  }
  return names;
}
