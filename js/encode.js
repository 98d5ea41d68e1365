// The one encoder (JS values -> the wire JSON text that crosses into wasm)
// and the decoders of what comes back (page rows, records).
//
// Rules (wasm/ABI.md):
// - a BigInt is written as JSON integer digits (the core takes 64-bit ints);
// - a JS number that is an integer but not a safe integer is written as a
//   float with an exponent ("9.007199254740994e+15"), so the core refuses it
//   for an int column with a message naming the value, instead of storing a
//   value JS already rounded;
// - NaN and ±Infinity are refused here (invalid/args naming the path): JSON
//   has no spelling for them;
// - every string is made well formed: a lone surrogate becomes U+FFFD, as
//   TextEncoder does, because UTF-8 cannot hold it.

import { ErrorCodes, invalidArgs, StoreError, userThrew } from "./errors.js";
import { vectorOf } from "./vectors.js";

// Deeper JSON than this is refused: the core parses and writes JSON
// recursively, and so would a replica. The core refuses the same depth of
// the same text (kMaxJsonDepth, src/values/json_text.h): keep the two in
// step, so that a value is refused here, with its path, before it is sent.
const MAX_DEPTH = 1000;
// A batch ({commits:[{ops:[..]}]}) holds a commit's ops three levels deeper
// than the commit's own text: the core reads a batch with this limit
// (Replica::ApplyBatch), so a value a store took replicates.
export const MAX_BATCH_DEPTH = MAX_DEPTH + 3;
// An op encoded alone sits in its commit's list of ops, one level down.
export const MAX_OP_DEPTH = MAX_DEPTH - 1;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

const hasWellFormed = typeof String.prototype.isWellFormed === "function";
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const hasLoneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * The string with every lone surrogate replaced by U+FFFD
 * (`String.prototype.toWellFormed`).
 *
 * @example
 * wellFormed("a\uD800b")   // "a\uFFFDb"
 */
export function wellFormed(s) {
  if (hasWellFormed) return s.isWellFormed() ? s : s.toWellFormed();
  return s.replace(loneSurrogate, "\uFFFD");
}

/**
 * Encodes a JS value as wire JSON text. `root` names the value in error
 * messages ("ops", "key", "query").
 *
 * @example
 * encodeJson({ n: 2n ** 60n, s: "a\uD800" })   // '{"n":1152921504606846976,"s":"a\uFFFD"}' (with a real U+FFFD)
 * encodeJson([2 ** 53 + 2])                    // '[9.007199254740994e+15]'
 * encodeJson({ at: NaN }, "row")               // throws StoreError invalid/args "row.at: NaN is not a finite number"
 */
export function encodeJson(value, root = "value", maxDepth = MAX_DEPTH) {
  // Most values (rows of str, safe ints, finite nums, bools, plain json) are
  // written exactly as JSON.stringify writes them: take the native path when
  // a quick check says so, and walk with checks and paths otherwise.
  const path = [];
  const outerItems = items;
  const outerTexts = texts;
  items = 0;
  texts = null;
  try {
    if (isPlain(value, 0)) return JSON.stringify(value);
    items = 0;
    const out = new Text();
    write(value, out, path, new Set(), root, maxDepth);
    return out.done();
  } catch (e) {
    // An error of the caller's own (a toJSON, getter or proxy trap that
    // threw) is named as theirs.
    throw tooLong(e, where(root, path.slice(0, 3))) ?? userThrew(e, `${where(root, path.slice(0, 3))}: reading its properties`);
  } finally {
    items = outerItems;
    texts = outerTexts;
  }
}

// A value built with shared references (`e = [e, e]`, twenty times) is
// small in memory and huge written out: JSON writes a shared object each
// time it is reached. isPlain gives up past WATCH_ITEMS items (array
// elements and object members, a shared one each time), and write() takes
// the value: past WATCH_ITEMS items it keeps the text of each object it
// writes, by the object, and writes a shared object again as that text.
// Such a value then costs its own objects and its text, and a text longer
// than a JS string is refused (tooLong) as soon as its pieces are joined,
// where a walk of every reference took minutes, or for ever.
const WATCH_ITEMS = 1 << 22;
let items = 0;
let texts = null;  // object -> { text, height } once past WATCH_ITEMS

// The text write() builds: pieces joined a few thousand at a time, so that a
// value of 10^8 items never asks V8 for an array of that many (a fatal
// "invalid size" that kills the process, not an exception).
class Text {
  constructor() {
    this.text = "";
    this.parts = [];
  }
  push(a, b) {
    this.parts.push(a);
    if (b !== undefined) this.parts.push(b);
    if (this.parts.length >= 4096) {
      this.text += this.parts.join("");
      this.parts.length = 0;
    }
  }
  // A piece that may be long (a kept text): joined as a rope, not copied
  // into a join of pieces; past the longest string V8 throws at once.
  pushLong(t) {
    if (this.parts.length) {
      this.text += this.parts.join("");
      this.parts.length = 0;
    }
    this.text += t;
  }
  done() {
    return this.parts.length ? this.text + this.parts.join("") : this.text;
  }
}

/**
 * A `limit` StoreError for a value whose JSON text is longer than a JS
 * string may be (V8's RangeError "Invalid string length"), or null.
 * `name` names the value.
 *
 * @example
 * tooLong(new RangeError("Invalid string length"), "put.row.body")   // StoreError limit
 */
export function tooLong(e, name) {
  if (!(e instanceof RangeError) || !/string length/i.test(String(e.message))) return null;
  return new StoreError(ErrorCodes.Limit,
    `${name}: the value's JSON text is longer than a JavaScript string may be (in V8, 2^29-24 characters)`, { cause: e });
}

/**
 * Whether JSON.stringify(value) is exactly what encodeJson(value) writes
 * (and throws nothing): the test js/ops-buffer.js uses for a json value.
 *
 * @example
 * isPlainJson({ lines: 3 })   // true
 * isPlainJson({ n: 1n })      // false
 */
export function isPlainJson(value) {
  items = 0;
  return isPlain(value, 0);
}

// Whether JSON.stringify(v) is exactly what write() would produce: well-formed
// strings and keys, finite numbers that are safe integers or fractions, no
// BigInt, no toJSON, no undefined outside an object, shallow enough.
function isPlain(v, depth) {
  switch (typeof v) {
    case "string":
      return hasWellFormed ? v.isWellFormed() : !hasLoneSurrogate.test(v);
    case "number":
      return Number.isFinite(v) && (Number.isSafeInteger(v) || !Number.isInteger(v));
    case "boolean":
      return true;
    case "object":
      break;
    default:
      return false;
  }
  if (v === null) return true;
  if (depth >= 64 || items > WATCH_ITEMS || typeof v.toJSON === "function" || ArrayBuffer.isView(v)) return false;
  if (Array.isArray(v)) {
    items += v.length;
    for (let i = 0; i < v.length; i++) if (!isPlain(v[i], depth + 1)) return false;
    return true;
  }
  for (const k of Object.keys(v)) {
    const item = v[k];
    items++;
    if (item === undefined) continue;
    if (!(hasWellFormed ? k.isWellFormed() : !hasLoneSurrogate.test(k)) || !isPlain(item, depth + 1)) return false;
  }
  return true;
}

function where(root, path) {
  let s = root;
  for (const p of path) s += typeof p === "number" ? `[${p}]` : /^[A-Za-z_$][\w$]*$/.test(p) ? `.${p}` : `[${JSON.stringify(p)}]`;
  return s;
}

function write(v, out, path, seen, root, maxDepth = MAX_DEPTH) {
  switch (typeof v) {
    case "string":
      out.push(JSON.stringify(wellFormed(v)));
      return;
    case "number":
      if (!Number.isFinite(v)) throw invalidArgs(`${where(root, path)}: ${v} is not a finite number`);
      if (Number.isInteger(v) && !Number.isSafeInteger(v)) out.push(v.toExponential());
      else out.push(String(v));
      return;
    case "bigint":
      if (v < INT64_MIN || v > INT64_MAX) {
        throw invalidArgs(`${where(root, path)}: ${v}n is outside the 64-bit int range (-2^63 to 2^63-1)`);
      }
      out.push(v.toString());
      return;
    case "boolean":
      out.push(v ? "true" : "false");
      return;
    case "undefined":
      out.push("null");
      return;
    case "object":
      break;
    default:
      throw invalidArgs(`${where(root, path)}: a ${typeof v} cannot be stored`);
  }
  if (v === null) {
    out.push("null");
    return;
  }
  if (typeof v.toJSON === "function") {
    write(v.toJSON(), out, path, seen, root, maxDepth);
    return;
  }
  if (ArrayBuffer.isView(v)) {
    throw invalidArgs(`${where(root, path)}: a ${v.constructor?.name ?? "typed array"} is stored only in a vector column; in a json column, pass an array of numbers`);
  }
  if (items > WATCH_ITEMS) {
    writeKept(v, out, path, seen, root, maxDepth);
    return;
  }
  if (seen.has(v)) throw invalidArgs(`${where(root, path)}: the value refers to itself`);
  if (path.length >= maxDepth) throw tooDeep(root, path, maxDepth);
  seen.add(v);
  if (Array.isArray(v)) {
    items += v.length;
    out.push("[");
    for (let i = 0; i < v.length; i++) {
      if (i) out.push(",");
      path.push(i);
      write(v[i], out, path, seen, root, maxDepth);
      path.pop();
    }
    out.push("]");
  } else {
    out.push("{");
    let first = true;
    for (const k of Object.keys(v)) {
      const item = v[k];
      if (item === undefined) continue;  // as JSON.stringify: an undefined property is absent
      items++;
      if (!first) out.push(",");
      first = false;
      out.push(JSON.stringify(wellFormed(k)), ":");
      path.push(k);
      write(item, out, path, seen, root, maxDepth);
      path.pop();
    }
    out.push("}");
  }
  seen.delete(v);
}

// The height of the object writeKept wrote last (0 after a scalar: its
// caller sets it before each item).
let keptHeight = 0;

// write()'s object case past WATCH_ITEMS: the object's text, written apart
// and kept (texts), or the kept text of an object met before. Apart from
// write() so that write's frame stays small: a Worker's stack must hold a
// value nested 997 levels.
function writeKept(v, out, path, seen, root, maxDepth) {
  texts ??= new Map();
  let kept = texts.get(v);
  if (kept === undefined) {
    if (seen.has(v)) throw invalidArgs(`${where(root, path)}: the value refers to itself`);
    if (path.length >= maxDepth) throw tooDeep(root, path, maxDepth);
    seen.add(v);
    const own = new Text();
    let height = 0;
    const item = (x, key) => {
      path.push(key);
      keptHeight = 0;
      write(x, own, path, seen, root, maxDepth);
      if (keptHeight > height) height = keptHeight;
      path.pop();
    };
    if (Array.isArray(v)) {
      items += v.length;
      own.push("[");
      for (let i = 0; i < v.length; i++) {
        if (i) own.push(",");
        item(v[i], i);
      }
      own.push("]");
    } else {
      own.push("{");
      let first = true;
      for (const k of Object.keys(v)) {
        const x = v[k];
        if (x === undefined) continue;
        items++;
        if (!first) own.push(",");
        first = false;
        own.push(JSON.stringify(wellFormed(k)), ":");
        item(x, k);
      }
      own.push("}");
    }
    seen.delete(v);
    kept = { text: own.done(), height: height + 1 };
    texts.set(v, kept);
  } else if (path.length + kept.height > maxDepth) {
    throw tooDeep(root, path, maxDepth);
  }
  keptHeight = kept.height;
  out.pushLong(kept.text);
}

function tooDeep(root, path, maxDepth) {
  return invalidArgs(`${where(root, path.slice(0, 3))}...: the value is nested deeper than ${maxDepth} levels`);
}

/**
 * A function that turns a page row (an array in column order) into an object.
 * An int column's string value (an int beyond 2^53) becomes a BigInt; a json
 * column's value arrives parsed, except one that holds an int beyond 2^53 or
 * is a string: that arrives as its JSON text in a string, parsed here exactly
 * (such an int becomes a BigInt); a vector column's base64 becomes a
 * Float32Array (js/vectors.js); bool stays bool.
 *
 * @example
 * const decode = rowDecoder([{ name: "id", type: "str" }, { name: "n", type: "int" }, { name: "meta", type: "json" }]);
 * decode(["e1", "1152921504606846976", '{"big":1152921504606846977}'])
 * // { id: "e1", n: 1152921504606846976n, meta: { big: 1152921504606846977n } }
 */
export function rowDecoder(columns) {
  const names = columns.map((c) => c.name);
  const kinds = columns.map((c) => (c.type === "int" ? 1 : c.type === "json" ? 2 : c.type === "vector" ? 3 : 0));
  return (arr) => {
    const row = {};
    for (let i = 0; i < names.length; i++) {
      const v = arr[i];
      if (typeof v !== "string" || kinds[i] === 0) row[names[i]] = v;
      else row[names[i]] = kinds[i] === 1 ? BigInt(v) : kinds[i] === 3 ? vectorOf(v) : parseJsonExact(v);
    }
    return row;
  };
}

/**
 * Parses JSON text; integers beyond 2^53 become BigInts instead of rounded
 * numbers (outbox records must replay exactly).
 *
 * @example
 * parseJsonExact('{"n":1152921504606846976,"m":2}')   // { n: 1152921504606846976n, m: 2 }
 */
export function parseJsonExact(text) {
  if (!/\d{16}/.test(text)) return JSON.parse(text);
  return new ExactParser(text).parseAll();
}

// A small JSON parser for the rare text that holds an integer JSON.parse
// would round. Strings and floats are handed to JSON.parse piecewise.
function ExactParser(text) {
  this.s = text;
  this.i = 0;
}
ExactParser.prototype.parseAll = function parseAll() {
  const v = this.value();
  this.ws();
  if (this.i !== this.s.length) throw new SyntaxError(`unexpected text at ${this.i}`);
  return v;
};
ExactParser.prototype.ws = function ws() {
  const s = this.s;
  while (this.i < s.length) {
    const c = s.charCodeAt(this.i);
    if (c === 32 || c === 9 || c === 10 || c === 13) this.i++;
    else break;
  }
};
ExactParser.prototype.value = function value() {
  this.ws();
  const s = this.s;
  const c = s[this.i];
  if (c === "{") {
    this.i++;
    const obj = {};
    this.ws();
    if (s[this.i] === "}") { this.i++; return obj; }
    for (;;) {
      this.ws();
      const k = this.string();
      this.ws();
      if (s[this.i++] !== ":") throw new SyntaxError(`expected : at ${this.i - 1}`);
      // An own "__proto__" member, as JSON.parse makes it: assigned, it
      // set the object's prototype and the key was gone from the value.
      if (k === "__proto__") Object.defineProperty(obj, k, { value: this.value(), enumerable: true, writable: true, configurable: true });
      else obj[k] = this.value();
      this.ws();
      const d = s[this.i++];
      if (d === "}") return obj;
      if (d !== ",") throw new SyntaxError(`expected , or } at ${this.i - 1}`);
    }
  }
  if (c === "[") {
    this.i++;
    const arr = [];
    this.ws();
    if (s[this.i] === "]") { this.i++; return arr; }
    for (;;) {
      arr.push(this.value());
      this.ws();
      const d = s[this.i++];
      if (d === "]") return arr;
      if (d !== ",") throw new SyntaxError(`expected , or ] at ${this.i - 1}`);
    }
  }
  if (c === '"') return this.string();
  if (s.startsWith("true", this.i)) { this.i += 4; return true; }
  if (s.startsWith("false", this.i)) { this.i += 5; return false; }
  if (s.startsWith("null", this.i)) { this.i += 4; return null; }
  const m = /-?\d+(\.\d+)?([eE][+-]?\d+)?/y;
  m.lastIndex = this.i;
  const hit = m.exec(s);
  if (!hit) throw new SyntaxError(`unexpected ${JSON.stringify(c)} at ${this.i}`);
  this.i += hit[0].length;
  if (hit[1] === undefined && hit[2] === undefined) {
    const n = Number(hit[0]);
    return Number.isSafeInteger(n) ? n : BigInt(hit[0]);
  }
  return Number(hit[0]);
};
ExactParser.prototype.string = function string() {
  const s = this.s;
  if (s[this.i] !== '"') throw new SyntaxError(`expected a string at ${this.i}`);
  let j = this.i + 1;
  while (j < s.length) {
    const c = s.charCodeAt(j);
    if (c === 92 /* \ */) j += 2;
    else if (c === 34 /* " */) break;
    else j++;
  }
  const v = JSON.parse(s.slice(this.i, j + 1));
  this.i = j + 1;
  return v;
};

const utf8 = new TextEncoder();

/**
 * A JSON text as the core takes it: a long text as UTF-8 bytes (a
 * Uint8Array is copied straight into the heap; wasm/ABI.md, "Calls"), a
 * short one as it is.
 *
 * @example
 * core.commit(toWire(opsText), metaText)
 */
export function toWire(text) {
  return text.length > 2048 ? utf8.encode(text) : text;
}
