// Checks compareText: Unicode code point order, the store's one text order.

import assert from "node:assert/strict";
import { test } from "node:test";

import { compareText } from "../../js/index.js";
import { throwsWith } from "./helpers.js";

test("fullwidth forms sort before emoji by code point, unlike JS sort", () => {
  assert.ok(compareText("测试（一）", "测试😀") < 0);
  assert.ok(compareText("测试😀", "测试（一）") > 0);
  assert.deepEqual(["测试（一）", "测试😀"].sort(), ["测试😀", "测试（一）"]);
  assert.deepEqual(["测试😀", "测试（一）"].sort(compareText), ["测试（一）", "测试😀"]);
});

test("compareText agrees with UTF-8 byte order on a mixed sample", () => {
  const sample = ["", "a", "ab", "b", "é", "\uE000", "\uFFFD", "～", "😀", "𐀀", "a😀", "a\uFFFF", "Z", "测试"];
  const bytes = [...sample].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
  assert.deepEqual([...sample].sort(compareText), bytes);
});

test("a lone surrogate compares as U+FFFD, as the store keeps it", () => {
  assert.equal(compareText("a\uD800", "a\uFFFD"), 0);
  assert.ok(compareText("a\uDC00", "a😀") < 0);
  assert.equal(compareText("x", "x"), 0);
});

test("compareText refuses a non-string with invalid/args", () => {
  throwsWith(() => compareText("a", 1), "invalid/args", ["compareText"]);
});

test("compareText answers exactly -1, 0 or 1, as docs/api.md says", () => {
  // Pairs whose unit difference or length difference is not 1: today's
  // subtraction gave 8191, -2 and the like.
  const cases = [
    ["\uE000", "😀", -1],
    ["😀", "\uE000", 1],
    ["a", "abc", -1],
    ["abc", "a", 1],
    ["a", "z", -1],
    ["z", "a", 1],
    ["", "", 0],
    ["测试", "测试", 0],
    ["a\uD800", "a\uFFFF", -1],
  ];
  for (const [a, b, want] of cases) assert.equal(compareText(a, b), want, `compareText(${JSON.stringify(a)}, ${JSON.stringify(b)})`);
});
