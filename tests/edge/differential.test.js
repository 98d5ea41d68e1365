// Checks durable stores inside real workerd (a SQLite Durable Object per
// batch of sequences) against the differential runner's plain JS model
// (tests/differential/differential.js): seeded random op sequences, every
// read compared; a difference is shrunk on fresh objects and written as a
// conformance vector. ONESTORE_DIFF_EDGE_SEEDS sets the number of sequences
// (default 60).

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import * as api from "../../js/index.js";
import { differential } from "../differential/differential.js";
import { explain } from "../differential/report.js";
import { startWorkerd } from "./harness.js";

const d = differential(api);
const SEEDS = Number(process.env.ONESTORE_DIFF_EDGE_SEEDS ?? 60);
const LENGTH = 40;
const PER_OBJECT = 20;

let workerd;
before(async () => {
  workerd = await startWorkerd({ script: "diff-worker.js" });
});
after(async () => {
  await workerd?.dispose();
});

test(`${SEEDS} random sequences on durable give exactly the model's answers`, async () => {
  let observations = 0;
  const failures = [];
  for (let first = 0; first < SEEDS; first += PER_OBJECT) {
    const seeds = Array.from({ length: Math.min(PER_OBJECT, SEEDS - first) }, (_, i) => 200001 + first + i);
    const res = await workerd.call(`diff-${first}`, "run", { seeds, length: LENGTH });
    observations += res.observations;
    failures.push(...res.failures);
  }
  assert.equal(observations, SEEDS * LENGTH);
  if (failures.length > 0) {
    let n = 0;
    assert.fail(await explain(d, failures[0], LENGTH, "durable", (ops) => workerd.call(`shrink-${n++}`, "observe", { text: d.toText(ops) })));
  }
});
