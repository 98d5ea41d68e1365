"""Writes tests/conformance/vectors.json: the vector cases and their expected
answers. The distances are computed here independently of the store, in
Python, with the order of operations docs/guide.md ("Search by meaning")
and src/vectors/distance.h define: float32 products and sums (each rounded to
float32), eight lanes folded ((s0+s4)+(s1+s5))+((s2+s6)+(s3+s7)), then the
tail in order; the final division and square roots in double. Run it after
changing a case: python3 tests/conformance/tools/vectors_expected.py
"""
import base64
import json
import math
import os
import struct

def f32(x): return struct.unpack('<f', struct.pack('<f', x))[0]
def b64(v): return base64.b64encode(struct.pack('<%df' % len(v), *v)).decode()
def b64raw(bs): return base64.b64encode(bs).decode()

def fsum8(prods):
    # the kernel's order: 8 lanes, fold, tail; float32 rounding each op
    n = len(prods); n8 = n - n % 8
    s = [0.0]*8
    for i in range(0, n8, 8):
        for j in range(8): s[j] = f32(s[j] + prods[i+j])
    t = [f32(s[j] + s[j+4]) for j in range(4)]
    total = f32(f32(t[0]+t[1]) + f32(t[2]+t[3]))
    for i in range(n8, n): total = f32(total + prods[i])
    return total

def dot(a, b): return fsum8([f32(f32(x)*f32(y)) for x, y in zip(a, b)])
def sqd(a, b): return fsum8([f32(f32(f32(x)-f32(y))**2) for x, y in zip(a, b)])

def dist(metric, q, v):
    if metric == 'dot': return 0.0 - dot(q, v)
    if metric == 'l2': return math.sqrt(sqd(q, v))
    d = dot(q, v); vv = dot(v, v); qq = dot(q, q)
    if qq == 0 or vv == 0: return 1.0
    c = d / (math.sqrt(qq) * math.sqrt(vv))
    r = 1.0 - c
    return min(2.0, max(0.0, r))

def put(id, emb, kind="message"):
    row = {"id": id, "kind": kind}
    if emb is not None: row["emb"] = emb
    return {"op": "put", "table": "t/docs", "row": row}

def hits(metric, q, rows, k, keep=lambda r: True):
    scored = [(dist(metric, q, v), id) for id, v, kind in rows if v is not None and keep((id, v, kind))]
    scored.sort()
    return [[id, d] for d, id in scored[:k]]

cases = []
def case(name, steps): cases.append({"name": name, "steps": steps})

A = [1, 0.5, -2, 3.25]
case("a vector is stored as given and read back bit for bit, from an array of numbers or from base64", [
  {"commit": [put("a", A), put("b", b64([0.25, -0.125, 1e-3, 65504.0]))], "counts": [1, 1]},
  {"get": {"table": "t/docs", "key": ["a"]}, "row": ["a", "message", b64(A)]},
  {"page": {"table": "t/docs", "query": {}}, "rows": [["a", "message", b64(A)], ["b", "message", b64([0.25, -0.125, 1e-3, 65504.0])]]},
])
case("a number that float32 cannot hold exactly is rounded to the nearest float32", [
  {"commit": [put("a", [0.1, 1/3, 16777217, -1e-30])]},
  {"get": {"table": "t/docs", "key": ["a"]}, "row": ["a", "message", b64([f32(0.1), f32(1/3), f32(16777217), f32(-1e-30)])]},
])
case("an optional vector column takes null and an omitted vector", [
  {"commit": [put("a", None), {"op": "put", "table": "t/docs", "row": {"id": "b", "kind": "note", "emb": None}}]},
  {"page": {"table": "t/docs", "query": {}}, "rows": [["a", "message", None], ["b", "note", None]]},
])
case("update sets a vector column from a literal, and refuses an unknown column", [
  {"commit": [put("a", A), put("b", [0, 0, 0, 1])]},
  {"commit": [{"op": "update", "table": "t/docs", "key": ["b"], "set": {"emb": [9, 8, 7, 6]}}]},
  {"get": {"table": "t/docs", "key": ["b"]}, "row": ["b", "message", b64([9, 8, 7, 6])]},
  {"commit": [{"op": "update", "table": "t/docs", "where": {"eq": ["id", "b"]}, "set": {"emb": {"col": "emb2"}}}], "error": "invalid/args", "note": "no such column"},
  {"commit": [{"op": "update", "table": "t/docs", "where": {"eq": ["id", "b"]}, "set": {"emb": {"value": b64(A)}}}], "counts": [1]},
  {"get": {"table": "t/docs", "key": ["b"]}, "row": ["b", "message", b64(A)]},
])
bad = [
  ("an array one element short", [1, 2, 3]),
  ("an array one element long", [1, 2, 3, 4, 5]),
  ("a number beyond float32's range", [1, 2, 3, 1e39]),
  ("a string element", [1, 2, "3", 4]),
  ("a bool element", [1, 2, True, 4]),
  ("a nested array", [1, 2, [3], 4]),
  ("NaN in base64", b64raw(struct.pack('<4f', 1, 2, 3, 0) [:12] + struct.pack('<I', 0x7fc00000))),
  ("Infinity in base64", b64raw(struct.pack('<3f', 1, 2, 3) + struct.pack('<I', 0x7f800000))),
  ("-Infinity in base64", b64raw(struct.pack('<3f', 1, 2, 3) + struct.pack('<I', 0xff800000))),
  ("base64 of 3 float32", b64([1, 2, 3])),
  ("base64 of 15 bytes", b64raw(bytes(15))),
  ("text that is not base64", "not a vector!"),
  ("base64 without its padding", b64([1, 2, 3, 4]).rstrip("=") + "A" if False else b64raw(bytes(16)).rstrip("=")),
  ("an object", {"x": 1}),
  ("a number", 7),
]
steps = [{"commit": [put("ok", [1, 1, 1, 1])]}]
for note, v in bad:
  steps.append({"commit": [put("x", v)], "error": "invalid/args", "note": note})
  steps.append({"commit": [{"op": "update", "table": "t/docs", "key": ["ok"], "set": {"emb": v}}], "error": "invalid/args", "note": note + " (update)"})
steps.append({"page": {"table": "t/docs", "query": {}}, "rows": [["ok", "message", b64([1, 1, 1, 1])]], "note": "nothing of the refused commits is stored"})
case("bad vectors are refused with invalid/args and nothing is committed", steps)

# Nearest
R = [("a", [1, 0, 0, 0], "message"), ("b", [0, 1, 0, 0], "message"), ("c", [1, 1, 0, 0], "note"),
     ("d", [-1, 0, 0, 0], "message"), ("e", [0.5, 0.25, 3, -1], "note"), ("f", [2, 0, 0, 0], "message"), ("g", None, "message")]
setup = [{"commit": [put(i, v, k) for i, v, k in R]}]
def near(q, k, metric=None, where=None, **extra):
  n = {"table": "t/docs", "column": "emb", "vector": q, "k": k}
  if metric: n["metric"] = metric
  if where is not None: n["where"] = where
  n.update(extra)
  return n

Q = [1, 0, 0, 0]
case("cosine ranks by angle: 1 - cos, nearest first, ties (a and f point the same way) by key", setup + [
  {"nearest": near(Q, 10, "cosine"), "hits": hits("cosine", Q, R, 10)},
])
case("cosine is the default metric", setup + [
  {"nearest": near([0.5, 2, 0, 0], 3), "hits": hits("cosine", [0.5, 2, 0, 0], R, 3)},
])
Q2 = [0.5, -1, 2, 0.25]
case("l2 is the Euclidean distance", setup + [
  {"nearest": near(Q2, 4, "l2"), "hits": hits("l2", Q2, R, 4)},
  {"nearest": near([0, 0, 0, 0], 3, "l2"), "hits": hits("l2", [0, 0, 0, 0], R, 3)},
])
case("dot is the negated dot product, so the largest dot product is nearest", setup + [
  {"nearest": near(Q2, 7, "dot"), "hits": hits("dot", Q2, R, 7)},
])
case("k above the number of rows gives every row that has a vector", setup + [
  {"nearest": near(Q, 100, "l2"), "hits": hits("l2", Q, R, 100)},
])
case("where narrows the rows searched", setup + [
  {"nearest": near(Q, 3, "cosine", {"eq": ["kind", "note"]}), "hits": hits("cosine", Q, R, 3, lambda r: r[2] == "note")},
  {"nearest": near(Q, 2, "l2", {"and": [{"eq": ["kind", "message"]}, {"ne": ["id", "a"]}]}), "hits": hits("l2", Q, R, 2, lambda r: r[2] == "message" and r[0] != "a")},
  {"nearest": near(Q, 2, "l2", {"eq": ["kind", "none"]}), "hits": []},
])
Z = [("z", [0, 0, 0, 0], "message"), ("y", [0, 3, 0, 0], "message"), ("x", [1, 0, 0, 0], "message")]
case("under cosine a zero vector is at distance 1 from everything, and a zero query finds every row at 1, in key order", [
  {"commit": [put(i, v, k) for i, v, k in Z]},
  {"nearest": near([1, 0, 0, 0], 3, "cosine"), "hits": [["x", 0.0], ["y", 1.0], ["z", 1.0]]},
  {"nearest": near([0, 0, 0, 0], 3, "cosine"), "hits": [["x", 1.0], ["y", 1.0], ["z", 1.0]]},
])
# the query vector as base64 too; a longer vector for the fold order
case("the query vector may be base64, and gives the same distances", setup + [
  {"nearest": near(b64(Q2), 3, "l2"), "hits": hits("l2", Q2, R, 3)},
])
case("nearest refuses a bad request with invalid/args", setup + [
  {"nearest": near(Q, 3, "cosine", column="kind"), "error": "invalid/args", "note": "a str column"},
  {"nearest": near(Q, 3, "cosine", column="nope"), "error": "invalid/args", "note": "an unknown column"},
  {"nearest": near([1, 0, 0], 3), "error": "invalid/args", "note": "a query vector of the wrong length"},
  {"nearest": near(b64raw(struct.pack('<3f', 1, 0, 0) + struct.pack('<I', 0x7fc00000)), 3), "error": "invalid/args", "note": "NaN in the query vector"},
  {"nearest": near(Q, 0), "error": "invalid/args", "note": "k = 0"},
  {"nearest": near(Q, 3, "manhattan"), "error": "invalid/args", "note": "an unknown metric"},
  {"nearest": near(Q, 3, "cosine", {"eq": ["emb", "x"]}), "error": "invalid/args", "note": "a vector column in the where"},
  {"page": {"table": "t/docs", "query": {"where": {"isNull": "emb"}}}, "error": "invalid/args", "note": "a vector column in a page's where"},
  {"page": {"table": "t/docs", "query": {"orderBy": [["emb", "asc"]]}}, "error": "invalid/args", "note": "ordered by a vector column"},
])
case("a vector column needs dims, takes no key or index, and only a vector column takes dims", [
  {"commit": [{"op": "table", "table": "t/v2", "version": 1, "columns": {"id": {"type": "str"}, "e": {"type": "vector"}}, "key": ["id"]}], "error": "invalid/args", "note": "no dims"},
  {"commit": [{"op": "table", "table": "t/v2", "version": 1, "columns": {"id": {"type": "str"}, "e": {"type": "vector", "dims": 0}}, "key": ["id"]}], "error": "invalid/args", "note": "dims 0"},
  {"commit": [{"op": "table", "table": "t/v2", "version": 1, "columns": {"id": {"type": "str"}, "e": {"type": "vector", "dims": 16385}}, "key": ["id"]}], "error": "invalid/args", "note": "dims above 16384"},
  {"commit": [{"op": "table", "table": "t/v2", "version": 1, "columns": {"id": {"type": "str", "dims": 3}}, "key": ["id"]}], "error": "invalid/args", "note": "dims on a str column"},
  {"commit": [{"op": "table", "table": "t/v2", "version": 1, "columns": {"id": {"type": "vector", "dims": 2}}, "key": ["id"]}], "error": "invalid/args", "note": "a vector key"},
  {"commit": [{"op": "table", "table": "t/v2", "version": 1, "columns": {"id": {"type": "str"}, "e": {"type": "vector", "dims": 2}}, "key": ["id"], "indexes": {"byE": ["e"]}}], "error": "invalid/args", "note": "a vector index"},
])
# longer vectors: 19 dims exercise the 8-lane fold and the tail
L = [("p%02d" % i, [f32(math.sin(i * 7 + j) * 3) for j in range(19)], "message") for i in range(12)]
QL = [f32(math.cos(j) * 2) for j in range(19)]
case("19-dimension vectors (the eight-lane sums and the tail) give the same distances on every backend", [
  {"commit": [{"op": "put", "table": "t/long", "row": {"id": i, "emb": b64(v)}} for i, v, k in L]},
  {"nearest": {"table": "t/long", "column": "emb", "vector": b64(QL), "k": 5, "metric": "cosine"}, "hits": hits("cosine", QL, L, 5)},
  {"nearest": {"table": "t/long", "column": "emb", "vector": b64(QL), "k": 5, "metric": "l2"}, "hits": hits("l2", QL, L, 5)},
  {"nearest": {"table": "t/long", "column": "emb", "vector": b64(QL), "k": 5, "metric": "dot"}, "hits": hits("dot", QL, L, 5)},
])

doc = {
  "name": "vectors",
  "about": "vector(n) columns (float32 x n; base64 of the little-endian bytes on the wire, written here as it travels) and nearest (cosine, l2, dot; ties by key; where; k above the rows; zero vectors; bad vectors and requests). Distances are exact: every backend computes them with the same order of float32 sums (src/vectors/distance.h). Generated by hand-checked arithmetic; vector cells in expected rows are the wire base64.",
  "tables": [
    {"op": "table", "table": "t/docs", "version": 1, "columns": {"id": {"type": "str"}, "kind": {"type": "str"}, "emb": {"type": "vector", "dims": 4, "optional": True}}, "key": ["id"], "indexes": {"byKind": ["kind"]}},
    {"op": "table", "table": "t/long", "version": 1, "columns": {"id": {"type": "str"}, "emb": {"type": "vector", "dims": 19}}, "key": ["id"]},
  ],
  "cases": cases,
}
open(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'vectors.json'), 'w').write(json.dumps(doc, indent=1) + "\n")
