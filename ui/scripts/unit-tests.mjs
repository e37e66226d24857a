// Runs the unit tests, tests/*.test.ts, with Node's own test runner. Node 20
// cannot run TypeScript, so esbuild first bundles each test (with the
// sources it imports) into a temporary directory, removed afterwards.
//
//   npm test

import { build } from "esbuild";
import { spawnSync } from "node:child_process";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ui = fileURLToPath(new URL("..", import.meta.url));
const tests = (await readdir(join(ui, "tests"))).filter((f) => f.endsWith(".test.ts")).sort();
if (!tests.length) throw new Error("no tests/*.test.ts");

const out = await mkdtemp(join(tmpdir(), "chopin-ui-tests-"));
try {
  await build({
    absWorkingDir: ui,
    entryPoints: tests.map((f) => join("tests", f)),
    outdir: out,
    outExtension: { ".js": ".mjs" },
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    jsx: "automatic",
    jsxImportSource: "preact",
    logLevel: "warning",
  });
  const files = tests.map((f) => join(out, f.replace(/\.ts$/, ".mjs")));
  const run = spawnSync(process.execPath, ["--test", ...files], { stdio: "inherit" });
  process.exitCode = run.status ?? 1;
} finally {
  await rm(out, { recursive: true, force: true });
}
