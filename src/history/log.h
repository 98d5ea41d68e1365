// The log: what each retained commit changed, read from the outbox
// (design.md "Archives, snapshots, history"; docs/api.md "store.log").
//
// The outbox keeps one record per commit (seq, from, at, owner, actor?,
// ops) until it is trimmed. ReadLog answers two questions over it, each in
// one call (one crossing from JS):
// - {"seq":n}: the record of commit n, or not_found when n was trimmed or is
//   beyond the head;
// - {"owner"?,"actor"?,"from"?,"to"?,"after"?,"limit"?}: the records that
//   match, oldest first, one page at a time with a seq cursor.
#ifndef ONESTORE_HISTORY_LOG_H_
#define ONESTORE_HISTORY_LOG_H_

#include <cstdint>
#include <string>

#include "commit/store.h"
#include "onestore/status.h"

namespace onestore {

// At most this many records are read by one filtered call, whatever they
// match: a filter that matches few commits answers a short page with a
// `next`, so one call never walks the whole outbox.
constexpr int64_t kLogScanBudget = 4096;
// The largest `limit` of a filtered call.
constexpr int64_t kLogMaxLimit = 1000;

// Answers a log request (JSON text, above). {"seq":n} answers the record's
// JSON text as the outbox holds it. A filter answers
// {"commits":[record,...],"next":seq?}: next is present when more records
// may match; pass it as "after" for the next page.
Status ReadLog(Store* store, const std::string& request_json, std::string* answer);

}  // namespace onestore

#endif  // ONESTORE_HISTORY_LOG_H_
