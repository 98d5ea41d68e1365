// The OPFS figures of docs/performance.md ("OPFS in Chromium"): in one
// headless Chromium run (tests/browser/harness.js), onestore's opfs backend
// (durability full and relaxed) next to the official @sqlite.org/sqlite-wasm
// on its opfs-sahpool VFS doing the same SQL (defaults; exclusive lock;
// exclusive + WAL + synchronous=NORMAL). The work runs in
// bench/browser/opfs-worker.js.
//
//   node bench/opfs-figures.mjs            a Markdown table, then the JSON
//   node bench/opfs-figures.mjs --json     only the JSON, in the column-source
//                                          shape of `npm run bench` (bench/README.md)
//   ... --quick                            the small sizes of plan(true)
//                                          (bench/lib/common.mjs): seconds
//   node bench/opfs-figures.mjs --profile  where a one-row commit's time goes
//                                          (bench/browser/opfs-profile-worker.js)
//
// JSON: { "opfs": { "rows": [ { "label", "engine": "onestore" | "opfs-sahpool",
// "durability": "full" | "relaxed", "commit": ms per one-row commit,
// "get": ms per get by key, "bulk": ms for 25k puts in one transaction,
// "figures": every workload in the column-source shape } ],
// "env": { "userAgent", "sqliteWasm", "hardwareConcurrency" } } }
import { startHarness } from "../tests/browser/harness.js";

const jsonOnly = process.argv.includes("--json");
const profile = process.argv.includes("--profile");
const quick = process.argv.includes("--quick");
const h = await startHarness();
let result;
try {
  const page = await h.newPage(profile ? "/bench/browser/opfs-profile.html" : `/bench/browser/opfs.html${quick ? "?quick" : ""}`);
  // The worker's progress, on stderr (stdout ends with the JSON).
  page.on("console", (m) => { if (m.text().startsWith("opfs-worker: ")) console.error(m.text()); });
  result = await page.evaluate(() => window.result);
} finally {
  await h.close();
}
if (!result.ok) {
  console.error(`opfs figures failed: ${result.error}`);
  process.exit(1);
}
if (profile) {
  console.log(JSON.stringify(result.rows, null, 2));
  process.exit(0);
}
const out = { opfs: { rows: result.rows, env: result.env } };
if (jsonOnly) {
  // The column-source shape that `npm run bench` reads (bench/README.md,
  // "Column sources"): one column per row, times in ms per unit of work.
  console.log(JSON.stringify(asColumnSource(result)));
  process.exit(0);
}
if (!jsonOnly) {
  const f = (ms) => (ms < 1 ? `${(ms * 1000).toFixed(ms < 0.1 ? 1 : 0)} µs` : `${ms.toFixed(2)} ms`);
  const g = (x) => (x === undefined ? "–" : x.na !== undefined ? "n/a" : f(x.value));
  const sizes = Object.keys(result.rows[0].figures.commitAt);
  const bulkPer = result.rows[0].figures.bulk.per;
  console.log(`| | one-row commit | ${bulkPer} | rename | page | get by key | replay (per row change) | open | ${sizes.map((s) => `commit at ${s} rows`).join(" | ")} |`);
  console.log(`|---|---|---|---|---|---|---|---|${sizes.map(() => "---|").join("")}`);
  for (const r of result.rows) {
    const x = r.figures;
    console.log(`| ${r.label} | ${g(x.commit)} | ${g(x.bulk)} | ${g(x.rename)} | ${g(x.page)} | ${g(x.get)} | ${g(x.replay)} | ${g(x.open)} | ${sizes.map((s) => g(x.commitAt[s])).join(" | ")} |`);
  }
  for (const r of result.rows) {
    for (const [w, x] of Object.entries(r.figures)) if (x.na) console.log(`- ${r.label}, ${w}: ${x.na}`);
    for (const [s, x] of Object.entries(r.figures.commitAt)) if (x.na) console.log(`- ${r.label}, commit at ${s}: ${x.na}`);
  }
  console.log(`\n${result.env.userAgent}; sqlite-wasm ${result.env.sqliteWasm}\n`);
}
console.log(JSON.stringify(out));

// Chromium's rows as bench columns: onestore's two, each compared with every
// sahpool row (the anchors).
function asColumnSource({ rows, env }) {
  const slug = (label) => `chromium-${label.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "")}`;
  const anchors = rows.filter((r) => r.engine !== "onestore").map((r) => slug(r.label));
  return {
    source: "chromium",
    environment: { browser: env.userAgent, sqliteWasm: env.sqliteWasm, notes: "one headless Chromium, one dedicated Worker, OPFS; the sizes of plan(quick) (bench/lib/common.mjs) but 100 one-put commits per batch for workload 1; each figure the median of the batch means of its runs (performance.now() is coarse here); 6 replays fileReplayCommits recorded commits into a fresh store or db; 7 opens the store of workload 8 at its largest built size, holding openOutbox one-put records (onestore: built in relaxed sessions, as bench/lib/fixture.mjs; sahpool: the records written in one transaction), each open timed to its first get, in batches of 5, the first batch dropped; sahpool reopens on the installed pool VFS (docs/performance.md, \"OPFS in Chromium\")" },
    columns: rows.map((r) => ({
      id: slug(r.label),
      label: `${r.label} (Chromium)`,
      kind: r.engine === "onestore" ? "onestore" : "anchor",
      group: "chromium",
      settings: { vfs: r.engine === "onestore" ? "onestore opfs" : "opfs-sahpool", durability: r.durability },
      anchors: r.engine === "onestore" ? anchors : [],
      figures: r.figures,
    })),
  };
}
