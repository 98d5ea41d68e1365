// Checks the backend contract (tests/js/contract.js) on the memory backend.

import { openStore } from "../../js/index.js";
import { runBackendContract } from "./contract.js";

runBackendContract("memory", () => openStore({ backend: "memory" }));
