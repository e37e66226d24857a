// `#` references in the composer (src/workspace/references.tsx): which #
// is being typed, what choosing a document leaves in the text, and the
// order documents are offered in.

import { test } from "node:test";
import assert from "node:assert/strict";
import {
  activeReference,
  choosePassage,
  chooseReference,
  firstWords,
  ownFirst,
  passageLabel,
  passageMatches,
  referenceKey,
  referenceQuery,
  referenceRequests,
  type PassageChoice,
} from "../src/workspace/references";

test("a # at the start, after a space or a bracket, up to the caret, is a reference being typed", () => {
  assert.deepEqual(referenceQuery("#", 1), { start: 0, query: "" });
  assert.deepEqual(referenceQuery("see #Laun", 9), { start: 4, query: "Laun" });
  assert.deepEqual(referenceQuery("see #Launch plan", 16), { start: 4, query: "Launch plan" });
  assert.deepEqual(referenceQuery("(#bud", 5), { start: 1, query: "bud" });
  // Only what comes before the caret counts.
  assert.deepEqual(referenceQuery("see #Launch plan", 8), { start: 4, query: "Lau" });
});

test("a # inside a word, in a heading's run, past a line break or long words is not", () => {
  assert.equal(referenceQuery("issue#12", 8), null);
  assert.equal(referenceQuery("## heading", 10), null);
  assert.equal(referenceQuery("#plan\nmore", 10), null);
  assert.equal(referenceQuery("# heading", 9), null);
  assert.equal(referenceQuery("#" + "x".repeat(61), 62), null);
  assert.equal(referenceQuery("no hash", 7), null);
});

test("choosing a document puts #title and one space in place of what was typed", () => {
  const q = referenceQuery("compare #lau with this", 12)!;
  assert.deepEqual(chooseReference("compare #lau with this", q, "Launch plan"), {
    text: "compare #Launch plan with this",
    caret: "compare #Launch plan ".length,
  });
  const end = referenceQuery("see #b", 6)!;
  assert.deepEqual(chooseReference("see #b", end, "Budget"), { text: "see #Budget ", caret: 12 });
});

test("this repository's documents come first, each group in its order", () => {
  const docs = [
    { id: "1", repository: "acme/web" },
    { id: "2", repository: "octo/plans" },
    { id: "3", repository: "acme/web" },
    { id: "4", repository: "octo/plans" },
  ];
  assert.deepEqual(
    ownFirst(docs, "octo/plans").map((d) => d.id),
    ["2", "4", "1", "3"],
  );
});

test("after a document is chosen, the words that follow it do not ask for another", () => {
  const text = "Compare with #Travel notes ";
  assert.equal(activeReference(text, text.length, ["Travel notes"]), null);
  assert.equal(activeReference(text + "please", text.length + 6, ["Travel notes"]), null);
  // Another # asks again; so does one before a title nobody chose.
  assert.deepEqual(activeReference(text + "and #bud", text.length + 8, ["Travel notes"]), { start: 31, query: "bud" });
  assert.deepEqual(activeReference(text, text.length, []), { start: 13, query: "Travel notes " });
});

const block = (index: number, heading: string, words: string, type = "paragraph"): PassageChoice => ({
  index,
  type,
  from: index * 10,
  to: index * 10 + 5,
  startLine: index + 1,
  endLine: index + 1,
  heading,
  words,
});

test("a passage's chip reads title › heading: “first words…”", () => {
  assert.equal(
    passageLabel("Launch plan", "Goals", "Ship the beta to ten teams before the end of June, then ask them."),
    "Launch plan › Goals: “Ship the beta to ten teams before the…”",
  );
  assert.equal(passageLabel("Launch plan", undefined, "Ship."), "Launch plan › “Ship.”");
  assert.equal(firstWords("  short \n text "), "short text");
  // One long word is cut where it must be.
  assert.equal(firstWords("x".repeat(50), 10), "x".repeat(10) + "…");
});

test("the passage search finds blocks with every word, in the heading or the first words, any case", () => {
  const blocks = [
    block(0, "Launch plan", "Launch plan", "heading"),
    block(1, "Goals", "Ship the beta."),
    block(2, "Risks", "The API may change."),
  ];
  assert.deepEqual(
    passageMatches(blocks, "").map((b) => b.index),
    [0, 1, 2],
  );
  assert.deepEqual(
    passageMatches(blocks, "goals").map((b) => b.index),
    [1],
  );
  assert.deepEqual(
    passageMatches(blocks, "risks API").map((b) => b.index),
    [2],
  );
  assert.deepEqual(
    passageMatches(blocks, "beta api").map((b) => b.index),
    [],
  );
});

test("a chosen passage takes the place of the whole document its choice added, once", () => {
  const doc = { channelId: "d1", title: "Launch plan" };
  const other = { channelId: "d2", title: "Budget" };
  const p = { from: 10, to: 40, revision: 3, heading: "Goals", words: "Ship the beta." };
  const refs = choosePassage([other, doc], { ...doc, addedWhole: true }, p);
  assert.deepEqual(refs, [other, { ...doc, passage: p }]);
  // Chosen again, nothing changes; a document referred to before keeps its whole reference.
  assert.deepEqual(choosePassage(refs, { ...doc, addedWhole: false }, p), refs);
  assert.deepEqual(choosePassage([doc], { ...doc, addedWhole: false }, p), [doc, { ...doc, passage: p }]);
  assert.notEqual(referenceKey(doc), referenceKey({ ...doc, passage: p }));
  assert.deepEqual(referenceRequests([other, { ...doc, passage: p }]), [
    { kind: "document", channelId: "d2" },
    { kind: "passage", channelId: "d1", from: 10, to: 40, revision: 3 },
  ]);
});
