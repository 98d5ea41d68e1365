// Write → link message → the tab's listeners, with 100 held derives (issue
// 13): in one headless Chromium (tests/browser/harness.js), a page links to a
// dedicated Worker that serves the store (bench/browser/link-worker.js) and
// holds its 100 derives; each write is a `link.call("write")` from the page,
// timed until the listeners of the derives it changed have seen the write's
// seq (bench/browser/link.html). Three shapes (bench/browser/link-worker.js):
// the derives read their slices by key, so a write makes only its group's
// derive dirty ("one", the shape of Replicache's figures: 3 ms p50 for
// write → notify → read with 100 subscriptions, a few of them dirty); or by
// another column through an index, where the flush asks the core which
// pages the write may change and recomputes the written group's alone
// ("index"); or every derive reads the rows of the highest n, which every
// write changes, so all 100 are recomputed and the timing ends at the last
// of the 100 ("all"). The goal is p50 ≤ 2 ms and p99 ≤ 5 ms; the report
// judges every shape.
//
//   node bench/link-figures.mjs           a Markdown table, then the JSON
//   node bench/link-figures.mjs --json    only the JSON, in the column-source
//                                         shape of `npm run bench` (bench/README.md)
//   ... --quick                           fewer writes
//
// Beside each shape's judged figures (the first 1,000 writes after 100
// warm-up ones), two for reading them: `warm`, the last 1,000 of 2,000 more
// writes in the same worker (a page's first thousand writes pay its
// warm-up in their tail), and `floor`, a bare postMessage round trip to a
// worker that only echoes (bench/browser/echo-worker.js), paced the same
// way: what the browser's messaging and scheduling cost with no store
// behind them (on OPFS `full`, with a write and flush of 16 KiB to an OPFS
// file before each answer: a durable write's floor). The goal is judged on
// the first figures, as before.
//
// The page is served cross-origin isolated (COOP and COEP), so its
// performance.now() reads to 5 µs; without isolation it is coarsened to
// 100 µs, and a write that makes one derive dirty takes a few of those.
import { startHarness } from "../tests/browser/harness.js";

const jsonOnly = process.argv.includes("--json");
const quick = process.argv.includes("--quick");
const warmup = quick ? 20 : 100;
const writes = quick ? 100 : 1000;
// After the judged writes, `later` more in the same worker; the last
// `writes` of them are reported as the store warm (`warm`): the first
// thousand writes of a page pay its warm-up in their tail
// (docs/performance.md, "Issue 13, the link's tail: a page's first thousand
// writes, and the floor of its messaging").
const later = quick ? 0 : 2000;
const FLUSH_BYTES = 16384;
const ROWS = [
  { label: "memory", backend: "memory", shape: "one" },
  { label: "opfs full", backend: "opfs", durability: "full", shape: "one" },
  { label: "opfs relaxed", backend: "opfs", durability: "relaxed", shape: "one" },
  { label: "opfs full, by an index", backend: "opfs", durability: "full", shape: "index" },
  { label: "memory, all dirty", backend: "memory", shape: "all" },
  { label: "opfs full, all dirty", backend: "opfs", durability: "full", shape: "all" },
];

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
};
// p50, p99 and max of some latencies, and how many.
const summary = (xs) => ({ writes: xs.length, p50: pct(xs, 50), p99: pct(xs, 99), max: Math.max(...xs) });

const h = await startHarness({ isolated: true });
const rows = [];
let userAgent = "";
try {
  const page = await h.newPage("/bench/browser/link.html");
  await page.waitForFunction(() => window.ready === true);
  userAgent = await page.evaluate(() => navigator.userAgent);
  if (!(await page.evaluate(() => self.crossOriginIsolated))) throw new Error("link.html is not cross-origin isolated: its clock would read in steps of 100 µs");
  for (const r of ROWS) {
    if (!jsonOnly) console.error(`link: ${r.label}, ${warmup} + ${writes} writes`);
    // The floor: a bare round trip, and on OPFS `full` one that also
    // writes and flushes 16 KiB (about the four WAL frames of a one-put
    // commit) to an OPFS file before it answers.
    const flushBytes = r.backend === "opfs" && r.durability === "full" ? FLUSH_BYTES : 0;
    const floor = await page.evaluate((a) => window.floor(a), { warmup, writes, flushBytes });
    if (!floor.ok) throw new Error(`${r.label}, the floor: ${floor.error}`);
    const res = await page.evaluate((a) => window.measure(a), { ...r, warmup, writes: writes + later });
    if (!res.ok) throw new Error(`${r.label}: ${res.error}`);
    const judged = res.latencies.slice(0, writes);
    const warm = later >= writes ? res.latencies.slice(-writes) : null;  // the last `writes`
    rows.push({
      ...r, ...summary(judged), callP50: pct(res.calls.slice(0, writes), 50),
      ...(warm ? { warm: { from: warmup + later + 1, ...summary(warm) } } : {}),
      floor: { flushBytes, ...summary(floor.latencies) },
    });
  }
} finally {
  await h.close();
}

const out = {
  source: "chromium-link",
  environment: { browser: userAgent, notes: `one headless Chromium, a page linked to a dedicated Worker holding 100 derives (each the first 10 rows of its group of 20, 2,000 rows in all); ${writes} one-put writes after ${warmup} warm-up ones (the judged figures; \`warm\`: the last ${writes} of ${later} more in the same worker; \`floor\`: ${writes} round trips, after ${warmup}, to a worker that only echoes, paced the same way, just before; on OPFS full it first writes and flushes ${FLUSH_BYTES} bytes to an OPFS file of its own), each timed from link.call to the listener of the written group's derive (the derives read by key: only that one is dirty) or, "all dirty", to the last of the 100 listeners (the derives read by a column that is not the key: every write makes all 100 dirty); the page cross-origin isolated (performance.now() to 5 µs)` },
  columns: rows.map((r) => ({
    id: `chromium-link-${r.label.replace(/,/g, "").replace(/\s+/g, "-")}`,
    label: `link, ${r.label} (Chromium)`,
    kind: "onestore",
    group: "chromium",
    settings: { backend: r.backend, durability: r.durability ?? "n/a", derives: 100, dirty: r.shape === "all" ? 100 : 1, shape: r.shape },
    anchors: [],
    figures: { link: { value: r.p50, unit: "ms", per: r.shape === "all" ? "write → 100 derive listeners (all dirty), p50" : "write → the written derive's listener (1 of 100 dirty), p50", p50: r.p50, p99: r.p99, max: r.max, callP50: r.callP50, writes: r.writes, derives: 100, dirty: r.shape === "all" ? 100 : 1, shape: r.shape, ...(r.warm ? { warm: r.warm } : {}), floor: r.floor } },
  })),
};
if (!jsonOnly) {
  const f = (v) => `${v.toFixed(2)} ms`;
  console.log("| backend | p50 | p99 | max | the call's answer, p50 | warm p50 | warm p99 | floor p50 | floor p99 |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|");
  for (const r of rows) console.log(`| ${r.label} | ${f(r.p50)} | ${f(r.p99)} | ${f(r.max)} | ${f(r.callP50)} | ${r.warm ? f(r.warm.p50) : "n/a"} | ${r.warm ? f(r.warm.p99) : "n/a"} | ${f(r.floor.p50)} | ${f(r.floor.p99)} |`);
  console.log(`\n${userAgent}\n`);
}
console.log(JSON.stringify(out));
