// The workspace's speed in a real Chromium, measured in the page with
// performance.now(), warm cache (app/workspace_bench_test.go runs it):
//
//   node tests/perf.mjs <launch URL> <rounds> <document path>...
//
// For each document, after one round that warms the cache, each round
// measures: navigation until a character typed into the editor shows in it;
// a keypress in the Chat box until the start of the next frame (the median
// of 15); switching the plan to Preview until its last block's text is
// painted; and scrolling Chat up until its first message is on screen. It
// prints one JSON line: {"<path>": {"typeMs": [...], "keyMs": [...], ...}}.

import { chromium } from "playwright-core";

const [launchURL, roundsArg, ...paths] = process.argv.slice(2);
if (!launchURL || !paths.length) throw new Error("usage: node tests/perf.mjs <launch URL> <rounds> <path>...");
const origin = new URL(launchURL).origin;
const rounds = Number(roundsArg) || 3;

const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
});
const context = await browser.newContext({ viewport: { width: 1320, height: 860 } });
// On every document page: once the editor holds the plan and may be
// edited, type one character into it and note when it shows.
await context.addInitScript(() => {
  if (!location.pathname.startsWith("/documents/")) return;
  const poll = () => {
    const cm = document.querySelector(".cm-content");
    const status = document.querySelector(".sync-status");
    if (!cm || cm.getAttribute("contenteditable") !== "true" || !/^Saved/.test(status?.textContent ?? "")) {
      requestAnimationFrame(poll);
      return;
    }
    cm.focus();
    document.execCommand("insertText", false, "Q");
    const shown = () => {
      if ((cm.querySelector(".cm-line")?.textContent ?? "").includes("Q")) window.__typed = performance.now();
      else requestAnimationFrame(shown);
    };
    shown();
  };
  poll();
});

const page = await context.newPage();
await page.goto(launchURL);
await page.getByRole("heading", { name: "Repositories" }).waitFor();

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function round(path) {
  await page.goto(origin + path);
  await page.waitForFunction(() => window.__typed !== undefined, null, { timeout: 60000 });
  const typeMs = await page.evaluate(() => window.__typed);

  // A keypress in the Chat box to the start of the next frame.
  const box = page.getByRole("textbox", { name: "Message" });
  await box.click();
  await page.evaluate(() => {
    window.__keys = [];
    document.addEventListener(
      "keydown",
      () => {
        const t0 = performance.now();
        requestAnimationFrame(() => window.__keys.push(performance.now() - t0));
      },
      true,
    );
  });
  for (let i = 0; i < 15; i++) {
    await page.keyboard.press("k");
    await page.waitForFunction((n) => window.__keys.length >= n, i + 1);
  }
  const keyMs = median(await page.evaluate(() => window.__keys));
  await box.fill("");

  // Preview until its last block's text is painted.
  const previewMs = await page.evaluate(
    () =>
      new Promise((done) => {
        const tab = Array.from(document.querySelectorAll(".plan-toolbar [role=tab]")).find(
          (b) => b.textContent === "Preview",
        );
        const t0 = performance.now();
        tab.click();
        const check = () => {
          const last = document.querySelector(".plan-view .prose > :last-child");
          if (last && last.textContent.includes("End of the plan"))
            requestAnimationFrame(() => setTimeout(() => done(performance.now() - t0)));
          else requestAnimationFrame(check);
        };
        check();
      }),
  );
  await page.getByRole("tab", { name: "Edit" }).click();

  // Chat scrolled up until its first message shows.
  const scrollMs = await page.evaluate(
    () =>
      new Promise((done, fail) => {
        const list = document.querySelector(".transcript");
        const t0 = performance.now();
        const step = () => {
          const first = list.querySelector('[data-seq="1"]');
          if (first) {
            first.scrollIntoView();
            requestAnimationFrame(() => setTimeout(() => done(performance.now() - t0)));
            return;
          }
          if (performance.now() - t0 > 60000) return fail(new Error("the first message never showed"));
          list.scrollTop = 0;
          list.dispatchEvent(new Event("scroll"));
          setTimeout(step, 16);
        };
        step();
      }),
  );
  return { typeMs, keyMs, previewMs, scrollMs };
}

const out = {};
try {
  for (const path of paths) await round(path); // warms the cache
  for (let i = 0; i < rounds; i++)
    for (const path of paths) {
      const r = await round(path);
      const o = (out[path] ??= { typeMs: [], keyMs: [], previewMs: [], scrollMs: [] });
      for (const k of Object.keys(r)) o[k].push(Math.round(r[k] * 10) / 10);
    }
  process.stdout.write(JSON.stringify(out) + "\n");
} finally {
  await browser.close();
}
