// The long form of the Chromium kill loops (issue 14, item 3;
// tests/kill/chromium-loop.js): ONESTORE_KILL_ROUNDS (default 10) rounds of
// 6 Worker terminations, 4 browser kills and 24 take-overs among four tabs.
// Prints the figures docs/reliability.md reports; exits 1 on any lost or
// partial commit.
import { runChromiumKills } from "../kill/chromium-loop.js";

const rounds = Number(process.env.ONESTORE_KILL_ROUNDS ?? 10);
const total = {};
let failed = false;
for (let round = 0; round < rounds; round++) {
  const figures = await runChromiumKills({ terminate: 6, browser: 4, takeover: 24, seed: Date.now() % 1e9 + round });
  for (const [loop, f] of Object.entries(figures)) {
    const t = (total[loop] ??= { tries: 0, kills: 0, inBig: 0, acked: 0, lost: 0, partial: 0 });
    for (const k of Object.keys(t)) t[k] += f[k];
    for (const p of f.problems) console.log(`kill-chromium ${loop}: PROBLEM ${p}`);
    if (f.problems.length > 0) failed = true;
  }
  console.log(`kill-chromium round ${round + 1}/${rounds}: ${JSON.stringify(total)}`);
  if (failed) break;
}
for (const [loop, t] of Object.entries(total)) {
  console.log(`kill-chromium ${loop}: ${t.tries} tries, ${t.kills} kills (${t.inBig} in a 25k-put transaction), ${t.acked} acknowledged, ${t.lost} lost, ${t.partial} partial`);
}
process.exit(failed ? 1 : 0);
