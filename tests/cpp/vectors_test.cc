// Checks vector values and the distance kernels: base64 both ways and its
// strictness, the checks of a vector's length and elements (naming the
// place and the value), the fixed order of the float32 sums (compared with
// the order written out by hand), each metric's definition, and nearest's
// top k with ties by key on the memory backend, a vector column in a real
// store included.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "commit/store.h"
#include "values/vector.h"
#include "vectors/distance.h"

namespace onestore {
namespace {

std::string Bytes(const std::vector<float>& v) {
  std::string out(v.size() * 4, '\0');
  std::memcpy(out.data(), v.data(), out.size());  // little-endian hosts
  return out;
}

std::string Base64(const std::string& bytes) {
  std::string out;
  AppendBase64(bytes, &out);
  return out;
}

TEST(VectorValues, Base64RoundTripsEveryLengthAndRefusesWhatIsNotCanonical) {
  for (size_t n = 0; n < 20; ++n) {
    std::string bytes;
    for (size_t i = 0; i < n; ++i) bytes.push_back(static_cast<char>(i * 37 + 200));
    std::string text = Base64(bytes);
    EXPECT_EQ(text.size() % 4, 0u);
    std::string back;
    ASSERT_TRUE(DecodeBase64(text, &back)) << text;
    EXPECT_EQ(back, bytes);
  }
  EXPECT_EQ(Base64(Bytes({1.0f, 0.5f})), "AACAPwAAAD8=");
  std::string out;
  EXPECT_FALSE(DecodeBase64("AAA", &out));        // not a multiple of 4
  EXPECT_FALSE(DecodeBase64("AA=A", &out));       // a character after "="
  EXPECT_FALSE(DecodeBase64("AB==", &out));       // leftover bits not zero
  EXPECT_FALSE(DecodeBase64("AAA*", &out));       // not the alphabet
  EXPECT_FALSE(DecodeBase64("AAAA====", &out));   // padding in a middle group
}

TEST(VectorValues, ParseChecksLengthAndEveryElementNamingThePlace) {
  Value v;
  ASSERT_TRUE(ParseVectorJson(Json::parse("[1, 0.5, -2]"), 3, "row.e", &v).ok());
  EXPECT_EQ(v.type(), Type::kVector);
  EXPECT_EQ(v.text(), Bytes({1.0f, 0.5f, -2.0f}));
  ASSERT_TRUE(ParseVectorJson(Json(Base64(Bytes({1.0f, 0.5f, -2.0f}))), 3, "row.e", &v).ok());
  EXPECT_EQ(v.text(), Bytes({1.0f, 0.5f, -2.0f}));
  // 0.1 is rounded to the nearest float32.
  ASSERT_TRUE(ParseVectorJson(Json::parse("[0.1]"), 1, "row.e", &v).ok());
  EXPECT_EQ(VectorElement(v.text(), 0), 0.1f);

  struct Bad {
    Json j;
    const char* mentions;
  };
  const float nan = std::nanf("");
  const float inf = INFINITY;
  const std::vector<Bad> bad = {
      {Json::parse("[1, 2]"), "row.e: [1,2] has 2 elements, the column is a vector of 3 float32"},
      {Json::parse("[1, 2, \"3\"]"), "row.e[2]: \"3\" is not a number"},
      {Json::parse("[1, 2, 1e39]"), "row.e[2]: 1e+39 is not a finite float32"},
      {Json(Base64(Bytes({1, 2, nan}))), "row.e[2]: NaN is not a finite number"},
      {Json(Base64(Bytes({1, -inf, 3}))), "row.e[1]: -Infinity is not a finite number"},
      {Json(Base64(Bytes({1, 2}))), "holds 2 float32, the column is a vector of 3 float32"},
      {Json("not base64!"), "row.e: \"not base64!\" is not a vector of 3 float32"},
      {Json::parse("{\"a\": 1}"), "row.e: {\"a\":1} is not a vector of 3 float32"},
      {Json(true), "row.e: true is not a vector"},
  };
  for (const Bad& b : bad) {
    Status s = ParseVectorJson(b.j, 3, "row.e", &v);
    EXPECT_EQ(s.code(), Code::kInvalidArgs) << b.j.dump();
    EXPECT_NE(s.message().find(b.mentions), std::string::npos) << s.message();
  }
}

// The order of distance.h written out: lanes i % 8, folded, then the tail.
float ByHand(const std::vector<float>& a, const std::vector<float>& b) {
  float s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  const size_t n8 = a.size() - a.size() % 8;
  for (size_t i = 0; i < n8; ++i) {
    volatile float p = a[i] * b[i];  // no fused multiply-add here either
    s[i % 8] += p;
  }
  float sum = ((s[0] + s[4]) + (s[1] + s[5])) + ((s[2] + s[6]) + (s[3] + s[7]));
  for (size_t i = n8; i < a.size(); ++i) {
    volatile float p = a[i] * b[i];
    sum += p;
  }
  return sum;
}

TEST(Distances, SumsRunInTheDocumentedOrder) {
  for (size_t n : {1u, 7u, 8u, 9u, 19u, 384u}) {
    std::vector<float> a(n), b(n);
    for (size_t i = 0; i < n; ++i) {
      a[i] = static_cast<float>(std::sin(i * 1.7 + 0.3) * 1e3);
      b[i] = static_cast<float>(std::cos(i * 0.9) * 1e-2 + 1e-7 * i);
    }
    const std::string x = Bytes(a), y = Bytes(b);
    const float got = DotSum(x.data(), y.data(), n);
    const float want = ByHand(a, b);
    EXPECT_EQ(std::memcmp(&got, &want, 4), 0) << n << ": " << got << " vs " << want;
  }
}

TEST(Distances, EachMetricIsAsDefined) {
  const std::string q = Bytes({1, 0, 0, 0});
  QueryVector qv{q.data(), 4, 1.0f};
  auto d = [&](Metric m, std::vector<float> v) {
    const std::string b = Bytes(v);
    return Distance(m, qv, b.data());
  };
  EXPECT_EQ(d(Metric::kCosine, {2, 0, 0, 0}), 0.0);
  EXPECT_EQ(d(Metric::kCosine, {1, 1, 0, 0}), 1.0 - 1.0 / std::sqrt(2.0));
  EXPECT_EQ(d(Metric::kCosine, {0, 3, 0, 0}), 1.0);
  EXPECT_EQ(d(Metric::kCosine, {-1, 0, 0, 0}), 2.0);
  EXPECT_EQ(d(Metric::kCosine, {0, 0, 0, 0}), 1.0);  // a zero vector: 1
  EXPECT_EQ(d(Metric::kL2, {4, 4, 0, 0}), 5.0);
  EXPECT_EQ(d(Metric::kDot, {3, 9, 0, 0}), -3.0);
  const double zero = d(Metric::kDot, {0, 9, 0, 0});
  EXPECT_EQ(zero, 0.0);
  EXPECT_FALSE(std::signbit(zero)) << "dot 0 is +0, not -0";
  EXPECT_TRUE(std::isnan(d(Metric::kCosine, {3e38f, 3e38f, 0, 0})));  // the sums overflow
}

TEST(Nearest, KeepsTheKNearestWithTiesByKeyAndLeavesOutNulls) {
  OpenOptions o;
  o.backend = "memory";
  o.id = "s";
  std::unique_ptr<Store> owned;
  ASSERT_TRUE(Store::Open(o, &owned).ok());
  Store& store = *owned;
  std::string result;
  ASSERT_TRUE(store
                  .Commit(R"([{"op":"table","table":"t/v","version":1,
                     "columns":{"id":{"type":"str"},"e":{"type":"vector","dims":2,"optional":true}},
                     "key":["id"]}])",
                          R"({"owner":"t"})", &result)
                  .ok());
  ASSERT_TRUE(store
                  .Commit(R"([{"op":"put","table":"t/v","row":{"id":"c","e":[1,0]}},
                     {"op":"put","table":"t/v","row":{"id":"a","e":[2,0]}},
                     {"op":"put","table":"t/v","row":{"id":"b","e":[0,1]}},
                     {"op":"put","table":"t/v","row":{"id":"n"}}])",
                          R"({"owner":"t"})", &result)
                  .ok());
  std::string answer;
  ASSERT_TRUE(store.Nearest("t/v", R"({"column":"e","vector":[1,0],"k":2})", &answer).ok());
  EXPECT_EQ(answer, R"({"rows":[["a","AAAAQAAAAAA="],["c","AACAPwAAAAA="]],"distances":[0.0,0.0]})");
  ASSERT_TRUE(store.Nearest("t/v", R"({"column":"e","vector":[1,0],"k":9,"metric":"l2"})", &answer).ok());
  EXPECT_EQ(answer,
            R"({"rows":[["c","AACAPwAAAAA="],["a","AAAAQAAAAAA="],["b","AAAAAAAAgD8="]],"distances":[0.0,1.0,1.4142135623730951]})");
  Status s = store.Nearest("t/v", R"({"column":"e","vector":[1,0],"k":2,"metric":"cos"})", &answer);
  EXPECT_EQ(s.code(), Code::kInvalidArgs);
  EXPECT_NE(s.message().find("\"cos\" is not a metric"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace onestore
