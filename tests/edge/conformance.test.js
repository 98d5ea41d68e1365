// Runs the conformance vectors of tests/conformance/*.json on the durable
// backend inside real workerd: each case in a fresh Durable Object, through
// the same runner as the Node backends (tests/conformance/runner.js), so the
// Durable Object's SQLite must give exactly the answers of every other backend.

import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";

import { repoRoot, startWorkerd } from "./harness.js";

const vectorDir = join(repoRoot, "tests", "conformance");
const files = readdirSync(vectorDir).filter((f) => f.endsWith(".json")).sort();

let workerd;
before(async () => { workerd = await startWorkerd(); });
after(async () => { await workerd?.dispose(); });

for (const file of files) {
  const doc = JSON.parse(readFileSync(join(vectorDir, file), "utf8"));
  describe(`conformance ${file} on durable (workerd)`, () => {
    doc.cases.forEach((c, index) => {
      test(c.name, async () => {
        await workerd.call(`conformance/${file}/${index}`, "conformance", { doc, index });
      });
    });
  });
}
