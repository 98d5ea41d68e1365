// Runs the conformance vectors of tests/conformance/*.json (format in
// tests/conformance/README.md) through the public package API on memory,
// sqlite ":memory:" and a sqlite temp file (the runner is
// tests/conformance/runner.js, shared with the workerd tests): writes through
// store.commit with wire ops, reads through table handles with queries built
// by the public builders. Every backend must give exactly the answers in the
// vectors.

import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";

import * as api from "../../js/index.js";
import { conformanceRunner } from "../conformance/runner.js";
import { repoRoot, tempDir } from "./helpers.js";

const vectorDir = join(repoRoot, "tests", "conformance");
const files = readdirSync(vectorDir).filter((f) => f.endsWith(".json")).sort();

let dir;
let fileCounter = 0;
const backends = [
  ["memory", () => ({ backend: "memory" })],
  ["sqlite :memory:", () => ({ backend: "sqlite", path: ":memory:" })],
  ["sqlite file", () => {
    dir ??= tempDir("onestore-conformance-");
    return { backend: "sqlite", path: join(dir, `c${fileCounter++}.sqlite`) };
  }],
];

const { CaseRunner } = conformanceRunner(api, assert);

for (const file of files) {
  const doc = JSON.parse(readFileSync(join(vectorDir, file), "utf8"));
  describe(`conformance ${file}`, () => {
    for (const [label, options] of backends) {
      describe(label, () => {
        for (const c of doc.cases) {
          test(c.name, async () => {
            await new CaseRunner(doc, options()).run(c.steps);
          });
        }
      });
    }
  });
}
