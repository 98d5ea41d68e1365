// The binary batch of ops the JS package sends (wasm/ABI.md, "Binary ops").
#ifndef ONESTORE_WRITES_BINARY_OPS_H_
#define ONESTORE_WRITES_BINARY_OPS_H_

#include <cstddef>
#include <string_view>
#include <vector>

#include "onestore/status.h"
#include "writes/writes.h"

namespace onestore {

// Its first byte (no JSON text starts with it). Then records: a shape (a
// table and the member names of the rows after it), a put (one value per
// name of the shape, each a tag and its bytes) or one op in wire JSON.
constexpr unsigned char kBinaryOpsMagic = 0xB1;

// Whether `bytes` is a binary batch (else it is JSON text).
bool IsBinaryOps(std::string_view bytes);

// The number of ops in the binary batch `bytes` (0 when it is none, or is
// malformed), read without making any: what a caller sizes its room by.
size_t BinaryOpsCount(std::string_view bytes);

// Reads a binary batch (writes/fast_puts.cc), appending its ops to `out`. A
// put is read straight into a row when it can be given exactly as the DOM
// path would give it; any other put is written back as the wire JSON the JS
// package would have sent and goes through ParseOp, so that it gives the
// same op or the same worded error ("ops[3].row.entry: ..."). A batch that
// does not parse fails with invalid/args naming the byte. On a failure
// `out` is as it was. An op the JS package left to wire JSON (an update, a
// delete, a put holding a BigInt...) is read by the wire JSON reader
// (ParsePutsFast's) when it takes it, else by ParseOp. `dom_ops`, when
// given, counts the ops that went the DOM way (the tests' view of what
// the fast readers take).
Status ParseBinaryOps(std::string_view bytes, TableResolver* tables, std::vector<Op>* out,
                      size_t* dom_ops = nullptr);

}  // namespace onestore

#endif  // ONESTORE_WRITES_BINARY_OPS_H_
