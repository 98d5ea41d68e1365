// The FileSystem of the wasm module: every call goes synchronously to the
// JS object given to the module factory as `onestoreFiles` (in Node,
// js/files-node.js), through the functions of wasm/files_library.js.
#ifndef ONESTORE_WASM_JS_FILE_SYSTEM_H_
#define ONESTORE_WASM_JS_FILE_SYSTEM_H_

#include "backends/sqlite/file.h"

namespace onestore {

// The one JS-backed FileSystem (never destroyed). Register it with
// RegisterVfs(JsFileSystem()) before opening an SQLite store in wasm. A JS
// exception in a files method becomes a storage_failed Status carrying its
// message; a missing file opened without `create` is not_found.
FileSystem* JsFileSystem();

}  // namespace onestore

#endif  // ONESTORE_WASM_JS_FILE_SYSTEM_H_
