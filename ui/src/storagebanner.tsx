// The banner every page shows once Chopin has found its database damaged:
// what happened and what to do, in the server's words. From then on Chopin
// refuses every change (storage-damaged), so the banner says so before a
// person types into a page that cannot save. A document's tab hears it on
// its socket (storage:damaged, docs/room-protocol.md); every page also asks
// GET /api/storage when it loads, when it is shown again and every minute,
// so a page without a socket learns it too. It lives in a container of its
// own above the page, so no page has to place it.

import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { api } from "./api";
import "./storagebanner.css";

// checkEveryMs is how often a visible page asks whether the database is
// sound.
const checkEveryMs = 60_000;

let damage = ""; // the server's message once damage is known
const listeners = new Set<(message: string) => void>();

// showStorageDamage shows the banner with the server's message, on every
// page of this tab from now on.
export function showStorageDamage(message: string) {
  if (!message || message === damage) return;
  damage = message;
  // The page gives the banner its room before the banner shows.
  document.body.classList.add("storage-damaged");
  listeners.forEach((l) => l(message));
}

interface StorageState {
  state: "sound" | "damaged";
  message?: string;
}

function check() {
  if (damage || document.hidden) return;
  api<StorageState>("GET", "/api/storage").then(
    (s) => {
      if (s.state === "damaged" && s.message) showStorageDamage(s.message);
    },
    () => {
      /* not reachable now: the next check asks again */
    },
  );
}

function StorageBanner() {
  const [message, setMessage] = useState(damage);
  useEffect(() => {
    listeners.add(setMessage);
    check();
    const timer = setInterval(check, checkEveryMs);
    document.addEventListener("visibilitychange", check);
    return () => {
      listeners.delete(setMessage);
      clearInterval(timer);
      document.removeEventListener("visibilitychange", check);
    };
  }, []);
  if (!message) return null;
  return (
    <section class="storage-banner" role="alert">
      <strong>Chopin's database is damaged: nothing you change now is saved.</strong>
      <p>{message}</p>
    </section>
  );
}

let mounted = false;

// mountStorageBanner puts the banner's container above the page, once.
export function mountStorageBanner() {
  if (mounted) return;
  mounted = true;
  const host = document.createElement("div");
  host.className = "storage-banner-host";
  document.body.prepend(host);
  render(<StorageBanner />, host);
}
