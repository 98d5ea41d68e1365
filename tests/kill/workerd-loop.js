// The kill loop on workerd (issue 14, item 3), for tests/edge/kill.test.js
// (short) and tests/torture/kill-workerd.mjs (long): real workerd (Miniflare
// with a persist folder) runs tests/edge/kill-worker.js, whose Durable
// Object commits the stream of workload.js on the durable backend and
// streams an ack for each commit; this process kills the workerd process
// with SIGKILL at a random time (sometimes in the middle of a 25k-put
// transaction), runs `sqlite3`'s integrity_check on a copy of the Durable
// Object's SQLite files as the kill left them, starts workerd again over the
// same folder and has the object check its store with checkStore: every
// acknowledged commit there, none partial, the outbox contiguous.
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { startWorkerd } from "../edge/harness.js";
import { random } from "./node-loop.js";

/** `promise`, or a rejection naming `what` after 120 s (a hang reports itself instead of holding the run up). */
function within(promise, what, ms = 120_000) {
  if (process.env.ONESTORE_KILL_DEBUG) console.log(`kill-workerd: ${what}`);
  let timer;
  const timeout = new Promise((_, fail) => { timer = setTimeout(() => fail(new Error(`${what} took over ${ms / 1000} s`)), ms); });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** The pids of this process's workerd children. */
function workerdPids() {
  const out = execFileSync("ps", ["-o", "pid=,comm=", "--ppid", String(process.pid)], { encoding: "utf8" });
  return out.split("\n").map((l) => l.trim().split(/\s+/)).filter(([, comm]) => comm === "workerd").map(([pid]) => Number(pid));
}

function sqliteFiles(dir) {
  const out = [];
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile() && e.name.endsWith(".sqlite")) out.push(join(e.parentPath ?? e.path, e.name));
  }
  return out;
}

function integrityOfCopies(persist, scratch) {
  const results = [];
  for (const file of sqliteFiles(persist)) {
    const copy = join(scratch, "copy.sqlite");
    for (const suffix of ["", "-wal", "-shm", "-journal"]) rmSync(copy + suffix, { force: true });
    copyFileSync(file, copy);
    for (const suffix of ["-wal", "-journal"]) if (existsSync(file + suffix)) copyFileSync(file + suffix, copy + suffix);
    results.push(execFileSync("sqlite3", [copy, "pragma integrity_check"], { encoding: "utf8" }).trim());
  }
  return results;
}

async function readAcks(body, acks, state) {
  const reader = body.getReader();
  const text = new TextDecoder();
  let buf = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buf += text.decode(value, { stream: true });
      let i;
      while ((i = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        if (line === "open") state.opened = true;
        else if (line.startsWith("ack ")) {
          const [, c, seq] = line.split(" ");
          acks.push([Number(c), Number(seq)]);
          state.acked?.();
        } else state.errors.push(line);
      }
    }
  } catch {
    // The runtime died: the stream breaks off.
  }
}

/**
 * Runs `tries` kills (or for `seconds`); resolves to the figures
 * { tries, kills, acked, lost, partial, problems }.
 */
export async function runWorkerdKills({ tries: maxTries = Infinity, seconds = 1e9, maxKillMs = 1500, bigEvery = 40, freshEvery = 30, seed = 1, log = () => {} } = {}) {
  const rand = random(seed);
  const scratch = mkdtempSync(join(tmpdir(), "onestore-kill-workerd-"));
  const figures = { durability: "durable", tries: 0, kills: 0, integrityChecks: 0, acked: 0, lost: 0, partial: 0, problems: [] };
  const end = Date.now() + seconds * 1000;
  let persist = join(scratch, "persist-0");
  let object = 1;
  let acked = new Map();
  let next = 0;
  // Has the object of workerd `w` check its store after the last kill.
  const check = async (w, killedAt) => {
    const answer = await within((async () => {
      const res = await w.mf.dispatchFetch("http://test/kill/check", { method: "POST", body: JSON.stringify({ acked: [...acked], bigEvery }) });
      return res.json();
    })(), `try ${figures.tries}: the check after the kill`);
    if (!answer.ok) throw new Error(`check in workerd: ${answer.code} ${answer.message}\n${answer.stack}`);
    const result = answer.result;
    figures.lost += result.lost;
    figures.partial += result.problems.filter((p) => p.includes("partial commit")).length;
    for (const p of result.problems) figures.problems.push(`try ${figures.tries} (object ${object - 1}, killed at ${killedAt} ms): ${p}`);
    next = result.next;
  };
  const started = [];  // pids of the workerd processes this loop started
  let freshAt = -1;
  let killedAt = null;  // the last try's kill time, until its store is checked
  try {
    while (figures.problems.length === 0) {
      const more = Date.now() < end && figures.tries < maxTries;
      const fresh = more && figures.tries > 0 && figures.tries % freshEvery === 0 && freshAt !== figures.tries;
      if (killedAt === null && !more) break;
      const before = new Set(workerdPids());
      const w = await within(startWorkerd({ persist, script: "kill-worker.js" }), `try ${figures.tries}: workerd's start`);
      const pids = workerdPids().filter((p) => !before.has(p));
      started.push(...pids);
      if (pids.length !== 1) throw new Error(`expected one new workerd process, found ${pids.join(",")}`);
      try {
        // The restart over the killed runtime's folder: check it first.
        if (killedAt !== null) await check(w, killedAt);
        killedAt = null;
      } catch (e) {
        await within(w.dispose(), "Miniflare's dispose").catch(() => {});
        throw e;
      }
      if (!more || figures.problems.length > 0) {
        await within(w.dispose(), "Miniflare's dispose");
        break;
      }
      if (fresh) {
        // A new object (a new folder) now and then: checks stay quick.
        await within(w.dispose(), "Miniflare's dispose");
        freshAt = figures.tries;
        persist = join(scratch, `persist-${object++}`);
        acked = new Map();
        next = 0;
        continue;
      }
      figures.tries++;
      const acks = [];
      const state = { opened: false, errors: [] };
      const res = await within(w.mf.dispatchFetch(`http://test/kill/stream?start=${next}&bigEvery=${bigEvery}`, { method: "POST", headers: { "accept-encoding": "identity" } }), `try ${figures.tries}: the stream's start`);
      const reading = readAcks(res.body, acks, state);
      // A random time after the first acknowledged commit of this run (or
      // after the stream ended, which the check then reports).
      await within(new Promise((resolve) => { state.acked = resolve; reading.then(resolve); }), `try ${figures.tries}: the first ack`);
      const delay = Math.floor(rand() * maxKillMs);
      await new Promise((r) => setTimeout(r, delay));
      process.kill(pids[0], "SIGKILL");
      figures.kills++;
      killedAt = delay;
      await within(reading, `try ${figures.tries}: the end of the acks after the kill`);
      await within(w.dispose().catch(() => {}), `try ${figures.tries}: Miniflare's dispose`);
      if (state.errors.length > 0) figures.problems.push(`try ${figures.tries}: the stream ended by itself: ${state.errors.join("; ")}`);
      for (const [c, seq] of acks) acked.set(c, seq);
      figures.acked += acks.length;
      const integrity = integrityOfCopies(persist, scratch);
      if (integrity.length === 0) figures.problems.push(`try ${figures.tries}: no SQLite file of the object under ${persist}`);
      figures.integrityChecks += integrity.length;
      for (const r of integrity) if (r !== "ok") figures.problems.push(`try ${figures.tries}: integrity_check of the object's SQLite as the kill left it: ${r}`);
      if (figures.tries % 10 === 0) log(`${figures.tries} tries, ${figures.acked} acknowledged, ${figures.lost} lost`);
    }
  } finally {
    // After a failure (a hang, say), no runtime of ours is left behind.
    for (const pid of new Set([...started, ...workerdPids()])) {
      try { process.kill(pid, "SIGKILL"); } catch { /* already gone */ }
    }
    if (process.env.ONESTORE_KILL_KEEP) console.log(`kill-workerd: kept ${scratch}`);
    else rmSync(scratch, { recursive: true, force: true });
  }
  return figures;
}
