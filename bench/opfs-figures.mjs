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
//   node bench/opfs-figures.mjs --profile  where a one-row commit's time goes
//                                          (bench/browser/opfs-profile-worker.js)
//
// JSON: { "opfs": { "rows": [ { "label", "engine": "onestore" | "opfs-sahpool",
// "durability": "full" | "relaxed", "commit": ms per one-row commit,
// "get": ms per get by key, "bulk": ms for 25k puts in one transaction } ],
// "env": { "userAgent", "sqliteWasm", "hardwareConcurrency" } } }
import { startHarness } from "../tests/browser/harness.js";

const jsonOnly = process.argv.includes("--json");
const profile = process.argv.includes("--profile");
const h = await startHarness();
let result;
try {
  const page = await h.newPage(profile ? "/bench/browser/opfs-profile.html" : "/bench/browser/opfs.html");
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
  console.log("| | one-row commit | get by key | 25k puts in one tx |");
  console.log("|---|---|---|---|");
  for (const r of result.rows) console.log(`| ${r.label} | ${f(r.commit)} | ${f(r.get)} | ${f(r.bulk)} |`);
  console.log(`\n${result.env.userAgent}; sqlite-wasm ${result.env.sqliteWasm}\n`);
}
console.log(JSON.stringify(out));

// Chromium's rows as bench columns: onestore's two, each compared with every
// sahpool row (the anchors).
function asColumnSource({ rows, env }) {
  const slug = (label) => `chromium-${label.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "")}`;
  const anchors = rows.filter((r) => r.engine !== "onestore").map((r) => slug(r.label));
  const notHere = { na: "not measured in Chromium (bench/opfs-figures.mjs measures commit, get and bulk)" };
  return {
    source: "chromium",
    environment: { browser: env.userAgent, sqliteWasm: env.sqliteWasm, notes: "one headless Chromium, one dedicated Worker, OPFS; each figure the median of 5 batch means (docs/performance.md, \"OPFS in Chromium\")" },
    columns: rows.map((r) => ({
      id: slug(r.label),
      label: `${r.label} (Chromium)`,
      kind: r.engine === "onestore" ? "onestore" : "anchor",
      group: "chromium",
      settings: { vfs: r.engine === "onestore" ? "onestore opfs" : "opfs-sahpool", durability: r.durability },
      anchors: r.engine === "onestore" ? anchors : [],
      figures: {
        commit: { value: r.commit, unit: "ms", per: "commit" },
        bulk: { value: r.bulk, unit: "ms", per: "tx of 25000 puts", putsPerSecond: 25000 / (r.bulk / 1000) },
        get: { value: r.get, unit: "ms", per: "get" },
        rename: notHere, page: notHere, replay: notHere, open: notHere,
      },
    })),
  };
}
