// The package as a user gets it: packed with `npm pack`, installed from the
// tarball into a fresh app folder outside the repository, then built there by
// a real bundler from the repository's node_modules.
//
//   const tarball = await packedTarball();                  // once per run
//   const app = await installApp("app");                    // tests/bundlers/fixtures/app + onestore
//   ... build app.dir with a bundler, serve its output ...
//   app.remove();
//
// The tarball is packed once per `npm test` (scripts/test.sh packs it and
// passes ONESTORE_TARBALL) or once per test file run alone.

import { execFile } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { after, before } from "node:test";

import { launchChromium } from "../browser/harness.js";

export { launchChromium, startServer } from "../browser/harness.js";

export const repoRoot = resolve(fileURLToPath(new URL("../..", import.meta.url)));
export const fixtures = join(repoRoot, "tests", "bundlers", "fixtures");

const run = promisify(execFile);

// npm with its own cache folder under the temp dir would re-download nothing
// (the package has no dependencies); quiet and without audit or funding calls.
async function npm(args, cwd) {
  try {
    return await run("npm", [...args, "--no-audit", "--no-fund", "--loglevel=error"], { cwd, maxBuffer: 16 << 20 });
  } catch (e) {
    throw new Error(`npm ${args.join(" ")} in ${cwd} failed: ${e.message}\n${e.stdout ?? ""}\n${e.stderr ?? ""}`, { cause: e });
  }
}

let packed = null;

/**
 * The path of the package's tarball: `ONESTORE_TARBALL` when the test run
 * packed it already, else `npm pack` of the repository into a temp folder,
 * once per process (removed when the process exits).
 */
export function packedTarball() {
  const given = process.env.ONESTORE_TARBALL;
  if (given) {
    if (!existsSync(given)) throw new Error(`ONESTORE_TARBALL=${given} does not exist`);
    return Promise.resolve(given);
  }
  packed ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), "onestore-pack-"));
    process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
    await npm(["pack", "--pack-destination", dir], repoRoot);
    const file = readdirSync(dir).find((f) => f.endsWith(".tgz"));
    if (!file) throw new Error(`npm pack wrote no .tgz into ${dir}`);
    return join(dir, file);
  })();
  return packed;
}

/**
 * A new app folder in the temp dir: a copy of tests/bundlers/fixtures/<name>
 * (or of each file or folder of `sources`) with a package.json, and onestore
 * installed from the packed tarball (as `npm install ./onestore-x.tgz` does:
 * no registry needed: the package has no dependencies). `remove()` deletes it.
 */
export async function installApp(name, sources = [join(fixtures, name)]) {
  const tarball = await packedTarball();
  const dir = mkdtempSync(join(tmpdir(), `onestore-${name}-`));
  for (const src of sources) {
    cpSync(src, statSync(src).isDirectory() ? dir : join(dir, basename(src)), { recursive: true });
  }
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: `onestore-${name}`, private: true, type: "module" }, null, 2));
  try {
    await npm(["install", "--offline", tarball], dir);
  } catch {
    // An npm cache without the tarball's (nonexistent) dependencies' metadata:
    // the same install, allowed to ask the registry.
    await npm(["install", tarball], dir);
  }
  if (!existsSync(join(dir, "node_modules", "onestore", "dist", "onestore-core.wasm"))) {
    throw new Error(`the tarball ${tarball} installed no dist/onestore-core.wasm into ${dir}`);
  }
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * The fixture of a bundler test file: registers its before and after hooks,
 * which install app `name` from the tarball and launch one Chromium, then
 * close and remove them. The returned object's `app` and `browser` are set
 * once `before` has run.
 *
 * @example
 * const env = appInChromium();   // at the top of a test file
 * test("...", async () => { await exerciseApp(env.browser.context, url); });
 */
export function appInChromium(name = "app") {
  const env = { app: null, browser: null };
  before(async () => {
    env.app = await installApp(name);
    env.browser = await launchChromium();
  });
  after(async () => {
    await env.browser?.close();
    env.app?.remove();
  });
  return env;
}

/** The files under `dir` (relative paths, sorted), recursively. */
export function listFiles(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => join(d.parentPath ?? d.path, d.name).slice(dir.length + 1))
    .sort();
}
