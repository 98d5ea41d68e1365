// A held derive's recompute leaves nothing for the old generation.
// compute() cleared the derive's maps of reads (deps, pages) with
// Map.prototype.clear(). V8 keeps a cleared map's old table linked to its
// new one (for iterators that were live), so once an old table had been
// promoted, dead, it kept the next compute's table (and its pages' windows)
// alive through every scavenge until they were promoted too, and so on:
// in the link bench's all-dirty shape about 3.9 MB survived each scavenge,
// each of which then took 5 to 22 ms (the shape's p99). compute() now makes
// new maps (js/derive.js; docs/performance.md, "Session 48").

import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const fixture = fileURLToPath(new URL("./fixtures/derive-promotion.mjs", import.meta.url));

test("100 held derives recomputed on every write promote almost nothing to the old generation", () => {
  const out = JSON.parse(execFileSync(process.execPath, [fixture, "1500"], { encoding: "utf8" }).trim().split("\n").pop());
  assert.equal(out.top, 1500, "the last write is the top row");
  assert.equal(out.seen, 100 * 1501, "every derive's listener saw its first value and every write");
  // With the maps cleared: about 90 MB over the 750 writes measured (120 KB
  // a write). With new maps: tens of KB.
  assert.ok(out.gained < 8_000_000, `the old generation gained ${out.gained} bytes over ${out.writes} writes (${(out.gained / out.writes).toFixed(0)} bytes each)`);
});
