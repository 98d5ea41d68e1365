// Fingerprint: a short digest of a store's content at its head, equal for
// equal content on every backend (design.md, "Archives": store.fingerprint()).
//
// The content is every table's schema record and rows; not the head, the
// session id, the outbox or the epoch, so an owner's store and a replica
// built from its batches have the same fingerprint. (Documents and blobs
// join the content when they exist.)
#ifndef ONESTORE_SYNC_FINGERPRINT_H_
#define ONESTORE_SYNC_FINGERPRINT_H_

#include <string>
#include <vector>

#include "commit/store.h"
#include "onestore/status.h"

namespace onestore {

// The canonical encoding that is hashed, version 1 (docs/formats.md,
// "Fingerprint"): for each table in name order (bytes), the line
// `table <record>` (its table record as compact JSON), then one line per row
// in key order, the row as a JSON array in column order (ints as integers,
// json cells as stored). Lines end with "\n"; JSON never holds a raw newline.
//
// Sets *out to "f1-" and the first 32 hex digits (128 bits) of the SHA-256 of
// that encoding. Fails as the store's reads fail (closed, storage_failed).
Status Fingerprint(Store* store, std::string* out);

// One table's digest, for archive manifests: "t1-" and the 64 hex digits of
// the SHA-256 of that table's part of the encoding above (its table line and
// its row lines); *rows is its row count. not_found for an unknown table.
Status TableDigest(Store* store, const std::string& table, int64_t* rows, std::string* out);

// One table's row count and digest (TableDigest's).
struct TableDigestEntry {
  std::string table;
  int64_t rows = 0;
  std::string digest;
};

// Fingerprint and every table's TableDigest (in name order) from one read of
// each table: what an import checks against its manifest.
Status FingerprintAndDigests(Store* store, std::string* fingerprint,
                             std::vector<TableDigestEntry>* tables);

}  // namespace onestore

#endif  // ONESTORE_SYNC_FINGERPRINT_H_
