// The Node child of the kill campaign (tests/kill/node-loop.js): opens the
// store file argv[2] with durability argv[3] and commits the stream of
// tests/kill/workload.js from commit argv[4] on (big every argv[5]) until it
// is killed. Prints "open" once the store is open and "ack <c> <seq>" after
// each acknowledged commit: a synchronous write to the pipe (stdout to a
// pipe is synchronous in Node on Linux), done before the next commit begins,
// so whatever the parent read was acknowledged.
import { writeSync } from "node:fs";

import * as api from "../../js/index.js";
import { commitStream } from "./workload.js";

const [, , path, durability, start, bigEvery] = process.argv;
const store = await api.openStore({ backend: "sqlite", path, durability });
writeSync(1, "open\n");
const error = await commitStream(api, store, {
  start: Number(start),
  bigEvery: Number(bigEvery),
  ack: (c, seq) => { writeSync(1, `ack ${c} ${seq}\n`); },
});
writeSync(1, `error ${error?.code} ${error?.message}\n`);
process.exit(1);
