// The long form of the differential campaign (issue 14, part 4;
// docs/reliability.md, "Differential testing against a model"): seeded
// random op sequences of the runner in tests/differential/differential.js,
// each on memory, sqlite ":memory:" and a sqlite file in Node, and a share
// of them on opfs (Chromium) and durable (workerd), every read compared with
// the plain JS model. A difference is shrunk and written as a conformance
// vector (tests/differential/report.js), and the run fails.
//
// ONESTORE_DIFF_TORTURE_SEEDS (default 10000) sequences on each Node backend,
// ONESTORE_DIFF_TORTURE_REMOTE (default: as many) on each of opfs and durable,
// ONESTORE_DIFF_TORTURE_LENGTH ops each (default 40), from seed
// ONESTORE_DIFF_SEED_BASE (default: from the clock, printed).
// ONESTORE_DIFF_TORTURE_RUNTIMES: a comma list of node, opfs, durable;
// ONESTORE_DIFF_TORTURE_NODE: of memory, sqlite-memory, sqlite-file (so that
// each can run in a process of its own). Each campaign prints its progress
// every 500 sequences, so a run stopped early still has its figures.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import * as api from "../../js/index.js";
import { differential } from "../differential/differential.js";
import { explain } from "../differential/report.js";

const d = differential(api);
const SEEDS = Number(process.env.ONESTORE_DIFF_TORTURE_SEEDS ?? 10000);
const REMOTE = Number(process.env.ONESTORE_DIFF_TORTURE_REMOTE ?? SEEDS);
const LENGTH = Number(process.env.ONESTORE_DIFF_TORTURE_LENGTH ?? 40);
const BASE = Number(process.env.ONESTORE_DIFF_SEED_BASE ?? (Date.now() % 1_000_000_000));
const RUNTIMES = new Set((process.env.ONESTORE_DIFF_TORTURE_RUNTIMES ?? "node,opfs,durable").split(","));
const NODE_BACKENDS = new Set((process.env.ONESTORE_DIFF_TORTURE_NODE ?? "memory,sqlite-memory,sqlite-file").split(","));
const seedsOf = (n, offset) => Array.from({ length: n }, (_, i) => BASE + offset + i);

console.log(`differential: seeds from ${BASE}, ${LENGTH} ops a sequence`);
const dir = mkdtempSync(join(tmpdir(), "onestore-diff-torture-"));
process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const results = [];
let failed = null;

async function campaign(label, run) {
  const t0 = Date.now();
  let shown = 0;
  const progress = (total) => {
    if (total.sequences - shown < 500) return;
    shown = total.sequences;
    console.log(`${label}: ${total.sequences} sequences, ${total.observations} observations, ${total.failures.length} differences so far (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
  };
  const res = await run(progress);
  const s = ((Date.now() - t0) / 1000).toFixed(0);
  results.push(`${label}: ${res.sequences} sequences, ${res.observations} observations compared, ${res.failures.length} differences (${s} s)`);
  console.log(results[results.length - 1]);
  return res;
}

if (RUNTIMES.has("durable") && REMOTE > 0) {
  const { startWorkerd } = await import("../edge/harness.js");
  const workerd = await startWorkerd({ script: "diff-worker.js" });
  try {
    const res = await campaign("durable (workerd)", async (progress) => {
      const total = { sequences: 0, observations: 0, failures: [] };
      for (let first = 0; first < REMOTE && total.failures.length === 0; first += 25) {
        const r = await workerd.call(`t-${first}`, "run", { seeds: seedsOf(Math.min(25, REMOTE - first), SEEDS + first), length: LENGTH });
        total.sequences += r.sequences;
        total.observations += r.observations;
        total.failures.push(...r.failures);
        progress(total);
      }
      return total;
    });
    if (res.failures.length > 0) {
      let n = 0;
      failed = await explain(d, res.failures[0], LENGTH, "durable", (ops) => workerd.call(`s-${n++}`, "observe", { text: d.toText(ops) }));
    }
  } finally {
    await workerd.dispose();
  }
}

if (!failed && RUNTIMES.has("opfs") && REMOTE > 0) {
  const { call, openTab, startHarness } = await import("../browser/harness.js");
  const h = await startHarness();
  try {
    const page = await openTab(h, "/tests/browser/pages/diff.html");
    const res = await campaign("opfs (Chromium)", async (progress) => {
      const total = { sequences: 0, observations: 0, failures: [] };
      for (let first = 0; first < REMOTE && total.failures.length === 0; first += 50) {
        const r = await call(page, "run", { seeds: seedsOf(Math.min(50, REMOTE - first), SEEDS + REMOTE + first), length: LENGTH, perStore: 25 });
        total.sequences += r.sequences;
        total.observations += r.observations;
        total.failures.push(...r.failures);
        progress(total);
      }
      return total;
    });
    if (res.failures.length > 0) {
      failed = await explain(d, res.failures[0], LENGTH, "opfs", (ops) => call(page, "observe", { text: d.toText(ops) }));
    }
  } finally {
    await h.close();
  }
}

if (!failed && RUNTIMES.has("node")) {
  const backends = [
    ["memory", () => ({ backend: "memory" })],
    ["sqlite :memory:", () => ({ backend: "sqlite", path: ":memory:" })],
    ["sqlite file", () => ({ backend: "sqlite", path: join(dir, `d${files++}.sqlite`) })],
  ].filter(([label]) => NODE_BACKENDS.has(label.replace(/ :?/, "-").replace(":", "")));
  for (const [label, options] of backends) {
    const res = await campaign(label, async (progress) => {
      const total = { sequences: 0, observations: 0, failures: [] };
      for (let first = 0; first < SEEDS && total.failures.length === 0; first += 500) {
        const r = await d.runSeeds(seedsOf(Math.min(500, SEEDS - first), first), LENGTH, options);
        total.sequences += r.sequences;
        total.observations += r.observations;
        total.failures.push(...r.failures);
        progress(total);
      }
      return total;
    });
    if (res.failures.length > 0) {
      failed = await explain(d, res.failures[0], LENGTH, label, (ops) => d.observe(options(), ops));
      break;
    }
  }
}

console.log("\ndifferential: summary");
for (const line of results) console.log(`  ${line}`);
if (failed) {
  console.error(failed);
  process.exit(1);
}
console.log("differential: 0 differences");
