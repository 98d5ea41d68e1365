// The kill loops in Chromium (issue 14, item 3), for
// tests/browser/kill.test.js (short) and tests/torture/kill-chromium.mjs
// (long). A tab's dedicated Worker (tests/browser/pages/kill.html and
// kill-worker.js) commits the stream of workload.js on an OPFS store; each
// acknowledged commit reaches this process at once (window.killAck). Then:
// - terminate: the page terminates the Worker (as closing the page does) at
//   a random time, or just as a 25k-put transaction begins; a new Worker
//   reopens the store;
// - browser: SIGKILL to the whole Chromium process group at such a time; a
//   new Chromium on the same profile (same origin: the server stays) reopens
//   it;
// - takeover: four tabs take the store over from each other in turn, each
//   committing until the next one's open fences it.
// After each, the reopened store is checked with checkStore (every
// acknowledged commit there, none partial, the outbox contiguous) and,
// closed, with PRAGMA integrity_check on its file.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { integrity, launchChromium, startServer } from "../browser/harness.js";
import { random } from "./node-loop.js";

const PAGE = "/tests/browser/pages/kill.html";

async function call(page, op, args) {
  const r = await page.evaluate(([o, a]) => window.call(o, a), [op, args]);
  if (!r.ok) throw Object.assign(new Error(`${op}: ${r.error.code ?? r.error.name}: ${r.error.message}\n${r.error.stack ?? ""}`), r.error);
  return r.value;
}

/** A browser on `userDataDir` whose tabs report acks to `onAck(tab, event)`. */
async function browserOn(userDataDir, onEvent) {
  const b = await launchChromium({ userDataDir });
  await b.context.exposeFunction("killAck", (tab, m) => onEvent(tab, m));
  return b;
}

async function openTab(b, url, tab) {
  const page = await b.context.newPage();
  page.errors = [];
  page.on("pageerror", (e) => page.errors.push(String(e)));
  await page.goto(`${url}${PAGE}?tab=${tab}`);
  await page.waitForFunction(() => window.ready === true);
  return page;
}

/** The pgid of the Chromium browser process on `userDataDir`. */
function chromiumGroup(userDataDir) {
  const out = execFileSync("ps", ["-eo", "pid=,pgid=,args="], { encoding: "utf8" });
  for (const line of out.split("\n")) {
    const [pid, pgid, ...args] = line.trim().split(/\s+/);
    const cmd = args.join(" ");
    if (cmd.includes(`--user-data-dir=${userDataDir}`) && !cmd.includes("--type=")) return { pid: Number(pid), pgid: Number(pgid) };
  }
  throw new Error(`no Chromium process on ${userDataDir}`);
}

/**
 * Runs the given number of tries of each loop; resolves to figures per loop
 * { tries, kills, acked, lost, partial, inBig, problems }.
 */
export async function runChromiumKills({ terminate = 3, browser = 2, takeover = 8, tabs = 4, bigEvery = 40, seed = 1, log = () => {} } = {}) {
  const rand = random(seed);
  const srv = await startServer();
  const scratch = mkdtempSync(join(tmpdir(), "onestore-kill-chromium-"));
  const all = {};
  const figuresOf = (loop) => (all[loop] ??= { tries: 0, kills: 0, acked: 0, lost: 0, partial: 0, inBig: 0, problems: [] });
  let b = null;
  try {
    // State of the store being tortured.
    let acked = new Map();
    let next = 0;
    const events = { acks: [], ends: [], onAck: null };
    const onEvent = (tab, m) => {
      if (m.event === "ack") {
        acked.set(m.c, m.seq);
        events.acks.push([tab, m.c]);
        events.onAck?.(m.c);
      } else if (m.event === "end") events.ends.push([tab, m.code, m.message]);
    };
    // Resolves when the ack of commit c arrives.
    const ackOf = (c) => new Promise((resolve) => {
      if (acked.has(c)) return resolve();
      const prev = events.onAck;
      events.onAck = (x) => { prev?.(x); if (x >= c) resolve(); };
    });
    // Checks the store `name` in `page`'s worker (opened there), then closes
    // it and runs integrity_check on its file.
    const checkIn = async (page, name, f, label) => {
      await call(page, "open", { name });
      const r = await call(page, "check", { acked: [...acked], bigEvery });
      await call(page, "close");
      const rows = await integrity(page, name);
      if (JSON.stringify(rows) !== '[["ok"]]') f.problems.push(`${label}: integrity_check ${JSON.stringify(rows)}`);
      f.lost += r.lost;
      f.partial += r.problems.filter((p) => p.includes("partial commit")).length;
      for (const p of r.problems) f.problems.push(`${label}: ${p}`);
      return r;
    };
    // When to kill: a random time after the stream starts, or (every other
    // try) just after the commit before a big one is acknowledged, so that
    // the kill lands in the 25k-put transaction.
    const killPoint = async (tryNo) => {
      if (tryNo % 2 === 1) {
        const big = (Math.floor(next / bigEvery) + 1) * bigEvery;
        await ackOf(big - 1);
        // (The 25k-put transaction takes about 100 to 300 ms here: a wait
        // of up to 300 ms let most browser kills land after it.)
        await new Promise((r) => setTimeout(r, Math.floor(rand() * 80)));
        return big;
      }
      await new Promise((r) => setTimeout(r, Math.floor(rand() * 1500)));
      return null;
    };
    const countBig = (f, big) => { if (big !== null && !acked.has(big)) f.inBig++; };

    const userDataDir = join(scratch, "profile");
    b = await browserOn(userDataDir, onEvent);

    // Worker terminated.
    {
      const f = figuresOf("terminate");
      const name = "kill-terminate";
      const page = await openTab(b, srv.url, "t");
      acked = new Map();
      next = 0;
      for (let i = 0; i < terminate; i++) {
        f.tries++;
        await call(page, "open", { name });
        const before = acked.size;
        await call(page, "stream", { start: next, bigEvery });
        const big = await killPoint(i);
        await page.evaluate(() => window.terminateWorker());
        f.kills++;
        await page.waitForTimeout(50);  // the acks already posted reach this process
        f.acked += acked.size - before;
        const r = await checkIn(page, name, f, `terminate try ${i + 1}`);
        countBig(f, big);
        next = r.next;
      }
      await page.close();
      log(`terminate: ${JSON.stringify(f)}`);
    }

    // Whole browser killed.
    {
      const f = figuresOf("browser");
      const name = "kill-browser";
      acked = new Map();
      next = 0;
      for (let i = 0; i < browser; i++) {
        f.tries++;
        const page = await openTab(b, srv.url, "b");
        // The process group now: \`ps\` takes tens of ms (more on a busy
        // machine), so looked up at the kill point it let the 25k-put
        // transaction finish before the kill landed.
        const { pgid } = chromiumGroup(userDataDir);
        await call(page, "open", { name });
        const before = acked.size;
        await call(page, "stream", { start: next, bigEvery });
        const big = await killPoint(i);
        process.kill(-pgid, "SIGKILL");
        f.kills++;
        await b.context.close().catch(() => {});
        f.acked += acked.size - before;
        b = await browserOn(userDataDir, onEvent);
        const again = await openTab(b, srv.url, "b");
        const r = await checkIn(again, name, f, `browser try ${i + 1}`);
        countBig(f, big);
        next = r.next;
        await again.close();
      }
      log(`browser: ${JSON.stringify(f)}`);
    }

    // Four tabs taking the store over from each other.
    {
      const f = figuresOf("takeover");
      const name = "kill-takeover";
      acked = new Map();
      next = 0;
      let pendingBig = null;  // the big commit the last take-over was aimed at
      const pages = [];
      for (let t = 0; t < tabs; t++) pages.push(await openTab(b, srv.url, `tab${t}`));
      for (let i = 0; i < takeover; i++) {
        f.tries++;
        const page = pages[i % tabs];
        // Opening fences the tab that commits now (if any); the check sees
        // every commit that tab acknowledged, and where the stream goes on.
        await call(page, "open", { name });
        const r = await call(page, "check", { acked: [...acked], bigEvery });
        f.lost += r.lost;
        f.partial += r.problems.filter((p) => p.includes("partial commit")).length;
        for (const p of r.problems) f.problems.push(`takeover ${i + 1} by tab ${i % tabs}: ${p}`);
        next = r.next;
        countBig(f, pendingBig);
        await call(page, "stream", { start: next, bigEvery });
        pendingBig = await killPoint(i);
        f.kills++;  // the next open takes it over
      }
      // The last owner is taken over by a fresh worker that checks all.
      const last = pages[takeover % tabs];
      await checkIn(last, name, f, "takeover end");
      countBig(f, pendingBig);
      f.acked = acked.size;
      const fencedEnds = events.ends.filter(([tab, code]) => tab.startsWith("tab") && code !== "fenced");
      for (const [tab, code, message] of fencedEnds) f.problems.push(`${tab}'s stream ended with ${code} ${message}, not fenced`);
      for (const p of pages) await p.close();
      log(`takeover: ${JSON.stringify(f)}`);
    }
  } finally {
    await b?.close().catch(() => {});
    await srv.close();
    rmSync(scratch, { recursive: true, force: true });
  }
  return all;
}
