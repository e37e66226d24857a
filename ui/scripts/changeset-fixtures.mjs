// Writes room/testdata/changesets.json and room/testdata/changeset-map.json:
// what the real @codemirror/state does with change sets (apply, toJSON, and
// compose and map), for room/changeset_test.go and room/changeset_map_test.go
// to replay against the Go implementation byte for byte. Deterministic: the
// same library version gives the same files. Run with `npm run fixtures` (or
// `node ui/scripts/changeset-fixtures.mjs` from the repository root) after
// upgrading @codemirror/state.

import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { ChangeSet, Text } from "@codemirror/state";

const SEED = 0xc40915;
const out = fileURLToPath(new URL("../../room/testdata/changesets.json", import.meta.url));
const stateVersion = JSON.parse(
  readFileSync(new URL("../node_modules/@codemirror/state/package.json", import.meta.url)),
).version;

// mulberry32: small, seedable, good enough to pick test cases.
let seed = SEED;
function random() {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const int = (n) => Math.floor(random() * n); // 0 <= int(n) < n
const pick = (xs) => xs[int(xs.length)];

// Pieces of text that stress UTF-16 counting and line splitting.
const fragments = [
  "plan",
  "the ",
  "step",
  " ",
  "  ",
  "\t",
  "# Heading",
  "- item",
  "`code`",
  "1. ",
  '<Callout type="note">',
  "</Callout>",
  "a & b",
  '"quoted"',
  "back\\slash",
  "é",
  "ß",
  "e\u0301",
  "a\u0308\u0304", // precomposed, combining marks
  "漢字",
  "かな",
  "한국어",
  "𠜎", // CJK, one of them outside the BMP
  "😀",
  "😁",
  "👍🏽",
  "👩‍👩‍👧",
  "👩‍👩‍👦",
  "🇫🇷",
  "🏳️‍🌈", // astral, ZWJ sequences, flags
  "\u2028",
  "\u0007",
  "\u001f",
  "\b",
  "\f",
  "\u007f", // JSON.stringify escapes some, not others
  "\n",
  "\n",
  "\n\n",
  "\r\n",
  "\r\n",
  "\r", // line endings, CodeMirror splits all three
];

function randomText(maxFragments) {
  let s = "";
  for (let n = int(maxFragments + 1); n > 0; n--) s += pick(fragments);
  return s;
}

// What CodeMirror makes of a string: EditorState.create({doc}) does exactly this.
const toText = (raw) => Text.of(raw.split(/\r\n?|\n/));

const isHigh = (c) => c >= 0xd800 && c <= 0xdbff;
const isLow = (c) => c >= 0xdc00 && c <= 0xdfff;
// A position between the halves of a surrogate pair: CodeMirror would accept a
// change there and produce broken UTF-16; the server refuses it.
const splitsPair = (s, pos) => isHigh(s.charCodeAt(pos - 1)) && isLow(s.charCodeAt(pos));

function boundaries(s) {
  const out = [];
  for (let pos = 0; pos <= s.length; pos++) if (!splitsPair(s, pos)) out.push(pos);
  return out;
}

// A random ChangeSet.of for doc: up to four non-overlapping changes, inserts,
// deletions and replacements, sometimes given out of order (which makes
// CodeMirror map and compose them).
function randomChanges(doc) {
  const s = doc.toString();
  const points = boundaries(s);
  const specs = [];
  let cursor = 0;
  for (let n = 1 + int(4); n > 0; n--) {
    const after = points.filter((p) => p >= cursor);
    if (after.length == 0) break;
    const from = pick(after.slice(0, 12));
    const to = random() < 0.35 ? from : pick(points.filter((p) => p >= from).slice(0, 10));
    const insert = random() < 0.25 && to > from ? "" : randomText(4);
    specs.push({ from, to, insert });
    cursor = to + 1;
  }
  if (random() < 0.2) specs.reverse();
  return ChangeSet.of(specs, doc.length);
}

// Checks what the fixtures promise the Go side: no boundary splits a pair, and
// the result is well-formed UTF-16 (so it survives as a Go string).
function wellFormed(changes, doc) {
  const a = doc.toString();
  let ok = true;
  changes.iterChanges((fromA, toA) => {
    if (splitsPair(a, fromA) || splitsPair(a, toA)) ok = false;
  }, true);
  return ok && changes.apply(doc).toString().isWellFormed();
}

const step = (changes, doc) => ({
  changes: JSON.stringify(changes.toJSON()),
  length: changes.length,
  newLength: changes.newLength,
  output: changes.apply(doc).toString(),
});

function record(name, raw, steps) {
  return { name, raw, doc: toText(raw).toString(), steps };
}

const apply = [];

// Hand-picked cases first, so a failure names something a reader recognises.
const handPicked = [
  ["crlf-insert-after-break", "a\r\nb", [{ from: 2, insert: "X" }]],
  ["crlf-delete-break", "a\r\nb\r\nc", [{ from: 1, to: 2 }]],
  ["lone-cr", "a\rb\rc", [{ from: 3, to: 4, insert: "Z" }]],
  ["cr-cr-lf", "x\r\r\ny", [{ from: 2, to: 3, insert: "-" }]],
  ["lf-cr", "x\n\ry", [{ from: 3, insert: "!" }]],
  ["trailing-cr", "end\r", [{ from: 4, insert: "more" }]],
  ["insert-crlf-text", "ab", [{ from: 1, insert: "1\r\n2\r3\n4" }]],
  ["empty-doc-insert", "", [{ from: 0, insert: "hello\nworld" }]],
  ["delete-everything", "gone 😀\r\n", [{ from: 0, to: 8 }]],
  ["replace-emoji", "a😀b", [{ from: 1, to: 3, insert: "😁" }]],
  ["inside-zwj-sequence", "👩‍👩‍👧", [{ from: 2, to: 3, insert: "+" }]],
  ["between-e-and-accent", "e\u0301", [{ from: 1, insert: "x" }]],
  ["astral-cjk", "𠜎漢", [{ from: 2, to: 3, insert: "字" }]],
  ["html-and-u2028", "<a>", [{ from: 3, insert: "&\u2028</a>" }]],
  [
    "many-changes",
    "0123456789",
    [
      { from: 1, to: 2 },
      { from: 4, insert: "x" },
      { from: 6, to: 9, insert: "yy\nzz" },
    ],
  ],
  [
    "out-of-order",
    "abcdef",
    [
      { from: 4, to: 5, insert: "E" },
      { from: 0, to: 1, insert: "A" },
    ],
  ],
  ["empty-lines-only", "", [{ from: 0, insert: "\n\n" }]],
];
for (const [name, raw, specs] of handPicked) {
  const doc = toText(raw);
  const changes = ChangeSet.of(specs, doc.length);
  if (!wellFormed(changes, doc)) throw new Error(`hand-picked case ${name} is not well formed`);
  apply.push(record(name, raw, [step(changes, doc)]));
}

// Fixed starting documents plus random ones, from empty to a few hundred units.
function randomRaw(i) {
  if (i % 25 == 0) return "";
  return randomText(i % 7 == 0 ? 60 : 16);
}

for (let i = 0; apply.length < 240; i++) {
  const raw = randomRaw(i);
  const doc = toText(raw);
  const changes = randomChanges(doc);
  if (!wellFormed(changes, doc)) continue;
  apply.push(record(`single-${i}`, raw, [step(changes, doc)]));
}

// Chains: each change applies to the previous one's result. Every chain is
// recorded twice: step by step and as one composed change set (a.compose(b)...).
for (let i = 0, chains = 0; chains < 60; i++) {
  const raw = randomRaw(i + 1);
  let doc = toText(raw);
  const steps = [];
  let composed = null;
  for (let n = 2 + int(4); n > 0; n--) {
    const changes = randomChanges(doc);
    if (!wellFormed(changes, doc)) break;
    steps.push(step(changes, doc));
    composed = composed ? composed.compose(changes) : changes;
    doc = changes.apply(doc);
  }
  if (steps.length < 2) continue;
  const first = toText(raw);
  if (composed.apply(first).toString() != doc.toString()) throw new Error("compose disagrees with the chain");
  apply.push(record(`chain-${chains}`, raw, steps));
  apply.push(record(`composed-${chains}`, raw, [step(composed, first)]));
  chains++;
}

// Diffs: the change set DiffChangeSet must produce, built here with the same
// rule (longest common prefix, then longest common suffix that does not
// overlap it, neither splitting a surrogate pair) through ChangeSet.of. The Go
// side must write these exact bytes, which proves CodeMirror accepts its output
// and turns `before` into `after`.
function diff(before, after) {
  let prefix = 0;
  while (prefix < before.length && prefix < after.length && before[prefix] == after[prefix]) prefix++;
  if (splitsPair(before, prefix) || splitsPair(after, prefix)) prefix--;
  let suffix = 0;
  const limit = Math.min(before.length, after.length) - prefix;
  while (suffix < limit && before[before.length - 1 - suffix] == after[after.length - 1 - suffix]) suffix++;
  if (splitsPair(before, before.length - suffix)) suffix--;
  const doc = Text.of(before.split("\n"));
  const changes = ChangeSet.of(
    [{ from: prefix, to: before.length - suffix, insert: after.slice(prefix, after.length - suffix) }],
    doc.length,
  );
  if (changes.apply(doc).toString() != after) throw new Error(`diff of ${JSON.stringify([before, after])} is wrong`);
  return JSON.stringify(changes.toJSON());
}

const diffs = [];
const diffPairs = [
  ["", ""],
  ["same", "same"],
  ["", "new"],
  ["old", ""],
  ["aa", "aaa"],
  ["aaa", "aa"],
  ["😀", "😁"],
  ["a😀b", "a😀😀b"],
  ["é", "è"],
  ["xé", "x©"],
  ["😀y", "🙀y"], // UTF-8 bytes in common ["👩‍👩‍👧", "👩‍👩‍👦"], ["x𠜎y", "x𠜎𠜎y"],
  ["line one\nline two", "line one\nline 2\nline three"],
  ["<b>", "<b>&amp;</b>"],
];
for (const [before, after] of diffPairs) diffs.push({ before, after, changes: diff(before, after) });
for (let i = 0; diffs.length < 100; i++) {
  const before = toText(randomRaw(i));
  const changes = randomChanges(before);
  if (!wellFormed(changes, before)) continue;
  const a = before.toString(),
    b = changes.apply(before).toString();
  diffs.push({ before: a, after: b, changes: diff(a, b) });
}

// Change sets applied to a document of another length: CodeMirror throws.
const wrongLength = [];
for (let i = 0; wrongLength.length < 20; i++) {
  const doc = toText(randomRaw(i + 3));
  const changes = randomChanges(doc);
  const s = doc.toString();
  const other = i % 2 == 0 || s.length == 0 ? s + "x" : s.slice(0, s.length - (splitsPair(s, s.length - 1) ? 2 : 1));
  try {
    changes.apply(toText(other));
  } catch (e) {
    wrongLength.push({ doc: other, changes: JSON.stringify(changes.toJSON()), error: e.message });
    continue;
  }
  throw new Error("CodeMirror applied a change set to a document of the wrong length");
}

// JSON that ChangeSet.fromJSON refuses; the Go side must refuse it too.
const invalid = [
  "null",
  "{}",
  '"text"',
  "1",
  "[null]",
  "[true]",
  '["a"]',
  "[{}]",
  "[[]]",
  "[[null]]",
  '[["a"]]',
  "[[1,2]]",
  '[[1,"a",null]]',
  '[[1,"a",["b"]]]',
  '[["1","a"]]',
];
for (const json of invalid) {
  let threw = false;
  try {
    ChangeSet.fromJSON(JSON.parse(json));
  } catch {
    threw = true;
  }
  if (!threw) throw new Error(`fromJSON accepted ${json}`);
}

// One fixture a line: readable, and a regeneration diffs line by line.
const lines = (xs) => "[\n" + xs.map((x) => JSON.stringify(x)).join(",\n") + "\n]";
const file = `{
"generator": "ui/scripts/changeset-fixtures.mjs",
"codemirrorState": ${JSON.stringify(stateVersion)},
"seed": ${SEED},
"apply": ${lines(apply)},
"diff": ${lines(diffs)},
"wrongLength": ${lines(wrongLength)},
"invalid": ${JSON.stringify(invalid)}
}
`;
writeFileSync(out, file);
console.log(
  `wrote ${out}: ${apply.length} apply, ${diffs.length} diff, ${wrongLength.length} wrong-length, ` +
    `${invalid.length} invalid fixtures, ${file.length} bytes`,
);

// ---------------------------------------------------------------------------
// Writes room/testdata/changeset-map.json: ChangeSet.compose and
// ChangeSet.map as the real library computes them, for
// room/changeset_map_test.go to replay byte for byte. These are the two
// operations @codemirror/collab's receiveUpdates and rebaseUpdates are made
// of. The generator is reseeded so that adding cases above leaves these alone.

const MAP_SEED = 0x6d6170;
seed = MAP_SEED;
const mapOut = fileURLToPath(new URL("../../room/testdata/changeset-map.json", import.meta.url));
const json = (changes) => JSON.stringify(changes.toJSON());

// A random change set built the way an editor's history builds one: one to
// three transactions composed. Composition leaves shapes ChangeSet.of never
// makes on its own (a deletion next to an insertion, a replacement split in
// two), which is what mapSet and composeSets must get right.
function randomHistory(doc) {
  let total = null;
  let cur = doc;
  for (let n = 1 + int(3); n > 0; n--) {
    const changes = randomChanges(cur);
    if (!wellFormed(changes, cur)) return null;
    total = total ? total.compose(changes) : changes;
    cur = changes.apply(cur);
  }
  return total;
}

// What CodeMirror throws, or null; the Go side must fail in the same cases.
function attempt(f) {
  try {
    return { value: f() };
  } catch (e) {
    return { error: e.message };
  }
}

// Hand-picked pairs first: ties, covering changes, and the shortcuts for
// empty sets, which return their argument without normalising it (written
// here as JSON, since ChangeSet.of always normalises).
const mapPicked = [
  // name, doc, a, b (a and b both apply to doc)
  ["same-place-inserts", "abc", [1, [0, "X"], 2], [1, [0, "Y"], 2]],
  ["insert-inside-deletion", "abcdef", [3, [0, "X"], 3], [1, [4], 1]],
  ["deletion-around-insert", "abcdef", [1, [4], 1], [3, [0, "X"], 3]],
  ["overlapping-deletions", "abcdef", [1, [3], 2], [2, [3], 1]],
  ["overlapping-replacements", "abcdef", [1, [3, "one"], 2], [2, [3, "two"], 1]],
  ["same-range-replacements", "abcdef", [2, [2, "P"], 2], [2, [2, "Q"], 2]],
  ["adjacent-changes", "abcdef", [2, [2, "P"], 2], [4, [1, "Q"], 1]],
  ["touching-insert-and-delete", "abcdef", [2, [0, "P"], 4], [2, [2], 2]],
  ["empty-doc-inserts", "", [[0, "a"]], [[0, "b", "c"]]],
  ["emoji-replacements", "a😀b👍🏽c", [1, [2, "😁"], 6], [3, [1], 5]],
  ["combining-marks", "e\u0301x", [1, [0, "\u0308"], 2], [1, [1], 1]],
  ["multi-line", "one\ntwo\nthree", [4, [4, "2", "2b", ""], 5], [3, [5, ""], 5]],
  ["a-empty", "abc", [3], [1, [1, "B"], 1]],
  ["b-empty", "abc", [1, [1, "B"], 1], [3]],
  ["both-empty", "abc", [3], [3]],
  ["zero-length-empty", "", [], [[0, "x"]]],
  ["unnormalised-a", "abcde", [2, 0, [0, "x"], [0, "y"], 3], [1, [3], 1]],
  ["unnormalised-kept-runs", "abcde", [2, 3], [1, [1], 3]],
  ["unnormalised-over-empty", "abcde", [2, [0], 1, [0, "x"], 2], [5]],
  ["zero-length-deletions", "abc", [[0], 1, [0], 2], [1, [0, "x"], 2]],
];

const composePicked = [
  // name, doc, a (applies to doc), b (applies to a's result)
  ["delete-part-of-insert", "ab", [1, [0, "XYZ"], 1], [2, [1], 2]],
  ["replace-part-of-insert", "ab", [1, [0, "XYZ"], 1], [2, [2, "Q"], 1]],
  ["keep-emoji-of-insert", "ab", [1, [0, "😀x😁"], 1], [1, [2], 4]],
  ["insert-into-insert", "ab", [1, [0, "XY"], 1], [2, [0, "Q"], 2]],
  ["delete-across-insert-and-doc", "abcd", [1, [1, "XY"], 2], [2, [2], 1]],
  ["delete-then-insert-same-place", "abc", [1, [1], 1], [1, [0, "B"], 1]],
  ["multi-line-insert-cut", "ab", [1, [0, "one", "two"], 1], [2, [4, ""], 3]],
  ["a-empty", "abc", [3], [1, [1, "B"], 1]],
  ["b-empty", "abc", [1, [1, "B"], 1], [3]],
  ["unnormalised-a-empty", "abc", [3], [1, 0, [1, "B"], 1]],
  ["unnormalised-kept-runs", "abcde", [2, 3], [1, [1], 3]],
  ["zero-length-deletions", "abc", [[0], 1, [0], 2], [1, [0, "x"], 2]],
];

function mapRecord(name, doc, a, b) {
  if (a.length != doc.length || b.length != doc.length) throw new Error(`${name}: a or b does not fit the document`);
  const r = { name, doc: doc.toString(), a: json(a), b: json(b) };
  for (const [key, x, y, before] of [
    ["aOverB", a, b, false],
    ["aOverBBefore", a, b, true],
    ["bOverA", b, a, false],
    ["bOverABefore", b, a, true],
  ]) {
    const mapped = x.map(y, before);
    r[key] = json(mapped);
  }
  // Both orders reach the same text: the point of mapping.
  const viaA = a.compose(b.map(a)).apply(doc).toString();
  const viaB = b.compose(a.map(b, true)).apply(doc).toString();
  if (viaA != viaB) throw new Error(`${name}: map does not converge`);
  r.output = viaA;
  return r;
}

function composeRecord(name, doc, a, b) {
  if (a.length != doc.length || b.length != a.newLength) throw new Error(`${name}: a or b does not fit`);
  const composed = a.compose(b);
  const output = composed.apply(doc).toString();
  if (output != b.apply(a.apply(doc)).toString()) throw new Error(`${name}: compose disagrees with the chain`);
  return { name, doc: doc.toString(), a: json(a), b: json(b), result: json(composed), output };
}

const maps = [];
for (const [name, raw, a, b] of mapPicked) {
  const doc = toText(raw);
  maps.push(mapRecord(name, doc, ChangeSet.fromJSON(a), ChangeSet.fromJSON(b)));
}
const composes = [];
for (const [name, raw, a, b] of composePicked) {
  const doc = toText(raw);
  composes.push(composeRecord(name, doc, ChangeSet.fromJSON(a), ChangeSet.fromJSON(b)));
}

// Random pairs of concurrent histories on one document. A pair is kept when
// every result is well-formed UTF-16 (no change between the halves of a
// pair), which is all the Go side can hold.
const mapFits = (r, doc) => {
  for (const [x, y, key] of [
    ["a", "b", "aOverB"],
    ["a", "b", "aOverBBefore"],
    ["b", "a", "bOverA"],
    ["b", "a", "bOverABefore"],
  ]) {
    const moved = ChangeSet.fromJSON(JSON.parse(r[key]));
    const base = ChangeSet.fromJSON(JSON.parse(r[y])).apply(doc);
    if (!wellFormed(moved, base)) return false;
  }
  return true;
};
for (let i = 0; maps.length < mapPicked.length + 400; i++) {
  const doc = toText(randomRaw(i));
  const a = randomHistory(doc),
    b = randomHistory(doc);
  if (!a || !b) continue;
  const r = mapRecord(`random-${i}`, doc, a, b);
  if (mapFits(r, doc)) maps.push(r);
}

// Random sequential pairs: b applies to what a produced.
for (let i = 0; composes.length < composePicked.length + 400; i++) {
  const doc = toText(randomRaw(i));
  const a = randomHistory(doc);
  if (!a) continue;
  const mid = a.apply(doc);
  const b = randomHistory(mid);
  if (!b) continue;
  composes.push(composeRecord(`random-${i}`, doc, a, b));
}

// Sets that do not fit together: CodeMirror throws, and so must Go.
const mismatched = [];
for (let i = 0; mismatched.length < 20; i++) {
  const doc = toText(randomRaw(i + 7) + "x");
  const a = randomChanges(doc);
  const other = toText(doc.toString() + (i % 2 ? "y" : "yz"));
  const b = randomChanges(other);
  if (a.empty || b.empty) continue; // CodeMirror skips the check for those
  const op = i % 2 ? "map" : "compose";
  if (op == "compose" && a.newLength == b.length) continue; // they happen to fit
  const r = attempt(() => (op == "map" ? a.map(b) : a.compose(b)));
  if (!r.error) throw new Error(`${op} accepted change sets of different lengths`);
  mismatched.push({ op, a: json(a), b: json(b), error: r.error });
}

const mapFile = `{
"generator": "ui/scripts/changeset-fixtures.mjs",
"codemirrorState": ${JSON.stringify(stateVersion)},
"seed": ${MAP_SEED},
"map": ${lines(maps)},
"compose": ${lines(composes)},
"mismatched": ${lines(mismatched)}
}
`;
writeFileSync(mapOut, mapFile);
console.log(
  `wrote ${mapOut}: ${maps.length} map (each both ways, before and after), ${composes.length} compose, ` +
    `${mismatched.length} mismatched fixtures, ${mapFile.length} bytes`,
);
