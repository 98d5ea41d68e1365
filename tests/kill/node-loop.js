// The kill loop on Node files (issue 14, item 3), for tests/js/kill.test.js
// (short) and tests/torture/kill-node.mjs (long): a child process
// (node-child.mjs) commits the stream of workload.js on a sqlite store file
// (WAL, exclusive locking) and reports each acknowledged commit; this
// process kills it with SIGKILL at a random time (sometimes before it has
// opened the store, sometimes in the middle of a 25k-put transaction), checks
// the file left behind with the real `sqlite3` (`PRAGMA integrity_check` on a
// copy of the file and its WAL, as the crash left them), then reopens it and
// checks it with workload.js's checkStore: every acknowledged commit there
// (durability full), or only a suffix lost (relaxed), no partial commit, the
// outbox contiguous and each acknowledged seq where it was acknowledged.
import { execFileSync, spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import * as api from "../../js/index.js";
import { checkStore } from "./workload.js";

const child = new URL("./node-child.mjs", import.meta.url).pathname;

/** A deterministic random number generator (mulberry32): the run's seed reproduces its kill times. */
export function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function runChild(path, durability, start, bigEvery) {
  const p = spawn(process.execPath, [child, path, durability, String(start), String(bigEvery)], { stdio: ["ignore", "pipe", "pipe"] });
  const acks = [];
  const out = { acks, opened: false, errors: [], stderr: "" };
  let buf = "";
  let opened;
  let first;
  out.open = new Promise((resolve) => { opened = resolve; });
  out.first = new Promise((resolve) => { first = resolve; });
  p.stdout.on("data", (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      if (line === "open") {
        out.opened = true;
        opened();
      }
      else if (line.startsWith("ack ")) {
        const [, c, seq] = line.split(" ");
        acks.push([Number(c), Number(seq)]);
        if (acks.length === 1) first();
      } else out.errors.push(line);
    }
  });
  p.stderr.on("data", (d) => { out.stderr += d; });
  // Every line the child wrote before it died is read before "close".
  out.closed = new Promise((resolve) => p.on("close", (code, signal) => resolve(signal ?? code)));
  out.pid = p.pid;
  return out;
}

/** `PRAGMA integrity_check` by the sqlite3 command on a copy of the store file and its WAL. */
function integrityOfCopy(path, scratch) {
  const copy = join(scratch, "copy.sqlite");
  for (const suffix of ["", "-wal", "-shm"]) rmSync(copy + suffix, { force: true });
  if (!existsSync(path)) return "ok";  // killed before the file was created
  copyFileSync(path, copy);
  if (existsSync(`${path}-wal`)) copyFileSync(`${path}-wal`, `${copy}-wal`);
  return execFileSync("sqlite3", [copy, "pragma integrity_check"], { encoding: "utf8" }).trim();
}

/**
 * Runs the loop for `seconds` (or `tries`), killing each child `0..maxKillMs`
 * ms after its first acknowledged commit (one in six 0..400 ms after its
 * start); a new store every `freshEvery` tries. Resolves to the figures { durability, tries, kills, acked, lost, partial, problems }.
 */
export async function runNodeKills({ durability = "full", seconds = 20, tries: maxTries = Infinity, maxKillMs = 700, freshEvery = 40, bigEvery = 40, seed = 1, log = () => {} } = {}) {
  const rand = random(seed);
  const scratch = mkdtempSync(join(tmpdir(), "onestore-kill-node-"));
  const figures = { durability, tries: 0, kills: 0, killedBeforeOpen: 0, acked: 0, lost: 0, partial: 0, problems: [] };
  const end = Date.now() + seconds * 1000;
  let store = 0;
  let path;
  let acked;  // c -> seq, of the current store
  let next = 0;
  try {
    while (Date.now() < end && figures.tries < maxTries && figures.problems.length === 0) {
      if (figures.tries % freshEvery === 0) {
        path = join(scratch, `s${store++}.sqlite`);
        acked = new Map();
        next = 0;
      }
      figures.tries++;
      const run = runChild(path, durability, next, bigEvery);
      // Most kills come while it commits (a random time after its first
      // acknowledged commit); one in six at a random time from its start,
      // often while it opens and recovers the WAL the last kill left.
      const early = rand() < 1 / 6;
      const delay = Math.floor(rand() * (early ? 400 : maxKillMs));
      if (!early) await Promise.race([run.closed, run.first]);
      const exited = await Promise.race([run.closed, new Promise((r) => setTimeout(() => r(null), delay))]);
      if (exited !== null) {
        figures.problems.push(`try ${figures.tries}: the child ended by itself (${exited}): ${run.errors.join("; ")} ${run.stderr}`);
        break;
      }
      process.kill(run.pid, "SIGKILL");
      await run.closed;
      figures.kills++;
      if (!run.opened) figures.killedBeforeOpen++;
      for (const [c, seq] of run.acks) acked.set(c, seq);
      figures.acked += run.acks.length;

      const integrity = integrityOfCopy(path, scratch);
      if (integrity !== "ok") figures.problems.push(`try ${figures.tries}: integrity_check of the file as the kill left it: ${integrity}`);
      const s = await api.openStore({ backend: "sqlite", path, durability });
      let result;
      try {
        result = await checkStore(api, s, { acked, durability, options: { bigEvery } });
      } finally {
        await s.close();
      }
      figures.lost += result.lost;
      if (result.lost > 0) for (const c of [...acked.keys()]) if (c >= result.next) acked.delete(c);
      for (const p of result.problems) figures.problems.push(`try ${figures.tries} (store ${store - 1}, killed ${delay} ms after its ${early ? "start" : "first ack"}): ${p}`);
      figures.partial += result.problems.filter((p) => p.includes("partial commit")).length;
      next = result.next;
      if (figures.tries % 25 === 0) log(`${durability}: ${figures.tries} tries, ${figures.acked} acknowledged, ${figures.lost} lost`);
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return figures;
}
