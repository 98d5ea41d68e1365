// Checks the backend contract (tests/js/contract.js) on the sqlite backend
// over a real file, one fresh file per test.

import { join } from "node:path";

import { openStore } from "../../js/index.js";
import { runBackendContract } from "./contract.js";
import { tempDir } from "./helpers.js";

const dir = tempDir("onestore-contract-");
let n = 0;

runBackendContract("sqlite file", () => openStore({ backend: "sqlite", path: join(dir, `store-${++n}.sqlite`) }));
