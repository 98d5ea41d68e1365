// The one text order: Unicode code points, which is how SQLite compares
// UTF-8 text, and how the memory backend compares too.

import { invalidArgs } from "./errors.js";
import { wellFormed } from "./encode.js";
import { describe } from "./schema.js";

// Maps a UTF-16 unit so that unit order equals code point order: surrogates
// (D800-DFFF, the halves of code points above FFFF) sort after E000-FFFF.
function fix(u) {
  return u >= 0xe000 ? u - 0x800 : u >= 0xd800 ? u + 0x2000 : u;
}

function isSurrogate(u) {
  return u >= 0xd800 && u <= 0xdfff;
}

/**
 * Compares two strings by Unicode code point, as the store does: -1, 0 or
 * 1. A lone surrogate counts as U+FFFD, the character the
 * store keeps in its place. Differs from JS `<` and `sort()` only for
 * U+E000-U+FFFF against characters above U+FFFF (emoji).
 *
 * @example
 * compareText("测试（一）", "测试😀")   // -1   (JS sort puts them the other way)
 * ["b", "a"].sort(compareText)        // ["a", "b"]
 */
export function compareText(a, b) {
  if (typeof a !== "string" || typeof b !== "string") {
    throw invalidArgs(`compareText: both arguments must be strings, got ${describe(a)} and ${describe(b)}`);
  }
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    if (isSurrogate(x) || isSurrogate(y)) {
      const wa = wellFormed(a);
      const wb = wellFormed(b);
      if (wa !== a || wb !== b) return compareText(wa, wb);
    }
    return fix(x) < fix(y) ? -1 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

// base64url without padding, of a text's UTF-8 (the cursors: the core's
// "c1." ones, js/edges.js's "n1." ones). ASCII text is its own bytes; btoa
// gives a flat string (a cursor built by += would be a rope of a node a
// character, kept as long as its page).
export function toBase64Url(text) {
  let bin = text;
  if (!/^[\0-\x7f]*$/.test(text)) {
    const bytes = new TextEncoder().encode(text);
    bin = "";
    for (let i = 0; i < bytes.length; i += 4096) bin += String.fromCharCode.apply(null, bytes.subarray(i, i + 4096));
  }
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

// The text of toBase64Url's output; throws on text that is not base64url
// of UTF-8.
export function fromBase64Url(text) {
  const bin = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
}
