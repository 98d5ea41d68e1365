// Vector values: what a vector(n) column takes and gives back.
//
// A vector is float32 x n. It crosses into the core, and travels in outbox
// records, batches and archives, as the base64 of its little-endian float32
// bytes in a JSON string (docs/formats.md, "Vectors"); the core's twin is
// src/values/vector.h. Written from a Float32Array (taken bit for bit) or an
// array of numbers (each rounded to the nearest float32); read back as a
// Float32Array. Every element must be finite.

import { invalidArgs } from "./errors.js";

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const ENC = new Uint8Array(64);
const DEC = new Int16Array(256).fill(-1);
for (let i = 0; i < 64; i++) {
  ENC[i] = ALPHABET.charCodeAt(i);
  DEC[ALPHABET.charCodeAt(i)] = i;
}
const utf8 = new TextDecoder();
const LITTLE_ENDIAN = new Uint8Array(new Float32Array([1]).buffer)[3] === 0x3f;

/** The base64 of bytes (standard alphabet, "=" padding). */
export function base64Of(bytes) {
  const n = bytes.length;
  const out = new Uint8Array(Math.ceil(n / 3) * 4);
  let o = 0;
  let i = 0;
  for (; i + 3 <= n; i += 3) {
    const x = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
    out[o++] = ENC[x >> 18];
    out[o++] = ENC[(x >> 12) & 63];
    out[o++] = ENC[(x >> 6) & 63];
    out[o++] = ENC[x & 63];
  }
  if (n - i === 1) {
    const x = bytes[i] << 16;
    out[o++] = ENC[x >> 18];
    out[o++] = ENC[(x >> 12) & 63];
    out[o++] = 61;
    out[o++] = 61;
  } else if (n - i === 2) {
    const x = (bytes[i] << 16) | (bytes[i + 1] << 8);
    out[o++] = ENC[x >> 18];
    out[o++] = ENC[(x >> 12) & 63];
    out[o++] = ENC[(x >> 6) & 63];
    out[o++] = 61;
  }
  return utf8.decode(out);
}

/** The bytes of base64 text as base64Of writes it; null if it is not. */
export function bytesOf(text) {
  if (text.length % 4 !== 0) return null;
  let pad = 0;
  if (text.endsWith("==")) pad = 2;
  else if (text.endsWith("=")) pad = 1;
  const out = new Uint8Array((text.length / 4) * 3 - pad);
  let o = 0;
  for (let i = 0; i < text.length; i += 4) {
    const a = DEC[text.charCodeAt(i)];
    const b = DEC[text.charCodeAt(i + 1)];
    const last = i + 4 === text.length;
    const c = last && pad === 2 ? 0 : DEC[text.charCodeAt(i + 2)];
    const d = last && pad >= 1 ? 0 : DEC[text.charCodeAt(i + 3)];
    if ((a | b | c | d) < 0) return null;
    const x = (a << 18) | (b << 12) | (c << 6) | d;
    out[o++] = x >> 16;
    if (o < out.length) out[o++] = (x >> 8) & 255;
    if (o < out.length) out[o++] = x & 255;
  }
  return out;
}

function bytesOfFloats(f32) {
  if (LITTLE_ENDIAN) return new Uint8Array(f32.buffer, f32.byteOffset, f32.byteLength);
  const out = new Uint8Array(f32.length * 4);
  const view = new DataView(out.buffer);
  for (let i = 0; i < f32.length; i++) view.setFloat32(4 * i, f32[i], true);
  return out;
}

function shown(v) {
  if (v instanceof Float32Array) return `a Float32Array of ${v.length}`;
  if (Array.isArray(v)) return `an array of ${v.length}`;
  if (typeof v === "string") return JSON.stringify(v.length > 40 ? v.slice(0, 37) + "..." : v);
  if (typeof v === "bigint") return `${v}n`;
  if (v === null || typeof v !== "object") return String(v);
  return ArrayBuffer.isView(v) ? `a ${v.constructor?.name ?? "typed array"}` : "an object";
}

/**
 * The wire form of a value for a vector column of `dims` elements: the
 * base64 of its little-endian float32 bytes. Takes a Float32Array (bit for
 * bit) or an array of numbers (each rounded to float32); null and undefined
 * pass through. Throws invalid/args naming `what` (the column) and the value:
 * the wrong length, an element that is not a number, NaN, +-Infinity or
 * beyond float32's range.
 *
 * @example
 * vectorWire(new Float32Array([1, 0]), 2, "row.embedding")   // "AACAPwAAAAA="
 * vectorWire([1, NaN], 2, "row.embedding")                    // throws invalid/args "row.embedding[1]: NaN is not a finite float32"
 */
export function vectorWire(v, dims, what) {
  if (v === null || v === undefined) return v;
  let f32;
  if (v instanceof Float32Array) {
    f32 = v;
  } else if (Array.isArray(v)) {
    f32 = new Float32Array(v.length);
    for (let i = 0; i < v.length; i++) {
      const x = v[i];
      if (typeof x !== "number") throw invalidArgs(`${what}[${i}]: ${shown(x)} is not a number (a vector holds ${dims} float32)`);
      f32[i] = x;
    }
  } else {
    throw invalidArgs(`${what}: ${shown(v)} is not a vector of ${dims} float32 (give a Float32Array or an array of numbers)`);
  }
  if (f32.length !== dims) throw invalidArgs(`${what}: ${shown(v)} has ${f32.length} elements, the column is a vector of ${dims} float32`);
  for (let i = 0; i < f32.length; i++) {
    if (!Number.isFinite(f32[i])) {
      const given = Array.isArray(v) ? v[i] : f32[i];
      throw invalidArgs(`${what}[${i}]: ${given} is not a finite float32${Number.isFinite(given) ? " (beyond float32's range)" : ""}`);
    }
  }
  return base64Of(bytesOfFloats(f32));
}

/**
 * A vector read back: the Float32Array of its wire form.
 *
 * @example
 * vectorOf("AACAPwAAAAA=")   // Float32Array [1, 0]
 */
export function vectorOf(text) {
  const bytes = bytesOf(text);
  if (bytes === null || bytes.length % 4 !== 0) throw invalidArgs(`a vector's wire form ${shown(text)} is not base64 of float32`);
  if (LITTLE_ENDIAN) return new Float32Array(bytes.buffer, 0, bytes.length / 4);
  const view = new DataView(bytes.buffer);
  const out = new Float32Array(bytes.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(4 * i, true);
  return out;
}

/** The vector columns of a table definition: [[name, column], ...]. */
const vectorsOf = new WeakMap();
export function vectorColumns(def) {
  let list = vectorsOf.get(def);
  if (list === undefined) {
    list = Object.entries(def.columns).filter(([, c]) => c.type === "vector");
    vectorsOf.set(def, list);
  }
  return list;
}
