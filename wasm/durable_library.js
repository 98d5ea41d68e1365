// The JS side of wasm/durable_connection.cc: a Durable Object's SQLite
// (ctx.storage.sql) called synchronously from the core. Linked with
// `--js-library wasm/durable_library.js`.
//
// The module factory gets `onestoreDurable` (js/loader-workerd.js), a
// registry whose `get(handle)` gives the state of one open store:
//   { storage,            // ctx.storage of the Durable Object
//     inTransaction,      // true while the runtime's transactionSync runs
//     began, rollback }   // what the core asked inside it (set here)
//
// A statement's answer is one malloc'ed UTF-8 string that the C side frees:
// JSON "[changes,[row],...]" (rows as sql.exec's raw() gives them: null,
// numbers, strings; a BLOB as {"hex": "..."}), or "!" and the host's error
// message. A parameter {"hex": "..."} is bound as a BLOB. No JS exception
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
    // Copies `text` into a new malloc'ed NUL-terminated UTF-8 string.
    give: function (text) {
      var n = lengthBytesUTF8(text) + 1;
      var p = _malloc(n);
      if (!p) return 0;
      stringToUTF8(text, p, n);
      return p;
    },
    fail: function (e) {
      var message;
      try {
        message = (e && e.message) ? String(e.message) : String(e);
      } catch (ignored) {
        message = 'unknown JS error';
      }
      return ONESTORE_DURABLE.give('!' + message);
    },
    // A BLOB (a vector column's bytes) crosses as {"hex": "..."} both ways,
    // as durable_connection.cc writes and reads it.
    hex: function (buffer) {
      var bytes = ArrayBuffer.isView(buffer)
        ? new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength)
        : new Uint8Array(buffer);
      var digits = '0123456789abcdef';
      var out = '';
      for (var i = 0; i < bytes.length; i++) out += digits[bytes[i] >> 4] + digits[bytes[i] & 15];
      return { hex: out };
    },
    param: function (p) {
      if (p === null || typeof p !== 'object') return p;
      var h = String(p.hex);
      var bytes = new Uint8Array(h.length >> 1);
      for (var i = 0; i < bytes.length; i++) bytes[i] = parseInt(h.substr(2 * i, 2), 16);
      return bytes.buffer;
    },
    // Rows of a cursor as JSON, after the changes count.
    answer: function (sql, cursor, countChanges) {
      var out = [0];
      var raw = cursor.raw();
      for (var row = raw.next(); !row.done; row = raw.next()) {
        var cells = row.value;
        for (var c = 0; c < cells.length; c++) {
          var v = cells[c];
          if (v !== null && typeof v === 'object') cells[c] = ONESTORE_DURABLE.hex(v);
        }
        out.push(cells);
      }
      if (countChanges) out[0] = sql.exec('SELECT changes()').raw().next().value[0];
      return JSON.stringify(out);
    },
  },

  onestore_durable_run__deps: ['$ONESTORE_DURABLE'],
  onestore_durable_run: function (handle, sqlPtr, paramsPtr, countChanges) {
    try {
      var sql = ONESTORE_DURABLE.state(handle).storage.sql;
      var params = JSON.parse(UTF8ToString(paramsPtr)).map(ONESTORE_DURABLE.param);
      var cursor = sql.exec.apply(sql, [UTF8ToString(sqlPtr)].concat(params));
      return ONESTORE_DURABLE.give(ONESTORE_DURABLE.answer(sql, cursor, countChanges));
    } catch (e) {
      return ONESTORE_DURABLE.fail(e);
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
