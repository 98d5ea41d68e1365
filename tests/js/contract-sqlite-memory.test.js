// Checks the backend contract (tests/js/contract.js) on the sqlite backend
// over an in-memory database (path ":memory:").

import { openStore } from "../../js/index.js";
import { runBackendContract } from "./contract.js";

runBackendContract("sqlite :memory:", () => openStore({ backend: "sqlite", path: ":memory:" }));
