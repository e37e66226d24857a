// Light and dark: the page follows the system setting (prefers-color-scheme)
// unless the person chose Light or Dark, which this browser remembers. The
// choice shows as data-theme on <html>; theme.css holds the dark colours,
// and the editor, Preview and Mermaid read the same variables or ask
// effectiveTheme() (Mermaid draws with a theme per mode).

import { useEffect, useState } from "preact/hooks";
import "./theme.css";

export type ThemeChoice = "system" | "light" | "dark";
export type Theme = "light" | "dark";

const key = "chopin:theme";
const dark = matchMedia("(prefers-color-scheme: dark)");
const listeners = new Set<() => void>();

function stored(): ThemeChoice {
  try {
    const v = localStorage.getItem(key);
    if (v === "light" || v === "dark") return v;
  } catch {
    /* storage unavailable: follow the system */
  }
  return "system";
}

let choice: ThemeChoice = stored();

export function themeChoice(): ThemeChoice {
  return choice;
}

export function effectiveTheme(): Theme {
  return choice === "system" ? (dark.matches ? "dark" : "light") : choice;
}

function apply() {
  const t = effectiveTheme();
  document.documentElement.dataset.theme = t;
  // Form controls and scrollbars follow too.
  document.querySelector('meta[name="color-scheme"]')?.setAttribute("content", t);
  listeners.forEach((l) => l());
}

export function setThemeChoice(c: ThemeChoice) {
  choice = c;
  try {
    if (c === "system") localStorage.removeItem(key);
    else localStorage.setItem(key, c);
  } catch {
    /* kept for this page only */
  }
  apply();
}

// onTheme calls l whenever the effective theme may have changed.
export function onTheme(l: () => void): () => void {
  listeners.add(l);
  return () => listeners.delete(l);
}

dark.addEventListener("change", () => choice === "system" && apply());
// Another tab's choice applies here too.
addEventListener("storage", (e) => {
  if (e.key === key || e.key === null) {
    choice = stored();
    apply();
  }
});
apply();

const labels: Record<ThemeChoice, string> = { system: "System", light: "Light", dark: "Dark" };

// ThemeToggle is the System / Light / Dark choice, shown in every header.
export function ThemeToggle() {
  const [c, setC] = useState(choice);
  useEffect(() => onTheme(() => setC(choice)), []);
  return (
    <select
      class="theme-toggle"
      aria-label="Theme"
      title="Colour theme: follow the system, or always light or dark"
      value={c}
      onChange={(e) => setThemeChoice(e.currentTarget.value as ThemeChoice)}
    >
      {(Object.keys(labels) as ThemeChoice[]).map((k) => (
        <option key={k} value={k}>
          {labels[k]}
        </option>
      ))}
    </select>
  );
}
