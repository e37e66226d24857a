// Files in Chat: the composer's attachments (sent with chat:send as
// [{name, data}], standard base64) and a message's own files
// (details.attachments). Chopin decides what a file is from its bytes; the
// UI only shows what it kept: images (PNG, JPEG, WebP, GIF) and text files.

import { useState } from "preact/hooks";
import type { ChatAttachment } from "../protocol";
import { Lightbox } from "./gallery";

export interface Outgoing {
  name: string;
  size: number;
  type: string;
  data: string; // standard base64
}

export const maxFiles = 20;
const shownTypes = new Set(["image/png", "image/jpeg", "image/webp", "image/gif"]);

export function readFile(f: File): Promise<Outgoing> {
  return new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onload = () => {
      const url = String(r.result);
      resolve({ name: f.name, size: f.size, type: f.type, data: url.slice(url.indexOf(",") + 1) });
    };
    r.onerror = () => reject(new Error(`${f.name} could not be read.`));
    r.readAsDataURL(f);
  });
}

export function size(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(n < 10240 ? 1 : 0)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

export function PendingFiles({ files, onRemove }: { files: Outgoing[]; onRemove: (i: number) => void }) {
  if (!files.length) return null;
  return (
    <ul class="pending-files" aria-label="Files to send">
      {files.map((f, i) => (
        <li key={i} class="file-chip">
          <span class="file-name">{f.name}</span>
          <span class="muted small">{size(f.size)}</span>
          <button type="button" class="link small" aria-label={`Remove ${f.name}`} onClick={() => onRemove(i)}>
            ×
          </button>
        </li>
      ))}
    </ul>
  );
}

// MessageFiles shows the files a message carried.
export function MessageFiles({ files }: { files: ChatAttachment[] }) {
  const [large, setLarge] = useState<{ src: string; alt: string } | null>(null);
  const list = files.filter((f) => f && typeof f.name === "string" && typeof f.data === "string");
  if (!list.length) return null;
  return (
    <div class="message-files">
      {list.map((f, i) => {
        if (f.kind === "image" && shownTypes.has(f.mediaType)) {
          const src = `data:${f.mediaType};base64,${f.data}`;
          return (
            <button
              key={i}
              class="file-image"
              aria-label={`Open image: ${f.name}`}
              onClick={() => setLarge({ src, alt: f.name })}
            >
              <img src={src} alt={f.name} />
            </button>
          );
        }
        return (
          <a key={i} class="file-chip" href={`data:text/plain;charset=utf-8;base64,${f.data}`} download={f.name}>
            <span class="file-name">{f.name}</span>
            <span class="muted small">{size(f.size ?? 0)}</span>
          </a>
        );
      })}
      {large && <Lightbox src={large.src} alt={large.alt} onClose={() => setLarge(null)} />}
    </div>
  );
}
