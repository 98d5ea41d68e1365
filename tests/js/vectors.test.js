// Vectors and search by meaning through the public package in Node, on
// memory and a sqlite file: vector(n) columns written from Float32Arrays and
// arrays and read back as Float32Arrays bit for bit (NaN payloads aside, every
// float32 bit pattern that is finite, -0 and subnormals included), after a
// reopen too; tx.update of a vector; bad vectors refused with invalid/args
// naming the column and the value, nothing committed; nearest with each
// metric, where, ties and k, its answers identical across backends; replicas,
// export/import carry vectors bit for bit; the file holds a BLOB of
// little-endian float32 that the sqlite3 command reads.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { describe, test } from "node:test";

import { defineTable, eq, importStore, openReplica, openStore, str, vector, ErrorCodes } from "../../js/index.js";
import { rejectsWith, tempDir } from "./helpers.js";

const Docs = defineTable("docs", {
  columns: { id: str(), kind: str(), text: str(), embedding: vector(8).optional() },
  key: ["id"],
  indexes: { byKind: ["kind"] },
});

let dir;
let counter = 0;
function fileOptions() {
  dir ??= tempDir("onestore-vectors-");
  return { backend: "sqlite", path: join(dir, `v${counter++}.sqlite`) };
}

const backends = [
  ["memory", () => ({ backend: "memory" })],
  ["a sqlite file", fileOptions],
];

/** A deterministic pseudo-random Float32Array (xorshift), values in [-4, 4). */
function randomVector(seed, n = 8) {
  let x = seed * 2654435761 >>> 0 || 1;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    x ^= x << 13; x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5; x >>>= 0;
    out[i] = (x / 2 ** 32) * 8 - 4;
  }
  return out;
}

function bits(f32) {
  return [...new Uint32Array(f32.buffer, f32.byteOffset, f32.length)];
}

async function open(options) {
  const store = await openStore(options);
  const owner = store.object({ type: "notes" });
  return { store, owner, docs: owner.table(Docs) };
}

// Edge bit patterns: -0, the smallest subnormal, the largest float32, 1 + ulp.
const edge = new Float32Array(new Uint32Array([0x80000000, 0x00000001, 0x7f7fffff, 0x3f800001, 0xff7fffff, 0x00800000, 0x3eaaaaab, 0xc2f6e979]).buffer);

for (const [label, options] of backends) {
  describe(`vectors on ${label}`, () => {
    test("a Float32Array is read back bit for bit as a Float32Array, and an array of numbers as its float32 rounding", async () => {
      const opts = options();
      const { store, owner, docs } = await open(opts);
      await owner.tx(async (tx) => {
        await tx.put(docs, { id: "edge", kind: "k", text: "", embedding: edge });
        await tx.put(docs, { id: "arr", kind: "k", text: "", embedding: [0.1, 1 / 3, 16777217, -1e-30, 0, 1, 2, 3] });
        await tx.put(docs, { id: "none", kind: "k", text: "" });
      });
      const got = await docs.get("edge");
      assert.ok(got.embedding instanceof Float32Array);
      assert.deepEqual(bits(got.embedding), bits(edge));
      assert.ok(Object.is(got.embedding[0], -0));
      const arr = await docs.get("arr");
      assert.deepEqual([...arr.embedding], [...new Float32Array([0.1, 1 / 3, 16777217, -1e-30, 0, 1, 2, 3])]);
      assert.equal((await docs.get("none")).embedding, null);
      const { rows } = await docs.page(undefined, 10);
      assert.deepEqual(rows.map((r) => r.id), ["arr", "edge", "none"]);
      assert.deepEqual(bits(rows[1].embedding), bits(edge));
      await store.close();
      if (opts.path) {
        const again = await open(opts);
        assert.deepEqual(bits((await again.docs.get("edge")).embedding), bits(edge));
        await again.store.close();
      }
    });

    test("tx.update sets a vector from a Float32Array, and the caller's array is copied when written", async () => {
      const { store, owner, docs } = await open(options());
      const mine = new Float32Array([1, 2, 3, 4, 5, 6, 7, 8]);
      await owner.tx(async (tx) => {
        await tx.put(docs, { id: "a", kind: "k", text: "", embedding: mine });
        mine[0] = 99;  // after the put: the store has its own copy
      });
      assert.equal((await docs.get("a")).embedding[0], 1);
      await owner.tx((tx) => tx.update(docs, ["a"], { embedding: new Float32Array(8).fill(0.5) }));
      assert.deepEqual([...(await docs.get("a")).embedding], new Array(8).fill(0.5));
      await owner.tx((tx) => tx.updateWhere(docs, (e) => eq(e.kind, "k"), { embedding: [8, 7, 6, 5, 4, 3, 2, 1] }));
      assert.deepEqual([...(await docs.get("a")).embedding], [8, 7, 6, 5, 4, 3, 2, 1]);
      await owner.tx((tx) => tx.update(docs, ["a"], { embedding: null }));
      assert.equal((await docs.get("a")).embedding, null);
      await store.close();
    });

    test("bad vectors are refused with invalid/args naming the column and the value, and nothing is committed", async () => {
      const { store, owner, docs } = await open(options());
      await owner.tx((tx) => tx.put(docs, { id: "ok", kind: "k", text: "", embedding: randomVector(1) }));
      const head = store.head;
      const bad = [
        [new Float32Array(7), ["row.embedding", "7 elements", "vector of 8"]],
        [[1, 2, 3, 4, 5, 6, 7, 8, 9], ["row.embedding", "9 elements"]],
        [new Float32Array([1, 2, NaN, 4, 5, 6, 7, 8]), ["row.embedding[2]", "NaN"]],
        [[1, 2, 3, Infinity, 5, 6, 7, 8], ["row.embedding[3]", "Infinity"]],
        [[1, 2, 3, 4, 5, 6, 7, -Infinity], ["row.embedding[7]", "-Infinity"]],
        [[1, 2, 3, 4, 5, 6, 7, 1e39], ["row.embedding[7]", "1e+39", "float32"]],
        [[1, 2, 3, "4", 5, 6, 7, 8], ["row.embedding[3]", "\"4\"", "not a number"]],
        [new Float64Array(8), ["row.embedding", "Float64Array"]],
        ["AAAA", ["row.embedding", "\"AAAA\""]],
        [{ 0: 1 }, ["row.embedding", "an object"]],
      ];
      for (const [v, mentions] of bad) {
        await rejectsWith(owner.tx(async (tx) => {
          await tx.put(docs, { id: "x", kind: "k", text: "", embedding: v });
        }), ErrorCodes.InvalidArgs, mentions);
        await rejectsWith(owner.tx((tx) => tx.update(docs, ["ok"], { embedding: v })), ErrorCodes.InvalidArgs, ["embedding"]);
      }
      // A Float32Array anywhere but a vector column.
      const Meta = defineTable("meta", { columns: { id: str(), m: (await import("../../js/index.js")).json() }, key: ["id"] });
      const meta = owner.table(Meta);
      await rejectsWith(owner.tx((tx) => tx.put(meta, { id: "a", m: { v: new Float32Array(2) } })), ErrorCodes.InvalidArgs, ["row.m.v", "Float32Array", "vector column"]);
      assert.equal(await docs.count(), 1);
      assert.equal(await docs.get("x"), undefined);
      assert.deepEqual(bits((await docs.get("ok")).embedding), bits(randomVector(1)));
      assert.equal(store.head, head + 1, "only meta's declaration committed");
      await store.close();
    });

    test("nearest ranks by each metric with ties by key, honours where and k, and refuses bad requests", async () => {
      const { store, owner, docs } = await open(options());
      const rows = [
        ["a", "message", [1, 0, 0, 0, 0, 0, 0, 0]],
        ["b", "message", [0, 1, 0, 0, 0, 0, 0, 0]],
        ["c", "note", [1, 1, 0, 0, 0, 0, 0, 0]],
        ["d", "message", [-1, 0, 0, 0, 0, 0, 0, 0]],
        ["e", "message", [3, 0, 0, 0, 0, 0, 0, 0]],
        ["z", "message", null],
      ];
      await owner.tx(async (tx) => {
        for (const [id, kind, v] of rows) await tx.put(docs, { id, kind, text: id, embedding: v && new Float32Array(v) });
      });
      const q = new Float32Array([1, 0, 0, 0, 0, 0, 0, 0]);
      const cos = await docs.nearest((e) => e.embedding, q, 10);
      assert.deepEqual(cos.map((h) => [h.row.id, h.distance]), [["a", 0], ["e", 0], ["c", 1 - 1 / Math.SQRT2], ["b", 1], ["d", 2]]);
      assert.ok(cos[0].row.embedding instanceof Float32Array);
      const l2 = await docs.nearest((e) => e.embedding, q, 2, { metric: "l2" });
      assert.deepEqual(l2.map((h) => [h.row.id, h.distance]), [["a", 0], ["c", 1]]);
      const dot = await docs.nearest((e) => e.embedding, [2, 0, 0, 0, 0, 0, 0, 0], 3, { metric: "dot" });
      assert.deepEqual(dot.map((h) => [h.row.id, h.distance]), [["e", -6], ["a", -2], ["c", -2]]);
      const notes = await docs.nearest((e) => e.embedding, q, 10, { where: (e) => eq(e.kind, "note") });
      assert.deepEqual(notes.map((h) => h.row.id), ["c"]);
      const byName = await docs.nearest("embedding", q, 1, { metric: "cosine" });
      assert.deepEqual(byName.map((h) => h.row.id), ["a"]);
      await rejectsWith(docs.nearest((e) => e.text, q, 3), ErrorCodes.InvalidArgs, ["text", "vector"]);
      await rejectsWith(docs.nearest((e) => e.embedding, new Float32Array(3), 3), ErrorCodes.InvalidArgs, ["query vector", "3 elements"]);
      await rejectsWith(docs.nearest((e) => e.embedding, [NaN, 0, 0, 0, 0, 0, 0, 0], 3), ErrorCodes.InvalidArgs, ["NaN"]);
      await rejectsWith(docs.nearest((e) => e.embedding, q, 0), ErrorCodes.InvalidArgs, ["k"]);
      await rejectsWith(docs.nearest((e) => e.embedding, q, 3, { metric: "manhattan" }), ErrorCodes.InvalidArgs, ["manhattan"]);
      await rejectsWith(docs.nearest((e) => e.embedding, q, 3, { metrics: "l2" }), ErrorCodes.InvalidArgs, ["metrics"]);
      await rejectsWith(docs.nearest((e) => e.embedding, q, 3, { where: (e) => eq(e.embedding, 1) }), ErrorCodes.InvalidArgs, ["embedding"]);
      await store.close();
    });
  });
}

describe("vectors across backends and copies", () => {
  // 300 rows of 8 dims: distances with rounding in every sum.
  async function filled(options) {
    const { store, owner, docs } = await open(options);
    await owner.tx(async (tx) => {
      for (let i = 0; i < 300; i++) {
        await tx.put(docs, { id: `r${String(i).padStart(3, "0")}`, kind: i % 3 ? "message" : "note", text: "", embedding: randomVector(i + 7) });
      }
    });
    return { store, docs };
  }
  const q = randomVector(12345);

  test("a where callback or a column function of nearest that throws is invalid/args naming it, with the caller's error as cause", async () => {
    const { store, docs } = await open({ backend: "memory" });
    const mine = new RangeError("mine");
    let e = await rejectsWith(docs.nearest((d) => d.embedding, q, 3, { where: () => { throw mine; } }), "invalid/args", ["nearest", "where callback threw", "mine"]);
    assert.equal(e.cause, mine);
    e = await rejectsWith(docs.nearest(() => { throw mine; }, q, 3), "invalid/args", ["nearest", "column function threw", "mine"]);
    assert.equal(e.cause, mine);
    // A where callback with braces and no return: refused, not every row.
    await rejectsWith(docs.nearest((d) => d.embedding, q, 3, { where: (d) => { eq(d.kind, "note"); } }), "invalid/args", ["nearest", "returned undefined"]);
    assert.deepEqual(await docs.nearest((d) => d.embedding, q, 3), [], "the store answers on");
    await store.close();
  });

  test("nearest gives the same rows and bit-identical distances on memory, sqlite :memory: and a sqlite file", async () => {
    const answers = [];
    for (const options of [{ backend: "memory" }, { backend: "sqlite", path: ":memory:" }, fileOptions()]) {
      const { store, docs } = await filled(options);
      const all = [];
      for (const metric of ["cosine", "l2", "dot"]) {
        const hits = await docs.nearest((e) => e.embedding, q, 25, { metric, where: (e) => eq(e.kind, "message") });
        all.push(hits.map((h) => [h.row.id, h.distance]));
      }
      answers.push(all);
      await store.close();
    }
    assert.equal(answers[0][0].length, 25);
    assert.deepEqual(answers[1], answers[0]);
    assert.deepEqual(answers[2], answers[0]);
  });

  test("a replica and an exported-then-imported store hold the vectors bit for bit and answer nearest the same", async () => {
    const { store, docs } = await filled(fileOptions());
    const replica = await openReplica({ backend: "memory" });
    await replica.applyBatch(await store.outbox.read(0, 1000));
    const imported = await importStore(store.export(), fileOptions());
    const want = await docs.nearest((e) => e.embedding, q, 10, { metric: "l2" });
    const fromReplica = await replica.table("notes/docs").nearest((e) => e.embedding, q, 10, { metric: "l2" });
    const fromImport = await imported.object({ type: "notes" }).table(Docs).nearest((e) => e.embedding, q, 10, { metric: "l2" });
    for (const got of [fromReplica, fromImport]) {
      assert.deepEqual(got.map((h) => [h.row.id, h.distance]), want.map((h) => [h.row.id, h.distance]));
      got.forEach((h, i) => assert.deepEqual(bits(h.row.embedding), bits(want[i].row.embedding)));
    }
    assert.equal(await replica.fingerprint(), await store.fingerprint());
    assert.equal(await imported.fingerprint(), await store.fingerprint());
    await Promise.all([store.close(), replica.close(), imported.close()]);
  });

  test("the sqlite file holds each vector as a BLOB of little-endian float32, which the sqlite3 command reads", async (t) => {
    const options = fileOptions();
    const { store, owner, docs } = await open(options);
    await owner.tx((tx) => tx.put(docs, { id: "a", kind: "k", text: "", embedding: [1, 0.5, -2, 0, 0, 0, 0, 3.25] }));
    await store.close();
    let out;
    try {
      out = execFileSync("sqlite3", [options.path, 'SELECT typeof(embedding), hex(embedding) FROM "notes/docs"'], { encoding: "utf8" }).trim();
    } catch {
      t.skip("no sqlite3 command");
      return;
    }
    assert.equal(out, "blob|0000803F0000003F000000C00000000000000000000000000000000000005040");
  });
});

test("a vector column's default is a Float32Array of its own, checked against dims when defined", () => {
  const given = [1, 2];
  const c = vector(2, { default: given });
  assert.ok(c.default instanceof Float32Array);
  given[0] = 9;
  assert.deepEqual([...c.default], [1, 2]);
  assert.throws(() => vector(3, { default: [1, 2] }), (e) => e.code === "invalid/args" && /vector\(\)\.default/.test(e.message));
});
