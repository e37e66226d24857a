// Chopin's own words for refusals (src/workspace/refusals.ts): a person
// never reads the agent protocol's wording, and is told what to do next.

import { test } from "node:test";
import assert from "node:assert/strict";
import { acceptWords, notSentWords } from "../src/workspace/refusals";

test("a message refused for want of a Planner says so in the product's terms", () => {
  const none = notSentWords({ state: "none" });
  assert.match(none, /^Not sent: no Planner is attached/);
  assert.ok(none.includes("Connect a Planner"));
  assert.ok(!/machine|agent client|checkout/.test(none), none);
  const away = notSentWords({ state: "disconnected", login: "ada" });
  assert.ok(away.includes("@ada's Planner is offline"), away);
});

test("Accept waits for a Planner, and says so", () => {
  assert.equal(acceptWords({ state: "attached", login: "ada" }), "");
  assert.match(acceptWords({ state: "none" }), /No Planner is attached.*connect a Planner/);
  assert.match(acceptWords({ state: "grace" }), /^The Planner is offline/);
});
