// Types of scripts/cycles.mjs, for tests/cycles.test.ts.

export function relativeImports(source: string): string[];
export function resolveImport(from: string, spec: string, files: ReadonlySet<string>): string | undefined;
export function importGraph(sources: ReadonlyMap<string, string>): Map<string, string[]>;
export function importCycles(graph: ReadonlyMap<string, Iterable<string>>): string[][];
export function circlePath(graph: ReadonlyMap<string, Iterable<string>>, circle: readonly string[]): string[];
