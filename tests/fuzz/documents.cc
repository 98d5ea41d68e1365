// Fuzz target: document ops (doc.create, doc.change with JSON Patch,
// doc.retire; src/documents/) and the reads of documents (Store::Documents:
// find, load, list, versions), on a memory store and a sqlite :memory:
// store side by side; plus ApplyJsonPatch on its own.
//
// Input lines: 0..n-2 commits (ops), n-1 a documents read request. When
// the last line is a JSON Patch, it is also applied to the value of the
// first doc.create of the input. Invariants: both stores accept or refuse
// alike (same code, same content, same answers); a refusal changes nothing;
// a patch that fails leaves the document as it was.
#include "documents/documents.h"
#include "fuzz_common.h"
#include "values/json_text.h"

namespace onestore {
namespace fuzz {

ONESTORE_FUZZ_TARGET(documents) {
  std::vector<std::string> lines = Lines(data, size, 8);
  if (lines.size() < 2) return 0;
  Pair p;
  for (size_t i = 0; i + 1 < lines.size(); ++i) p.Commit(lines[i]);
  const std::string& request = lines.back();
  std::string a, b;
  Status s1 = p.mem->Documents(request, &a);
  Status s2 = p.sql->Documents(request, &b);
  FUZZ_CHECK(s1.code() == s2.code(),
             "documents: memory and sqlite disagree: " + s1.ToString() + " vs " + s2.ToString());
  if (s1.ok()) FUZZ_CHECK(a == b, "documents: different answers:\n" + a + "\n" + b);
  else CheckRefusal(s1, ReadRefusals(), "documents");

  // The last line as a patch of a sample document.
  Json patch;
  bool too_deep = false;
  if (TryParseJsonText(request, kMaxJsonDepth, &patch, &too_deep) && patch.is_array()) {
    Json doc = Json::parse(R"({"a":[1,2,{"b":"c"}],"d":{"e":null,"f":true},"g":"h"})");
    Json copy = doc;
    Status st = ApplyJsonPatch(patch, "patch", &doc);
    if (!st.ok()) {
      CheckRefusal(st, {Code::kInvalidArgs}, "ApplyJsonPatch");
      FUZZ_CHECK(doc == copy, "a refused patch changed the document");
    }
  }
  p.CheckStillWork();
  return 0;
}

}  // namespace fuzz
}  // namespace onestore
