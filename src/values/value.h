// Values and the one text order.
//
// A Value is one cell: null, bool, int (64-bit), num (finite double), str
// (UTF-8 without NUL), json (JSON text) or vector (n finite float32, kept as
// their 4n little-endian bytes; src/values/vector.h). Text compares by Unicode code
// point, which for UTF-8 is plain byte order: memcmp. SQLite's BINARY
// collation compares the same way, so both backends share one order.
#ifndef ONESTORE_VALUES_VALUE_H_
#define ONESTORE_VALUES_VALUE_H_

#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "onestore/status.h"

namespace onestore {

// ordered_json keeps object keys in the order written: a table's columns keep
// their declared order, and records read back as they were written.
using Json = nlohmann::ordered_json;

// The column types of defineTable. kNull is the type of the null value only.
// kVector is float32 x n (the n is the column's, Column::dims).
enum class Type { kNull = 0, kBool, kInt, kNum, kStr, kJson, kVector };

// "str", "int", ... as in defineTable; "null" for kNull.
const char* TypeName(Type t);
// Parses "str" | "int" | "bool" | "num" | "json" | "vector"; false if unknown.
bool ParseTypeName(std::string_view name, Type* out);

class Value {
 public:
  Value() = default;  // null
  static Value Bool(bool b) {
    Value v;
    v.type_ = Type::kBool;
    v.i_ = b ? 1 : 0;
    return v;
  }
  static Value Int(int64_t i) {
    Value v;
    v.type_ = Type::kInt;
    v.i_ = i;
    return v;
  }
  // Negative zero is stored as 0, as SQLite stores it (a REAL with an
  // integral value becomes an INTEGER) and as JSON.stringify writes it, so
  // every backend holds and returns the same num.
  static Value Num(double d) {
    Value v;
    v.type_ = Type::kNum;
    const double stored = d == 0 ? 0.0 : d;
    std::memcpy(&v.i_, &stored, sizeof stored);
    return v;
  }
  static Value Str(std::string s) {
    Value v;
    v.type_ = Type::kStr;
    v.s_ = std::move(s);
    return v;
  }
  // `text` must already be valid JSON text.
  static Value JsonText(std::string text) {
    Value v;
    v.type_ = Type::kJson;
    v.s_ = std::move(text);
    return v;
  }

  // `bytes`: n float32, little-endian, each finite (src/values/vector.h
  // checks them; this takes them as they are).
  static Value Vector(std::string bytes) {
    Value v;
    v.type_ = Type::kVector;
    v.s_ = std::move(bytes);
    return v;
  }

  // Makes this value the str `s`, written in this value's room for its text
  // (a kept statement's parameter: no allocation once it is large enough).
  void AssignStr(std::string_view s) {
    type_ = Type::kStr;
    i_ = 0;  // as Str() leaves it (not a num's bits, which int_value() would read)
    s_.assign(s.data(), s.size());
  }

  Type type() const { return type_; }
  bool is_null() const { return type_ == Type::kNull; }
  // A num's slot holds its bits: as the two fields they once were, an int
  // and a bool read 0 of a num, and a num 0 of any other type.
  bool bool_value() const { return type_ != Type::kNum && i_ != 0; }
  int64_t int_value() const { return type_ == Type::kNum ? 0 : i_; }
  double num_value() const {
    double d = 0;
    if (type_ == Type::kNum) std::memcpy(&d, &i_, sizeof d);
    return d;
  }
  // The text of a str, the JSON text of a json value, the bytes of a vector.
  const std::string& text() const { return s_; }

  bool operator==(const Value& o) const;
  bool operator!=(const Value& o) const { return !(*this == o); }

  // Appends this value as JSON (json values verbatim; a vector as the base64
  // of its bytes in a string, docs/formats.md). Ints are JSON
  // integers. With `unsafe_int_as_string` (rows for JS, which reads them with
  // JSON.parse): an int beyond 2^53 is written as a decimal string instead,
  // which the JS side turns into a BigInt; a json value that holds such an
  // int, or is a string, is written as its JSON text in a string, which the
  // JS side parses exactly (wasm/ABI.md).
  void AppendJson(std::string* out, bool unsafe_int_as_string = false) const;
  // A short human form for error messages: "42", "\"a/b\"", "null", "NaN",
  // "-Infinity".
  std::string Describe() const;

 private:
  // One 8-byte slot for an int's or a bool's value and a num's bits, and
  // the type after the text: a Value is 24 bytes in wasm32, where a row of
  // the memory backend is a vector of them (it was 40: a bulk put's rows
  // touched that much more fresh memory).
  int64_t i_ = 0;
  std::string s_;
  Type type_ = Type::kNull;
};

// A row: one Value per column, in the table's column order. A key: the
// values of the key columns, in key order.
using Row = std::vector<Value>;
using Key = std::vector<Value>;

// Total order used by indexes, ORDER BY and max/min: null first, then by
// value. Both sides must have the same type or be null (ints and nums compare
// numerically). Text by code point. Returns <0, 0, >0.
int CompareValues(const Value& a, const Value& b);

// Lexicographic CompareValues over two equally long value lists.
int CompareValueLists(const std::vector<Value>& a, const std::vector<Value>& b);
struct ValueListLess {
  bool operator()(const std::vector<Value>& a, const std::vector<Value>& b) const {
    return CompareValueLists(a, b) < 0;
  }
};

// Code-point order of two UTF-8 strings (byte order). <0, 0, >0.
int CompareText(std::string_view a, std::string_view b);

// Number of code points in valid UTF-8.
size_t CodePointLength(std::string_view s);
// Byte offset of the n-th code point (or s.size() if there are fewer).
size_t CodePointOffset(std::string_view s, size_t n);

// The smallest byte string greater than every string with prefix p, or ""
// when there is none (p empty). Used for prefix ranges on both backends.
std::string PrefixUpperBound(std::string_view p);

// Whether JSON text holds an integer beyond 2^53 (outside +-(2^53 - 1)),
// which a JS number cannot hold exactly. Strings are skipped.
bool JsonTextHasUnsafeInt(std::string_view text);

// A JSON value as short text for an error message (cut at 80 characters);
// NaN and the infinities as "NaN", "Infinity", "-Infinity".
std::string DescribeJson(const Json& j);

// Appends s as a JSON string literal (quoted, escaped) to out.
void AppendJsonString(std::string_view s, std::string* out);
// The bytes AppendJsonString writes for s (quotes and escapes included).
size_t JsonStringSize(std::string_view s);
// Writes what AppendJsonString appends for s at p, `size` (JsonStringSize(s))
// bytes, and returns the end: for a writer that sizes its text first.
char* WriteJsonString(std::string_view s, size_t size, char* p);

// Largest integer that a JS number holds exactly: 2^53 - 1.
constexpr int64_t kMaxSafeInteger = 9007199254740991LL;

// Converts a JSON value to a cell of column type `t`.
// `where` names the place for the error message ("ops[2].row.entry").
// Fails with invalid/args on a wrong type, a non-integer or unsafe int, a
// non-finite num, or a NUL in a str. Null is returned as a null Value; the
// caller decides whether null is allowed. A vector (t kVector) must hold
// exactly `dims` finite float32 (ParseVectorJson, src/values/vector.h).
Status ValueFromJson(const Json& j, Type t, const std::string& where, Value* out, int dims = 0);

}  // namespace onestore

#endif  // ONESTORE_VALUES_VALUE_H_
