// Client-side routes (spec/channels.md, "Browser routes"). The server serves
// the page for every non-API path; this decides what it shows.

import { useEffect, useState } from "preact/hooks";

export type Route =
  | { name: "repositories" }
  | { name: "about" }
  | { name: "documents"; owner: string; repository: string }
  | { name: "document"; owner: string; repository: string; slug: string; parentSlug?: string }
  | { name: "legacy-channel"; id: string }
  | { name: "not-found" };

function dec(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

export function parse(pathname: string): Route {
  const parts = pathname.split("/").filter(Boolean).map(dec);
  if (parts.length === 0) return { name: "repositories" };
  const [head, ...rest] = parts;
  if (head === "about" && rest.length === 0) return { name: "about" };
  if (head === "documents" || head === "repositories") {
    // /repositories/... is the legacy spelling of /documents/...
    if (rest.length === 2) return { name: "documents", owner: rest[0], repository: rest[1] };
    if (rest.length === 3) return { name: "document", owner: rest[0], repository: rest[1], slug: rest[2] };
    if (rest.length === 5 && rest[3] === "children")
      return { name: "document", owner: rest[0], repository: rest[1], slug: rest[4], parentSlug: rest[2] };
  }
  if (head === "channels" && rest.length === 1) return { name: "legacy-channel", id: rest[0] };
  return { name: "not-found" };
}

const listeners = new Set<() => void>();

export function navigate(path: string, replace = false) {
  if (replace) history.replaceState(null, "", path);
  else history.pushState(null, "", path);
  listeners.forEach((l) => l());
}

// canonicalize replaces the address with the canonical route of what it
// shows, keeping the query and fragment, without a new history entry.
export function canonicalize(path: string) {
  if (location.pathname === path) return;
  history.replaceState(history.state, "", path + location.search + location.hash);
  listeners.forEach((l) => l());
}

export function usePath(): string {
  const [path, setPath] = useState(location.pathname);
  useEffect(() => {
    const update = () => setPath(location.pathname);
    listeners.add(update);
    addEventListener("popstate", update);
    return () => {
      listeners.delete(update);
      removeEventListener("popstate", update);
    };
  }, []);
  return path;
}

// onLinkClick makes an <a href> navigate in place.
export function onLinkClick(e: MouseEvent) {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const a = (e.currentTarget as HTMLAnchorElement) ?? null;
  if (!a || a.target) return;
  const url = new URL(a.href);
  if (url.origin !== location.origin) return;
  e.preventDefault();
  navigate(url.pathname + url.search + url.hash);
}
