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
  if (body !== undefined) {
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
  let data: any = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON */
  }
  if (!res.ok) {
    throw new ApiError(res.status, data?.code ?? "http-" + res.status, data?.message ?? `${res.status} ${res.statusText}`);
  }
  return data as T;
}

export interface Session {
  login: string;
  name: string;
  authMode: string;
  origin: string;
  agentUrl?: string;
  version: string;
  features: Record<string, boolean>;
}

export interface Repository {
  nodeId: string;
  name: string;
  owner: string;
  repository: string;
  path?: string;
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
  description?: string;
  parentChannelId?: string;
}

export interface Message {
  id: string;
  seq: number;
  role: "person" | "planner" | "system" | string;
  author?: string;
  text: string;
  status?: string;
  createdAt: number;
  updatedAt: number;
  details?: any;
  images?: any[];
  refusedImages?: { reason: string; before: number }[];
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

export interface QuestionCall {
  method: "questionnaire" | "confirm" | "select" | "input" | "editor" | string;
  params?: { questions: Question[] };
  title?: string;
  message?: string;
  choices?: string[];
  placeholder?: string;
  initial?: string;
}

export interface CardAnswer {
  labels?: string[];
  text?: string;
  yes?: boolean;
  choice?: string;
}

export interface Decision {
  id: string;
  request: string;
  index: number;
  call: QuestionCall;
  status: "open" | "answered" | "cancelled" | "withdrawn" | string;
  answer?: CardAnswer;
  answeredBy?: string;
  block: number;
  createdAt: number;
  updatedAt: number;
}

// pathOf turns a channel's url (a path in the catalog, an absolute URL in
// session:hello) into the path of its browser route.
export function pathOf(url: string): string {
  return new URL(url, location.origin).pathname;
}
