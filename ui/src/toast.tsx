// Toasts: a short line at the bottom of the page about something just done,
// with at most one action (such as Undo), gone after a few seconds. They
// live in a container of their own, so any page can show one.

import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import "./toast.css";

export interface Toast {
  text: string;
  action?: { label: string; run: () => Promise<void> | void };
  ms?: number; // how long it shows; 8 s unless said
}

let current: ((t: Toast | null) => void) | null = null;
let first: Toast | null = null; // shown once the container is up
let mounted = false;

function Toasts() {
  const [toast, setToast] = useState<(Toast & { n: number }) | null>(null);
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    let n = 0;
    current = (t) => {
      setError("");
      setBusy(false);
      setToast(t && { ...t, n: ++n });
    };
    if (first) current(first);
    first = null;
    return () => {
      current = null;
    };
  }, []);
  useEffect(() => {
    if (!toast || error || busy) return;
    const timer = setTimeout(() => setToast(null), toast.ms ?? 8000);
    return () => clearTimeout(timer);
  }, [toast, error, busy]);
  if (!toast) return <div class="toasts" role="status" aria-live="polite" />;
  const act = async () => {
    setBusy(true);
    try {
      await toast.action!.run();
      setToast(null);
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="toasts" role="status" aria-live="polite">
      <div class="toast" key={toast.n}>
        <span class="toast-text">{error || toast.text}</span>
        {toast.action && !error && (
          <button class="toast-action" disabled={busy} onClick={act}>
            {toast.action.label}
          </button>
        )}
        <button class="quiet toast-close" aria-label="Dismiss" onClick={() => setToast(null)}>
          ×
        </button>
      </div>
    </div>
  );
}

function mount() {
  if (mounted) return;
  mounted = true;
  const host = document.createElement("div");
  host.className = "toast-host";
  document.body.append(host);
  render(<Toasts />, host);
}

// showToast shows t in place of any toast showing now.
export function showToast(t: Toast) {
  if (current) current(t);
  else first = t;
  mount();
}
