// The imports of wasm/durable_connection.cc: a Durable Object's SQLite
// (ctx.storage.sql) called synchronously from the core. Linked with
// `--js-library wasm/durable_library.js`.
//
// Each import hands its call to `onestoreDurable`, the runtime the module
// factory gets in workerd (js/loader-workerd.js, `durableRuntime`): its
// `batch`, `exec`, `begin` and `end` do the work, with the module (its heap,
// malloc) as their first argument, so that the glue every runtime downloads
// holds only these lines (issue 13, "Durable Objects, step four"). The
// formats of a batch and of its answer are in the comments of
// durable_connection.cc and js/loader-workerd.js. Without a runtime (a
// durable backend asked for outside workerd) a call answers 0, which the C
// side reads as "no answer" (batch, exec) or -1 (begin, "no transaction"):
// no JS exception crosses into wasm, and the runtime's functions catch their
// own.
//
// These functions and the extern "C" list in wasm/durable_connection.cc must
// stay in step: same names, same arguments, same answers.
mergeInto(LibraryManager.library, {
  onestore_durable_batch: function (handle, batch, length, chars, charsLength) {
    var d = Module['onestoreDurable'];
    return d ? d.batch(Module, handle, batch, length, chars, charsLength) : 0;
  },
  onestore_durable_exec: function (handle, sql) {
    var d = Module['onestoreDurable'];
    return d ? d.exec(Module, handle, sql) : 0;
  },
  onestore_durable_begin: function (handle) {
    var d = Module['onestoreDurable'];
    return d ? d.begin(handle) : -1;
  },
  onestore_durable_end: function (handle, commit) {
    var d = Module['onestoreDurable'];
    if (d) d.end(handle, commit);
  },
});
