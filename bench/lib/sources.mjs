// Column sources that plug in: scripts that measure in another runtime
// (bench/opfs-figures.mjs in Chromium, bench/edge-figures.mjs in workerd) and
// print their figures as one JSON object on stdout, in the shape that
// bench/README.md ("Column sources") documents. A script that does not exist
// is skipped; one that fails is reported (its error in the report), never
// fatal to the Node columns.

import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { isAbsolute } from "node:path";
import { fileURLToPath } from "node:url";

export const SCRIPTS = ["bench/opfs-figures.mjs", "bench/edge-figures.mjs", "bench/link-figures.mjs"];
const TIMEOUT_MS = 10 * 60 * 1000;

function runScript(path, args) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => { out += d; });
    child.stderr.on("data", (d) => { err += d; });
    const timer = setTimeout(() => child.kill("SIGTERM"), TIMEOUT_MS);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, out, err });
    });
  });
}

// Checks the shape of one source's answer; returns an error text or "".
export function checkSource(s) {
  if (s === null || typeof s !== "object" || !Array.isArray(s.columns)) return "expected { source, environment?, columns: [...] }";
  for (const c of s.columns) {
    if (typeof c?.id !== "string" || typeof c.label !== "string" || !["onestore", "anchor"].includes(c.kind) || typeof c.figures !== "object" || c.figures === null) {
      return `column ${JSON.stringify(c?.id)}: expected { id, label, kind: "onestore" | "anchor", figures: {...} }`;
    }
  }
  return "";
}

// `scripts`: paths relative to the repository root, or absolute.
export async function externalSources(root, quick, log, scripts = SCRIPTS) {
  const out = [];
  for (const script of scripts) {
    const path = isAbsolute(script) ? script : fileURLToPath(new URL(script, root));
    if (!existsSync(path)) continue;
    log(`source: running ${script}`);
    const r = await runScript(path, quick ? ["--json", "--quick"] : ["--json"]);
    let parsed = null;
    let error = "";
    if (r.code !== 0) error = `exited with ${r.code ?? r.signal}: ${r.err.trim().split("\n").slice(-3).join(" / ")}`;
    else {
      try {
        parsed = JSON.parse(r.out.trim().slice(r.out.trim().lastIndexOf("\n{") + 1));
        error = checkSource(parsed);
      } catch (e) {
        error = `its output is not JSON: ${e.message}`;
      }
    }
    if (error) log(`source ${script}: ${error}`);
    const group = parsed?.source ?? script;
    out.push({
      script,
      ok: !error,
      error: error || undefined,
      source: parsed?.source,
      environment: parsed?.environment,
      columns: error ? [] : parsed.columns.map((c) => ({ ...c, group: c.group ?? group, anchors: c.anchors ?? [], settings: c.settings ?? {} })),
    });
  }
  return out;
}
