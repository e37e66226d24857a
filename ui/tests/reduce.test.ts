// The room reducer (src/workspace/reduce.ts) against frames shaped as the
// server sends them (docs/room-protocol.md): streaming replies, tool rows,
// decisions opening and closing, the Planner's state, and a reconnect's
// snapshots replacing what the tab held.

import { test } from "node:test";
import assert from "node:assert/strict";
import type { Channel } from "../src/api";
import type { Decision, Job, Message, PlannerStatus, RunCard, ServerFrame, ToolRow } from "../src/protocol";
import {
  descriptionWork,
  initialState,
  plannerFetched,
  reduce,
  withConnection,
  withOlder,
  type RoomState,
} from "../src/workspace/reduce";

const channel: Channel = {
  id: "c1",
  title: "Launch",
  slug: "launch",
  repository: "octo/plans",
  url: "/documents/octo/plans/launch",
  archivedAt: null,
  createdAt: "2026-11-30T05:00:00.000Z",
  updatedAt: "2026-11-30T05:00:00.000Z",
  descriptionRevision: 0,
};

const fresh = () => initialState(channel, "connecting");

// play applies frames in order, checking on the way that no state it is
// given is changed in place.
function play(s: RoomState, ...frames: ServerFrame[]): RoomState {
  for (const f of frames) s = reduce(deepFreeze(s), f);
  return s;
}

function deepFreeze<T>(v: T): T {
  if (v && typeof v === "object" && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const x of Object.values(v)) deepFreeze(x);
  }
  return v;
}

const person = (seq: number, text: string, id = "m" + seq): Message => ({
  id,
  seq,
  role: "person",
  author: "ada",
  text,
  createdAt: 1796016432000 + seq,
  updatedAt: 1796016432000 + seq,
});

const streaming = (seq: number, id = "r" + seq): Message => ({
  id,
  seq,
  role: "planner",
  author: "ada",
  text: "",
  status: "streaming",
  createdAt: 1796016432000 + seq,
  updatedAt: 1796016432000 + seq,
});

const tool = (id: string, status: ToolRow["status"], extra: Partial<ToolRow> = {}): ToolRow => ({
  id,
  name: "read_plan",
  host: true,
  status,
  durationMs: status === "running" ? 0 : 2,
  input: {},
  ...extra,
});

const card = (id: string, createdAt: number, extra: Partial<Decision> = {}): Decision => ({
  id,
  request: "q1",
  index: 0,
  call: { method: "confirm", title: "Ship it?", message: "" },
  status: "open",
  block: -1,
  createdAt,
  updatedAt: createdAt,
  ...extra,
});

const run = (id: string, status: RunCard["status"]): RunCard => ({
  id,
  name: "Release",
  status,
  started: 1796016432,
  updated: 1796016440,
  stages: [{ id: "build", name: "Build", status: "running" }],
  waiting: 0,
});

const find = (s: RoomState, id: string) => s.messages.find((m) => m.id === id)!;

test("initial state: an archived document opens read-only, the Planner unknown", () => {
  const s = initialState({ ...channel, archivedAt: "2026-11-30T06:00:00.000Z" }, "connecting");
  assert.equal(s.canEdit, false);
  assert.equal(s.canManage, true);
  assert.equal(s.members, 1);
  assert.equal(s.planner.state, "unknown");
  assert.deepEqual(s.messages, []);
  assert.equal(fresh().canEdit, true);
});

test("session:hello takes who I am and the channel, its url as a path", () => {
  const s = play(fresh(), {
    type: "session:hello",
    login: "ada",
    name: "Ada",
    canEdit: false,
    canManage: true,
    channel: {
      id: "c1",
      title: "Launch v2",
      slug: "launch-v2",
      repository: "octo/plans",
      url: "http://127.0.0.1:8787/documents/octo/plans/launch-v2",
      descriptionRevision: 0,
    },
  });
  assert.equal(s.canEdit, false);
  assert.equal(s.canManage, true);
  assert.equal(s.channel.title, "Launch v2");
  assert.equal(s.channel.url, "/documents/octo/plans/launch-v2");
  // What the catalog said and the room does not is kept.
  assert.equal(s.channel.createdAt, channel.createdAt);
  assert.equal(s.channel.archivedAt, null);
});

test("session:channel: archive sets archivedAt and read-only; restore clears it", () => {
  const url = "http://127.0.0.1:8787/documents/octo/plans/launch";
  const archived = play(fresh(), {
    type: "session:channel",
    canEdit: false,
    channel: { ...channel, url, archivedAt: "2026-11-30T06:00:00.000Z" },
  });
  assert.equal(archived.canEdit, false);
  assert.equal(archived.channel.archivedAt, "2026-11-30T06:00:00.000Z");
  assert.equal(archived.channel.url, "/documents/octo/plans/launch");

  const restored = play(archived, {
    type: "session:channel",
    canEdit: true,
    channel: { id: "c1", title: "Launch", slug: "launch", repository: "octo/plans", url, descriptionRevision: 0 },
  });
  assert.equal(restored.canEdit, true);
  assert.equal(restored.channel.archivedAt, null);
});

test("session:presence counts the room's sockets; the connection follows the socket", () => {
  const s = play(fresh(), { type: "session:presence", members: 3 });
  assert.equal(s.members, 3);
  assert.equal(withConnection(s, "offline").connection, "offline");
  assert.equal(withConnection(s, "offline").members, 3);
});

test("chat:message adds in seq order and replaces a message with the same id", () => {
  let s = play(
    fresh(),
    { type: "chat:snapshot", messages: [person(1, "Morning")] },
    { type: "chat:message", message: person(3, "third") },
    { type: "chat:message", message: person(2, "second") },
  );
  assert.deepEqual(
    s.messages.map((m) => m.seq),
    [1, 2, 3],
  );
  s = play(s, { type: "chat:message", message: { ...person(2, "second, edited"), updatedAt: 9 } });
  assert.deepEqual(
    s.messages.map((m) => m.text),
    ["Morning", "second, edited", "third"],
  );
});

test("older pages go before the snapshot's messages, and the cursor follows them", () => {
  let s = play(fresh(), { type: "chat:snapshot", messages: [person(5, "five"), person(6, "six")], before: "c5" });
  assert.equal(s.older, "c5");
  const six = s.messages[1];
  s = withOlder(s, [person(3, "three"), person(4, "four"), person(5, "five again")], "c3");
  assert.deepEqual(
    s.messages.map((m) => m.text),
    ["three", "four", "five", "six"],
  );
  assert.equal(s.messages[3], six); // a message it had is the same object: it does not render again
  assert.equal(s.older, "c3");
  s = withOlder(s, [person(1, "one")], null);
  assert.equal(s.older, null);
  assert.equal(s.messages[0].text, "one");
  // A reconnect's snapshot starts again from its own cursor.
  s = play(s, { type: "chat:snapshot", messages: [person(6, "six")], before: "c6" });
  assert.equal(s.older, "c6");
});

test("a streaming reply grows by text deltas, each at the length it had", () => {
  const s = play(
    fresh(),
    { type: "chat:snapshot", messages: [person(1, "@chopin draft the rollout"), streaming(2)] },
    { type: "chat:delta", message: "r2", field: "text", at: 0, delta: "Here is " },
    { type: "chat:delta", message: "r2", field: "text", at: 8, delta: "a rollout 👋" },
    // The emoji is two UTF-16 code units, as the server counts "at".
    { type: "chat:delta", message: "r2", field: "text", at: 20, delta: "." },
  );
  assert.equal(find(s, "r2").text, "Here is a rollout 👋.");
  assert.equal(find(s, "r2").status, "streaming");
  assert.equal(find(s, "m1").text, "@chopin draft the rollout");
});

test("a delta after a missed one is dropped until the final message", () => {
  let s = play(
    fresh(),
    { type: "chat:snapshot", messages: [streaming(2)] },
    { type: "chat:delta", message: "r2", field: "text", at: 0, delta: "Hello" },
    { type: "chat:delta", message: "r2", field: "text", at: 9, delta: " again" },
  );
  assert.equal(find(s, "r2").text, "Hello");
  s = play(s, {
    type: "chat:message",
    message: { ...streaming(2), text: "Hello there, again", status: "done", details: { reasoning: "Short." } },
  });
  assert.equal(find(s, "r2").text, "Hello there, again");
  assert.equal(find(s, "r2").status, "done");
  assert.equal(s.messages.length, 1);
});

test("reasoning deltas grow details.reasoning and leave the text alone", () => {
  const s = play(
    fresh(),
    { type: "chat:snapshot", messages: [streaming(2)] },
    { type: "chat:delta", message: "r2", field: "reasoning", at: 0, delta: "The plan " },
    { type: "chat:delta", message: "r2", field: "reasoning", at: 9, delta: "needs a rollout." },
    { type: "chat:delta", message: "r2", field: "reasoning", at: 3, delta: "stale" },
  );
  assert.equal(find(s, "r2").details?.reasoning, "The plan needs a rollout.");
  assert.equal(find(s, "r2").text, "");
});

test("frames about a message the tab does not hold change nothing", () => {
  const before = play(fresh(), { type: "chat:snapshot", messages: [streaming(2)] });
  const after = play(
    before,
    { type: "chat:delta", message: "gone", field: "text", at: 0, delta: "x" },
    { type: "chat:tool", message: "gone", tool: tool("call-1", "running") },
    { type: "chat:removed", message: "gone" },
  );
  assert.deepEqual(after.messages, before.messages);
});

test("chat:tool adds rows in the order the calls started; the same id replaces its row", () => {
  const s = play(
    fresh(),
    { type: "chat:snapshot", messages: [streaming(2)] },
    { type: "chat:tool", message: "r2", tool: tool("call-1", "running") },
    { type: "chat:tool", message: "r2", tool: tool("call-2", "running", { name: "edit_plan" }) },
    { type: "chat:tool", message: "r2", tool: tool("call-1", "done", { result: "document: Launch" }) },
    {
      type: "chat:tool",
      message: "r2",
      tool: tool("call-2", "failed", {
        name: "edit_plan",
        error: { code: "stale-revision", kind: "StaleRevision", message: "The plan moved on." },
      }),
    },
  );
  const rows = find(s, "r2").details?.tools ?? [];
  assert.deepEqual(
    rows.map((r) => [r.id, r.name, r.status]),
    [
      ["call-1", "read_plan", "done"],
      ["call-2", "edit_plan", "failed"],
    ],
  );
  assert.equal(rows[0].result, "document: Launch");
  assert.equal(rows[1].error?.kind, "StaleRevision");
});

test("chat:images replaces the reply's images and refused images, keeping its other details", () => {
  const image = { path: "/images/" + "a".repeat(64) + ".png", mimeType: "image/png", width: 640, height: 480 };
  const refused = { reason: "Image couldn't be shown: its type, image/svg+xml, is not one Chat shows.", before: 1 };
  let s = play(
    fresh(),
    { type: "chat:snapshot", messages: [streaming(2)] },
    { type: "chat:tool", message: "r2", tool: tool("call-1", "done") },
    { type: "chat:images", message: "r2", images: [image], refusedImages: [] },
  );
  assert.deepEqual(find(s, "r2").details?.images, [image]);
  s = play(s, {
    type: "chat:images",
    message: "r2",
    images: [image, { ...image, alt: "A red box" }],
    refusedImages: [refused],
  });
  const d = find(s, "r2").details!;
  assert.equal(d.images?.length, 2);
  assert.deepEqual(d.refusedImages, [refused]);
  assert.equal(d.tools?.length, 1);
});

test("chat:removed drops a retried reply", () => {
  const s = play(
    fresh(),
    { type: "chat:snapshot", messages: [person(1, "@chopin hi"), { ...streaming(2), status: "failed" }] },
    { type: "chat:removed", message: "r2" },
  );
  assert.deepEqual(
    s.messages.map((m) => m.id),
    ["m1"],
  );
});

test("a reconnect's snapshots replace what the tab held", () => {
  const before = play(
    fresh(),
    { type: "chat:snapshot", messages: [person(1, "one"), streaming(2)] },
    { type: "chat:delta", message: "r2", field: "text", at: 0, delta: "Partial" },
    { type: "decisions:snapshot", decisions: [card("d1", 10)] },
  );
  // Offline meanwhile: the reply went on, a message was retracted, the card
  // was answered. The snapshots say how things are now.
  const after = play(
    withConnection(before, "online"),
    { type: "chat:snapshot", messages: [{ ...streaming(2), text: "Partial text, further on" }] },
    { type: "decisions:snapshot", decisions: [card("d1", 10, { status: "decided", answer: { yes: true } })] },
  );
  assert.deepEqual(
    after.messages.map((m) => [m.id, m.text]),
    [["r2", "Partial text, further on"]],
  );
  assert.equal(after.decisions[0].status, "decided");
  // Deltas go on from the snapshot's text.
  const grown = play(after, { type: "chat:delta", message: "r2", field: "text", at: 24, delta: "!" });
  assert.equal(find(grown, "r2").text, "Partial text, further on!");
});

test("decision:update opens cards in the order asked and closes them in place", () => {
  let s = play(
    fresh(),
    { type: "decisions:snapshot", decisions: [card("d1", 10)] },
    { type: "decision:update", decision: card("d3", 30) },
    { type: "decision:update", decision: card("d2", 20) },
  );
  assert.deepEqual(
    s.decisions.map((d) => d.id),
    ["d1", "d2", "d3"],
  );
  s = play(
    s,
    {
      type: "decision:update",
      decision: card("d2", 20, { status: "decided", answer: { yes: false }, answeredBy: "ada", updatedAt: 25 }),
    },
    { type: "decision:update", decision: card("d3", 30, { status: "expired", updatedAt: 35 }) },
  );
  assert.deepEqual(
    s.decisions.map((d) => [d.id, d.status]),
    [
      ["d1", "open"],
      ["d2", "decided"],
      ["d3", "expired"],
    ],
  );
  assert.equal(s.decisions[1].answeredBy, "ada");
});

test("planner:status replaces the Planner; planner:runs replaces only its run cards", () => {
  const attached: PlannerStatus = {
    state: "attached",
    login: "ada",
    features: ["run-stage-deltas"],
    since: "2026-11-30T05:20:00.000Z",
    runs: [run("w1", "running")],
  };
  let s = play(fresh(), { type: "planner:status", planner: attached });
  assert.deepEqual(s.planner, attached);
  s = play(s, { type: "planner:runs", runs: [run("w1", "paused"), run("w2", "running")] });
  assert.equal(s.planner.state, "attached");
  assert.equal(s.planner.login, "ada");
  assert.deepEqual(
    s.planner.runs?.map((r) => [r.id, r.status]),
    [
      ["w1", "paused"],
      ["w2", "running"],
    ],
  );
  s = play(s, {
    type: "planner:status",
    planner: { state: "grace", login: "ada", until: "2026-11-30T05:30:00.000Z", runs: [] },
  });
  assert.equal(s.planner.state, "grace");
  assert.equal(s.planner.until, "2026-11-30T05:30:00.000Z");
  assert.equal(s.planner.since, undefined);
});

test("the Planner over HTTP counts only until planner:status says, and keeps run cards that came first", () => {
  const http: PlannerStatus = { state: "attached", login: "ada", runs: [run("w1", "running")] };
  const early = play(fresh(), { type: "planner:runs", runs: [run("w1", "waiting")] });
  assert.equal(early.planner.state, "unknown");
  const fetched = plannerFetched(early, http);
  assert.equal(fetched.planner.state, "attached");
  assert.equal(fetched.planner.runs?.[0].status, "waiting");

  assert.deepEqual(plannerFetched(fresh(), http).planner, http);

  const told = play(fresh(), { type: "planner:status", planner: { state: "none", runs: [] } });
  assert.equal(plannerFetched(told, http), told);
});

test("chat:model replaces the composer's model state", () => {
  const s = play(fresh(), {
    type: "chat:model",
    model: {
      offered: true,
      models: [{ id: "m1", name: "Model One", thinkingLevels: ["low", "xhigh"], inputTypes: ["text", "image"] }],
      default: { id: "m1" },
      commands: [{ name: "review", kind: "skill" }],
      model: "m1",
      thinkingLevel: "xhigh",
      modelName: "Model One",
    },
  });
  assert.equal(s.model?.thinkingLevel, "xhigh");
  const off = play(s, { type: "chat:model", model: { offered: false, models: [], commands: [], model: "m1" } });
  assert.equal(off.model?.offered, false);
  assert.deepEqual(off.model?.commands, []);
});

test("plan sync, replies and unknown frames leave the state as it is", () => {
  const s = play(fresh(), { type: "chat:snapshot", messages: [person(1, "one")] });
  const same: ServerFrame[] = [
    { type: "plan:snapshot", id: "o1", epoch: "e", version: 3, source: "# Launch\n" },
    { type: "plan:updates", epoch: "e", version: 3, updates: [{ clientID: "k3x9", changes: [9, [0, "Hi"]] }] },
    { type: "plan:ack", id: "p1", version: 4 },
    { type: "ok", id: "m1" },
    { type: "error", id: "p2", code: "stale-version", message: "moved on", version: 5 },
    { type: "session:deleted", channel: "c1" },
    { type: "future:frame" } as unknown as ServerFrame,
  ];
  for (const f of same) assert.equal(reduce(s, f), s, f.type);
});

test("a new description arrives as session:channel and is kept as plain text", () => {
  const url = "http://127.0.0.1:8787/documents/octo/plans/launch";
  const s = play(fresh(), {
    type: "session:channel",
    canEdit: true,
    channel: {
      id: "c1",
      title: "Launch",
      slug: "launch",
      repository: "octo/plans",
      url,
      description: "Plan for <b>the</b> launch",
      descriptionRevision: 1,
    },
  });
  assert.equal(s.channel.description, "Plan for <b>the</b> launch");
  assert.equal(s.channel.descriptionRevision, 1);
});

test("jobs:state: describing while the newest description job is pending or running", () => {
  const job = (state: Job["state"], reason?: string, type = "document-summary@1"): Job => ({
    id: "j-" + state,
    type,
    state,
    attempts: 1,
    failures: 0,
    reason,
    createdAt: "2026-12-01T14:40:00.000Z",
    updatedAt: "2026-12-01T14:40:00.000Z",
  });
  const cases: [Job[], string][] = [
    [[], ""],
    [[job("pending")], "describing"],
    [[job("running"), job("completed")], "describing"],
    [[job("paused", "planner-unavailable")], "waiting"],
    [[job("paused", "archived")], ""],
    [[job("completed"), job("running")], ""],
    [[job("failed", "invalid-output")], ""],
    [[job("running", undefined, "other@1")], ""],
  ];
  for (const [jobs, want] of cases) {
    const s = play(fresh(), { type: "jobs:state", jobs });
    assert.deepEqual(s.jobs, jobs);
    assert.equal(descriptionWork(s), want, JSON.stringify(jobs.map((j) => j.state)));
  }
});
