// Node side of the differential runner (tests/differential/differential.js):
// a failing seed is shrunk on the backend that failed and written as a
// conformance vector file, and the message to print says where.

import { mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Shrinks failure `f` (from runSeeds) of `length`-op sequences with
 * `observeOps(ops)` (resolves to observations on the failing backend),
 * writes the reproduction as a conformance vector into ONESTORE_DIFF_OUT
 * (the temp folder by default), and resolves to a message naming the seed,
 * the backend, the first difference and the file.
 *
 * @example assert.fail(await explain(d, res.failures[0], 40, "memory", (ops) => d.observe({ backend: "memory" }, ops)));
 */
export async function explain(d, f, length, label, observeOps) {
  const ops = d.generate(f.seed, length);
  const fails = async (list) => d.firstDifference(await observeOps(list), d.model(list)) >= 0;
  let shrunk = ops;
  try {
    shrunk = await d.shrink(ops, fails);
  } catch (e) {
    shrunk = ops;
  }
  const safe = label.replace(/[^a-z0-9]+/gi, "-");
  const name = `differential-${f.seed}-${safe}`;
  const vector = d.toVector(name, `seed ${f.seed} of the differential runner differed on ${label}; shrunk from ${ops.length} to ${shrunk.length} ops`, shrunk);
  const dir = process.env.ONESTORE_DIFF_OUT ?? join(tmpdir(), "onestore-differential");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify(vector, null, 1) + "\n");
  return [
    `differential: seed ${f.seed} on ${label}: op ${f.index} ${f.op}`,
    `  store: ${f.got}`,
    `  model: ${f.want}`,
    `  shrunk to ${shrunk.length} ops: ${d.toText(shrunk)}`,
    `  reproduction (a conformance vector; copy it into tests/conformance/ once the cause is fixed): ${file}`,
  ].join("\n");
}
