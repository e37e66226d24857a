// The browser socket of one open document (docs/room-protocol.md): connects,
// reconnects with backoff, hands every frame to its listeners and matches
// replies to requests by id. Close 4404 means the document was deleted: it
// does not reconnect. Close 4401 means this browser was signed out (sign out
// everywhere): the page reloads, which shows the sign-in page. A damaged
// database (storage:damaged) shows the page's banner.

import type { ClientFrame, ClientRequest, OkFrame, ServerFrame } from "./protocol";
import { showStorageDamage } from "./storagebanner";

export type Connection = "connecting" | "online" | "offline" | "deleted";

export class RoomError extends Error {
  constructor(
    public code: string,
    message: string,
  ) {
    super(message);
  }
}

export class RoomSocket {
  state: Connection = "connecting";
  private ws: WebSocket | null = null;
  private listeners = new Set<(f: ServerFrame) => void>();
  private stateListeners = new Set<(s: Connection) => void>();
  private pending = new Map<string, { resolve: (f: OkFrame) => void; reject: (e: Error) => void }>();
  private retry = 0;
  private timer: number | undefined;
  private closed = false;
  private seq = 0;

  constructor(public channelId: string) {
    this.connect();
  }

  private connect() {
    if (this.closed) return;
    this.setState("connecting");
    const url = location.origin.replace(/^http/, "ws") + "/ws?channel=" + encodeURIComponent(this.channelId);
    const ws = new WebSocket(url);
    this.ws = ws;
    ws.onopen = () => {
      this.retry = 0;
      this.setState("online");
    };
    ws.onmessage = (ev) => {
      let f: ServerFrame;
      try {
        f = JSON.parse(ev.data);
      } catch {
        return;
      }
      if (f.type === "storage:damaged") showStorageDamage(f.message);
      if ((f.type === "ok" || f.type === "error") && f.id && this.pending.has(f.id)) {
        const p = this.pending.get(f.id)!;
        this.pending.delete(f.id);
        if (f.type === "ok") p.resolve(f);
        else p.reject(new RoomError(f.code, f.message));
      }
      this.listeners.forEach((l) => l(f));
    };
    ws.onclose = (ev) => {
      if (this.ws !== ws) return;
      this.ws = null;
      for (const p of this.pending.values())
        p.reject(new RoomError("offline", "The connection to Chopin was lost; try again once it is back."));
      this.pending.clear();
      if (ev.code === 4404) {
        this.closed = true;
        this.setState("deleted");
        return;
      }
      if (ev.code === 4401) {
        this.closed = true;
        window.location.reload();
        return;
      }
      const delay = Math.min(10000, 300 * 2 ** this.retry++);
      this.setState("offline");
      this.timer = window.setTimeout(() => this.connect(), delay);
    };
  }

  private setState(s: Connection) {
    this.state = s;
    this.stateListeners.forEach((l) => l(s));
  }

  nextID(kind: string): string {
    return `${kind}${++this.seq}`;
  }

  // send sends a frame if the socket is open, and says whether it did.
  send(f: ClientFrame): boolean {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN) return false;
    this.ws.send(JSON.stringify(f));
    return true;
  }

  // request sends a frame with a fresh id and settles on its ok or error.
  request(f: ClientRequest): Promise<OkFrame> {
    const id = this.nextID(f.type.split(":")[0]);
    return new Promise((resolve, reject) => {
      if (!this.send({ ...f, id })) {
        reject(new RoomError("offline", "Not connected to Chopin; try again once the connection is back."));
        return;
      }
      this.pending.set(id, { resolve, reject });
    });
  }

  on(l: (f: ServerFrame) => void): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  // failures is how many times in a row the socket closed or could not
  // connect: 0 while it is open.
  get failures(): number {
    return this.retry;
  }

  onState(l: (s: Connection) => void): () => void {
    this.stateListeners.add(l);
    return () => this.stateListeners.delete(l);
  }

  close() {
    this.closed = true;
    clearTimeout(this.timer);
    this.ws?.close(1000);
    this.ws = null;
  }
}
