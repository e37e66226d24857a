// What one open document's tab knows of its room, and how each frame from
// the server changes it (docs/room-protocol.md). Pure: the workspace keeps
// the state and does the side effects (the editor's read-only switch, the
// address bar), so this runs and is tested outside a browser.

import { pathOf, type Channel } from "../api";
import type {
  ChatDeltaFrame,
  ChatImagesFrame,
  ChatToolFrame,
  Decision,
  Job,
  Message,
  MessageDetails,
  ModelState,
  PlannerStatus,
  RunCard,
  ServerFrame,
} from "../protocol";
import type { Connection } from "../room";

// PlannerState is the document's Planner as the tab knows it: "unknown"
// until planner:status or GET .../planner says, though run cards may come
// before.
export type PlannerState = Omit<PlannerStatus, "state" | "runs"> & {
  state: PlannerStatus["state"] | "unknown";
  runs?: RunCard[];
};

export interface RoomState {
  channel: Channel;
  canEdit: boolean;
  canManage: boolean;
  connection: Connection;
  members: number;
  messages: Message[];
  older: string | null; // the cursor of the messages before these; null when they begin at the first
  decisions: Decision[];
  planner: PlannerState;
  model?: ModelState;
  jobs: Job[]; // the document's background jobs, newest first
}

// initialState is the tab's state before the socket says anything: the
// document as the catalog listed it, nobody else here.
export function initialState(channel: Channel, connection: Connection): RoomState {
  return {
    channel,
    canEdit: !channel.archivedAt,
    canManage: true,
    connection,
    members: 1,
    messages: [],
    older: null,
    decisions: [],
    planner: { state: "unknown" },
    jobs: [],
  };
}

// reduce is the state after one frame. A frame that changes nothing here
// (plan sync, replies to requests, deletion) gives back the same state.
export function reduce(s: RoomState, f: ServerFrame): RoomState {
  switch (f.type) {
    case "session:hello":
      return {
        ...s,
        canEdit: f.canEdit,
        canManage: f.canManage,
        channel: { ...s.channel, ...f.channel, url: pathOf(f.channel.url) },
      };
    case "session:channel":
      return {
        ...s,
        canEdit: f.canEdit,
        channel: { ...s.channel, ...f.channel, url: pathOf(f.channel.url), archivedAt: f.channel.archivedAt ?? null },
      };
    case "session:presence":
      return { ...s, members: f.members };
    case "chat:snapshot":
      return { ...s, messages: f.messages, older: f.before ?? null };
    case "chat:message":
      return { ...s, messages: upsert(s.messages, f.message, (a, b) => a.seq - b.seq) };
    case "chat:delta":
    case "chat:tool":
    case "chat:images":
      return { ...s, messages: s.messages.map((m) => (m.id === f.message ? growReply(m, f) : m)) };
    case "chat:removed":
      return { ...s, messages: s.messages.filter((m) => m.id !== f.message) };
    case "chat:model":
      return { ...s, model: f.model };
    case "jobs:state":
      return { ...s, jobs: f.jobs };
    case "decisions:snapshot":
      return { ...s, decisions: f.decisions };
    case "decision:update":
      return { ...s, decisions: upsert(s.decisions, f.decision, (a, b) => a.createdAt - b.createdAt) };
    case "planner:status":
      return { ...s, planner: f.planner };
    case "planner:runs":
      return { ...s, planner: { ...s.planner, runs: f.runs } };
    default:
      // Plan sync (PlanSync's), replies to requests, session:deleted (the
      // socket's close says it), and every type this client does not know.
      return s;
  }
}

// DescriptionWork is what the page says of the document's description
// while it is being written: "describing" while the newest
// document-summary@1 job is pending or running, "waiting" while it waits
// for a Planner, and "" otherwise.
export type DescriptionWork = "describing" | "waiting" | "";

export function descriptionWork(s: RoomState): DescriptionWork {
  const job = s.jobs.find((j) => j.type === "document-summary@1");
  if (!job) return "";
  if (job.state === "pending" || job.state === "running") return "describing";
  if (job.state === "paused" && job.reason === "planner-unavailable") return "waiting";
  return "";
}

// withOlder is the state with a page of older messages (GET
// .../messages?before=) put before the ones it has; a message it has already
// is kept as it is.
export function withOlder(s: RoomState, page: Message[], before: string | null): RoomState {
  const have = new Set(s.messages.map((m) => m.id));
  const first = s.messages[0]?.seq ?? Infinity;
  const add = page.filter((m) => !have.has(m.id) && m.seq < first);
  return { ...s, messages: [...add, ...s.messages], older: before };
}

// withConnection is the state with the socket's connection state.
export const withConnection = (s: RoomState, connection: Connection): RoomState => ({ ...s, connection });

// plannerFetched takes the Planner's state from GET .../planner unless a
// planner:status came first; run cards that came first are kept.
export function plannerFetched(s: RoomState, p: PlannerStatus): RoomState {
  if (s.planner.state !== "unknown") return s;
  return { ...s, planner: { ...p, runs: s.planner.runs ?? p.runs } };
}

// upsert replaces the item with the same id, or adds it in order.
function upsert<T extends { id: string }>(list: T[], item: T, order: (a: T, b: T) => number): T[] {
  const i = list.findIndex((x) => x.id === item.id);
  const out = i < 0 ? [...list, item] : list.map((x, j) => (j === i ? item : x));
  return i < 0 ? out.sort(order) : out;
}

// growReply applies a streaming reply's lighter frames: a chat:delta whose
// "at" is the field's length now (else it waits for the final message), a
// chat:tool row (the same id replaces the row), chat:images as they are now.
function growReply(m: Message, f: ChatDeltaFrame | ChatToolFrame | ChatImagesFrame): Message {
  const details: MessageDetails = { ...(m.details ?? {}) };
  if (f.type === "chat:delta") {
    if (f.field === "text") return m.text.length === f.at ? { ...m, text: m.text + f.delta } : m;
    const r = details.reasoning ?? "";
    if (r.length !== f.at) return m;
    details.reasoning = r + f.delta;
  } else if (f.type === "chat:tool") {
    const rows = details.tools ?? [];
    const i = rows.findIndex((r) => r.id === f.tool.id);
    details.tools = i < 0 ? [...rows, f.tool] : rows.map((r, j) => (j === i ? f.tool : r));
  } else {
    details.images = f.images;
    details.refusedImages = f.refusedImages;
  }
  return { ...m, details };
}
