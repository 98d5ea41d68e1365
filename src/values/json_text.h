// The one reader of JSON text that enters the core: ops, commit contexts,
// keys, queries, table records, open options and cursors all go through
// ParseJsonText.
//
// It differs from Json::parse in two ways:
// - Nesting is checked while reading: text nested deeper than `max_depth`
//   stops the reader at that level, before anything recursive (dump,
//   DescribeJson, the predicate and expression parsers) sees it. JS cannot
//   catch a wasm stack overflow, so without this a deep value trapped and
//   broke the instance.
// - An object's members are appended, not looked up one by one:
//   nlohmann::ordered_json finds a key by a linear scan, so its own parser
//   took quadratic time on an object with many keys (100,000 keys: ~27 s).
//   Repeated keys are merged once the object ends (the last value wins, at
//   the place of the first), as JSON.parse and nlohmann do.
#ifndef ONESTORE_VALUES_JSON_TEXT_H_
#define ONESTORE_VALUES_JSON_TEXT_H_

#include <string>
#include <string_view>

#include "onestore/status.h"
#include "values/value.h"

namespace onestore {

// The deepest nesting of arrays and objects a JSON text may have, counted
// from the top of the text (the list of ops around a row, say). docs/api.md
// ("Limits") states it. The JS encoder (js/encode.js, MAX_DEPTH) has the
// same limit over the same text, so JS refuses first with a path; keep the
// two in step.
constexpr int kMaxJsonDepth = 1000;

// Above this many bytes, ParseJsonText asks the heap for the parse's room.
constexpr size_t kParseRoomAbove = size_t{1} << 20;

// Parses `text` into *out. Fails with invalid/args "<what>: not valid JSON:
// <the start of the text>" or "<what>: JSON nested deeper than <max_depth>
// levels", or with limit when a text above 1 MiB would not fit in the heap
// once parsed (HeapHasRoomFor). Linear in the size of the text.
Status ParseJsonText(std::string_view text, const std::string& what, Json* out,
                     int max_depth = kMaxJsonDepth);

// Whether `text` parses as JSON nested at most `max_depth` levels; on false,
// *too_deep tells why (deep rather than malformed). For callers that word
// their own error (a cursor is invalid/cursor, not invalid/args).
bool TryParseJsonText(std::string_view text, int max_depth, Json* out, bool* too_deep);

// As TryParseJsonText, except that a member of the top-level object named
// `skip_member` is read and left out of *out (its value, not built, has no
// depth limit). The one reader of JSON in the core besides nlohmann's own
// Json::parse, which the wasm build no longer links (issue 13: its DOM and
// callback parsers were a second copy of the reader).
bool TryParseJsonTextWithout(std::string_view text, std::string_view skip_member, int max_depth,
                             Json* out, bool* too_deep);

// Appends `j` as compact JSON text, as j.dump() writes it except that a
// string is written with AppendJsonString (eight bytes at a time where
// nothing needs an escape; \b and \f as \u0008 and \u000c). Strings are
// written as they are held: for values the core parsed (valid UTF-8), such
// as a document's value on its way to JS.
void AppendJsonText(const Json& j, std::string* out);

// The length of j.dump(-1, ' ', false, Json::error_handler_t::replace),
// counted without writing the text (no allocation).
size_t DumpedLength(const Json& j);

// Appends that same text to *out, with room for it (and `slack` bytes more,
// for what the caller appends next) reserved once, where a dump into a new
// string and an append of it grew two strings by doubling: for a value of
// 128 MiB, two blocks of 256 MiB where 128 MiB is written, and the last a
// core near its heap's cap could not find (docs/reliability.md, "A third
// hunt").
void AppendDump(const Json& j, std::string* out, size_t slack = 0);

// A depth limit for text the store wrote itself (records, stored defaults),
// which Json::parse read without one.
constexpr int kNoJsonDepthLimit = 1 << 30;

// The readers that go from JSON text straight into the core's values without
// a DOM (writes/fast_puts.cc, wasm/durable_connection.cc) read a string with
// this one function. What it takes besides the two-character escapes:
struct JsonStringRules {
  // \uXXXX decoded to UTF-8 (a surrogate pair joined, a lone surrogate
  // refused); when false, any \u is refused (the caller's DOM path decodes
  // it and words its error).
  bool unicode_escapes = false;
  // The raw bytes checked to be UTF-8 as nlohmann's lexer checks them (RFC
  // 3629: no overlong form, no surrogate, at most U+10FFFF); off for text a
  // host wrote itself (a Durable Object's answers).
  bool check_utf8 = true;
};

// Reads the JSON string whose opening quote is just before *p, up to and
// past its closing quote, appending its text to *out. False on a control
// character, an escape the rules refuse, bytes that are not UTF-8 (when
// checked) or a string without its end; *p and *out are then unspecified.
bool ReadJsonString(const char** p, const char* end, JsonStringRules rules, std::string* out);

// The length of the multi-byte UTF-8 sequence at p (2 to 4, under the rules
// above), or 0 when there is none.
int Utf8SequenceLength(const char* p, const char* end);

}  // namespace onestore

#endif  // ONESTORE_VALUES_JSON_TEXT_H_
