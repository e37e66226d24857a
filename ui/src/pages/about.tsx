// The About page: which Chopin this is, where it keeps its data and
// configuration (with buttons to copy them), how big the database is, when
// it was last backed up, the program running, and Quit, after which the
// page says Chopin stopped and how to start it again (GET /api/status,
// POST /api/quit).

import { useEffect, useState } from "preact/hooks";
import { api, type Status } from "../api";
import { ago, ErrorText, Shell } from "./shell";
import "./about.css";

export function AboutPage() {
  const [status, setStatus] = useState<Status | null>(null);
  const [error, setError] = useState("");
  const [stopped, setStopped] = useState<string | null>(null); // the command that starts it again
  const load = () =>
    api<Status>("GET", "/api/status").then(
      (s) => {
        setStatus(s);
        setError("");
      },
      (e) => setError(e.message),
    );
  useEffect(() => {
    document.title = "About · Chopin";
    load();
    // A backup downloaded from here shows as the last one when the page
    // is looked at again.
    const again = () => document.visibilityState === "visible" && load();
    addEventListener("focus", again);
    document.addEventListener("visibilitychange", again);
    return () => {
      removeEventListener("focus", again);
      document.removeEventListener("visibilitychange", again);
    };
  }, []);

  if (stopped !== null) return <Stopped command={stopped} />;
  return (
    <Shell crumbs={[{ label: "About" }]}>
      <div class="page about">
        <h1>About Chopin</h1>
        <ErrorText error={error} />
        {status && (
          <>
            <dl class="facts" aria-label="This Chopin">
              <dt>Version</dt>
              <dd>
                {status.version}
                {status.commit && <span class="muted mono"> {status.commit}</span>}
                {status.buildDate && <span class="muted"> · built {status.buildDate.slice(0, 10)}</span>}
              </dd>
              <dt>Address</dt>
              <dd>
                <span class="mono">{status.origin}</span>
              </dd>
              <dt>Program</dt>
              <dd>
                <CopyLine text={status.binary} label="Program" />
              </dd>
              <dt>Data directory</dt>
              <dd>
                <CopyLine text={status.dataDir} label="Data directory" />
                <span class="muted small">Your documents, Chats and Decisions: the database chopin.db.</span>
              </dd>
              <dt>Config directory</dt>
              <dd>
                <CopyLine text={status.configDir} label="Config directory" />
                <span class="muted small">chopin.toml, if you made one, and the agent token.</span>
              </dd>
              <dt>Database</dt>
              <dd>{size(status.database.bytes)}</dd>
              <dt>Last backup</dt>
              <dd>
                {status.lastBackup ? (
                  <span title={new Date(status.lastBackup.at).toLocaleString()}>
                    {ago(status.lastBackup.at)}
                    {status.lastBackup.file && (
                      <>
                        , to <span class="mono">{status.lastBackup.file}</span>
                      </>
                    )}
                  </span>
                ) : (
                  <span>Never</span>
                )}{" "}
                <a class="button small" href="/api/backup" download onClick={() => setTimeout(load, 3000)}>
                  Download a backup
                </a>
              </dd>
            </dl>
            <Quit command={status.command} onStopped={setStopped} />
          </>
        )}
      </div>
    </Shell>
  );
}

// Quit stops Chopin after asking once: every open tab goes offline.
function Quit({ command, onStopped }: { command: string; onStopped: (command: string) => void }) {
  const [confirming, setConfirming] = useState(false);
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  async function quit() {
    setBusy(true);
    setError("");
    try {
      await api("POST", "/api/quit");
      onStopped(command);
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  }
  return (
    <section class="card" aria-label="Quit">
      <h2>Quit</h2>
      <p class="muted">
        Stops Chopin on this computer. Everything is saved; open tabs go offline until you start it again with{" "}
        <code>{command}</code>.
      </p>
      <ErrorText error={error} />
      <div class="actions">
        {confirming ? (
          <>
            <button class="primary" type="button" disabled={busy} onClick={quit}>
              Yes, quit Chopin
            </button>
            <button type="button" onClick={() => setConfirming(false)}>
              Cancel
            </button>
          </>
        ) : (
          <button type="button" onClick={() => setConfirming(true)}>
            Quit Chopin
          </button>
        )}
      </div>
    </section>
  );
}

// Stopped is what remains once Chopin has quit: this page cannot reach it
// any more, so it says how to start it again.
export function Stopped({ command }: { command: string }) {
  useEffect(() => {
    document.title = "Chopin stopped";
  }, []);
  return (
    <div class="shell">
      <main class="shell-main">
        <section class="page stopped" role="status" aria-labelledby="stopped-title">
          <h1 id="stopped-title">Chopin stopped</h1>
          <p>Everything you wrote is saved. To start Chopin again, run this in a terminal:</p>
          <CopyLine text={command} label="Start command" />
          <p class="muted">It opens this browser on Chopin again. Then reload this page to come back to it.</p>
        </section>
      </main>
    </div>
  );
}

// CopyLine is a line of text with a button that copies it.
function CopyLine({ text, label }: { text: string; label: string }) {
  const [copied, setCopied] = useState(false);
  async function copy() {
    try {
      await navigator.clipboard.writeText(text);
      setCopied(true);
      setTimeout(() => setCopied(false), 2000);
    } catch {
      /* the text stays selectable */
    }
  }
  return (
    <div class="copyable">
      <code aria-label={label}>{text}</code>
      <button class="quiet small" type="button" onClick={copy} aria-label={`Copy ${label.toLowerCase()}`}>
        {copied ? "Copied" : "Copy"}
      </button>
    </div>
  );
}

// size is a byte count as a person reads it.
export function size(n: number): string {
  if (n < 1024) return `${n} bytes`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  if (n < 1024 ** 3) return `${(n / 1024 / 1024).toFixed(1)} MB`;
  return `${(n / 1024 ** 3).toFixed(2)} GB`;
}
