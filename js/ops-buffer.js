// The ops of one transaction as the binary batch the core reads
// (wasm/ABI.md, "Binary ops"): a growable byte buffer that tx.put writes a
// row into directly (type tags, varints, UTF-8), instead of wire JSON text
// that the core would parse again. Every other op (and a put holding a value
// this encoding leaves to JSON: a BigInt, a non-finite number, a value with
// toJSON, a lone surrogate in a column name...) is one wire JSON record in
// the same buffer, in order, so the core sees the ops as they were written.
// The whole batch still crosses once, at the commit (or at tx.get, which
// stages what was written since the last crossing).

import { plainProtoClean } from "./data.js";
import { isPlainJson } from "./encode.js";
import { ErrorCodes, StoreError } from "./errors.js";

const MAGIC = 0xB1;  // no JSON text starts with this byte (src/writes/writes.h, kBinaryOpsMagic)
const SHAPE = 0x53;  // "S": a table and the member names of the puts after it
const PUT = 0x50;    // "P": one value per name of the shape
const JSON_OP = 0x4A;  // "J": one op as wire JSON
const NULL = 0, FALSE = 1, TRUE = 2, UINT = 3, STR = 4, NUM_TEXT = 5, JSON_TEXT = 6, NEG_INT = 7;

const SPARE_BYTES = 64 * 1024;  // the most a spare buffer keeps (release())
// Where a buffer in JS memory is kept for the next transaction (take()); a
// buffer in a wasm heap has its heap's own (opsHeapOf).
const JS_HOME = { spare: null };
const heaps = new WeakMap();  // module -> its heap, as opsHeapOf makes it

/**
 * The wasm heap of `mod` as an OpsBuffer home: `{ mod, spare }`, one per
 * module (js/core-calls.js, withRawCalls, gives it to a core that commits
 * through the raw exports, as `core.opsHeap`).
 *
 * A transaction's buffer then keeps its bytes in that heap (its own
 * malloc'd room), and the commit reads them where they are
 * (`_onestore_commit_at`, wasm/ABI.md): a bulk transaction's megabytes are
 * written once into memory the process has already touched, where a
 * buffer of its own in JS grew by doubling through new ArrayBuffers, each
 * of fresh pages, and was copied into the core's room at the commit
 * (docs/performance.md, "Issue 13, a bulk put's ops in the wasm heap").
 *
 * @example
 * const ops = OpsBuffer.take(opsHeapOf(mod));
 */
export function opsHeapOf(mod) {
  let heap = heaps.get(mod);
  if (!heap) heaps.set(mod, (heap = { mod, spare: null }));
  return heap;
}

const utf8 = new TextEncoder();
const hasWellFormed = typeof String.prototype.isWellFormed === "function";
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const wellFormed = (s) => (hasWellFormed ? s.isWellFormed() : !loneSurrogate.test(s));

// jsonString's tables: the two-char escape of a char below 0x20 (0: none,
// \u00xx), and the lowercase hex digits. Past LONG_STRING chars a string is
// written by JSON.stringify and encodeInto (faster than a JS loop there).
const SHORT_ESCAPE = new Uint8Array(32);
SHORT_ESCAPE[0x08] = 0x62;  // b
SHORT_ESCAPE[0x09] = 0x74;  // t
SHORT_ESCAPE[0x0A] = 0x6E;  // n
SHORT_ESCAPE[0x0C] = 0x66;  // f
SHORT_ESCAPE[0x0D] = 0x72;  // r
const HEX = new Uint8Array([..."0123456789abcdef"].map((c) => c.charCodeAt(0)));
const LONG_STRING = 64;
const NEEDS_ESCAPE = /["\\\u0000-\u001f]/;

/**
 * A transaction's ops, as the binary batch core.commit, core.txCommit and
 * core.txGet take (a Uint8Array, copied into the wasm heap by the call).
 *
 * @example
 * const ops = new OpsBuffer();
 * if (!ops.put("notes/items", row)) ops.json(encodeJson({ op: "put", table: "notes/items", row }, "put"));
 * core.commit(ops.batch(), meta);
 */
export class OpsBuffer {
  /**
   * A buffer in JS memory, or in the wasm heap `heap` (opsHeapOf) when
   * given. A view of a wasm heap is detached when any call into the module
   * grows the heap: every write here goes through ensure(), which views it
   * again, and batch() is only valid until the next call into the module
   * (hand any other call batchCopy() instead).
   */
  constructor(heap = null) {
    this.heap = heap;
    this.at = 0;   // in a wasm heap: where the bytes are, and how many
    this.cap = 0;
    this.len = 0;
    this.bytes = null;
    this.resize(256);  // grows by doubling
    this.empty();
  }

  // Empties the buffer: its magic byte, and no ops. (The fields are made
  // here, in this order, for a new buffer and a released one alike.)
  empty() {
    this.bytes[0] = MAGIC;
    this.len = 1;
    this.start = 0;     // where the batch not yet sent to the core begins (at its magic byte)
    this.pending = 0;   // ops written since `start`
    this.total = 0;     // ops written in all
    this.table = null;  // the current shape: its table and names (null: none in this batch)
    this.names = null;
  }

  /**
   * A buffer for a new transaction: the one the last transaction to end
   * handed back (release()), or a new one. Reusing it keeps alive the
   * hidden class a buffer has once written to: V8 holds that shape only
   * through the live buffers, and the optimized code of the put path
   * (putValues, value, jsonInto, ensure...) depends on it; when no buffer
   * outlived a full collection, the shape died, that code was thrown away
   * and the next bulk transaction ran its first thousands of puts
   * unoptimized while the path compiled again (docs/performance.md,
   * "Issue 13, a seventh step").
   */
  static take(heap = null) {
    const home = heap ?? JS_HOME;
    const b = home.spare ?? new OpsBuffer(heap);
    home.spare = null;
    return b;
  }

  /**
   * Hands this buffer back for the next transaction once its own has ended
   * (nothing may use it afterwards), emptied; a buffer grown past 64 KiB
   * gives its bytes up rather than keep them for the life of the process.
   */
  release() {
    if (this.cap > SPARE_BYTES) {
      this.len = 0;
      this.resize(256);
    }
    this.empty();
    (this.heap ?? JS_HOME).spare = this;
  }

  /**
   * The ops written since the last mark(), as one batch: a view of this
   * buffer, valid until the next write or, for a buffer in a wasm heap,
   * the next call into its module.
   */
  batch() {
    this.ensure(0);  // views a grown heap again
    return this.bytes.subarray(this.start, this.len);
  }

  /**
   * batch() in memory of its own where the buffer is in a wasm heap: for a
   * call that may grow the heap (its arguments' room: wasm/ABI.md, "Calls")
   * before it reads the batch.
   */
  batchCopy() {
    const b = this.batch();
    return this.heap === null ? b : b.slice();
  }

  /** Starts a new batch: what was written so far has been sent. */
  mark() {
    this.ensure(1);
    this.start = this.len;
    this.bytes[this.len++] = MAGIC;
    this.pending = 0;
    this.table = null;
    this.names = null;
  }

  /** Appends one op as wire JSON text. */
  json(text) {
    this.ensure(1);
    this.bytes[this.len++] = JSON_OP;
    this.str(text);
    this.pending++;
    this.total++;
  }

  /**
   * Appends a put of `row` (a plain row, already copied and checked) to
   * `table`; false, with nothing written, when a value is one this encoding
   * leaves to the wire JSON (the caller then writes the op with json(),
   * whose encoder words any error).
   */
  put(table, row) {
    const names = Object.keys(row);
    const vals = new Array(names.length);
    for (let i = 0; i < names.length; i++) vals[i] = row[names[i]];
    return this.putValues(table, names, vals);
  }

  /**
   * put() of a row given as its names and their values (vals[i] the value
   * of names[i], already read and checked by readRow in js/data.js), so
   * tx.put's loop writes the caller's row with no object of its own. An
   * undefined value is left out, as JSON leaves it. `names` may be kept as
   * the batch's current shape: the caller must not change it afterwards.
   */
  putValues(table, names, vals) {
    // A bulk loop's rows have the shape of the one before: then the values
    // are written with no other pass over them (an undefined one, which
    // changes the shape, undoes this and takes the general path below).
    if (table === this.table && sameNames(names, this.names)) {
      const at = this.len;
      this.ensure(1);
      this.bytes[this.len++] = PUT;
      let i = 0;
      for (; i < names.length; i++) {
        const v = vals[i];
        if (v === undefined || !this.value(v)) break;
      }
      if (i === names.length) {
        this.pending++;
        this.total++;
        return true;
      }
      this.len = at;
      if (vals[i] !== undefined) return false;
    }
    const at = this.len;
    const oldTable = this.table;
    const oldNames = this.names;
    let shape = names;
    for (let i = 0; i < names.length; i++) {
      if (vals[i] === undefined) {  // as JSON: an undefined member is absent
        shape = [];
        for (let j = 0; j < names.length; j++) if (vals[j] !== undefined) shape.push(names[j]);
        break;
      }
    }
    if (table !== this.table || !sameNames(shape, this.names)) {
      for (let i = 0; i < shape.length; i++) if (!wellFormed(shape[i])) return false;
      this.ensure(1);
      this.bytes[this.len++] = SHAPE;
      this.str(table);
      this.varint(shape.length);
      for (let i = 0; i < shape.length; i++) this.str(shape[i]);
      this.table = table;
      this.names = shape;
    }
    this.ensure(1);
    this.bytes[this.len++] = PUT;
    for (let i = 0; i < names.length; i++) {
      const v = vals[i];
      if (v !== undefined && !this.value(v)) {
        this.len = at;
        this.table = oldTable;
        this.names = oldNames;
        return false;
      }
    }
    this.pending++;
    this.total++;
    return true;
  }

  value(v) {
    switch (typeof v) {
      case "string": {
        // The tag, then str()'s record, with one ensure for a short ASCII string.
        const n = v.length;
        if (n < 128) {
          this.ensure(2 + n);
          const b = this.bytes;
          let p = this.len + 2;
          for (let i = 0; i < n; i++) {
            const c = v.charCodeAt(i);
            if (c >= 0x80) {
              b[this.len++] = STR;
              this.strWide(v);
              return true;
            }
            b[p++] = c;
          }
          b[this.len] = STR;
          b[this.len + 1] = n;
          this.len = p;
          return true;
        }
        this.ensure(1);
        this.bytes[this.len++] = STR;
        this.strWide(v);
        return true;
      }
      case "number":
        if (Number.isSafeInteger(v)) {
          this.ensure(9);
          const b = this.bytes;
          let p = this.len;
          let u = v;
          if (v >= 0) {  // -0 too: JSON writes it as 0
            b[p++] = UINT;
          } else {
            b[p++] = NEG_INT;
            u = -v;
          }
          while (u >= 128) {  // LEB128, as varint() writes it
            b[p++] = (u % 128) | 0x80;
            u = Math.floor(u / 128);
          }
          b[p++] = u;
          this.len = p;
          return true;
        }
        if (!Number.isFinite(v)) return false;
        this.ensure(1);
        this.bytes[this.len++] = NUM_TEXT;
        // As the wire JSON writes it: an unsafe integer with an exponent.
        this.str(Number.isInteger(v) ? v.toExponential() : String(v));
        return true;
      case "boolean":
        this.ensure(1);
        this.bytes[this.len++] = v ? TRUE : FALSE;
        return true;
      case "object":
        if (v === null) {
          this.ensure(1);
          this.bytes[this.len++] = NULL;
          return true;
        }
        if (this.jsonText(v)) return true;
        if (!isPlainJson(v)) return false;
        let text;
        try {
          text = JSON.stringify(v);
        } catch {
          return false;  // longer than a string may be: the general path names it (encodeJson)
        }
        this.ensure(1);
        this.bytes[this.len++] = JSON_TEXT;
        this.str(text);
        return true;
      default:
        return false;
    }
  }

  // A json value's JSON_TEXT record written straight into the buffer, for
  // the values rows hold: objects and arrays (at most 8 deep) of null,
  // booleans, safe integers, finite fractions and well-formed strings,
  // under well-formed keys. Its text is then byte for byte JSON.stringify's
  // (the same member order, as Object.keys gives it; String(n) for a number,
  // "0" for -0; a string's escapes as jsonString writes them). Anything else
  // writes nothing and returns false: the caller takes the general path.
  jsonText(v) {
    if (!plainProtoClean()) return false;
    const at = this.len;
    this.ensure(6);
    this.bytes[this.len] = JSON_TEXT;
    this.len += 6;  // the length, padded to 5 bytes, once known
    if (!this.jsonInto(v, 0)) {
      this.len = at;
      return false;
    }
    let n = this.len - at - 6;
    for (let k = 1; k < 5; k++) {
      this.bytes[at + k] = (n % 128) | 0x80;
      n = Math.floor(n / 128);
    }
    this.bytes[at + 5] = n;
    return true;
  }

  jsonInto(v, depth) {
    switch (typeof v) {
      case "string":
        return this.jsonString(v);
      case "number": {
        if (Number.isSafeInteger(v)) return this.digits(v);
        if (!Number.isFinite(v) || Number.isInteger(v)) return false;
        const text = String(v);  // as JSON.stringify writes a finite number
        this.ensure(text.length);
        for (let i = 0; i < text.length; i++) this.bytes[this.len++] = text.charCodeAt(i);
        return true;
      }
      case "boolean":
        return this.ascii(v ? "true" : "false");
      case "object":
        break;
      default:
        return false;
    }
    if (v === null) return this.ascii("null");
    if (depth >= 8 || typeof v.toJSON === "function" || ArrayBuffer.isView(v)) return false;
    if (Array.isArray(v)) {
      this.ensure(1);
      this.bytes[this.len++] = 0x5B;  // [
      for (let i = 0; i < v.length; i++) {
        if (i) {
          this.ensure(1);
          this.bytes[this.len++] = 0x2C;  // ,
        }
        if (!this.jsonInto(v[i], depth + 1)) return false;
      }
      this.ensure(1);
      this.bytes[this.len++] = 0x5D;  // ]
      return true;
    }
    if (Object.getPrototypeOf(v) !== Object.prototype) return false;
    this.ensure(1);
    this.bytes[this.len++] = 0x7B;  // {
    // for-in: its own keys, as Object.keys gives them, with no array made
    // (jsonText has checked that Object.prototype adds none).
    let first = true;
    for (const k in v) {
      const item = v[k];
      if (item === undefined || typeof item === "function" || typeof item === "symbol") return false;
      if (!first) {
        this.ensure(1);
        this.bytes[this.len++] = 0x2C;  // ,
      }
      first = false;
      if (!this.jsonString(k)) return false;
      this.ensure(1);
      this.bytes[this.len++] = 0x3A;  // :
      if (!this.jsonInto(item, depth + 1)) return false;
    }
    this.ensure(1);
    this.bytes[this.len++] = 0x7D;  // }
    return true;
  }

  // A safe integer's decimal digits, as String(v) writes them ("0" for -0),
  // with no string made on the way.
  digits(v) {
    this.ensure(17);
    const b = this.bytes;
    if (v < 0) {
      b[this.len++] = 0x2D;  // -
      v = -v;
    }
    let end = this.len;
    for (let t = v; t >= 10; t = Math.floor(t / 10)) end++;
    this.len = end + 1;
    do {
      b[end--] = 0x30 + (v % 10);
      v = Math.floor(v / 10);
    } while (v > 0);
    return true;
  }

  // A string as JSON.stringify writes it, quotes included, in UTF-8: \" and
  // \\, \b \f \n \r \t, \u00xx (lowercase) for the other chars below 0x20,
  // every other char as itself; false, with nothing written, for a lone
  // surrogate (JSON.stringify writes it as \udxxx, which the general path
  // takes). These are also the escapes nlohmann's dump() writes, so the
  // core keeps the text as it is (src/writes/fast_puts.cc, CanonicalString).
  // A long string is written by the engine's own code: JSON.stringify for
  // its escapes when it has any, then encodeInto.
  jsonString(s) {
    const n = s.length;
    if (n > LONG_STRING) return this.jsonStringLong(s);
    this.ensure(2 + 6 * n);  // each char at most 6 bytes (\u00xx; UTF-8: 3)
    const b = this.bytes;
    let p = this.len;
    b[p++] = 0x22;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x80) {
        if (c >= 0x20) {
          if (c === 0x22 || c === 0x5C) b[p++] = 0x5C;
          b[p++] = c;
          continue;
        }
        b[p++] = 0x5C;
        const short = SHORT_ESCAPE[c];
        if (short !== 0) {
          b[p++] = short;
        } else {
          b[p++] = 0x75;  // u00xx
          b[p++] = 0x30;
          b[p++] = 0x30;
          b[p++] = HEX[c >> 4];
          b[p++] = HEX[c & 15];
        }
      } else if (c < 0x800) {
        b[p++] = 0xC0 | (c >> 6);
        b[p++] = 0x80 | (c & 63);
      } else if (c < 0xD800 || c > 0xDFFF) {
        b[p++] = 0xE0 | (c >> 12);
        b[p++] = 0x80 | ((c >> 6) & 63);
        b[p++] = 0x80 | (c & 63);
      } else {
        const d = i + 1 < n ? s.charCodeAt(i + 1) : 0;
        if (c > 0xDBFF || d < 0xDC00 || d > 0xDFFF) return false;  // a lone surrogate
        const u = 0x10000 + ((c - 0xD800) << 10) + (d - 0xDC00);
        b[p++] = 0xF0 | (u >> 18);
        b[p++] = 0x80 | ((u >> 12) & 63);
        b[p++] = 0x80 | ((u >> 6) & 63);
        b[p++] = 0x80 | (u & 63);
        i++;
      }
    }
    b[p++] = 0x22;
    this.len = p;
    return true;
  }

  jsonStringLong(s) {
    if (!wellFormed(s)) return false;
    const text = NEEDS_ESCAPE.test(s) ? JSON.stringify(s) : null;
    const n = text === null ? s.length + 2 : text.length;
    this.ensure(3 * n);
    let at = this.len;
    if (text === null) this.bytes[at++] = 0x22;
    at += utf8.encodeInto(text ?? s, this.bytes.subarray(at)).written;
    if (text === null) this.bytes[at++] = 0x22;
    this.len = at;
    return true;
  }

  ascii(word) {
    this.ensure(word.length);
    for (let i = 0; i < word.length; i++) this.bytes[this.len++] = word.charCodeAt(i);
    return true;
  }

  // A non-negative integer (at most 2^53) as LEB128.
  varint(v) {
    this.ensure(8);
    const b = this.bytes;
    while (v >= 128) {
      b[this.len++] = (v % 128) | 0x80;
      v = Math.floor(v / 128);
    }
    b[this.len++] = v;
  }

  // A string: its UTF-8 length, then its UTF-8 (a lone surrogate becomes
  // U+FFFD, as the wire JSON's encoder makes it).
  str(s) {
    const n = s.length;
    if (n < 128) {
      this.ensure(1 + n);
      const b = this.bytes;
      let p = this.len + 1;
      for (let i = 0; i < n; i++) {
        const c = s.charCodeAt(i);
        if (c >= 0x80) return this.strWide(s);
        b[p++] = c;
      }
      b[this.len] = n;
      this.len = p;
      return undefined;
    }
    return this.strWide(s);
  }

  strWide(s) {
    this.ensure(5 + 3 * s.length);
    const { written } = utf8.encodeInto(s, this.bytes.subarray(this.len + 5));
    // The length in a padded 5-byte LEB128, written once the length is known.
    let v = written;
    for (let k = 0; k < 4; k++) {
      this.bytes[this.len++] = (v % 128) | 0x80;
      v = Math.floor(v / 128);
    }
    this.bytes[this.len++] = v;
    this.len += written;
  }

  ensure(n) {
    if (this.len + n <= this.bytes.length) return;
    // A view of a wasm heap reads as empty once a call grew the heap.
    if (this.heap !== null && this.bytes.length === 0) this.bytes = this.heap.mod.HEAPU8.subarray(this.at, this.at + this.cap);
    if (this.len + n > this.bytes.length) this.resize(Math.max(this.cap * 2, this.len + n));
  }

  // Room for `cap` bytes, the first `len` kept: a new Uint8Array, or a new
  // room in the wasm heap (the old one freed).
  resize(cap) {
    const heap = this.heap;
    if (heap === null) {
      const next = new Uint8Array(cap);
      if (this.bytes !== null) next.set(this.bytes.subarray(0, this.len));
      this.bytes = next;
      this.cap = cap;
      return;
    }
    const { mod } = heap;
    const at = mod._malloc(cap);
    if (!at) throw new StoreError(ErrorCodes.Limit, `a transaction's ops: the wasm heap has no room for ${cap} bytes of them; commit in smaller transactions`);
    const h = mod.HEAPU8;  // as it is after malloc, which may have grown it
    if (this.cap > 0) {
      h.copyWithin(at, this.at, this.at + this.len);
      mod._free(this.at);
    }
    this.at = at;
    this.cap = cap;
    this.bytes = h.subarray(at, at + cap);
  }
}

function sameNames(a, b) {
  if (b === null || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
