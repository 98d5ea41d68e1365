#include "sync/fingerprint.h"

#include "sync/sha256.h"

namespace onestore {

Status Fingerprint(Store* store, std::string* out) {
  Sha256 hash;
  std::string line;
  for (const auto& t : store->Tables()) {
    line = "table " + t->ToJson().dump() + "\n";
    hash.Update(line);
    ONESTORE_RETURN_IF_ERROR(store->ForEachRow(*t, 1000, [&](const Row& row) {
      line.clear();
      line.push_back('[');
      for (size_t i = 0; i < row.size(); ++i) {
        if (i) line.push_back(',');
        row[i].AppendJson(&line);
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
