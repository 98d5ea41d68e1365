// The long form of the Node kill loop (issue 14, item 3; tests/kill/node-loop.js):
// ONESTORE_KILL_SECONDS (default 300) on durability full, then as long on
// relaxed. Prints the figures docs/reliability.md reports; exits 1 on any
// lost acknowledged (full) or partial commit.
import { runNodeKills } from "../kill/node-loop.js";

const seconds = Number(process.env.ONESTORE_KILL_SECONDS ?? 300);
let failed = false;
for (const durability of ["full", "relaxed"]) {
  const f = await runNodeKills({ durability, seconds, seed: Date.now() % 1e9, log: (line) => console.log(`kill-node ${line}`) });
  console.log(`kill-node ${durability}: ${f.tries} tries, ${f.kills} kills (${f.killedBeforeOpen} before open), ${f.acked} acknowledged, ${f.lost} lost, ${f.partial} partial`);
  for (const p of f.problems) console.log(`kill-node ${durability}: PROBLEM ${p}`);
  if (f.problems.length > 0) failed = true;
}
process.exit(failed ? 1 : 0);
