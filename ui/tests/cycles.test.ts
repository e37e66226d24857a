// The import-circle check (scripts/cycles.mjs, run by scripts/import-cycles.mjs
// in npm run check) on graphs and sources in memory.

import { test } from "node:test";
import assert from "node:assert/strict";
import { circlePath, importCycles, importGraph, relativeImports, resolveImport } from "../scripts/cycles.mjs";

const graph = (edges: Record<string, string[]>) => new Map(Object.entries(edges));

test("a graph without circles has none", () => {
  assert.deepEqual(importCycles(graph({ a: ["b", "c"], b: ["c"], c: [] })), []);
  assert.deepEqual(importCycles(graph({})), []);
});

test("a circle is its strongly connected component, sorted", () => {
  const g = graph({ app: ["w"], w: ["chat", "plan"], chat: ["t", "ctx"], t: ["chat"], plan: ["w"], ctx: [] });
  assert.deepEqual(importCycles(g), [
    ["chat", "t"],
    ["plan", "w"],
  ]);
  // Two circles sharing a file are one component.
  assert.deepEqual(importCycles(graph({ a: ["b"], b: ["a", "c"], c: ["b"] })), [["a", "b", "c"]]);
});

test("a file importing itself is a circle; an import of a file outside the graph is not", () => {
  assert.deepEqual(importCycles(graph({ a: ["a", "x"], b: ["a"] })), [["a"]]);
});

test("a long chain back to its start is found without overflowing the stack", () => {
  const n = 20000;
  const g = new Map<string, string[]>();
  for (let i = 0; i < n; i++) g.set(`f${i}`, [`f${(i + 1) % n}`]);
  const [c] = importCycles(g);
  assert.equal(c.length, n);
});

test("circlePath is one way round, through files of the circle", () => {
  const g = graph({ a: ["x", "b"], b: ["c"], c: ["a"], x: [] });
  assert.deepEqual(circlePath(g, ["a", "b", "c"]), ["a", "b", "c", "a"]);
  assert.deepEqual(circlePath(graph({ a: ["a"] }), ["a"]), ["a", "a"]);
});

test("relativeImports reads every kind of import, and none in comments or strings", () => {
  const src = `
import { a } from "./a";
import type { B } from "./b";
import C, { type D } from '../c';
import "./side.css";
export * from "./e";
export { f as g } from "./f";
export type { H } from "./h";
import * as ns from "lodash";
const lazy = () => import("./lazy");
const tpl = import(\`./tpl\`);
const meta = import.meta.url;
// import { no } from "./comment";
/* import("./block") */
const s = 'import { no } from "./string"';
const re = /import("\\.\\/regex")/;
const el = <p>It's import("./jsx-text") here</p>;
export const from = "./not-an-import";
export default function x() {}
`;
  assert.deepEqual(relativeImports(src), ["./a", "./b", "../c", "./side.css", "./e", "./f", "./h", "./lazy", "./tpl"]);
});

test("resolveImport tries .ts, .tsx and index files, and ignores the rest", () => {
  const files = new Set(["src/a.ts", "src/w/b.tsx", "src/w/index.ts", "src/c.ts"]);
  assert.equal(resolveImport("src/w/b.tsx", "../a", files), "src/a.ts");
  assert.equal(resolveImport("src/a.ts", "./w/b", files), "src/w/b.tsx");
  assert.equal(resolveImport("src/a.ts", "./w", files), "src/w/index.ts");
  assert.equal(resolveImport("src/a.ts", "./c.js", files), "src/c.ts");
  assert.equal(resolveImport("src/a.ts", "./style.css", files), undefined);
  assert.equal(resolveImport("src/a.ts", "./missing", files), undefined);
});

test("importGraph and importCycles together, on sources", () => {
  const sources = new Map([
    ["workspace.tsx", `import { Chat } from "./chat";\nimport type { Ctx } from "./context";`],
    ["chat.tsx", `import type { Ctx } from "./workspace";`],
    ["context.ts", `import type { State } from "./reduce";`],
    ["reduce.ts", `export const x = 1;`],
  ]);
  const g = importGraph(sources);
  assert.deepEqual(g.get("workspace.tsx"), ["chat.tsx", "context.ts"]);
  assert.deepEqual(importCycles(g), [["chat.tsx", "workspace.tsx"]]);
  sources.set("chat.tsx", `import type { Ctx } from "./context";`);
  assert.deepEqual(importCycles(importGraph(sources)), []);
});
