// What the package trims from embind's JS (issue 13, the download, step
// four). Linked with `--js-library wasm/embind_library.js` after
// Emscripten's own libraries, so that a definition here replaces theirs.
//
// embind registers its builtin types at startup, std::wstring, u16string
// and u32string among them, whatever the bindings use. Their JS (the
// registration and the UTF-16 and UTF-32 readers and writers it pulls in,
// about 3 KB of glue) is dead: the bench's RawSqlite (wasm/raw_sqlite.cc,
// the only embind class since the shipped Core left embind: wasm/ABI.md,
// "Calls") takes and returns std::string and numbers only. The shipped
// build links no embind, and this definition goes unused there.
// Here the registration of a wide string type registers nothing, and the
// glue's optimizer drops the code only it used. A binding that took a wide
// string would fail at its call with embind's UnboundTypeError.
mergeInto(LibraryManager.library, {
  _embind_register_std_wstring__deps: [],
  _embind_register_std_wstring: function(rawType, charSize, name) {},
});
