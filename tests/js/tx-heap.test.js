// A store open for a whole session keeps no JS heap per transaction.
// owner.tx waited behind the owner's line with Promise.race([line,
// whenClosing]): a race adds a reaction to each promise it is given, and
// whenClosing settles only at close(), so every tx of the store's life
// left about 300 bytes on it (12 MB after the fixture's 40,000). It now
// waits with gate.behind(line) (js/core-calls.js), which holds nothing once
// the wait ends.

import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const fixture = fileURLToPath(new URL("./fixtures/tx-heap.mjs", import.meta.url));

test("40,000 transactions of one owner leave the JS heap about where it was", () => {
  const out = JSON.parse(execFileSync(process.execPath, ["--expose-gc", fixture], { encoding: "utf8" }).trim().split("\n").pop());
  assert.equal(out.head, 42001, "every transaction committed: the table's declaration, 2,000 warm ones and the 40,000 measured");
  // With the leak: about 12 MB (300 bytes a tx). Without: tens of KB.
  assert.ok(out.grew < 2_000_000, `the heap grew by ${out.grew} bytes over ${out.count} transactions (${(out.grew / out.count).toFixed(0)} bytes each)`);
});
