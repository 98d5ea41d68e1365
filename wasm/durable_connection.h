// The SqlConnection of a Cloudflare Durable Object: every statement goes
// synchronously to ctx.storage.sql.exec through wasm/durable_library.js.
#ifndef ONESTORE_WASM_DURABLE_CONNECTION_H_
#define ONESTORE_WASM_DURABLE_CONNECTION_H_

#include <cstdint>
#include <memory>

#include "backends/sqlite/connection.h"

namespace onestore {

// A connection to the storage that the JS runtime registered as `handle`
// (js/loader-workerd.js). Its transactions are the runtime's
// ctx.storage.transactionSync around the core's call: Begin fails unless one
// is open, Commit lets it commit when the call returns, Rollback makes the
// runtime throw inside it so that the host rolls everything back.
std::unique_ptr<SqlConnection> NewDurableConnection(int64_t handle);

}  // namespace onestore

#endif  // ONESTORE_WASM_DURABLE_CONNECTION_H_
