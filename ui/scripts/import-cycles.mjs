// Fails when the UI's sources import each other in a circle: every .ts and
// .tsx file under src/ (or the directory given), its relative imports
// (`import type` and `import("...")` included) resolved as the bundler
// does. A circle is files that all reach each other through imports, or a
// file that imports itself; each is named with one way round it.
//
//   node scripts/import-cycles.mjs [dir]     (npm run check runs it)

import { readdir, readFile } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { circlePath, importCycles, importGraph } from "./cycles.mjs";

const ui = fileURLToPath(new URL("..", import.meta.url));
const root = process.argv[2] ?? join(ui, "src");

const sources = new Map();
for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !/\.tsx?$/.test(entry.name)) continue;
  const file = join(entry.parentPath ?? entry.path, entry.name);
  sources.set(relative(root, file).split(sep).join("/"), await readFile(file, "utf8"));
}
if (!sources.size) throw new Error(`no .ts or .tsx files under ${root}`);

const graph = importGraph(new Map([...sources].sort(([a], [b]) => (a < b ? -1 : 1))));
const circles = importCycles(graph);
const where = relative(process.cwd(), root) || ".";
if (!circles.length) {
  console.log(`import-cycles: no import circles among ${sources.size} files under ${where}`);
} else {
  console.error(
    `import-cycles: ${circles.length} import ${circles.length === 1 ? "circle" : "circles"} under ${where}:`,
  );
  for (const c of circles) {
    console.error(`  ${c.length} ${c.length === 1 ? "file" : "files"}: ${c.join(", ")}`);
    console.error(`    for one: ${circlePath(graph, c).join(" -> ")}`);
  }
  process.exitCode = 1;
}
