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
// numbers, strings), or "!" and the host's error message. No JS exception
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
    // Rows of a cursor as JSON, after the changes count.
    answer: function (sql, cursor, countChanges) {
      var out = [0];
      var raw = cursor.raw();
      for (var row = raw.next(); !row.done; row = raw.next()) out.push(row.value);
      if (countChanges) out[0] = sql.exec('SELECT changes()').raw().next().value[0];
      return JSON.stringify(out);
    },
  },

  onestore_durable_run__deps: ['$ONESTORE_DURABLE'],
  onestore_durable_run: function (handle, sqlPtr, paramsPtr, countChanges) {
    try {
      var sql = ONESTORE_DURABLE.state(handle).storage.sql;
      var params = JSON.parse(UTF8ToString(paramsPtr));
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
