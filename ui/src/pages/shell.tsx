import type { ComponentChildren } from "preact";
import { onLinkClick } from "../router";
import { ThemeToggle } from "../theme";

export function Shell({
  crumbs,
  children,
}: {
  crumbs?: { label: string; href?: string }[];
  children: ComponentChildren;
}) {
  return (
    <div class="shell">
      <header class="shell-bar">
        <a class="brand" href="/" onClick={onLinkClick}>
          Chopin
        </a>
        {crumbs?.map((c) => (
          <>
            <span class="crumb-sep">/</span>
            {c.href ? (
              <a href={c.href} onClick={onLinkClick}>
                {c.label}
              </a>
            ) : (
              <span>{c.label}</span>
            )}
          </>
        ))}
        <span class="spacer" />
        <a class="about-link" href="/about" onClick={onLinkClick}>
          About
        </a>
        <ThemeToggle />
      </header>
      <main class="shell-main">{children}</main>
    </div>
  );
}

export function Problem({ title, children }: { title: string; children: ComponentChildren }) {
  return (
    <section class="problem" role="alert">
      <h1>{title}</h1>
      <p>{children}</p>
    </section>
  );
}

export function ErrorText({ error }: { error: string }) {
  if (!error) return null;
  return (
    <p class="error-text" role="alert" style={{ whiteSpace: "pre-line" }}>
      {error}
    </p>
  );
}

const rtf = new Intl.RelativeTimeFormat("en", { numeric: "auto" });
export function ago(t: string | number): string {
  const ms = typeof t === "number" ? t : Date.parse(t);
  const s = Math.round((ms - Date.now()) / 1000);
  const abs = Math.abs(s);
  if (abs < 45) return "just now";
  if (abs < 3600) return rtf.format(Math.round(s / 60), "minute");
  if (abs < 86400) return rtf.format(Math.round(s / 3600), "hour");
  if (abs < 86400 * 30) return rtf.format(Math.round(s / 86400), "day");
  return new Date(ms).toLocaleDateString();
}
