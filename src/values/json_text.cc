// ParseJsonText (json_text.h): nlohmann's SAX reader (iterative, so the text
// itself never recurses) into a DOM built here.
#include "values/json_text.h"

#include "onestore/cold.h"
#include "onestore/heap.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace onestore {

namespace {

// Builds the Json of a SAX stream. `stack_` holds the open arrays and
// objects; a container's address is stable while it is open, because
// nothing is added to its parent until it ends.
class DomBuilder {
 public:
  using Members = Json::object_t::Container;  // the vector under ordered_map

  // `skip_member`: a member of the top-level object by that name is read and
  // dropped, whatever its depth (empty: none).
  DomBuilder(Json* root, int max_depth, std::string_view skip_member = {})
      : root_(root), max_depth_(max_depth), skip_member_(skip_member) {}

  bool null() { return skipping_ ? SkipScalar() : Put(nullptr) != nullptr; }
  bool boolean(bool v) { return skipping_ ? SkipScalar() : Put(v) != nullptr; }
  bool number_integer(Json::number_integer_t v) {
    return skipping_ ? SkipScalar() : Put(v) != nullptr;
  }
  bool number_unsigned(Json::number_unsigned_t v) {
    return skipping_ ? SkipScalar() : Put(v) != nullptr;
  }
  bool number_float(Json::number_float_t v, const Json::string_t&) {
    return skipping_ ? SkipScalar() : Put(v) != nullptr;
  }
  bool string(Json::string_t& v) { return skipping_ ? SkipScalar() : Put(std::move(v)) != nullptr; }
  bool binary(Json::binary_t&) { return false; }  // not in JSON text

  bool start_object(std::size_t) { return skipping_ ? SkipOpen() : Open(Json::object()); }
  bool start_array(std::size_t) { return skipping_ ? SkipOpen() : Open(Json::array()); }

  bool key(Json::string_t& k) {
    if (skipping_) return true;
    if (stack_.size() == 1 && !skip_member_.empty() && k == skip_member_) {
      skipping_ = true;  // until its value ends
      skip_open_ = 0;
      return true;
    }
    // Appended without a lookup; repeated keys are merged at end_object.
    Members& m = stack_.back()->get_ref<Json::object_t&>();
    m.emplace_back(std::move(k), nullptr);
    member_ = &m.back().second;
    return true;
  }

  bool end_object() {
    if (skipping_) return SkipClose();
    MergeRepeatedKeys(&stack_.back()->get_ref<Json::object_t&>());
    return Close();
  }
  bool end_array() { return skipping_ ? SkipClose() : Close(); }

  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) {
    return false;
  }

  bool too_deep() const { return too_deep_; }

 private:
  // Places a value where the text has it; returns its address.
  template <class V>
  Json* Put(V&& v) {
    if (stack_.empty()) {
      *root_ = Json(std::forward<V>(v));
      return root_;
    }
    Json* top = stack_.back();
    if (top->is_array()) {
      Json::array_t& a = top->get_ref<Json::array_t&>();
      a.emplace_back(std::forward<V>(v));
      return &a.back();
    }
    *member_ = Json(std::forward<V>(v));
    return member_;
  }

  bool Open(Json empty) {
    if (static_cast<int>(stack_.size()) >= max_depth_) {
      too_deep_ = true;
      return false;
    }
    stack_.push_back(Put(std::move(empty)));
    return true;
  }

  bool Close() {
    stack_.pop_back();
    return true;
  }

  // The skipped member's value: a scalar ends it at once, a container when
  // the one it opened closes. Nothing of it is built, so its depth is not
  // limited (the reader itself does not recurse).
  bool SkipScalar() {
    if (skip_open_ == 0) skipping_ = false;
    return true;
  }
  bool SkipOpen() {
    ++skip_open_;
    return true;
  }
  bool SkipClose() {
    if (--skip_open_ == 0) skipping_ = false;
    return true;
  }

  // Merges the members of `o` with the same key, in one pass: the last value
  // wins, at the place of the first (what ordered_json's operator[] did one
  // key at a time). Objects without repeated keys are left as they are.
  static void MergeRepeatedKeys(Json::object_t* o) {
    Members& m = *o;
    const size_t n = m.size();
    if (n < 2) return;
    bool repeated = false;
    if (n <= 8) {
      for (size_t i = 1; i < n && !repeated; ++i) {
        for (size_t k = 0; k < i && !repeated; ++k) repeated = m[i].first == m[k].first;
      }
    } else {
      std::unordered_set<std::string_view> seen;
      seen.reserve(n);
      for (size_t i = 0; i < n && !repeated; ++i) repeated = !seen.insert(m[i].first).second;
    }
    if (!repeated) return;
    Members merged;
    std::unordered_map<std::string, size_t> at;
    for (auto& member : m) {
      auto [it, added] = at.emplace(member.first, merged.size());
      if (added) {
        merged.emplace_back(member.first, std::move(member.second));
      } else {
        merged[it->second].second = std::move(member.second);
      }
    }
    m.clear();
    for (auto& member : merged) m.emplace_back(member.first, std::move(member.second));
  }

  Json* root_;
  const int max_depth_;
  std::vector<Json*> stack_;
  Json* member_ = nullptr;  // the value slot of the key just read
  bool too_deep_ = false;
  const std::string_view skip_member_;
  bool skipping_ = false;  // inside the value of a skipped member
  int skip_open_ = 0;      // its arrays and objects open so far
};

}  // namespace

bool TryParseJsonText(std::string_view text, int max_depth, Json* out, bool* too_deep) {
  return TryParseJsonTextWithout(text, std::string_view(), max_depth, out, too_deep);
}

bool TryParseJsonTextWithout(std::string_view text, std::string_view skip_member, int max_depth,
                             Json* out, bool* too_deep) {
  *too_deep = false;
  // nlohmann's lexer takes a NUL byte for the end of the input, so
  // "[1]\0anything" would read as [1]. No JSON text holds a raw NUL (inside
  // a string it is written \u0000): a text with one is not JSON.
  if (text.find('\0') != std::string_view::npos) return false;
  Json root;
  DomBuilder builder(&root, max_depth, skip_member);
  const bool ok = Json::sax_parse(text.data(), text.data() + text.size(), &builder,
                                  nlohmann::detail::input_format_t::json, /*strict=*/true);
  *too_deep = builder.too_deep();
  if (!ok) return false;
  *out = std::move(root);
  return true;
}

// The bytes of the longest string of a JSON text, as written (escapes
// counted as written): what the reader grows its token to, by doubling.
static ONESTORE_COLD size_t LongestString(std::string_view text) {
  size_t longest = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '"') continue;
    size_t j = i + 1;
    while (j < text.size() && text[j] != '"') j += text[j] == '\\' ? 2 : 1;
    if (j - i - 1 > longest) longest = j - i - 1;
    i = j;
  }
  return longest;
}

Status ParseJsonText(std::string_view text, const std::string& what, Json* out, int max_depth) {
  // A large text asks the heap first: parsed, each item takes its node (16
  // bytes, a member its name beside it, more while a container grows), and
  // a text of small items ("0,", a query's and() of and()s) parses into
  // many times its size. An allocation that failed would abort the core.
  // A commit's batch was asked for already (wasm/bindings.cc, RoomFor);
  // this covers every other text, a query's and a request's.
  if (text.size() > kParseRoomAbove) {
    size_t items = 0;
    for (char c : text) items += (c == ',') | (c == ':') | (c == '[') | (c == '{');
    const double need = 2.0 * static_cast<double>(text.size()) + 64.0 * static_cast<double>(items);
    if (!HeapHasRoomFor(need, 0)) {
      return Status::Limit(what + ": JSON text of " + std::to_string(text.size()) + " bytes and " +
                           std::to_string(items) +
                           " items would not fit in what is left of the wasm heap once parsed");
    }
    const size_t longest = LongestString(text);
    if (longest > kParseRoomAbove && !HeapCanGrowString(longest)) {
      return Status::Limit(what + ": a string of " + std::to_string(longest) +
                           " bytes in a JSON text would not fit in what is left of the wasm heap "
                           "once read");
    }
  }
  bool too_deep = false;
  if (TryParseJsonText(text, max_depth, out, &too_deep)) return Status::OK();
  if (too_deep) {
    return Status::InvalidArgs(what + ": JSON nested deeper than " + std::to_string(max_depth) +
                               " levels of arrays and objects");
  }
  std::string shown(text.substr(0, 60));
  return Status::InvalidArgs(what + ": not valid JSON: " + shown);
}

namespace {

// An output of nlohmann's serializer that only counts what it is given.
class CountingOutput : public nlohmann::detail::output_adapter_protocol<char> {
 public:
  void write_character(char) override { ++count; }
  void write_characters(const char*, std::size_t length) override { count += length; }
  size_t count = 0;
};

}  // namespace

ONESTORE_COLD size_t DumpedLength(const Json& j) {
  CountingOutput counter;
  // A shared_ptr that owns nothing (the aliasing constructor, no control
  // block): the serializer takes its output as one, and this one lives here.
  nlohmann::detail::serializer<Json> s(
      nlohmann::detail::output_adapter_t<char>(std::shared_ptr<void>(), &counter), ' ',
      Json::error_handler_t::replace);
  s.dump(j, false, false, 0);
  return counter.count;
}

ONESTORE_COLD void AppendDump(const Json& j, std::string* out, size_t slack) {
  out->reserve(out->size() + DumpedLength(j) + slack);
  nlohmann::detail::serializer<Json> s(nlohmann::detail::output_adapter<char>(*out), ' ',
                                      Json::error_handler_t::replace);
  s.dump(j, false, false, 0);
}

void AppendJsonText(const Json& j, std::string* out) {
  switch (j.type()) {
    case Json::value_t::string:
      AppendJsonString(j.get_ref<const std::string&>(), out);
      return;
    case Json::value_t::array: {
      out->push_back('[');
      bool first = true;
      for (const Json& v : j.get_ref<const Json::array_t&>()) {
        if (!first) out->push_back(',');
        first = false;
        AppendJsonText(v, out);
      }
      out->push_back(']');
      return;
    }
    case Json::value_t::object: {
      out->push_back('{');
      bool first = true;
      for (const auto& [k, v] : j.get_ref<const Json::object_t&>()) {
        if (!first) out->push_back(',');
        first = false;
        AppendJsonString(k, out);
        out->push_back(':');
        AppendJsonText(v, out);
      }
      out->push_back('}');
      return;
    }
    case Json::value_t::number_integer:
      *out += std::to_string(j.get<int64_t>());
      return;
    case Json::value_t::number_unsigned:
      *out += std::to_string(j.get<uint64_t>());
      return;
    default:  // null, bool, float (nlohmann's shortest round trip), binary
      *out += j.dump(-1, ' ', false, Json::error_handler_t::replace);
  }
}

int Utf8SequenceLength(const char* p, const char* end) {
  const unsigned char* s = reinterpret_cast<const unsigned char*>(p);
  const size_t left = static_cast<size_t>(end - p);
  if (left == 0) return 0;
  const unsigned char c = s[0];
  auto cont = [&](size_t i) { return i < left && (s[i] & 0xC0) == 0x80; };
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    if (c == 0xE0 && s[1] < 0xA0) return 0;  // overlong
    if (c == 0xED && s[1] > 0x9F) return 0;  // a surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if (c == 0xF0 && s[1] < 0x90) return 0;  // overlong
    if (c == 0xF4 && s[1] > 0x8F) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool ReadHex4(const char** p, const char* end, uint32_t* out) {
  if (end - *p < 4) return false;
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) {
    const int n = HexDigit((*p)[i]);
    if (n < 0) return false;
    v = (v << 4) | static_cast<uint32_t>(n);
  }
  *p += 4;
  *out = v;
  return true;
}

void AppendUtf8(uint32_t c, std::string* out) {
  if (c < 0x80) {
    out->push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (c >> 6)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (c >> 12)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (c >> 18)));
    out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

// \uXXXX after the "\u" at *p, a surrogate pair joined: the code point.
bool ReadUnicodeEscape(const char** p, const char* end, uint32_t* out) {
  uint32_t c = 0;
  if (!ReadHex4(p, end, &c)) return false;
  if (c >= 0xDC00 && c <= 0xDFFF) return false;
  if (c >= 0xD800 && c <= 0xDBFF) {
    uint32_t lo = 0;
    if (end - *p < 2 || (*p)[0] != '\\' || (*p)[1] != 'u') return false;
    *p += 2;
    if (!ReadHex4(p, end, &lo) || lo < 0xDC00 || lo > 0xDFFF) return false;
    c = 0x10000 + ((c - 0xD800) << 10) + (lo - 0xDC00);
  }
  *out = c;
  return true;
}

}  // namespace

bool ReadJsonString(const char** p, const char* end, JsonStringRules rules, std::string* out) {
  const char* at = *p;
  const char* run = at;
  while (at < end) {
    const unsigned char c = static_cast<unsigned char>(*at);
    if (c == '"') {
      out->append(run, at - run);
      *p = at + 1;
      return true;
    }
    if (c < 0x20) return false;
    if (c == '\\') {
      out->append(run, at - run);
      if (++at == end) return false;
      switch (*at++) {
        case '"': out->push_back('"'); break;
        case '\\': out->push_back('\\'); break;
        case '/': out->push_back('/'); break;
        case 'b': out->push_back('\b'); break;
        case 'f': out->push_back('\f'); break;
        case 'n': out->push_back('\n'); break;
        case 'r': out->push_back('\r'); break;
        case 't': out->push_back('\t'); break;
        case 'u': {
          uint32_t code = 0;
          if (!rules.unicode_escapes || !ReadUnicodeEscape(&at, end, &code)) return false;
          AppendUtf8(code, out);
          break;
        }
        default: return false;
      }
      run = at;
    } else if (c < 0x80 || !rules.check_utf8) {
      ++at;
    } else {
      const int n = Utf8SequenceLength(at, end);
      if (n == 0) return false;
      at += n;
    }
  }
  return false;
}

}  // namespace onestore
