// The long form of the workerd kill loop (issue 14, item 3;
// tests/kill/workerd-loop.js): ONESTORE_KILL_SECONDS (default 300) of
// kills. Prints the figures docs/reliability.md reports; exits 1 on any
// lost or partial commit.
import { runWorkerdKills } from "../kill/workerd-loop.js";

const seconds = Number(process.env.ONESTORE_KILL_SECONDS ?? 300);
const f = await runWorkerdKills({ seconds, seed: Date.now() % 1e9, log: (line) => console.log(`kill-workerd ${line}`) });
console.log(`kill-workerd: ${f.tries} tries, ${f.kills} kills, ${f.acked} acknowledged, ${f.lost} lost, ${f.partial} partial`);
for (const p of f.problems) console.log(`kill-workerd: PROBLEM ${p}`);
process.exit(f.problems.length > 0 ? 1 : 0);
