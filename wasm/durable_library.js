// The JS side of wasm/durable_connection.cc: a Durable Object's SQLite
// (ctx.storage.sql) called synchronously from the core. Linked with
// `--js-library wasm/durable_library.js`.
//
// The module factory gets `onestoreDurable` (js/loader-workerd.js), a
// registry whose `get(handle)` gives the state of one open store:
//   { storage,            // ctx.storage of the Durable Object
//     inTransaction,      // true while the runtime's transactionSync runs
//     check(text, params, expected),  // a check entry's answer: true when
//                         // its first cell is `expected` (a string)
//     began, rollback }   // what the core asked inside it (set here)
//
// Statements come in batches (onestore_durable_batch): JSON
// [mode, [text, params, expect?], ...], the SQL text of a statement kept in
// the handle's state (`texts`, by the id the C side gave it) after its first
// crossing. A batch's answer is one malloc'ed buffer that the C side frees:
// its length (4 bytes), then "[0]" (or, for a batch, the address 1: "[0]"
// without an allocation), or the binary answer of its last
// statement (`answer`: its rows as sql.exec's raw() gives them, its
// changes), or "!<n>!" and the host's error message for statement n, or
// "?<n>" for a check that found another value. A parameter
// {"hex": "..."} is bound as a BLOB; {"t": i} is the text whose UTF-8 bytes
// the C side put beside the batch (the address and length at beside[2i],
// beside[2i+1]), decoded here once. No JS exception
// crosses into wasm. A row is never held across calls, and a view of wasm
// memory is never kept (memory grows).
//
// These functions and the extern "C" list in wasm/durable_connection.cc must
// stay in step: same names, same arguments, same answers.
mergeInto(LibraryManager.library, {
  $ONESTORE_DURABLE__deps: ['malloc'],
  $ONESTORE_DURABLE: {
    state: function (handle) {
      var registry = Module['onestoreDurable'];
      var st = registry && registry.get(handle);
      if (!st) throw new Error('no Durable Object storage is registered as handle ' + handle);
      return st;
    },
    // An answer: a new malloc'ed buffer of its length (4 bytes) and `text`'s
    // UTF-8 bytes.
    give: function (text) {
      var bytes = ONESTORE_DURABLE.encoder().encode(text);
      var q = _malloc(bytes.length + 4);
      if (!q) return 0;
      HEAPU32[q >> 2] = bytes.length;
      HEAPU8.set(bytes, q + 4);
      return q;
    },
    encoder: function () {
      return ONESTORE_DURABLE.e || (ONESTORE_DURABLE.e = new TextEncoder());
    },
    message: function (e) {
      try {
        return (e && e.message) ? String(e.message) : String(e);
      } catch (ignored) {
        return 'unknown JS error';
      }
    },
    fail: function (e) {
      return ONESTORE_DURABLE.give('!' + ONESTORE_DURABLE.message(e));
    },
    // A BLOB parameter (a vector column's bytes) crosses as {"hex": "..."},
    // as durable_connection.cc writes it.
    param: function (p) {
      if (p === null || typeof p !== 'object') return p;
      var h = String(p.hex);
      var bytes = new Uint8Array(h.length >> 1);
      for (var i = 0; i < bytes.length; i++) bytes[i] = parseInt(h.substr(2 * i, 2), 16);
      return bytes.buffer;
    },
    // The answer of a cursor, binary (durable_connection.cc, BinaryReader):
    // '#', the changes count (f64), the columns and the rows (u32 each),
    // then each cell: 0 null; 1 an int, 2 a num, each an f64 (an integral
    // number within int64 is an int, as JSON text would read; a number that
    // is not finite is null, as JSON.stringify writes it); 3 a text, 4 a
    // BLOB, each its length (u32) and its bytes. Little-endian.
    answer: function (sql, cursor, countChanges, wantRows) {
      var rows = [], columns = 0, bound = 21;
      var raw = cursor.raw();
      for (var row = raw.next(); !row.done; row = raw.next()) {
        if (!wantRows) continue;
        var cells = row.value;
        columns = cells.length;
        for (var c = 0; c < cells.length; c++) {
          var v = cells[c];
          bound += typeof v === 'string' ? 6 + 3 * v.length : v !== null && typeof v === 'object' ? 5 + v.byteLength : 9;
        }
        rows.push(cells);
      }
      var changes = countChanges ? sql.exec('SELECT changes()').raw().next().value[0] : 0;
      var q = _malloc(bound);
      if (!q) return 0;
      var dv = new DataView(HEAPU8.buffer), at = q + 4;
      HEAPU8[at] = 35;
      dv.setFloat64(at + 1, changes, true);
      dv.setUint32(at + 9, columns, true);
      dv.setUint32(at + 13, rows.length, true);
      at += 17;
      for (var r = 0; r < rows.length; r++) {
        cells = rows[r];
        for (c = 0; c < cells.length; c++) {
          v = cells[c];
          if (typeof v === 'string') {
            // Short texts by the glue's loop; long ones by TextEncoder.
            var n = v.length < 64 ? stringToUTF8Array(v, HEAPU8, at + 5, 3 * v.length + 1)
              : ONESTORE_DURABLE.encoder().encodeInto(v, HEAPU8.subarray(at + 5, at + 5 + 3 * v.length)).written;
            HEAPU8[at] = 3;
            dv.setUint32(at + 1, n, true);
            at += 5 + n;
          } else if (typeof v === 'number' && isFinite(v)) {
            HEAPU8[at] = Number.isInteger(v) && v >= -9223372036854775808 && v < 9223372036854775808 ? 1 : 2;
            dv.setFloat64(at + 1, v, true);
            at += 9;
          } else if (v !== null && typeof v === 'object') {
            var b = ArrayBuffer.isView(v) ? new Uint8Array(v.buffer, v.byteOffset, v.byteLength) : new Uint8Array(v);
            HEAPU8[at] = 4;
            dv.setUint32(at + 1, b.length, true);
            HEAPU8.set(b, at + 5);
            at += 5 + b.length;
          } else {
            HEAPU8[at++] = 0;
          }
        }
      }
      HEAPU32[q >> 2] = at - q - 4;
      return q;
    },
  },

  // A batch of statements, run in order (wasm/durable_connection.cc,
  // onestore_durable_batch): the SQL of each from the handle's texts when it
  // comes as an id; every id is resolved before anything runs.
  onestore_durable_batch__deps: ['$ONESTORE_DURABLE'],
  onestore_durable_batch: function (handle, batchPtr, batchLength, besidePtr, besideCount) {
    var n = 0;
    try {
      var st = ONESTORE_DURABLE.state(handle);
      var sql = st.storage.sql;
      var texts = st.texts || (st.texts = []);
      var batch = JSON.parse(UTF8Decoder.decode(HEAPU8.subarray(batchPtr, batchPtr + batchLength)));
      var beside = [];
      for (var b = 0; b < besideCount; b++) {
        var at = HEAPU32[(besidePtr >> 2) + 2 * b];
        beside.push(UTF8Decoder.decode(HEAPU8.subarray(at, at + HEAPU32[(besidePtr >> 2) + 2 * b + 1])));
      }
      var mode = batch[0];
      var last = batch.length - 1;
      for (var i = 1; i <= last; i++) {
        var t = batch[i][0];
        if (typeof t === 'number') {
          if (texts[t] === undefined) throw new Error('durable: no statement text kept under id ' + t);
        } else if (typeof t === 'object') {
          texts[t[0]] = t[1];
        }
      }
      for (n = 1; n <= last; n++) {
        var e = batch[n];
        var text = typeof e[0] === 'number' ? texts[e[0]] : typeof e[0] === 'object' ? e[0][1] : e[0];
        var params = e[1];
        // A check (the epoch's): the runtime answers it, from what it knows
        // or by running it (js/loader-workerd.js, `check`).
        if (e.length > 2) {
          if (!st.check(text, params, e[2])) return ONESTORE_DURABLE.give('?' + n);
          continue;
        }
        for (var p = 0; p < params.length; p++) {
          if (params[p] !== null && typeof params[p] === 'object') params[p] = params[p].t === undefined ? ONESTORE_DURABLE.param(params[p]) : beside[params[p].t];
        }
        var cursor = params.length ? sql.exec.apply(sql, [text].concat(params)) : sql.exec(text);
        if (n === last && mode) return ONESTORE_DURABLE.answer(sql, cursor, mode & 2, mode & 1);
        while (!cursor.next().done) { /* a write's cursor: run it through */ }
      }
      return 1;  // "[0]", without an answer to allocate (durable_connection.cc)
    } catch (e) {
      return ONESTORE_DURABLE.give('!' + n + '!' + ONESTORE_DURABLE.message(e));
    }
  },

  onestore_durable_exec__deps: ['$ONESTORE_DURABLE'],
  onestore_durable_exec: function (handle, sqlPtr) {
    try {
      var sql = ONESTORE_DURABLE.state(handle).storage.sql;
      var cursor = sql.exec(UTF8ToString(sqlPtr));
      // Consume it: a multi-statement text runs as the cursor is read.
      cursor.toArray();
      return ONESTORE_DURABLE.give('[0]');
    } catch (e) {
      return ONESTORE_DURABLE.fail(e);
    }
  },

  onestore_durable_begin__deps: ['$ONESTORE_DURABLE'],
  onestore_durable_begin: function (handle) {
    try {
      var st = ONESTORE_DURABLE.state(handle);
      if (!st.inTransaction) return -1;
      st.began = true;
      st.rollback = false;
      return 0;
    } catch (e) {
      return -1;
    }
  },

  onestore_durable_end__deps: ['$ONESTORE_DURABLE'],
  onestore_durable_end: function (handle, commit) {
    try {
      var st = ONESTORE_DURABLE.state(handle);
      st.began = false;
      if (!commit) st.rollback = true;
    } catch (e) {
      // the store is gone; nothing to end
    }
  },
});
