// Checks the store against a plain JS model of its documented semantics
// over seeded random op sequences (issue 14, part 4; the runner is
// tests/differential/differential.js): puts, key updates with random set
// expressions, key deletes, updateWhere and deleteWhere with random
// predicates, edges and deleteEdges in random transactions; gets, counts,
// every page of random queries through their cursors, every page of
// neighbours, foreign cursors. memory, sqlite ":memory:" and a sqlite file
// must each give exactly the model's answers, errors included.
// ONESTORE_DIFF_SEEDS sets the number of sequences per backend (default 100).
// The browser (opfs) and workerd (durable) runs are in tests/browser/ and
// tests/edge/differential.test.js; the long form in tests/torture/.

import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, test } from "node:test";

import * as api from "../../js/index.js";
import { conformanceRunner } from "../conformance/runner.js";
import { differential } from "../differential/differential.js";
import { explain } from "../differential/report.js";
import { tempDir } from "./helpers.js";

const d = differential(api);
const SEEDS = Number(process.env.ONESTORE_DIFF_SEEDS ?? 100);
const LENGTH = 40;
let files = 0;
let dir;
const backends = [
  ["memory", () => ({ backend: "memory" })],
  ["sqlite :memory:", () => ({ backend: "sqlite", path: ":memory:" })],
  ["sqlite file", () => {
    dir ??= tempDir("onestore-differential-");
    return { backend: "sqlite", path: join(dir, `d${files++}.sqlite`) };
  }],
];

describe("the differential runner", () => {
  for (const [label, options] of backends) {
    test(`${SEEDS} random sequences on ${label} give exactly the model's answers`, async () => {
      const seeds = Array.from({ length: SEEDS }, (_, i) => 1 + i);
      const res = await d.runSeeds(seeds, LENGTH, options);
      assert.equal(res.observations, SEEDS * LENGTH);
      if (res.failures.length > 0) {
        assert.fail(await explain(d, res.failures[0], LENGTH, label, (ops) => d.observe(options(), ops)));
      }
    });
  }

  test("shrinking keeps a sequence failing while it drops the ops that do not matter", async () => {
    const ops = d.generate(7, 60);
    const needle = ops.findIndex((o) => o.neighbours !== undefined);
    assert.ok(needle >= 0);
    const fails = async (list) => list.some((o) => o.neighbours !== undefined && o.neighbours.node === ops[needle].neighbours.node)
      && list.some((o) => o.tx !== undefined);
    const shrunk = await d.shrink(ops, fails);
    assert.ok(await fails(shrunk));
    assert.equal(shrunk.length, 2);
    assert.equal(shrunk.find((o) => o.tx !== undefined).tx.length, 1);
  });

  test("a sequence written as a conformance vector passes the conformance runner with the model's answers", async () => {
    const { CaseRunner } = conformanceRunner(api, assert);
    for (const seed of [3, 4, 5]) {
      const doc = JSON.parse(JSON.stringify(d.toVector(`seed-${seed}`, `seed ${seed}`, d.generate(seed, LENGTH))));
      assert.ok(doc.cases[0].steps.length >= LENGTH - 5);
      await new CaseRunner(doc, { backend: "memory" }).run(doc.cases[0].steps);
    }
  });

  test("the model and a store disagree when the store's answer differs, and the report names the seed and writes the vector", async () => {
    const seed = 11;
    const ops = d.generate(seed, LENGTH);
    const index = ops.findIndex((o) => o.count !== undefined);
    assert.ok(index >= 0);
    // A store that counts one row too many: the observations of a real store, one changed.
    const lying = async (list) => {
      const got = await d.observe({ backend: "memory" }, list);
      return got.map((text, i) => (list[i].count !== undefined ? text.replace(/"n":(\d+)/, (_, n) => `"n":${Number(n) + 1}`) : text));
    };
    const got = await lying(ops);
    const want = d.model(ops);
    const first = d.firstDifference(got, want);
    assert.equal(first, index);
    const out = tempDir("onestore-diff-out-");
    process.env.ONESTORE_DIFF_OUT = out;
    try {
      const message = await explain(d, { seed, index, got: got[index], want: want[index], op: d.toText(ops[index]) }, LENGTH, "a lying store", lying);
      assert.match(message, /seed 11 on a lying store/);
      assert.match(message, /shrunk to 1 ops/);
      assert.match(message, new RegExp(`${out}/differential-11-a-lying-store\\.json`));
    } finally {
      delete process.env.ONESTORE_DIFF_OUT;
    }
  });
});
