// The module's `Core` class, `errorCodes()` and `peekStore()`, over the plain
// exports of wasm/bindings.cc (onestore_call): what embind's class was
// before (issue 13, the download: embind's glue and its C++ side were about
// 10 KB gzipped). Linked with --post-js (wasm/flags.cmake), so it runs inside
// the module's factory, beside the exports and HEAPU8.
//
// A call writes its strings (and Uint8Arrays) into the call room, each as
// its length (4 bytes, little-endian) then its UTF-8, and passes its numbers
// (booleans as 0 or 1, a Core as its address) as the export's a, b and c.
// Its answer is a number, or a string read back from the room.

// The methods, numbered as onestore_call's cases are; the module's own
// functions follow them (53: errorCodes, 54: peekStore).
var onestoreMethods = ("open declare commit commitAs address ownerId lastError lastOps txOpen txStage " +
  "txGet txCommit txCommitAs txClose get page nearest vectorCache debugBase64GrowthBytes count mintId " +
  "documents outboxRead log outboxTrim applyBatch recordDivergence diverged promote split origin " +
  "restoreBatch hostNote setHostNote fingerprint exportRows tableDigest archiveDigests restoreTables " +
  "restoreRows restoreOutbox snapshotTake snapshotRestore snapshotRestoreCopies seedViewCopies " +
  "snapshotDrop snapshotHold snapshotRelease seedView head tables archiveTables close").split(" ");
// Those that answer a number: commitAs, address, ownerId, txOpen, txCommitAs, head.
var onestoreNumbers = [3, 4, 5, 8, 12, 49];
var onestoreEncoder = new TextEncoder();
var onestoreDecoder = new TextDecoder();
var onestoreWellFormed = String.prototype.isWellFormed;
var onestoreLongText = 1 << 16;  // chars

// The error of a call whose arguments the heap has no room for (the room's
// export answered null: wasm/bindings.cc, ArgumentsRoom). js/errors.js,
// asStoreError, makes it a StoreError with code `limit`; nothing ran.
function onestoreLimit(what) {
  var e = new Error(what + " do not fit in what is left of the wasm heap (it grows to at most 2 GB); pass less at a time");
  e.name = "OnestoreLimitError";
  return e;
}

function onestoreCall(address, m, args) {
  var numbers = [0, 0, 0];
  var k = 0;
  var texts = [];
  var size = 0;
  for (var i = 0; i < args.length; i++) {
    var v = args[i];
    if (typeof v === "number" || typeof v === "boolean") {
      numbers[k++] = +v;
    } else if (v instanceof OnestoreCore) {
      numbers[k++] = v.address();
    } else if (typeof v === "string" && v.length > onestoreLongText && onestoreWellFormed && onestoreWellFormed.call(v)) {
      // A long string is encoded here, in JS memory, so that its room in the
      // heap is its UTF-8 length, not the 3 bytes a char the encoder below
      // must be given (a batch of 300 MB asked for 900 MB of the heap).
      v = onestoreEncoder.encode(v);
      texts.push(v);
      size += 4 + v.length;
    } else if (typeof v === "string" || v instanceof Uint8Array) {
      texts.push(v);
      size += 4 + (typeof v === "string" ? 3 * v.length + 2 : v.length);
    } else {
      throw new TypeError("Core." + onestoreMethods[m] + ": argument " + i + " is not a string, bytes or a number");
    }
  }
  var p = _onestore_call_room(size);
  if (!p) throw onestoreLimit("Core." + onestoreMethods[m] + ": its arguments (" + size + " bytes)");
  var h = HEAPU8;  // as the room left it (it may have grown the heap)
  for (var j = 0; j < texts.length; j++) {
    var t = texts[j];
    var n;
    if (typeof t === "string" && !(onestoreWellFormed && onestoreWellFormed.call(t))) {
      // A lone surrogate (or a runtime that cannot tell): Emscripten's own
      // encoder, the bytes embind wrote, which the core refuses where text
      // must be UTF-8 (TextEncoder would make it U+FFFD).
      n = stringToUTF8Array(t, h, p + 4, 3 * t.length + 2);
    } else if (typeof t === "string") {
      n = onestoreEncoder.encodeInto(t, h.subarray(p + 4, p + 4 + 3 * t.length)).written;
    } else {
      h.set(t, p + 4);
      n = t.length;
    }
    h[p] = n;
    h[p + 1] = n >> 8;
    h[p + 2] = n >> 16;
    h[p + 3] = n >>> 24;
    p += 4 + n;
  }
  var r = _onestore_call(address, m, numbers[0], numbers[1], numbers[2]);
  if (onestoreNumbers.indexOf(m) >= 0) return r;
  h = HEAPU8;
  return onestoreDecoder.decode(h.subarray(r + 4, r + 4 + (h[r] | h[r + 1] << 8 | h[r + 2] << 16 | h[r + 3] << 24) >>> 0));
}

// One core: a store's or a replica's state in the heap, until delete().
function OnestoreCore() {
  this.at = _onestore_core_new();
}
OnestoreCore.prototype.address = function() {
  if (!this.at) throw new Error("Core: deleted");
  return this.at;
};
OnestoreCore.prototype.delete = function() {
  _onestore_core_delete(this.address());
  this.at = 0;
};
onestoreMethods.forEach(function(name, m) {
  if (m !== 4) OnestoreCore.prototype[name] = function() { return onestoreCall(this.address(), m, arguments); };
});

Module["Core"] = OnestoreCore;
Module["errorCodes"] = function() { return onestoreCall(0, 53, []); };
Module["peekStore"] = function(path, privateCopy) { return onestoreCall(0, 54, [path, privateCopy]); };
