#include "history/log.h"

#include <algorithm>
#include <vector>

#include "values/json_text.h"
#include "values/value.h"

namespace onestore {
namespace {

constexpr int64_t kLogReadPage = 256;

Status SeqField(const Json& req, const char* name, int64_t min, int64_t* out, bool* given) {
  *given = false;
  auto it = req.find(name);
  if (it == req.end() || it->is_null()) return Status::OK();
  if (!it->is_number_integer() || it->get<int64_t>() < min ||
      it->get<int64_t>() > kMaxSafeInteger) {
    return Status::InvalidArgs(std::string("store.log: ") + name + " must be an integer >= " +
                               std::to_string(min) + ", got " + it->dump());
  }
  *out = it->get<int64_t>();
  *given = true;
  return Status::OK();
}

// The part of a record a filter looks at: everything but the ops, which
// the parser skips without building them.
Status RecordHead(const std::string& record, Json* head) {
  bool too_deep = false;
  if (!TryParseJsonTextWithout(record, "ops", kNoJsonDepthLimit, head, &too_deep) ||
      !head->is_object()) {
    return Status::InvalidArgs("store.log: an outbox record is not a JSON object: " + record.substr(0, 80));
  }
  return Status::OK();
}

// Whether actor `a` (a record's) has every field that `want` gives.
bool ActorMatches(const Json* a, const Json& want) {
  if (a == nullptr || !a->is_object()) return false;
  for (auto it = want.begin(); it != want.end(); ++it) {
    auto f = a->find(it.key());
    if (f == a->end() || *f != it.value()) return false;
  }
  return true;
}

std::string OldestText(Store* store) {
  std::vector<OutboxEntry> first;
  if (!store->ReadOutboxEntries(0, 1, &first).ok() || first.empty()) {
    return "the outbox holds no commit";
  }
  return "the oldest retained commit is " + std::to_string(first.front().seq);
}

Status ReadOne(Store* store, int64_t seq, std::string* answer) {
  if (seq > store->head()) {
    return Status::NotFound("store.log: no commit " + std::to_string(seq) + ": the head is " +
                            std::to_string(store->head()));
  }
  std::vector<OutboxEntry> entries;
  ONESTORE_RETURN_IF_ERROR(store->ReadOutboxEntries(seq - 1, 1, &entries));
  if (entries.empty() || entries.front().seq != seq) {
    return Status::NotFound("store.log: commit " + std::to_string(seq) +
                            " is no longer in the outbox (trimmed; " + OldestText(store) + ")");
  }
  *answer = std::move(entries.front().record);
  return Status::OK();
}

}  // namespace

Status ReadLog(Store* store, const std::string& request_json, std::string* answer) {
  Json req;
  ONESTORE_RETURN_IF_ERROR(ParseJsonText(request_json, "store.log request", &req));
  if (!req.is_object()) return Status::InvalidArgs("store.log: the request must be an object");
  for (auto it = req.begin(); it != req.end(); ++it) {
    const std::string& k = it.key();
    if (k != "seq" && k != "owner" && k != "actor" && k != "from" && k != "to" && k != "after" &&
        k != "limit") {
      return Status::InvalidArgs("store.log: unknown field \"" + k +
                                 "\" (seq, or owner, actor, from, to, after, limit)");
    }
  }
  int64_t seq = 0;
  bool has_seq = false;
  ONESTORE_RETURN_IF_ERROR(SeqField(req, "seq", 1, &seq, &has_seq));
  if (has_seq) {
    if (req.size() != 1) {
      return Status::InvalidArgs("store.log: { seq } asks for one commit; it takes no filter");
    }
    return ReadOne(store, seq, answer);
  }

  const Json* owner = nullptr;
  auto o = req.find("owner");
  if (o != req.end() && !o->is_null()) {
    if (!o->is_string()) return Status::InvalidArgs("store.log: owner must be a string, got " + o->dump());
    owner = &*o;
  }
  const Json* actor = nullptr;
  auto a = req.find("actor");
  if (a != req.end() && !a->is_null()) {
    bool ok = a->is_object() && !a->empty();
    if (ok) {
      for (auto it = a->begin(); it != a->end(); ++it) {
        if ((it.key() != "kind" && it.key() != "id") || !it->is_string()) ok = false;
      }
    }
    if (!ok) {
      return Status::InvalidArgs("store.log: actor must be { kind?, id? } with strings, got " +
                                 a->dump());
    }
    actor = &*a;
  }
  int64_t from = 1, to = kMaxSafeInteger, after = 0, limit = 100;
  bool given = false;
  ONESTORE_RETURN_IF_ERROR(SeqField(req, "from", 0, &from, &given));
  ONESTORE_RETURN_IF_ERROR(SeqField(req, "to", 0, &to, &given));
  ONESTORE_RETURN_IF_ERROR(SeqField(req, "after", 0, &after, &given));
  ONESTORE_RETURN_IF_ERROR(SeqField(req, "limit", 1, &limit, &given));
  if (limit > kLogMaxLimit) {
    return Status::InvalidArgs("store.log: limit must be at most " + std::to_string(kLogMaxLimit) +
                               ", got " + std::to_string(limit));
  }

  // Records after `pos`, up to `to`: stop at `limit` matches or once the
  // scan budget is spent (then `next` says where to go on).
  int64_t pos = std::max(after, from - 1);
  const int64_t end = std::min(to, store->head());
  int64_t scanned = 0, matched = 0;
  bool more = false;
  answer->assign("{\"commits\":[");
  std::vector<OutboxEntry> entries;
  while (pos < end) {
    if (matched == limit || scanned >= kLogScanBudget || answer->size() >= kReadBytes) {
      more = true;
      break;
    }
    const int64_t want = std::min({kLogReadPage, end - pos, kLogScanBudget - scanned});
    ONESTORE_RETURN_IF_ERROR(store->ReadOutboxEntries(pos, want, &entries));
    if (entries.empty()) break;
    bool stop = false;
    for (OutboxEntry& e : entries) {
      if (e.seq > end) {
        stop = true;
        break;
      }
      ++scanned;
      bool match = true;
      if (owner != nullptr || actor != nullptr) {
        Json head;
        ONESTORE_RETURN_IF_ERROR(RecordHead(e.record, &head));
        if (owner != nullptr && head.value("owner", Json()) != *owner) match = false;
        if (match && actor != nullptr) {
          auto ra = head.find("actor");
          match = ActorMatches(ra == head.end() ? nullptr : &*ra, *actor);
        }
      }
      if (match) {
        if (matched++) answer->push_back(',');
        *answer += e.record;
      }
      pos = e.seq;
      if (matched == limit) break;
    }
    if (stop) break;
  }
  // More may match only when the scan stopped early before `end`.
  if (pos < end && (matched == limit || scanned >= kLogScanBudget)) more = true;
  *answer += "]";
  if (more) *answer += ",\"next\":" + std::to_string(pos);
  *answer += "}";
  return Status::OK();
}

}  // namespace onestore
