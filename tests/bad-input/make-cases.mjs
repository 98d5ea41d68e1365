// Writes tests/bad-input/cases.json: the bad-input corpus run through the
// public API on every backend by tests/bad-input/runner.js (issue 14, item
// 6; docs/reliability.md, "Bad input through the public API").
//
//   node tests/bad-input/make-cases.mjs
//
// A case is {name, kind, args, expect}: `kind` is the call (runner.js has
// one function per kind), `args` its arguments in a tagged JSON form for
// what JSON cannot hold (runner.js `decode`: {"$nan":1}, {"$bigint":"1"},
// {"$deep":[levels, leaf]}, {"$pred":["eq","n",1]}, ...), and `expect` the
// outcome: "ok" (a documented acceptance) or the StoreError code;
// `expectOn: {backend: outcome}` where a backend's platform limit ends it
// otherwise.
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const cases = [];
const add = (category, name, kind, args, expect, extra = {}) =>
  cases.push({ category, name, kind, args, expect, ...extra });

const NaN_ = { $nan: 1 }, INF = { $inf: 1 }, NINF = { $ninf: 1 }, NEG0 = { $negzero: 1 };
const UNDEF = { $undefined: 1 };
const big = (s) => ({ $bigint: s });
const deep = (n, leaf = 1) => ({ $deep: [n, leaf] });
const pred = (...a) => ({ $pred: a });
const expr = (...a) => ({ $expr: a });
const colref = (c) => ({ $col: c });

// Values JS can hand over, by what each column type makes of them.
// [label, value, {str, int, num, bool, json}] -> expected outcome per type.
const A = "invalid/args";
const values = [
  ["NaN", NaN_, { str: A, int: A, num: A, bool: A, json: A }],
  ["Infinity", INF, { str: A, int: A, num: A, bool: A, json: A }],
  ["-Infinity", NINF, { str: A, int: A, num: A, bool: A, json: A }],
  ["-0", NEG0, { str: A, int: "ok", num: "ok", bool: A, json: "ok" }],
  // A BigInt crosses as JSON integer digits: a num column takes it as the
  // number it is (rounded to a double beyond 2^53), as it takes 7 for 7.0;
  // beyond the 64-bit range it is refused everywhere, json values included.
  ["a small BigInt", big("7"), { str: A, int: "ok", num: "ok", bool: A, json: "ok" }],
  ["BigInt 2^63-1", big("9223372036854775807"), { str: A, int: "ok", num: "ok", bool: A, json: "ok" }],
  ["BigInt -2^63", big("-9223372036854775808"), { str: A, int: "ok", num: "ok", bool: A, json: "ok" }],
  ["BigInt 2^63", big("9223372036854775808"), { str: A, int: A, num: A, bool: A, json: A }],
  ["BigInt -2^63-1", big("-9223372036854775809"), { str: A, int: A, num: A, bool: A, json: A }],
  ["BigInt 2^64", big("18446744073709551616"), { str: A, int: A, num: A, bool: A, json: A }],
  ["2^53 (unsafe)", 9007199254740992, { str: A, int: A, num: "ok", bool: A, json: "ok" }],
  ["2^53-1", 9007199254740991, { str: A, int: "ok", num: "ok", bool: A, json: "ok" }],
  ["-(2^53-1)", -9007199254740991, { str: A, int: "ok", num: "ok", bool: A, json: "ok" }],
  ["1.5", 1.5, { str: A, int: A, num: "ok", bool: A, json: "ok" }],
  ["1e308", 1e308, { str: A, int: A, num: "ok", bool: A, json: "ok" }],
  ["5e-324", 5e-324, { str: A, int: A, num: "ok", bool: A, json: "ok" }],
  ["the string \"1\"", "1", { str: "ok", int: A, num: A, bool: A, json: "ok" }],
  ["the empty string", "", { str: "ok", int: A, num: A, bool: A, json: "ok" }],
  ["a string with NUL", "a\u0000b", { str: A, int: A, num: A, bool: A, json: "ok" }],
  ["a lone surrogate", "\ud800", { str: "ok", int: A, num: A, bool: A, json: "ok" }],
  ["true", true, { str: A, int: A, num: A, bool: "ok", json: "ok" }],
  ["0 in a bool", 0, { str: A, int: "ok", num: "ok", bool: A, json: "ok" }],
  ["an object", { a: 1 }, { str: A, int: A, num: A, bool: A, json: "ok" }],
  ["an array", [1, 2], { str: A, int: A, num: A, bool: A, json: "ok" }],
  ["a function", { $fn: 1 }, { str: A, int: A, num: A, bool: A, json: A }],
  ["a symbol", { $symbol: 1 }, { str: A, int: A, num: A, bool: A, json: A }],
  ["a Date", { $date: 0 }, { str: A, int: A, num: A, bool: A, json: A }],
  ["a Map", { $map: 1 }, { str: A, int: A, num: A, bool: A, json: A }],
  ["a Set", { $setobj: 1 }, { str: A, int: A, num: A, bool: A, json: A }],
  ["a Uint8Array", { $bytes: 4 }, { str: A, int: A, num: A, bool: A, json: A }],
  ["an object with toJSON", { $tojson: 1 }, { str: A, int: A, num: A, bool: A, json: A }],
  ["a class instance", { $instance: 1 }, { str: A, int: A, num: A, bool: A, json: A }],
  ["a value that refers to itself", { $cycle: 1 }, { str: A, int: A, num: A, bool: A, json: A }],
  ["an array nested 10,000 levels", deep(10000), { str: A, int: A, num: A, bool: A, json: A }],
  ["an object nested 10,000 levels", { $deepobj: 10000 }, { str: A, int: A, num: A, bool: A, json: A }],
  ["an array nested 997 levels", deep(997), { str: A, int: A, num: A, bool: A, json: "ok" }],
  ["an array nested 998 levels", deep(998), { str: A, int: A, num: A, bool: A, json: A }],
  ["NaN inside a json array", [1, NaN_], { str: A, int: A, num: A, bool: A, json: A }],
  // As JSON.stringify writes it: undefined in an array is null.
  ["undefined inside a json array", [UNDEF], { str: A, int: A, num: A, bool: A, json: "ok" }],
  ["a json object with 10,000 keys", { $manykeys: 10000 }, { str: A, int: A, num: A, bool: A, json: "ok" }],
  ["an array of 100,000 numbers", { $wide: 100000 }, { str: A, int: A, num: A, bool: A, json: "ok" }],
  ["a string of 1 MB", { $repeat: ["x", 1 << 20] }, { str: "ok", int: A, num: A, bool: A, json: "ok" }],
  ["a json object with a __proto__ key", { $protokey: 1 }, { str: A, int: A, num: A, bool: A, json: "ok" }],
  ["an object without a prototype", { $nullproto: 1 }, { str: A, int: A, num: A, bool: A, json: "ok" }],
];
const columnOf = { str: "s", int: "n", num: "x", bool: "b", json: "meta" };
// The huge ones go to the columns that could take them and one that cannot.
const huge = new Set(["a json object with 10,000 keys", "an array of 100,000 numbers", "a string of 1 MB",
  "an array nested 10,000 levels", "an object nested 10,000 levels"]);
let row = 0;
for (const [label, v, outcome] of values) {
  for (const type of huge.has(label) ? ["str", "int", "json"] : ["str", "int", "num", "bool", "json"]) {
    const c = columnOf[type];
    const category = huge.has(label) || /nested|1 MB|100,000|10,000/.test(label) ? "huge strings and arrays, deep nesting" : "wrong types and special values";
    add(category, `put: ${label} in a ${type} column`, "put",
      { row: { id: `v${row++}`, [c]: v } }, outcome[type]);
  }
  // The same values where a key, a where operand, a set value, a limit go.
  // Keys and where operands are read as JSON.stringify reads them (a Date is
  // its ISO string, toJSON is called): only writes refuse such objects.
  const asJson = label === "a Date";
  if (outcome.str !== "ok" && !huge.has(label)) add("wrong types and special values", `get: ${label} as a str key`, "get", { key: [v] }, asJson ? "ok" : A);
  add("wrong types and special values", `update: set n to ${label}`, "update", { key: ["a"], set: { n: v } }, outcome.int);
  add("bad where and set builders", `where: eq(n, ${label})`, "count", { query: { where: pred("eq", "n", v) } },
    outcome.int === "ok" || label === "an object with toJSON" ? "ok" : A);
  if (!huge.has(label)) add("bad limits", `page: limit ${label}`, "page", { limit: v }, A);
}
// undefined and null, where a value is required or optional.
add("wrong types and special values", "put: null in the key column", "put", { row: { id: null } }, A);
add("wrong types and special values", "put: undefined in the key column (left out)", "put", { row: { id: UNDEF } }, A);
add("wrong types and special values", "put: null in an optional column", "put", { row: { id: "null1", n: null } }, "ok");
add("wrong types and special values", "put: undefined in an optional column counts as left out", "put", { row: { id: "undef1", n: UNDEF } }, "ok");
add("wrong types and special values", "put: an unknown column", "put", { row: { id: "u1", nope: 1 } }, A);
add("wrong types and special values", "put: the row is null", "put", { row: null }, A);
add("wrong types and special values", "put: the row is an array", "put", { row: ["a"] }, A);
add("wrong types and special values", "put: the row is a string", "put", { row: "a" }, A);
add("wrong types and special values", "put: the row is a Map", "put", { row: { $map: 1 } }, A);
add("wrong types and special values", "put: the row refers to itself", "put", { row: { $cycle: 1 } }, A);
add("wrong types and special values", "put: a row with 1,000 unknown columns", "put", { row: { $manykeys: 1000 } }, A);
add("huge strings and arrays, deep nesting", "put: a key of 1 MB", "put", { row: { id: { $repeat: ["k", 1 << 20] } } }, "ok");
add("huge strings and arrays, deep nesting", "put: a key of 1 MB of 4-byte characters", "put", { row: { id: { $repeat: ["\u{1F600}", 1 << 18] } } }, "ok");
add("huge strings and arrays, deep nesting", "put: a json array of 100,000 strings", "put", { row: { id: "wide-s", meta: { $widestr: 100000 } } }, "ok");
add("huge strings and arrays, deep nesting", "put: a str of 1 MB with a NUL at its end", "put", { row: { id: "nul-end", s: { $repeat: ["x", 1 << 20], $suffix: "\u0000" } } }, A);

// Keys.
for (const [label, key, expect] of [
  ["undefined", UNDEF, A], ["null", null, A], ["an empty array", [], A], ["two values for a one-column key", ["a", "b"], A],
  ["a number for a str key", [1], A], ["a bare string", "zz", "ok"], ["an object", { id: "a" }, A], ["NaN", NaN_, A],
  ["a key nested 10,000 levels", deep(10000, "a"), A], ["a str with NUL", ["a\u0000"], A], ["a BigInt", [big("1")], A],
  ["a missing row", ["nope"], "ok"], ["a key of 1 MB", [{ $repeat: ["k", 1 << 20] }], "ok"],
]) {
  add("wrong types and special values", `get: ${label} as the key`, "get", { key }, expect);
  add("wrong types and special values", `delete: ${label} as the key`, "delete", { key }, expect);
}

// Set expressions. `expectOn` names the backends where a platform limit
// ends a case otherwise (docs/api.md, "The durable backend").
for (const [label, set, expect, expectOn] of [
  ["an unknown column", { nope: 1 }, A], ["the key column", { id: "z" }, A], ["an empty set", {}, A],
  ["add on a str", { s: expr("add", colref("s"), 1) }, A], ["add of int and num", { n: expr("add", colref("n"), 1.5) }, A],
  ["add overflowing int64", { n: expr("add", colref("n"), big("9223372036854775807")) }, A],
  ["sub overflowing int64", { n: expr("sub", big("-9223372036854775807"), big("9223372036854775807")) }, A],
  ["concat of ints", { s: expr("concat", colref("n"), colref("n")) }, A],
  ["col of an unknown column", { n: expr("add", colref("nope"), 1) }, A],
  ["replacePrefix on an int column", { n: expr("replacePrefix", "a", "b") }, A],
  ["replacePrefix with a NUL", { s: expr("replacePrefix", "a", "\u0000") }, A],
  ["when with a bad predicate", { n: expr("when", pred("eq", "nope", 1), 1, 2) }, A],
  ["coalesce of mixed types", { n: expr("coalesce", colref("n"), "x") }, A],
  ["max of nothing", { n: expr("max") }, A], ["min of str and int", { n: expr("min", colref("n"), "x") }, A],
  ["a json column from an expression", { meta: expr("add", 1, 1) }, A],
  ["a plain object that is not an expression", { n: { add: [1, 2] } }, A],
  ["an expression nested 10,000 levels", { n: { $deepexpr: 10000 } }, A],
  ["an expression nested 65 levels", { n: { $deepexpr: 65 } }, A],
  ["an expression nested 60 levels (durable: deeper SQL than workerd's SQLite takes)", { n: { $deepexpr: 60 } }, "ok", { durable: "limit" }],
  ["value(NaN)", { x: expr("value", NaN_) }, A], ["value(Infinity)", { x: expr("value", INF) }, A],
  ["value(2^53) in an int", { n: expr("value", 9007199254740992) }, A],
  ["value(BigInt 2^63) in an int", { n: expr("value", big("9223372036854775808")) }, A],
  ["a set that is null", null, A], ["a set that is an array", [1], A], ["a set that is a string", "n", A],
]) {
  const on = expectOn ? { expectOn } : {};
  add("bad where and set builders", `update: ${label}`, "update", { key: ["a"], set }, expect, on);
  add("bad where and set builders", `updateWhere: ${label}`, "updateWhere", { where: pred("eq", "id", "a"), set }, expect, on);
}

// Wheres.
for (const [label, where, expect, expectOn] of [
  ["eq on an unknown column", pred("eq", "nope", 1), A], ["eq on a json column", pred("eq", "meta", 1), A],
  ["eq with null", pred("eq", "n", null), A], ["eq of a str column with a number", pred("eq", "s", 1), A],
  ["lt of a bool column with a str", pred("lt", "b", "x"), A], ["inArray with a non-array", pred("inArray", "n", 1), A],
  ["inArray with an empty array", pred("inArray", "n", []), "ok"], ["inArray with NaN", pred("inArray", "n", [1, NaN_]), A],
  ["inArray with 10,000 values", pred("inArray", "n", { $wide: 10000 }), "ok"],
  ["inArray with 20,000 values", pred("inArray", "n", { $wide: 20000 }), "ok"],
  ["prefix on an int column", pred("prefix", "n", "1"), A], ["prefix with a number", pred("prefix", "s", 1), A],
  ["prefix with a NUL", pred("prefix", "s", "\u0000"), A], ["isNull on a json column", pred("isNull", "meta"), A],
  ["and of nothing", pred("and"), "ok"], ["or of nothing", pred("or"), "ok"], ["not of nothing", pred("not"), A],
  ["and nested 10,000 levels", { $deeppred: ["and", 10000] }, A], ["not nested 10,000 levels", { $deeppred: ["not", 10000] }, A],
  ["and nested 65 levels", { $deeppred: ["and", 65] }, A], ["not nested 60 levels", { $deeppred: ["not", 60] }, "ok"],
  ["a wire object instead of a predicate", { eq: ["n", 1] }, A], ["a string", "n = 1", A], ["a number", 1, A],
  ["a callback that throws", { $throwingwhere: 1 }, "own error"], ["a callback that returns a number", { $wherereturns: 1 }, A],
  // Equalities on one column fold into one IN list (one bound value);
  // comparisons that do not fold go in balanced groups with their small
  // values written into the SQL: a Durable Object takes both.
  ["an or of 1,000 eqs (folded into one IN list: ok on every backend)", { $wideor: 1000 }, "ok"],
  ["an or of 1,000 gts (balanced groups: ok on every backend)", { $widegt: 1000 }, "ok"],
]) {
  const on = expectOn ? { expectOn } : {};
  add("bad where and set builders", `count: ${label}`, "count", { query: { where } }, expect, on);
  // updateWhere and deleteWhere call a where callback themselves: its error
  // is wrapped (invalid/args, the cause kept); query().where calls it at
  // once, so the caller's own error comes out of the builder unchanged.
  add("bad where and set builders", `deleteWhere: ${label}`, "deleteWhere", { where }, expect === "own error" ? A : expect, on);
  add("bad where and set builders", `page: ${label}`, "page", { query: { where }, limit: 10 }, expect, on);
}
// orderBy.
for (const [label, orderBy, expect] of [
  ["an unknown column", [["nope", "asc"]], A], ["a json column", [["meta", "asc"]], A],
  ["a bad direction", [["n", "up"]], A], ["a number as the column", [[1, "asc"]], A], ["every column", [["n", "desc"], ["x", "asc"], ["b", "desc"], ["s", "asc"]], "ok"],
]) add("bad where and set builders", `page: orderBy ${label}`, "page", { query: { orderBy }, limit: 10 }, expect);

// Limits.
for (const [label, limit, expect] of [
  ["0", 0, A], ["-1", -1, A], ["1.5", 1.5, A], ["a string", "10", A], ["null", null, A], ["undefined", UNDEF, A],
  ["100,000", 100000, "ok"], ["100,001", 100001, A], ["2^31", 2147483648, A], ["2^53", 9007199254740992, A], ["a BigInt", big("10"), A],
  ["an object", { $date: 0 }, A],
]) add("bad limits", `page: limit ${label} (again, in range terms)`, "page", { limit }, expect);

// Cursors: tampered real ones and garbage.
for (const [label, cursor, expect] of [
  ["garbage", "garbage", "invalid/cursor"], ["the empty string", "", "ok"], ["c1. alone", "c1.", "invalid/cursor"],
  ["c1. and base64 of a number", "c1.MQ", "invalid/cursor"], ["a NUL", "c1.\u0000", "invalid/cursor"],
  ["a cursor of 1 MB", { $repeat: ["A", 1 << 20], $prefix: "c1." }, "invalid/cursor"],
  ["base64 of JSON nested 10,000 levels", { $cursordeep: 10000 }, "invalid/cursor"],
  ["base64 of a 4-element array with wrong types", { $cursorjson: [1, 2, 3, 4] }, "invalid/cursor"],
  ["base64 of a cursor with a huge number", { $cursorjson: ["0", "0", "asc", [1e308]] }, "invalid/cursor"],
  ["a real cursor", { $cursor: "real" }, "ok"],
  ["a real cursor with its last character changed", { $cursor: "flip-last" }, "invalid/cursor"],
  ["a real cursor with its 10th character changed", { $cursor: "flip-10" }, "invalid/cursor"],
  ["a real cursor cut in half", { $cursor: "half" }, "invalid/cursor"],
  ["a real cursor with bytes added", { $cursor: "append" }, "invalid/cursor"],
  ["a real cursor of the descending order", { $cursor: "desc" }, "invalid/cursor"],
  ["a real cursor of another where", { $cursor: "other-where" }, "invalid/cursor"],
  ["a real cursor of another table", { $cursor: "other-table" }, "invalid/cursor"],
  ["a real cursor with its position replaced by a string", { $cursor: "position-str" }, "invalid/cursor"],
  ["a real cursor with its position replaced by NaN-like null", { $cursor: "position-null" }, "invalid/cursor"],
  ["a real cursor with two positions", { $cursor: "position-long" }, "invalid/cursor"],
  ["a real cursor with an empty position", { $cursor: "position-empty" }, "invalid/cursor"],
  ["a number", 5, "invalid/cursor"], ["an object", { $date: 0 }, "invalid/cursor"], ["null", null, "ok"],
]) add("tampered cursors", `page: cursor ${label}`, "page", { limit: 1, cursor }, expect);

// Hostile table, column and owner names.
const names = [
  ["the empty string", ""], ["a NUL", "a\u0000b"], ["a slash", "a/b"], ["a dot", "a.b"], ["a space", "a b"],
  ["a quote", "a\"b"], ["a single quote", "a'b"], ["a semicolon and SQL", "x; DROP TABLE _meta; --"], ["a bracket", "a[b]"],
  ["129 characters", "a".repeat(129)], ["10,000 characters", "a".repeat(10000)], ["an emoji", "a\u{1F600}"],
  ["a leading underscore", "_documents"], ["sqlite_master", "sqlite_master"], ["__proto__", "__proto__"],
  ["a leading digit", "1a"], ["upper case", "ABC"], ["a newline", "a\nb"], ["a lone surrogate", "a\ud800"], ["a hyphen", "a-b"],
];
// The rule of src/schema/schema.h (CheckPlainName): 1 to 128 bytes of UTF-8,
// no / : " or control character, no lone surrogate, no leading _ or sqlite_.
const nameOk = (name) => name.length > 0 && new TextEncoder().encode(name).length <= 128 && !/[/:"\u0000-\u001f\u007f]/.test(name) &&
  !/[\ud800-\udfff]/.test(name.replace(/[\ud800-\udbff][\udc00-\udfff]/g, "")) && !name.startsWith("_") && !name.toLowerCase().startsWith("sqlite_");
let tableNo = 0;
for (const [label, name] of names) {
  const ok = nameOk(name) ? "ok" : A;
  add("hostile names", `defineTable: a table name with ${label}`, "defineTable", { name, columns: { id: "str" }, key: ["id"] }, ok);
  add("hostile names", `defineTable: a column name with ${label}`, "defineTable", { name: `cols${tableNo++}`, columns: { id: "str", [name]: "int" }, key: ["id"] }, ok);
  add("hostile names", `object: an owner type with ${label}`, "object", { address: { type: name } }, ok);
  add("hostile names", `object: a host with ${label}`, "object", { address: { host: name, type: "t" } }, ok);
}
for (const [label, spec, expect] of [
  ["no columns", { name: "empty", columns: {}, key: [] }, A], ["a key column that does not exist", { name: "k1", columns: { id: "str" }, key: ["nope"] }, A],
  ["a json key", { name: "k2", columns: { id: "json" }, key: ["id"] }, A], ["a num key", { name: "k3", columns: { id: "num" }, key: ["id"] }, A],
  ["an optional key column", { name: "k4", columns: { id: "str?" }, key: ["id"] }, A], ["101 columns", { name: "wide", columns: { $columns: 101 }, key: ["c0"] }, A],
  ["100 columns", { name: "wide100", columns: { $columns: 100 }, key: ["c0"] }, "ok"], ["an index on an unknown column", { name: "i1", columns: { id: "str" }, key: ["id"], indexes: { byX: ["x"] } }, A],
  ["an index on a json column", { name: "i2", columns: { id: "str", j: "json" }, key: ["id"], indexes: { byJ: ["j"] } }, A],
  ["version 0", { name: "v0", columns: { id: "str" }, key: ["id"], version: 0 }, A], ["version 1.5", { name: "v15", columns: { id: "str" }, key: ["id"], version: 1.5 }, A],
  ["version NaN", { name: "vnan", columns: { id: "str" }, key: ["id"], version: NaN_ }, A], ["version 2^53", { name: "vbig", columns: { id: "str" }, key: ["id"], version: 9007199254740992 }, A],
  ["a default of the wrong type", { name: "d1", columns: { id: "str", n: { type: "int", default: "x" } }, key: ["id"] }, A],
  ["a default of NaN", { name: "d2", columns: { id: "str", x: { type: "num", default: NaN_ } }, key: ["id"] }, A],
  ["a key given twice", { name: "k5", columns: { id: "str" }, key: ["id", "id"] }, A], ["a key that is one column name, not a list (taken as [name])", { name: "k6", columns: { id: "str" }, key: "id" }, "ok"],
  ["columns that are an array", { name: "c1", columns: ["id"], key: ["id"] }, A], ["case twins", { name: "Twin", columns: { id: "str" }, key: ["id"], twin: true }, A],
]) add("hostile names", `defineTable: ${label}`, "defineTable", spec, expect);

// Open options.
for (const [label, options] of [
  ["no options", UNDEF], ["null", null], ["a string", "memory"], ["an unknown backend", { backend: "nope" }], ["a backend that is a number", { backend: 7 }],
  ["durability bogus", { durability: "bogus" }], ["lockTimeout -1", { lockTimeout: -1 }], ["lockTimeout NaN", { lockTimeout: NaN_ }],
  ["lockTimeout a string", { lockTimeout: "1" }], ["lockTimeout 2^53", { lockTimeout: 9007199254740992 }], ["an id that is a number", { id: 5 }],
  ["an id with NUL", { id: "a\u0000" }], ["adoptForeign a string", { adoptForeign: "yes" }], ["a path with NUL", { path: "a\u0000b" }],
  ["a path that is a number", { path: 5 }], ["a Map", { $map: 1 }],
]) add("bad open options", `openStore: ${label}`, "open", { options }, A);

// Raw wire ops through store.commit.
const ITEMS = "t/items";
for (const [label, ops, expect] of [
  ["ops that are not an array", { op: "put" }, A], ["an unknown op", [{ op: "nope", table: ITEMS }], A], ["an op without a table", [{ op: "put", row: { id: "w" } }], A],
  ["an unknown table", [{ op: "put", table: "t/nope", row: { id: "w" } }], A], ["a row that is a string", [{ op: "put", table: ITEMS, row: "w" }], A],
  ["an op with an extra field (refused, naming it: a misspelt field was dropped unsaid)", [{ op: "put", table: ITEMS, row: { id: "w" }, extra: 1 }], A],
  ["a delete with both a key and a where", [{ op: "delete", table: ITEMS, key: ["a"], where: { eq: ["id", "a"] } }], A],
  ["an updateWhere with a wire where on a json column", [{ op: "updateWhere", table: ITEMS, where: { eq: ["meta", 1] }, set: { n: { value: 1 } } }], A],
  ["an updateWhere with a where nested 10,000 levels", [{ op: "deleteWhere", table: ITEMS, where: { $deepwire: 10000 } }], A],
  ["a put then a refused put: the commit is whole", [{ op: "put", table: ITEMS, row: { id: "whole" } }, { op: "put", table: ITEMS, row: { id: 1 } }], A],
  ["a write to the store's own _documents table", [{ op: "put", table: "_documents", row: { id: 1 } }], A],
  ["a table record through store.commit that changes a declared table", [{ op: "table", table: ITEMS, version: 1, columns: { id: { type: "int" } }, key: ["id"] }], A],
  ["a restore marker", [{ op: "restore", to: 1 }], A], ["10,000 puts of which the last is refused", { $manyputs: 10000 }, A],
  ["a doc.change of a missing document", [{ op: "doc.change", owner: "t", id: 999999, patch: [] }], A],
  ["a NaN inside an op", [{ op: "put", table: ITEMS, row: { id: "nan", x: NaN_ } }], A], ["an empty list of ops", [], "ok"],
]) add("raw wire ops", `store.commit: ${label}`, "commit", { ops }, expect);

// Raw wire batches through replica.applyBatch.
const rec = (seq, ops, extra = {}) => ({ seq, from: seq - 1, at: 1, owner: "t", ops, ...extra });
const table = { op: "table", table: "t/r", version: 1, columns: { id: { type: "str" }, n: { type: "int", optional: true } }, key: ["id"], indexes: {} };
for (const [label, batch, expect] of [
  ["not JSON", "{", A], ["a number", 5, A], ["null", null, A], ["to before from", { from: 2, to: 1, commits: [] }, A],
  ["a gap", { from: 5, to: 6, commits: [rec(6, [])] }, "sync/gap"], ["too few commits", { from: 0, to: 2, commits: [rec(1, [table])] }, A],
  ["a record with the wrong seq", { from: 0, to: 1, commits: [rec(2, [table])] }, A],
  ["a record with an extra field", { from: 0, to: 1, commits: [rec(1, [table], { extra: 1 })] }, A],
  ["a record with at not an integer", { from: 0, to: 1, commits: [rec(1, [table], { at: 1.5 })] }, A],
  ["a record with an owner that is a number", { from: 0, to: 1, commits: [rec(1, [table], { owner: 5 })] }, A],
  ["a put to an undeclared table", { from: 0, to: 1, commits: [rec(1, [{ op: "put", table: "t/none", row: { id: "a" } }])] }, A],
  ["a put with a wrong type", { from: 0, to: 2, commits: [rec(1, [table]), rec(2, [{ op: "put", table: "t/r", row: { id: 1 } }])] }, A],
  ["a bulk op without its count", { from: 0, to: 2, commits: [rec(1, [table]), rec(2, [{ op: "deleteWhere", table: "t/r" }])] }, A],
  ["a batch nested 10,000 levels", { $deepbatch: 10000 }, A], ["a value nested 10,000 levels in a row", { $deepbatchrow: 10000 }, A],
  ["a batch of 1 MB of garbage", { $repeat: ["[", 1 << 20] }, A], ["a NUL in a str cell", { from: 0, to: 2, commits: [rec(1, [table]), rec(2, [{ op: "put", table: "t/r", row: { id: "a\u0000" } }])] }, A],
]) add("raw wire ops", `replica.applyBatch: ${label}`, "applyBatch", { batch }, expect);

// Documents.
for (const [label, args, expect] of [
  ["an address without kind", { address: {}, value: 1 }, A], ["a kind that is a number", { address: { kind: 1 }, value: 1 }, A],
  ["a value with NaN", { address: { kind: "k" }, value: [NaN_] }, A], ["a value nested 10,000 levels", { address: { kind: "k" }, value: deep(10000) }, A],
  ["a Date value", { address: { kind: "k" }, value: { $date: 0 } }, A], ["a BigInt value", { address: { kind: "k", key: "big" }, value: big("5") }, "ok"],
]) add("documents", `documents.create: ${label}`, "docCreate", args, expect);
for (const [label, patch, expect] of [
  ["not an array", { op: "add" }, A], ["an unknown op", [{ op: "nope", path: "/a" }], A], ["a path without a slash", [{ op: "add", path: "a", value: 1 }], A],
  ["a missing parent", [{ op: "add", path: "/x/y/z", value: 1 }], A], ["a test that fails", [{ op: "test", path: "/a", value: 2 }], A],
  ["a remove of the root", [{ op: "remove", path: "" }], A], ["an array index beyond the end", [{ op: "add", path: "/list/99", value: 1 }], A],
  ["an array index with a leading zero", [{ op: "replace", path: "/list/01", value: 1 }], A], ["a move into its own child", [{ op: "move", from: "/obj", path: "/obj/x" }], A],
  ["a value nested 10,000 levels", [{ op: "add", path: "/d", value: deep(10000) }], A], ["a NaN value", [{ op: "add", path: "/d", value: NaN_ }], A],
  ["a ~ escape that is not ~0 or ~1", [{ op: "add", path: "/a~2", value: 1 }], A], ["10,000 ops", { $manypatch: 10000 }, "ok"],
]) add("documents", `documents.change: ${label}`, "docChange", { patch }, expect);

// store.log and store.at.
for (const [label, request, expect] of [
  ["seq -1", { seq: -1 }, A], ["seq 1.5", { seq: 1.5 }, A], ["seq NaN", { seq: NaN_ }, A], ["seq beyond the head", { seq: 1e9 }, "not_found"],
  ["limit 0", { limit: 0 }, A], ["limit 1,000,001", { limit: 1000001 }, A], ["owner a number", { owner: 5 }, A], ["an unknown field", { nope: 1 }, A],
  ["from after to", { from: 5, to: 1 }, "ok"], ["after a string", { after: "x" }, A], ["a string", "x", A], ["actor a string", { actor: "x" }, A],
]) add("history", `store.log: ${label}`, "log", { request }, expect);
for (const [label, seq, expect] of [["-1", -1, A], ["1.5", 1.5, A], ["NaN", NaN_, A], ["beyond the head", 1e9, A], ["a string", "1", A], ["a BigInt", big("1"), A]]) {
  add("history", `store.at: ${label}`, "at", { seq }, expect);
}

writeFileSync(join(here, "cases.json"), JSON.stringify({
  about: "Bad input through the public API: generated by tests/bad-input/make-cases.mjs; run by tests/bad-input/runner.js on every backend",
  cases,
}, null, 0).replace(/\},\{"category"/g, '},\n{"category"') + "\n");
const byCategory = {};
for (const c of cases) byCategory[c.category] = (byCategory[c.category] ?? 0) + 1;
console.log(`make-cases: ${cases.length} cases`, byCategory);
