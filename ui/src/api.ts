// The HTTP API (docs/http-api.md). Every error is {code, message}; the
// message is the server's own words and is what the UI shows.

export class ApiError extends Error {
  constructor(
    public status: number,
    public code: string,
    message: string,
  ) {
    super(message);
  }
}

export async function api<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
  const init: RequestInit = { method, credentials: "same-origin", headers: {} };
  if (body instanceof Blob) {
    // A file sent as it is, such as a Markdown plan to import.
    init.body = body;
    (init.headers as Record<string, string>)["Content-Type"] = body.type || "application/octet-stream";
  } else if (body !== undefined) {
    init.body = JSON.stringify(body);
    (init.headers as Record<string, string>)["Content-Type"] = "application/json";
  }
  let res: Response;
  try {
    res = await fetch(path, init);
  } catch {
    throw new ApiError(0, "network", "Chopin is not reachable. Is it still running?");
  }
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  let data: unknown = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON */
  }
  if (!res.ok) {
    const e = (data ?? {}) as { code?: string; message?: string };
    throw new ApiError(res.status, e.code ?? "http-" + res.status, e.message ?? `${res.status} ${res.statusText}`);
  }
  return data as T;
}

export interface Session {
  login: string;
  name: string;
  authMode: string;
  origin: string;
  agentUrl?: string;
  mcpUrl: string; // the local agent MCP tools, served with the agent connection on or off
  version: string;
  features: Record<string, boolean>;
  command?: string; // how a terminal runs this Chopin: "chopin", or its full path when that is not on the PATH
  binary?: string; // the running program's full path, for clients that launch it from the desktop
}

// Status is GET /api/status: the About page's facts.
export interface Status {
  version: string;
  commit?: string;
  buildDate?: string;
  origin: string;
  pid: number;
  binary: string; // the running program's full path
  command: string; // how a terminal runs it
  dataDir: string;
  configDir: string;
  database: { path: string; bytes: number };
  lastBackup: { at: string; file?: string } | null;
}

export interface Repository {
  nodeId: string;
  name: string;
  owner: string;
  repository: string;
  path?: string;
  config?: boolean; // chopin.toml names it, so Chopin registers it at every start
  checkout?: RepositoryCheckout; // what the checkout at path holds now
}

// RepositoryCheckout is a repository's local checkout as Chopin reads it.
export interface RepositoryCheckout {
  git: boolean; // Git was found on this computer
  branch?: string; // empty on a detached HEAD
  head?: string; // the current commit
  origin?: string; // the origin remote, credentials masked
  warning?: string; // the origin names another repository: said, not refused
  problem?: string; // the folder is gone, or no longer a Git work tree
}

export interface Channel {
  id: string;
  title: string;
  slug: string;
  repository: string;
  url: string;
  archivedAt: string | null;
  createdAt: string;
  updatedAt: string;
  description?: string; // generated, untrusted: plain text only
  descriptionRevision: number;
  parentChannelId?: string;
}

// PlanSave is what saving a plan into its repository's checkout did
// (POST /api/channels/:id/plan/save).
export interface PlanSave {
  path: string;
  fullPath: string;
  bytes: number;
  sha256: string;
  changed: boolean;
}

// ControlResult is what Stop Planner or Resume Planner achieved (POST
// .../planner/stop and /resume): whether the running turn was aborted, and
// each session's answer.
export interface ControlResult {
  aborted: boolean;
  results: { session: string; run?: string; answered: boolean; ok: boolean; message?: string }[];
  held?: boolean;
}

// pathOf turns a channel's url (a path in the catalog, an absolute URL in
// session:hello) into the path of its browser route. Only the path is kept,
// and a relative url resolves against the root whatever the origin, so every
// base does: this one lets the room reducer run outside a browser.
export function pathOf(url: string): string {
  return new URL(url, "http://localhost").pathname;
}
