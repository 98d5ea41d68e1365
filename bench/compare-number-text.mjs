// Compares two builds of the wasm core on reading and writing number texts
// (issue 13, the download, step four: the core's own strtod and snprintf,
// wasm/strtod.cc and wasm/snprintf.cc), interleaved round by round in one
// process. Not part of `npm run bench`.
//
//   node bench/compare-number-text.mjs <repo root A> <repo root B> [rounds]
//
// Per round and build: 20k puts in wire JSON of a num column (numbers as JS
// writes them: half short decimals, half random doubles of 16-17 digits),
// committed in one call (the fast put reader's strtod); then 2,000 pages
// whose where compares the num column with such a number (nlohmann's lexer).
// Wall time and the process's CPU time, medians.

import { pathToFileURL } from "node:url";
import { resolve } from "node:path";

import { median } from "./lib/common.mjs";

const [rootA, rootB, roundsArg] = process.argv.slice(2);
if (!rootA || !rootB) {
  console.error("usage: node bench/compare-number-text.mjs <root A> <root B> [rounds]");
  process.exit(2);
}
const rounds = Number(roundsArg ?? 9);
const TABLE = "t/nums";
const RECORD = { op: "table", table: TABLE, version: 1, columns: { id: { type: "str" }, n: { type: "num" } }, key: ["id"] };

// The same numbers for both builds: a fixed pseudo-random sequence.
let x = 0x9e3779b9;
const next = () => (x = (Math.imul(x ^ (x >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0) / 2 ** 32;
const numbers = Array.from({ length: 20000 }, (_, i) => (i % 2 ? next() * 1000 : Math.round(next() * 100000) / 100));
const ops = `[${numbers.map((n, i) => `{"op":"put","table":"${TABLE}","row":{"id":"k${i}","n":${JSON.stringify(n)}}}`).join(",")}]`;

async function load(root) {
  const { loadNodeCore } = await import(new URL("js/loader-node.js", pathToFileURL(`${resolve(root)}/`)).href);
  return { root, mod: await loadNodeCore() };
}

function once(b, out) {
  const c = new b.mod.Core();
  c.open('{"backend":"memory","id":"x"}');
  c.commit(`[${JSON.stringify(RECORD)}]`, '{"owner":"t","at":1}');
  const cpu0 = process.cpuUsage();
  let t = performance.now();
  const answer = c.commit(ops, '{"owner":"t","at":2}');
  if (answer.startsWith("!")) throw new Error(answer);
  (out.puts20k ??= []).push(performance.now() - t);
  const cpu1 = process.cpuUsage(cpu0);
  (out.puts20kCpu ??= []).push((cpu1.user + cpu1.system) / 1000);
  const cpu2 = process.cpuUsage();
  t = performance.now();
  for (let i = 0; i < 2000; i++) c.page(TABLE, `{"where":{"gt":["n",${JSON.stringify(numbers[i])}]},"orderBy":[]}`, 1, "");
  (out.pages2k ??= []).push(performance.now() - t);
  const cpu3 = process.cpuUsage(cpu2);
  (out.pages2kCpu ??= []).push((cpu3.user + cpu3.system) / 1000);
  c.close();
  c.delete();
}

const builds = [await load(rootA), await load(rootB)];
const figures = builds.map(() => ({}));
for (let r = 0; r < rounds; r++) for (let i = 0; i < builds.length; i++) once(builds[i], figures[i]);
console.log(`| workload (ms, median of ${rounds}) | ${builds.map((b) => b.root).join(" | ")} | B/A |`);
console.log("|---|---:|---:|---:|");
for (const k of Object.keys(figures[0])) {
  const [a, b] = figures.map((f) => median(f[k]));
  console.log(`| ${k} | ${a.toFixed(2)} | ${b.toFixed(2)} | ${(b / a).toFixed(2)}× |`);
}
