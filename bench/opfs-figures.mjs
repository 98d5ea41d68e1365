// The OPFS figures of docs/performance.md ("OPFS in Chromium"): in one
// headless Chromium run (tests/browser/harness.js), onestore's opfs backend
// (durability full and relaxed) next to the official @sqlite.org/sqlite-wasm
// on its opfs-sahpool VFS doing the same SQL (defaults; exclusive lock;
// exclusive + WAL + synchronous=NORMAL). The work runs in
// bench/browser/opfs-worker.js.
//
//   node bench/opfs-figures.mjs            a Markdown table, then the JSON
//   node bench/opfs-figures.mjs --json     the JSON only
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
if (!jsonOnly) {
  const f = (ms) => (ms < 1 ? `${(ms * 1000).toFixed(ms < 0.1 ? 1 : 0)} µs` : `${ms.toFixed(2)} ms`);
  console.log("| | one-row commit | get by key | 25k puts in one tx |");
  console.log("|---|---|---|---|");
  for (const r of result.rows) console.log(`| ${r.label} | ${f(r.commit)} | ${f(r.get)} | ${f(r.bulk)} |`);
  console.log(`\n${result.env.userAgent}; sqlite-wasm ${result.env.sqliteWasm}\n`);
}
console.log(JSON.stringify(out));
