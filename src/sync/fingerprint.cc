#include "sync/fingerprint.h"

#include "documents/documents.h"
#include "sync/sha256.h"

namespace onestore {

Status Fingerprint(Store* store, std::string* out) {
  Sha256 hash;
  std::string line;
  for (const auto& t : store->Tables()) {
    line = "table " + t->ToJson().dump() + "\n";
    hash.Update(line);
    // A document version's time and actor are the commit's (as in the
    // outbox), not content: hashed as null, so that two stores given the
    // same ops at other times agree.
    const bool deltas = t->name == kDeltasTable;
    const int at = deltas ? t->ColumnIndex("at") : -1;
    const int actor = deltas ? t->ColumnIndex("actor") : -1;
    const Value null_value;
    ONESTORE_RETURN_IF_ERROR(store->ForEachRow(*t, 1000, [&](const Row& row) {
      line.clear();
      line.push_back('[');
      for (size_t i = 0; i < row.size(); ++i) {
        if (i) line.push_back(',');
        const int c = static_cast<int>(i);
        (c == at || c == actor ? null_value : row[i]).AppendJson(&line);
      }
      line += "]\n";
      hash.Update(line);
      return Status::OK();
    }));
  }
  *out = "f1-" + hash.FinalHex().substr(0, 32);
  return Status::OK();
}

}  // namespace onestore
