// The room protocol (docs/room-protocol.md), typed: every frame the server
// sends and every frame the client sends, as discriminated unions on `type`,
// and the shapes they carry exactly as the server encodes them (room/*.go,
// the app's planner and model JSON, agentconn's run cards and catalog). An
// optional field is one the server leaves out when empty (`omitempty`); a
// field that may be null is a Go slice or value the server can leave nil.
// The same Message, Decision, PlannerStatus and ModelState come over HTTP
// (docs/http-api.md).

// ---- Plan sync

// ChangeSetJSON is CodeMirror's ChangeSet.toJSON(): a kept length, or a
// replaced length followed by the inserted lines.
export type ChangeSetJSON = (number | [number, ...string[]])[];

export interface Update {
  clientID: string;
  changes: ChangeSetJSON;
}

// ---- Chat

export type MessageRole = "person" | "planner" | "system";

// A Planner reply's status; other messages have none.
export type ReplyStatus = "streaming" | "done" | "failed" | "stopped";

export interface Message {
  id: string;
  seq: number;
  role: MessageRole;
  author?: string; // the login of a person, or of the Planner's owner
  text: string;
  status?: ReplyStatus;
  createdAt: number; // unix ms
  updatedAt: number;
  details?: MessageDetails;
  cut?: MessageCut; // a long message, sent cut to its first page
}

// MessageCut says what of a long message its frame left out
// (docs/room-protocol.md "Long messages"): the rest of a field is read from
// GET .../messages/:id/text?field=&from=<next>.
export interface MessageCut {
  text?: FieldCut;
  reasoning?: FieldCut;
  tools?: boolean; // tool rows came without input and result
}
export interface FieldCut {
  next: number; // byte offset (UTF-8) of the rest
  size: number; // the field's whole length in bytes
}

// TextPage is GET .../messages/:id/text's answer.
export interface TextPage {
  field: "text" | "reasoning";
  text: string;
  from: number;
  next: number | null;
  size: number;
}

// MessagePage is GET .../messages?before='s answer.
export interface MessagePage {
  messages: Message[];
  before: string | null;
}

// MessageDetails: a Planner reply's (ReplyDetails) or a person's message's
// (its files); a system line has none.
export type MessageDetails = ReplyDetails & PersonDetails;

export interface ReplyDetails {
  reasoning?: string;
  tools?: ToolRow[]; // "Work details", in the order the calls started
  error?: string; // failed: why the turn failed
  images?: ReplyImage[];
  refusedImages?: RefusedImage[];
}

export interface PersonDetails {
  attachments?: ChatAttachment[];
  references?: MessageReference[]; // the documents the message refers to (`#`)
  comment?: { thread: string; section?: string }; // an Accept's prompt: Chat shows a line instead
}

// ToolRow is one tool call under "Work details"; a chat:tool with the same
// id replaces it.
export interface ToolRow {
  id: string;
  name: string;
  host: boolean; // one of Chopin's host tools, not the Planner's own
  status: "running" | "done" | "failed";
  durationMs: number;
  input?: unknown; // the call's JSON input, cut over 32 KiB
  result?: unknown; // its JSON result, cut likewise
  error?: ToolRowError; // failed with a structured tool error
}

export interface ToolRowError {
  code: string;
  kind?: string;
  message: string;
}

// ReplyImage is an image a tool made, stored as one of the document's own.
export interface ReplyImage {
  path: string; // /images/<sha256>.<ext>
  mimeType: string;
  width: number;
  height: number;
  alt?: string;
  caption?: string;
}

// RefusedImage is an image block not shown, and how many of the message's
// images come before it.
export interface RefusedImage {
  reason: string;
  before: number;
}

// ChatAttachment is a file a person's message carries.
export interface ChatAttachment {
  name: string;
  kind: "image" | "file";
  mediaType: string;
  size: number;
  data: string; // standard base64
}

// MessageReference is a document, or a passage of one, a message refers
// to, as the server kept it: the title it had then, and what the sender saw
// of its plan (docs/http-api.md, POST .../messages).
export interface MessageReference {
  kind: "document" | "passage";
  channelId: string;
  label: string;
  observedRevision: number;
  observedSourceHash: string;
  passage?: ReferencedPassage;
}

// ReferencedPassage is what a passage reference pointed at when the message
// was sent: UTF-16 offsets at observedRevision, its quote (at most 200
// characters), lines and the heading above it.
export interface ReferencedPassage {
  from: number;
  to: number;
  blocks: { index: number; digest: string }[];
  inFirst: number;
  inLast: number;
  quote: string;
  digest: string;
  startLine: number;
  endLine: number;
  heading?: string;
}

// PassageNow is where a referenced passage is now (GET
// .../messages/:id/references): orphaned when it was deleted or rewritten.
export interface PassageNow {
  state: "anchored" | "changed" | "orphaned";
  found?: "history" | "block" | "quote";
  revision: number;
  from: number;
  to: number;
  startLine?: number;
  endLine?: number;
  quote?: string;
  heading?: string;
}

// ReferenceRequest is a reference as chat:send carries it: a whole
// document, or a passage of it at the revision its offsets were read at.
export type ReferenceRequest =
  | { kind: "document"; channelId: string }
  | { kind: "passage"; channelId: string; from: number; to: number; revision: number };

// AttachmentUpload is a file sent with chat:send.
export interface AttachmentUpload {
  name: string;
  data: string; // standard base64
}

export interface ChatCommand {
  name: string;
  kind: string;
}

// ---- Decisions

// The specification's statuses: open and reopened wait for an answer.
export type DecisionStatus = "open" | "decided" | "reopened" | "discarded" | "expired";

// PreviousAnswer is an answer a card had until someone reopened it.
export interface PreviousAnswer {
  answer: CardAnswer;
  answeredBy?: string;
  decidedAt: number;
  reopenedBy?: string;
  reopenedAt: number;
}

export const waitsForAnswer = (d: { status: string }) => d.status === "open" || d.status === "reopened";

export interface Decision {
  id: string;
  request: string; // the question call the card belongs to
  index: number; // the question's position in its call
  call: QuestionCall; // the whole call, as asked
  status: DecisionStatus;
  answer?: CardAnswer;
  answeredBy?: string;
  previous?: PreviousAnswer[]; // oldest first
  discardedBy?: string;
  block: number; // the block it follows, -1 when placed at the end, -2 when not in the plan
  createdAt: number; // unix ms
  updatedAt: number;
}

export interface Option {
  label: string;
  description: string;
  preview?: string;
}

export interface Question {
  question: string;
  header: string;
  options: Option[];
  multiSelect?: boolean;
}

export type QuestionCall =
  | { method: "questionnaire"; params: { questions: Question[] } }
  | { method: "confirm"; title: string; message: string }
  | { method: "select"; title: string; choices: string[] }
  | { method: "input"; title: string; placeholder?: string }
  | { method: "editor"; title: string; initial?: string };

// CardAnswer answers one card: labels (questionnaire), yes (confirm), choice
// (select) or text (a written answer).
export interface CardAnswer {
  labels?: string[];
  text?: string;
  yes?: boolean;
  choice?: string;
}

// ---- Planner

export interface PlannerStatus {
  state: "none" | "attached" | "grace" | "disconnected";
  login?: string;
  features?: string[];
  since?: string; // RFC 3339: attached since
  until?: string; // RFC 3339: grace until
  runs: RunCard[];
  checkout?: PlannerCheckout; // the local checkout the attached Planner reads
}

// PlannerCheckout is the repository's local checkout as the attached
// Planner reports it reading: its folder, branch and commit; git false when
// Git was not found where the Planner runs.
export interface PlannerCheckout {
  path: string;
  branch?: string;
  head?: string;
  git: boolean;
}

export type RunStatus = "running" | "waiting" | "paused" | "finished" | "blocked" | "failed" | "stopped";

export type StageStatus =
  "pending" | "running" | "awaiting_input" | "paused" | "blocked" | "completed" | "failed" | "skipped" | "stopped";

// RunCard is a workflow run's latest state, stages merged. Times are whole
// seconds since the epoch.
export interface RunCard {
  id: string;
  name: string;
  status: RunStatus;
  started: number;
  updated: number;
  ended?: number;
  stages: Stage[] | null;
  earlierStages?: number;
  waiting: number;
}

export interface Stage {
  id: string;
  name: string;
  parentIds?: string[];
  kind?: string;
  status: StageStatus;
  started?: number;
  ended?: number;
}

// ModelState is the composer's model and thinking level: chat:model's
// `model`, and the body of GET and PUT .../planner/model.
export interface ModelState {
  offered: boolean;
  models: CatalogModel[];
  default?: ModelDefault;
  commands: CatalogCommand[];
  model?: string;
  thinkingLevel?: string;
  modelName?: string;
  unavailable?: boolean;
}

export interface CatalogModel {
  id: string;
  name: string;
  provider?: { id: string; name?: string };
  description?: string;
  thinkingLevels?: string[];
  inputTypes?: string[];
}

export interface ModelDefault {
  id: string;
  thinkingLevel?: string;
}

export interface CatalogCommand {
  name: string;
  description?: string;
  kind: string;
}

// ---- Session

// RoomChannel is what the room says of its document; url is absolute.
export interface RoomChannel {
  id: string;
  title: string;
  slug: string;
  repository: string;
  url: string;
  archivedAt?: string;
  // description: the generated one-line description, untrusted model output
  // shown as plain text; descriptionRevision counts them (0: none yet).
  description?: string;
  descriptionRevision: number;
}

// ---- Background jobs

export type JobState = "pending" | "paused" | "running" | "completed" | "failed" | "cancelled" | "superseded";

// Job is one background job as GET /api/channels/:id/jobs and jobs:state
// show it: never its input, prompts or model text.
export interface Job {
  id: string;
  type: string; // type@version, such as document-summary@1
  state: JobState;
  attempts: number;
  failures: number;
  reason?: string; // planner-unavailable, archived, stale, invalid-output, ...
  createdAt: string;
  updatedAt: string;
}

// ---- Frames from the server

export interface SessionHelloFrame {
  type: "session:hello";
  login: string;
  name: string;
  canEdit: boolean;
  canManage: boolean;
  channel: RoomChannel;
}
export interface SessionChannelFrame {
  type: "session:channel";
  channel: RoomChannel;
  canEdit: boolean;
}
export interface SessionPresenceFrame {
  type: "session:presence";
  members: number;
}
export interface SessionDeletedFrame {
  type: "session:deleted";
  channel: string;
}
// The database was found damaged: Chopin refuses every change from now on
// (storage-damaged); message says what happened and what to do.
export interface StorageDamagedFrame {
  type: "storage:damaged";
  message: string;
}
export interface PlanSnapshotFrame {
  type: "plan:snapshot";
  id?: string;
  epoch: string;
  version: number;
  source: string;
}
export interface PlanUpdatesFrame {
  type: "plan:updates";
  id?: string;
  epoch: string;
  version: number; // the version the first update applies to
  updates: Update[];
}
export interface PlanAckFrame {
  type: "plan:ack";
  id?: string;
  version: number;
}
export interface ChatSnapshotFrame {
  type: "chat:snapshot";
  messages: Message[];
  before?: string | null; // the cursor of older messages; null when none
}
export interface ChatMessageFrame {
  type: "chat:message";
  message: Message;
}
export interface ChatRemovedFrame {
  type: "chat:removed";
  message: string;
}
export interface ChatDeltaFrame {
  type: "chat:delta";
  message: string;
  field: "text" | "reasoning";
  at: number; // the field's length in UTF-16 code units before this delta
  delta: string;
}
export interface ChatToolFrame {
  type: "chat:tool";
  message: string;
  tool: ToolRow;
}
export interface ChatImagesFrame {
  type: "chat:images";
  message: string;
  images: ReplyImage[];
  refusedImages: RefusedImage[];
}
export interface ChatModelFrame {
  type: "chat:model";
  model: ModelState;
}
export interface PlannerStatusFrame {
  type: "planner:status";
  planner: PlannerStatus;
}
export interface PlannerRunsFrame {
  type: "planner:runs";
  runs: RunCard[];
}
export interface JobsStateFrame {
  type: "jobs:state";
  jobs: Job[]; // newest first
}
export interface DecisionsSnapshotFrame {
  type: "decisions:snapshot";
  decisions: Decision[];
}
export interface DecisionUpdateFrame {
  type: "decision:update";
  decision: Decision;
}
// ---- Comments

export type ThreadStatus = "open" | "accepted" | "dismissed";
export type AnchorState = "anchored" | "changed" | "orphaned";

export interface BlockRef {
  index: number;
  digest: string; // sha256:<hex>
}

// Passage is where a thread points; from and to are UTF-16 offsets of the
// plan at version.
export interface Passage {
  blocks: BlockRef[] | null;
  from: number;
  to: number;
  version: number;
  quote: string;
  state: AnchorState;
  startLine: number; // 0 when orphaned
  endLine: number;
}

export interface CommentNote {
  id: string;
  author: string;
  text: string;
  createdAt: number;
}

export interface ThreadResult {
  state: "revising" | "revised" | "unrevised" | "no-planner";
  message?: string; // the turn's Chat message, or why nobody will revise it
  reply?: string;
  blocks?: string; // the Markdown the Planner wrote in the turn
  cut?: boolean;
}

export interface Thread {
  id: string;
  status: ThreadStatus;
  passage: Passage;
  notes: CommentNote[];
  createdBy: string;
  createdAt: number;
  updatedAt: number;
  decidedBy?: string;
  decidedAt?: number;
  result?: ThreadResult;
}

export interface CommentSyncFrame {
  type: "comment:sync";
  id?: string;
  version: number;
  threads: Thread[];
}
export interface CommentThreadFrame {
  type: "comment:thread";
  thread: Thread;
}
export interface CommentStartedFrame {
  type: "comment:started";
  id?: string;
  thread: string;
}
export interface CommentTypingFrame {
  type: "comment:typing";
  thread: string;
  login: string;
  name?: string;
}

export interface OkFrame {
  type: "ok";
  id?: string;
}
export interface ErrorFrame {
  type: "error";
  id?: string;
  code: string;
  message: string;
  version?: number; // a stale plan:push: the plan's current version
}

export type ServerFrame =
  | JobsStateFrame
  | SessionHelloFrame
  | SessionChannelFrame
  | SessionPresenceFrame
  | SessionDeletedFrame
  | StorageDamagedFrame
  | PlanSnapshotFrame
  | PlanUpdatesFrame
  | PlanAckFrame
  | ChatSnapshotFrame
  | ChatMessageFrame
  | ChatRemovedFrame
  | ChatDeltaFrame
  | ChatToolFrame
  | ChatImagesFrame
  | ChatModelFrame
  | PlannerStatusFrame
  | PlannerRunsFrame
  | DecisionsSnapshotFrame
  | DecisionUpdateFrame
  | DecisionDraftRelayFrame
  | CommentSyncFrame
  | CommentThreadFrame
  | CommentStartedFrame
  | CommentTypingFrame
  | OkFrame
  | ErrorFrame;

// ---- Frames from the client

export interface PlanOpenFrame {
  type: "plan:open";
  id?: string;
  epoch: string;
  version: number;
}
export interface PlanPushFrame {
  type: "plan:push";
  id?: string;
  version: number;
  updates: Update[];
}
export interface ChatSendFrame {
  type: "chat:send";
  id?: string;
  text: string;
  command?: ChatCommand;
  attachments?: AttachmentUpload[];
  references?: ReferenceRequest[];
}
export interface DecisionAnswerFrame {
  type: "decision:answer";
  id?: string;
  decision: string;
  answer: CardAnswer;
}
// A card's shared live draft (decision:draft): relayed between tabs, never stored.
export interface DecisionDraft {
  labels?: string[];
  choice?: string;
  text?: string;
  writing?: boolean;
}
export type DraftField = "options" | "text" | "";
export interface DecisionDraftFrame {
  type: "decision:draft";
  id?: string;
  decision: string;
  field: DraftField;
  draft?: DecisionDraft;
}
export interface DecisionDraftRelayFrame {
  type: "decision:draft";
  decision: string;
  tab: string;
  login: string;
  name?: string;
  field: DraftField;
  draft?: DecisionDraft;
}

export interface DecisionCancelFrame {
  type: "decision:cancel" | "decision:discard" | "decision:reopen";
  id?: string;
  decision: string;
}

export interface CommentSyncRequest {
  type: "comment:sync";
  id?: string;
}
export interface CommentStartFrame {
  type: "comment:start";
  id?: string;
  version: number;
  blocks: BlockRef[];
  from: number;
  to: number;
  quote: string;
  text: string;
}
export interface CommentReplyFrame {
  type: "comment:reply";
  id?: string;
  thread: string;
  text: string;
}
export interface CommentActionFrame {
  type: "comment:accept" | "comment:dismiss" | "comment:typing";
  id?: string;
  thread: string;
}

export type ClientFrame =
  | PlanOpenFrame
  | PlanPushFrame
  | ChatSendFrame
  | DecisionAnswerFrame
  | DecisionCancelFrame
  | DecisionDraftFrame
  | CommentSyncRequest
  | CommentStartFrame
  | CommentReplyFrame
  | CommentActionFrame;

// ClientRequest is a client frame before RoomSocket.request gives it an id.
export type ClientRequest = WithoutID<ClientFrame>;
type WithoutID<F> = F extends ClientFrame ? Omit<F, "id"> : never;
