// The images a Planner reply's tools made (details.images, live as
// chat:images), shown as one gallery labelled as generated, with each
// refused image block explained where it stood (refusedImages, "before"
// counting the images ahead of it). Only the document's own images
// (/images/<sha256>.<ext>) are ever loaded; a click opens one large.

import type { RefObject, VNode } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import type { RefusedImage, ReplyImage } from "../protocol";

export const ownImage = (src: unknown): src is string =>
  typeof src === "string" && /^\/images\/[0-9a-f]{64}\.[a-z]+$/.test(src);

// Widths the server makes thumbnails at (docs/http-api.md, "Images").
const thumb = (path: string, w: number) => `${path}?w=${w}`;

export function Gallery({ images, refused }: { images: ReplyImage[]; refused?: RefusedImage[] }) {
  const [large, setLarge] = useState<ReplyImage | null>(null);
  const shown = images.filter((i) => ownImage(i?.path));
  const notes = (refused ?? []).filter((r) => r && typeof r.reason === "string");
  if (!shown.length && !notes.length) return null;
  const items: VNode[] = [];
  for (let i = 0; i <= shown.length; i++) {
    for (const [k, r] of notes.entries())
      if (Math.min(r.before, shown.length) === i) items.push(<RefusedNote key={"r" + k} r={r} />);
    const img = shown[i];
    if (!img) continue;
    const alt = img.alt || "An image the Planner made";
    items.push(
      <figure key={"i" + i} class="gallery-item">
        <button class="gallery-open" aria-label={`Open image: ${alt}`} onClick={() => setLarge(img)}>
          <img
            src={thumb(img.path, 360)}
            srcSet={`${thumb(img.path, 360)} 1x, ${thumb(img.path, 720)} 2x`}
            alt={alt}
            loading="lazy"
            width={img.width && img.height ? Math.min(360, img.width) : undefined}
            height={
              img.width && img.height ? Math.round((Math.min(360, img.width) * img.height) / img.width) : undefined
            }
          />
        </button>
        {img.caption && <figcaption class="small">{img.caption}</figcaption>}
      </figure>,
    );
  }
  return (
    <div
      class={"gallery" + (shown.length === 1 ? " single" : "")}
      aria-label={shown.length === 1 ? "Generated image" : `${shown.length} generated images`}
      role="group"
    >
      {shown.length > 0 && (
        <div class="gallery-label muted small">
          Generated {shown.length === 1 ? "image" : `images · ${shown.length}`}
        </div>
      )}
      <div class="gallery-grid">{items}</div>
      {large && (
        <Lightbox
          src={large.path}
          alt={large.alt || "An image the Planner made"}
          caption={large.caption}
          onClose={() => setLarge(null)}
        />
      )}
    </div>
  );
}

function RefusedNote({ r }: { r: RefusedImage }) {
  return (
    <p class="refused-image small" role="note">
      {r.reason}
    </p>
  );
}

// Lightbox shows one image at its own size, within the window.
export function Lightbox({
  src,
  alt,
  caption,
  onClose,
}: {
  src: string;
  alt: string;
  caption?: string;
  onClose: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    ref.current?.showModal();
  }, []);
  return (
    <dialog
      ref={ref}
      class="lightbox"
      aria-label={alt}
      onClose={onClose}
      onClick={(e) => e.target === ref.current && ref.current?.close()}
    >
      <img src={src} alt={alt} />
      {caption && <p class="small muted">{caption}</p>}
      <div class="actions">
        {!src.startsWith("data:") && (
          <a href={src} target="_blank" rel="noopener noreferrer" class="small">
            Open in a new tab
          </a>
        )}
        <span class="spacer" />
        <button onClick={() => ref.current?.close()}>Close</button>
      </div>
    </dialog>
  );
}

// useImageZoom opens a card's or preview's own image large on click: the
// click never reaches the option it sits in.
export function useImageZoom(): [RefObject<HTMLDivElement | null>, { src: string; alt: string } | null, () => void] {
  const ref = useRef<HTMLDivElement>(null);
  const [open, setOpen] = useState<{ src: string; alt: string } | null>(null);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const f = (e: MouseEvent) => {
      const img = (e.target as HTMLElement).closest?.("img");
      if (!img || !el.contains(img) || !ownImage(img.getAttribute("src"))) return;
      e.preventDefault();
      e.stopPropagation();
      setOpen({ src: img.getAttribute("src")!, alt: img.getAttribute("alt") ?? "" });
    };
    el.addEventListener("click", f, true);
    return () => el.removeEventListener("click", f, true);
  }, []);
  return [ref, open, () => setOpen(null)];
}
