// The import graph of the UI's sources and the circles in it, as pure
// functions (no file system), so that tests/cycles.test.ts can run them on a
// graph in memory. scripts/import-cycles.mjs applies them to src/.
//
// Type-only imports count: a circle through `import type` is still a circle
// in how the modules are laid out, even though the bundle drops it.

// relativeImports lists the specifiers starting with "." that a TypeScript
// source imports: `import ... from`, `import type ... from`, a bare
// `import "..."`, `export ... from`, and `import("...")` with a literal.
// Comments, strings and regular expressions are skipped, so a specifier
// written in one of them does not count.
export function relativeImports(source) {
  const toks = tokens(source);
  const out = [];
  const str = (i) => (toks[i]?.kind === "string" ? toks[i].value : undefined);
  for (let i = 0; i < toks.length; i++) {
    const t = toks[i];
    if (t.kind !== "word" || (t.value !== "import" && t.value !== "export")) continue;
    if (toks[i - 1]?.kind === "punct" && toks[i - 1].value === ".") continue; // a property named import
    let spec;
    if (t.value === "import" && toks[i + 1]?.value === "(") {
      if (toks[i + 3]?.value === ")" || toks[i + 3]?.value === ",") spec = str(i + 2);
    } else if (t.value === "import" && str(i + 1) !== undefined) {
      spec = str(i + 1);
    } else {
      // The clause before `from`: names, braces, commas, `*`, `as`, `type`.
      for (let j = i + 1; j < toks.length; j++) {
        const k = toks[j];
        if (k.kind === "word" && k.value === "from" && str(j + 1) !== undefined) {
          spec = str(j + 1);
          break;
        }
        if (k.kind !== "word" && !["{", "}", ",", "*"].includes(k.value)) break;
      }
    }
    if (spec !== undefined && spec.startsWith(".")) out.push(spec);
  }
  return out;
}

// resolveImport is the file among files (paths with "/", relative to one
// root) that spec, imported by the file from, names: the path itself, or
// with .ts, .tsx, /index.ts or /index.tsx added (a ".js" ending stands for
// ".ts" as in TypeScript). Anything else, a stylesheet say, is undefined.
export function resolveImport(from, spec, files) {
  const base = normalize(dirname(from) + "/" + spec);
  const stem = base.replace(/\.(m?js|jsx)$/, "");
  const candidates = [
    base,
    base + ".ts",
    base + ".tsx",
    base + "/index.ts",
    base + "/index.tsx",
    stem + ".ts",
    stem + ".tsx",
  ];
  return candidates.find((c) => files.has(c));
}

// importGraph maps each file of sources (path → text) to the files among
// them it imports, each once, in the order of first import.
export function importGraph(sources) {
  const files = new Set(sources.keys());
  const graph = new Map();
  for (const [file, text] of sources) {
    const to = new Set();
    for (const spec of relativeImports(text)) {
      const r = resolveImport(file, spec, files);
      if (r !== undefined) to.add(r);
    }
    graph.set(file, [...to]);
  }
  return graph;
}

// importCycles is every circle of graph (file → files it imports): each
// strongly connected component of more than one file, and each file that
// imports itself. Each circle's files are sorted, and so are the circles.
// Tarjan's algorithm, without recursion, so a long chain cannot overflow
// the stack.
export function importCycles(graph) {
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const circles = [];
  let next = 0;
  const edges = (v) => [...(graph.get(v) ?? [])];
  for (const root of graph.keys()) {
    if (index.has(root)) continue;
    const work = [{ v: root, out: edges(root), i: 0 }];
    index.set(root, next);
    low.set(root, next++);
    stack.push(root);
    onStack.add(root);
    while (work.length) {
      const top = work[work.length - 1];
      if (top.i < top.out.length) {
        const w = top.out[top.i++];
        if (!index.has(w)) {
          index.set(w, next);
          low.set(w, next++);
          stack.push(w);
          onStack.add(w);
          work.push({ v: w, out: edges(w), i: 0 });
        } else if (onStack.has(w)) {
          low.set(top.v, Math.min(low.get(top.v), index.get(w)));
        }
        continue;
      }
      work.pop();
      const v = top.v;
      if (work.length) {
        const parent = work[work.length - 1].v;
        low.set(parent, Math.min(low.get(parent), low.get(v)));
      }
      if (low.get(v) !== index.get(v)) continue;
      const component = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || top.out.includes(v)) circles.push(component.sort());
    }
  }
  return circles.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

// circlePath is one way round a circle: files from its first file back to
// it, each importing the next, through files of the circle only.
export function circlePath(graph, circle) {
  const inside = new Set(circle);
  const start = circle[0];
  const prev = new Map();
  const queue = [start];
  for (let q = 0; q < queue.length; q++) {
    for (const w of graph.get(queue[q]) ?? []) {
      if (w === start) {
        const path = [start];
        for (let v = queue[q]; v !== start; v = prev.get(v)) path.splice(1, 0, v);
        return [...path, start];
      }
      if (inside.has(w) && !prev.has(w)) {
        prev.set(w, queue[q]);
        queue.push(w);
      }
    }
  }
  return [start, start];
}

function dirname(p) {
  const i = p.lastIndexOf("/");
  return i < 0 ? "." : p.slice(0, i);
}

function normalize(p) {
  const out = [];
  for (const part of p.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === ".." && out.length && out[out.length - 1] !== "..") out.pop();
    else out.push(part);
  }
  return out.join("/");
}

// tokens splits TypeScript into what relativeImports needs: words, strings
// (with their value; a template without ${} is a string too) and single
// punctuation characters; comments, regular expressions and the insides of
// templates are dropped. A quote or backtick in JSX text (as in "it's")
// starts a string that the end of the line closes, so it cannot hide more
// than the rest of that line.
function tokens(src) {
  const out = [];
  const n = src.length;
  let i = 0;
  const regexAfter = (t) =>
    !t ||
    (t.kind === "punct" && !")]}".includes(t.value)) ||
    (t.kind === "word" &&
      /^(return|typeof|instanceof|in|of|new|delete|void|throw|case|do|else|yield|await)$/.test(t.value));
  while (i < n) {
    const c = src[i];
    if (/\s/.test(c)) {
      i++;
    } else if (c === "/" && src[i + 1] === "/") {
      while (i < n && src[i] !== "\n") i++;
    } else if (c === "/" && src[i + 1] === "*") {
      const end = src.indexOf("*/", i + 2);
      i = end < 0 ? n : end + 2;
    } else if (c === "'" || c === '"' || c === "`") {
      let value = "";
      let plain = true;
      let depth = 0;
      i++;
      while (i < n && (src[i] !== c || depth > 0) && (c === "`" || src[i] !== "\n")) {
        if (src[i] === "\\") {
          value += src[i + 1] ?? "";
          i += 2;
          continue;
        }
        if (c === "`" && src[i] === "$" && src[i + 1] === "{") {
          plain = false;
          depth++;
          i += 2;
          continue;
        }
        if (depth > 0 && src[i] === "}") depth--;
        else if (depth > 0 && src[i] === "{") depth++;
        value += src[i++];
      }
      i++;
      out.push(plain ? { kind: "string", value } : { kind: "template", value: "" });
    } else if (c === "/" && regexAfter(out[out.length - 1])) {
      let inClass = false;
      i++;
      while (i < n && src[i] !== "\n" && (src[i] !== "/" || inClass)) {
        if (src[i] === "\\") i++;
        else if (src[i] === "[") inClass = true;
        else if (src[i] === "]") inClass = false;
        i++;
      }
      i++;
      while (i < n && /[a-z]/i.test(src[i])) i++;
      out.push({ kind: "regex", value: "" });
    } else if (/[\w$]/.test(c)) {
      let j = i + 1;
      while (j < n && /[\w$]/.test(src[j])) j++;
      out.push({ kind: "word", value: src.slice(i, j) });
      i = j;
    } else {
      out.push({ kind: "punct", value: c });
      i++;
    }
  }
  return out;
}
