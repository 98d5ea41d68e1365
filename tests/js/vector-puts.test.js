// Checks, in the wasm build (whose libc++ reserves exactly what is asked),
// that a commit's vector puts cost the same per put at any transaction size:
// the bytes the core moves growing the outbox record as it writes each
// vector's base64 (Core.debugBase64GrowthBytes, src/values/vector.h) stay
// about one record's size per commit, so per put they are the same at 500
// and 4,000 puts. Before the fix every vector moved the whole record so far
// (a commit quadratic in its vector puts: issue 15). No timing.

import assert from "node:assert/strict";
import { test } from "node:test";

import { loadNodeCore } from "../../js/loader-node.js";
import { unwrap } from "../../js/errors.js";

const DIMS = 384;

function putsJson(n) {
  const ops = [];
  const v = new Float32Array(DIMS);
  for (let i = 0; i < n; i++) {
    for (let d = 0; d < DIMS; d++) v[d] = ((i * 31 + d * 7) % 100) / 50 - 1;
    ops.push(`{"op":"put","table":"t/v","row":{"id":"k${i}","e":"${Buffer.from(v.buffer).toString("base64")}"}}`);
  }
  return `[${ops.join(",")}]`;
}

async function growthPerPut(backend, n) {
  const mod = await loadNodeCore();
  const core = new mod.Core();
  try {
    unwrap(core.open(JSON.stringify({ backend, path: ":memory:", id: "s" })));
    const table = { op: "table", table: "t/v", version: 1, columns: { id: { type: "str" }, e: { type: "vector", dims: DIMS } }, key: ["id"] };
    unwrap(core.commit(JSON.stringify([table]), '{"owner":"t"}'));
    const ops = putsJson(n);
    const before = Number(core.debugBase64GrowthBytes());
    unwrap(core.commit(ops, '{"owner":"t"}'));
    return (Number(core.debugBase64GrowthBytes()) - before) / n;
  } finally {
    core.close();
    core.delete();
  }
}

test("a vector put moves as few bytes growing its commit's record at 4,000 puts as at 500, on memory and sqlite", async () => {
  for (const backend of ["memory", "sqlite"]) {
    const small = await growthPerPut(backend, 500);
    const big = await growthPerPut(backend, 4000);
    // Geometric growth: about one record (some 2 KB a put) moved in all.
    assert.ok(small < 8192, `${backend}: ${small} bytes per put at 500`);
    assert.ok(big < 2 * small, `${backend}: ${small} bytes per put at 500, ${big} at 4,000`);
  }
});
