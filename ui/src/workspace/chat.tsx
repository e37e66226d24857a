// Chat: the transcript and the composer. A refusal is shown in the
// server's words, except planner-not-attached, whose wire text is the
// agent protocol's: a person reads Chopin's own words and a Connect a
// Planner button instead.

import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { api, type ControlResult } from "../api";
import { RoomError } from "../room";
import { isSendKey, isStopKey } from "../shortcuts";
import { plannerWords } from "./planner";
import { headingOf } from "./decisions";
import "../guidance.css";
import type { ChatSendFrame } from "../protocol";
import { waitsForAnswer } from "../protocol";
import { drawDiagrams } from "../mermaid";
import { ErrorText } from "../pages/shell";
import type { WorkspaceCtx } from "./context";
import { RunCards } from "./runs";
import { mentionsPlanner, Transcript } from "./transcript";
import { ModelPicker } from "./model";
import { notSentWords } from "./refusals";
import { maxFiles, PendingFiles, readFile, type Outgoing } from "./attachments";
import {
  activeReference,
  chooseReference,
  ChosenReferences,
  choosePassage,
  maxReferences,
  PassagePicker,
  referenceKey,
  referenceOptionID,
  ReferenceList,
  referenceRequests,
  useReferenceMatches,
  type ChosenReference,
} from "./references";
import {
  CommandChip,
  commandIn,
  CommandList,
  commandMatches,
  commandOptionID,
  reportedCommands,
  type PlannerCommand,
} from "./commands";

// controlWords says what Stop Planner or Resume Planner achieved, from the
// answer of POST .../planner/stop or /resume.
export function controlWords(action: "stop" | "resume", res: ControlResult, run?: string): string {
  const out: string[] = [];
  if (action === "stop" && res?.aborted) out.push("Stopped the Planner's reply.");
  for (const r of res?.results ?? []) {
    const what = r.run || run ? "the run" : "its runs";
    if (!r.answered) out.push("The Planner did not answer in time; try again.");
    else if (!r.ok)
      out.push(
        `The Planner could not ${action === "stop" ? "pause" : "resume"} ${what}${r.message ? `: ${r.message}` : "."}`,
      );
    else
      out.push(`The Planner ${action === "stop" ? "paused" : "resumed"} ${what}${r.message ? `: ${r.message}` : "."}`);
  }
  if (!out.length) out.push(action === "stop" ? "Nothing was running." : "Nothing was paused.");
  return Array.from(new Set(out)).join(" ");
}

export function ChatPane({ ctx }: { ctx: WorkspaceCtx }) {
  const { state, socket } = ctx;
  const [draft, setDraft] = useState(() => sessionStorage.getItem("chopin:draft:" + state.channel.id) ?? "");
  const [error, setError] = useState("");
  const [errorCode, setErrorCode] = useState("");
  const [sending, setSending] = useState(false);
  const list = useRef<HTMLDivElement>(null);
  const stick = useRef(true);
  const [files, setFiles] = useState<Outgoing[]>([]);
  const picker = useRef<HTMLInputElement>(null);
  const [command, setCommand] = useState<PlannerCommand | null>(null);
  const [active, setActive] = useState(0);
  const [closedAt, setClosedAt] = useState<string | null>(null); // the draft Escape closed the list at
  const commands = reportedCommands(state.model);
  const matches = command ? [] : commandMatches(commands, draft);
  const listOpen = matches.length > 0 && closedAt !== draft && state.canEdit;
  // `#` references: the documents picked for this message, and the #
  // being typed at the caret.
  const box = useRef<HTMLTextAreaElement>(null);
  const [refs, setRefs] = useState<ChosenReference[]>([]);
  const [caret, setCaret] = useState(0);
  const [refsClosedAt, setRefsClosedAt] = useState<string | null>(null); // the draft Escape or a blur closed it at
  // The document just chosen, while its passages are offered.
  const [passageStep, setPassageStep] = useState<{ channelId: string; title: string; addedWhole: boolean } | null>(
    null,
  );
  const closePassages = () => {
    setPassageStep(null);
    requestAnimationFrame(() => box.current?.focus());
  };
  const hash =
    !listOpen && state.canEdit && refsClosedAt !== draft
      ? activeReference(
          draft,
          caret,
          refs.map((r) => r.title),
        )
      : null;
  const refMatches = useReferenceMatches(hash ? hash.query : null, state.channel.repository);
  // A # in a sentence ("issue #12 is fixed") that names no document stops
  // asking once the words go on.
  const refsOpen = hash !== null && !(refMatches?.length === 0 && /\s/.test(hash.query));
  const refIndex = Math.min(active, Math.max(0, (refMatches?.length ?? 1) - 1));
  const pickReference = (c: { id: string; title: string }) => {
    if (!hash) return;
    const next = chooseReference(draft, hash, c.title);
    setDraft(next.text);
    setCaret(next.caret);
    setActive(0);
    const had = refs.some((r) => r.channelId === c.id && !r.passage);
    if (!had && refs.length >= maxReferences) {
      setError(`A message refers to at most ${maxReferences} documents.`);
      requestAnimationFrame(() => box.current?.setSelectionRange(next.caret, next.caret));
      return;
    }
    if (!had) setRefs([...refs, { channelId: c.id, title: c.title }]);
    // Then a passage of it, or the whole document.
    setPassageStep({ channelId: c.id, title: c.title, addedWhole: !had });
    requestAnimationFrame(() => box.current?.setSelectionRange(next.caret, next.caret));
  };
  const activeIndex = Math.min(active, Math.max(0, matches.length - 1));
  const choose = (c: PlannerCommand) => {
    setCommand(c);
    setDraft("");
    setActive(0);
    if (error) setError("");
  };

  async function addFiles(chosen: FileList | null) {
    if (!chosen?.length) return;
    try {
      const read = await Promise.all(Array.from(chosen, readFile));
      const all = [...files, ...read];
      if (all.length > maxFiles) setError(`A message takes at most ${maxFiles} files.`);
      setFiles(all.slice(0, maxFiles));
    } catch (e) {
      setError((e as Error).message);
    }
  }

  useEffect(() => {
    sessionStorage.setItem("chopin:draft:" + state.channel.id, draft);
  }, [draft]);

  useLayoutEffect(() => {
    const el = list.current!;
    if (stick.current) el.scrollTop = el.scrollHeight;
  }, [state.messages]);

  async function send() {
    // A command chosen from the list, or typed out as "/name args".
    const typed = command ? null : commandIn(commands, draft);
    const cmd = command ?? typed?.command ?? null;
    const text = typed ? typed.args : draft;
    if ((!text.trim() && !cmd) || sending) return;
    setSending(true);
    setError("");
    setErrorCode("");
    try {
      const frame: Omit<ChatSendFrame, "id"> = { type: "chat:send", text };
      if (cmd) frame.command = { name: cmd.name, kind: cmd.kind };
      else {
        if (files.length) frame.attachments = files.map((f) => ({ name: f.name, data: f.data }));
        if (refs.length) frame.references = referenceRequests(refs);
      }
      await socket.request(frame);
      setDraft("");
      setCommand(null);
      if (!cmd) {
        setFiles([]);
        setRefs([]);
      }
      stick.current = true;
    } catch (e) {
      setError((e as Error).message);
      setErrorCode(e instanceof RoomError ? e.code : "");
    } finally {
      setSending(false);
    }
  }

  const [control, setControl] = useState<{ busy: boolean; text: string; error: boolean }>({
    busy: false,
    text: "",
    error: false,
  });
  async function planner(action: "stop" | "resume", run?: string) {
    setControl({ busy: true, text: action === "stop" ? "Stopping…" : "Resuming…", error: false });
    try {
      const res = await api<ControlResult>(
        "POST",
        `/api/channels/${state.channel.id}/planner/${action}`,
        run ? { run } : {},
      );
      setControl({ busy: false, text: controlWords(action, res, run), error: false });
    } catch (e) {
      setControl({ busy: false, text: (e as Error).message, error: true });
    }
  }

  useEffect(() => {
    if (list.current) drawDiagrams(list.current);
  }, [state.messages]);

  const p = state.planner;
  const runs = p.runs ?? [];
  const streaming = state.messages.some((m) => m.role === "planner" && m.status === "streaming");
  const working = streaming || runs.some((r) => r.status === "running" || r.status === "waiting");
  const paused = runs.filter((r) => r.status === "paused").length;
  const showBar = (p.state === "attached" && (working || paused > 0)) || control.text !== "";

  // Ctrl+. (⌘. on a Mac) stops the working Planner, wherever the focus is.
  const stopNow = p.state === "attached" && working && !control.busy && state.canEdit;
  useEffect(() => {
    if (!stopNow) return;
    const onKey = (e: KeyboardEvent) => {
      if (!isStopKey(e) || document.querySelector("dialog[open]")) return;
      e.preventDefault();
      planner("stop");
    };
    addEventListener("keydown", onKey);
    return () => removeEventListener("keydown", onKey);
  }, [stopNow]);

  const onKey = (e: KeyboardEvent) => {
    if (e.isComposing) return;
    if (isSendKey(e)) {
      // Ctrl+Enter (⌘Enter) sends, even with the command list open.
      e.preventDefault();
      send();
      return;
    }
    if (refsOpen) {
      const n = refMatches?.length ?? 0;
      if ((e.key === "ArrowDown" || e.key === "ArrowUp") && n) {
        e.preventDefault();
        setActive((refIndex + (e.key === "ArrowDown" ? 1 : n - 1)) % n);
        return;
      }
      if (((e.key === "Enter" && !e.shiftKey) || (e.key === "Tab" && !e.shiftKey)) && n) {
        e.preventDefault();
        pickReference(refMatches![refIndex]);
        return;
      }
      if (e.key === "Escape") {
        e.preventDefault();
        setRefsClosedAt(draft);
        return;
      }
    }
    if (listOpen) {
      const n = matches.length;
      if (e.key === "ArrowDown" || e.key === "ArrowUp") {
        e.preventDefault();
        setActive((activeIndex + (e.key === "ArrowDown" ? 1 : n - 1)) % n);
        return;
      }
      if ((e.key === "Enter" && !e.shiftKey) || (e.key === "Tab" && !e.shiftKey)) {
        e.preventDefault();
        choose(matches[activeIndex]);
        return;
      }
      if (e.key === "Escape") {
        e.preventDefault();
        setClosedAt(draft);
        return;
      }
    }
    // Backspace at the start of the words gives the command back as text.
    if (e.key === "Backspace" && command) {
      const t = e.currentTarget as HTMLTextAreaElement;
      if (t.selectionStart === 0 && t.selectionEnd === 0) {
        e.preventDefault();
        setDraft("/" + command.name + (draft ? " " + draft : ""));
        setCommand(null);
        setClosedAt("/" + command.name + (draft ? " " + draft : ""));
        return;
      }
    }
    if (e.key === "Enter" && !e.shiftKey) {
      e.preventDefault();
      send();
    }
  };

  return (
    <div class="chat">
      <div
        class="transcript"
        ref={list}
        onScroll={(e) => {
          const el = e.currentTarget;
          stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
        }}
        aria-live="polite"
      >
        <Transcript state={state} me={ctx.session.login} update={ctx.update} scroller={list} after={ctx.plan.shown} />
        <RunCards
          runs={runs}
          busy={control.busy || !state.canEdit}
          onControl={p.state === "attached" ? planner : undefined}
        />
      </div>
      {showBar && (
        <div class="planner-working" aria-label="Planner controls">
          <span class="muted small planner-activity">
            {working
              ? "The Planner is working…"
              : paused > 0
                ? `${paused} ${paused === 1 ? "run" : "runs"} paused`
                : ""}
          </span>
          <span class="spacer" />
          {p.state === "attached" && working && (
            <button class="quiet small" disabled={control.busy || !state.canEdit} onClick={() => planner("stop")}>
              Stop Planner
            </button>
          )}
          {p.state === "attached" && paused > 0 && (
            <button class="small" disabled={control.busy || !state.canEdit} onClick={() => planner("resume")}>
              Resume Planner
            </button>
          )}
          {control.text && (
            <p class={"control-result small " + (control.error ? "error-text" : "muted")} role="status">
              {control.text}
              {!control.busy && (
                <button
                  class="link small dismiss"
                  aria-label="Dismiss"
                  onClick={() => setControl({ busy: false, text: "", error: false })}
                >
                  ×
                </button>
              )}
            </p>
          )}
        </div>
      )}
      <form class="composer" onSubmit={(e) => (e.preventDefault(), send())}>
        {errorCode === "planner-not-attached" ? <NotSent ctx={ctx} /> : <ErrorText error={error} />}
        {errorCode === "planner-busy" && <WaitingOn ctx={ctx} />}
        {mentionsPlanner(draft) && !error && <NoPlannerYet ctx={ctx} />}
        <ModelPicker ctx={ctx} onError={setError} />
        <PendingFiles files={files} onRemove={(i) => setFiles(files.filter((_, j) => j !== i))} />
        {files.length > 0 && (command || commandIn(commands, draft)) && (
          <p class="muted small file-note">Files do not go with a command; they stay here for your next message.</p>
        )}
        {listOpen && <CommandList items={matches} active={activeIndex} onChoose={choose} />}
        {refsOpen && (
          <ReferenceList
            items={refMatches}
            active={refIndex}
            repository={state.channel.repository}
            onChoose={pickReference}
          />
        )}
        {passageStep && (
          <PassagePicker
            channelId={passageStep.channelId}
            title={passageStep.title}
            onChoose={(p) => {
              const next = choosePassage(refs, passageStep, p);
              if (next.length > maxReferences) setError(`A message refers to at most ${maxReferences} documents.`);
              else setRefs(next);
              closePassages();
            }}
            onClose={closePassages}
          />
        )}
        {!command && (
          <ChosenReferences
            refs={refs}
            disabled={sending}
            onRemove={(key) => setRefs(refs.filter((r) => referenceKey(r) !== key))}
          />
        )}
        {command && <CommandChip command={command} disabled={sending} onRemove={() => setCommand(null)} />}
        {imageUnread(ctx, draft, files) && (
          <p class="muted small file-note">
            The Planner's model does not read images: it will only be told an image came with the message.
          </p>
        )}
        <textarea
          ref={box}
          name="message"
          aria-label="Message"
          rows={2}
          placeholder={
            !state.canEdit
              ? "This document is archived"
              : command
                ? `Words for /${command.name} (optional)`
                : commands.length
                  ? "Message · @chopin asks the Planner · / for its commands · # for a document"
                  : "Message · @chopin asks the Planner · # for a document"
          }
          disabled={!state.canEdit}
          value={draft}
          aria-autocomplete="list"
          aria-controls={listOpen ? "planner-commands" : refsOpen ? "reference-options" : undefined}
          aria-activedescendant={
            listOpen
              ? commandOptionID(activeIndex)
              : refsOpen && refMatches?.length
                ? referenceOptionID(refIndex)
                : undefined
          }
          onKeyUp={(e) => setCaret(e.currentTarget.selectionStart ?? 0)}
          onClick={(e) => setCaret(e.currentTarget.selectionStart ?? 0)}
          onBlur={() => setRefsClosedAt(draft)}
          onFocus={() => setRefsClosedAt(null)}
          onInput={(e) => {
            setDraft(e.currentTarget.value);
            setCaret(e.currentTarget.selectionStart ?? 0);
            setActive(0);
            if (error) setError("");
            setErrorCode("");
          }}
          onKeyDown={onKey}
        />
        <input
          ref={picker}
          type="file"
          multiple
          hidden
          onChange={(e) => (addFiles(e.currentTarget.files), (e.currentTarget.value = ""))}
          aria-label="Files"
        />
        <div class="composer-buttons">
          <button
            type="button"
            class="quiet small attach"
            disabled={!state.canEdit || sending}
            onClick={() => picker.current?.click()}
            title="Attach images or text files"
          >
            Attach
          </button>
          <button class="primary" type="submit" disabled={(!draft.trim() && !command) || sending || !state.canEdit}>
            Send
          </button>
        </div>
      </form>
    </div>
  );
}

// NoPlannerYet says, before a message to @chopin is sent, that no Planner
// can answer it now, and offers to connect one.
function NoPlannerYet({ ctx }: { ctx: WorkspaceCtx }) {
  const p = ctx.state.planner;
  if (p.state === "attached" || p.state === "unknown") return null;
  const none = p.state === "none";
  return (
    <div class="no-planner small" role="status">
      <p>
        {none
          ? "No Planner is attached to this document, so a message to @chopin gets no reply and is not sent."
          : plannerWords(p).sentence +
            (p.state === "disconnected" ? " A message to @chopin is not sent until it is back." : "")}
      </p>
      {none && (
        <button type="button" class="small" onClick={ctx.connect} aria-haspopup="dialog">
          Connect a Planner
        </button>
      )}
    </div>
  );
}

// NotSent is the composer's answer to planner-not-attached: what happened,
// and the button that fixes it.
function NotSent({ ctx }: { ctx: WorkspaceCtx }) {
  return (
    <div class="no-planner not-sent small" role="alert">
      <p>{notSentWords(ctx.state.planner)}</p>
      <button type="button" class="small" onClick={ctx.connect} aria-haspopup="dialog">
        Connect a Planner
      </button>
    </div>
  );
}

// WaitingOn names the open Decisions under a refusal of a busy Planner: they
// are what it waits for, and each goes to its card.
function WaitingOn({ ctx }: { ctx: WorkspaceCtx }) {
  const open = ctx.state.decisions.filter(waitsForAnswer);
  if (!open.length) return null;
  return (
    <div class="waiting-on small" role="status">
      <p>
        The Planner is waiting for your answers to {open.length === 1 ? "this open Decision" : "these open Decisions"}:
      </p>
      <ul>
        {open.map((d) => (
          <li key={d.id}>
            <a
              href={"#decision-" + d.id}
              onClick={(e) => {
                e.preventDefault();
                ctx.showDecision(d.id);
              }}
            >
              {headingOf(d).heading || "A question"}
            </a>
          </li>
        ))}
      </ul>
    </div>
  );
}

// imageUnread: an image goes to the Planner only when its model reads images
// (catalog inputTypes); say so before sending.
function imageUnread(ctx: WorkspaceCtx, draft: string, files: Outgoing[]): boolean {
  if (!mentionsPlanner(draft) || !files.some((f) => /^image\/(png|jpeg|webp|gif)$/.test(f.type))) return false;
  const m = ctx.state.model;
  const id = m?.model || m?.default?.id;
  const model = m?.models?.find((x) => x.id === id);
  return !model?.inputTypes?.includes("image");
}
