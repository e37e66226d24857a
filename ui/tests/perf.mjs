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
//
// With CHOPIN_PERF_PROFILE=<directory> set, each measured navigation is also
// profiled with Chromium's sampling profiler (CDP, every 200 µs) until the
// typed character shows, into <directory>/<document>-<round>.cpuprofile
// (open it in Chromium's DevTools, Performance panel).

import { chromium } from "playwright-core";
import { mkdirSync, writeFileSync } from "node:fs";

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

// When profiling, also note when each room frame arrives (its type and
// size), printed to stderr beside the round's time.
if (process.env.CHOPIN_PERF_PROFILE)
  await context.addInitScript(() => {
    window.__frames = [];
    const Native = window.WebSocket;
    window.WebSocket = class extends Native {
      constructor(...args) {
        super(...args);
        this.addEventListener("open", () => window.__frames.push(["(open)", performance.now(), 0]));
        this.addEventListener("message", (ev) =>
          window.__frames.push([/"type":"([^"]*)"/.exec(ev.data)?.[1], performance.now(), ev.data.length]),
        );
      }
    };
  });

const page = await context.newPage();
await page.goto(launchURL);
await page.getByRole("heading", { name: "Repositories" }).waitFor();

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const profileDir = process.env.CHOPIN_PERF_PROFILE;
if (profileDir) mkdirSync(profileDir, { recursive: true });
const cdp = profileDir ? await context.newCDPSession(page) : null;
if (cdp) {
  await cdp.send("Profiler.enable");
  await cdp.send("Profiler.setSamplingInterval", { interval: 200 });
}

async function round(path, profileName) {
  if (cdp && profileName) await cdp.send("Profiler.start");
  await page.goto(origin + path);
  await page.waitForFunction(() => window.__typed !== undefined, null, { timeout: 60000 });
  const typeMs = await page.evaluate(() => window.__typed);
  if (cdp && profileName) {
    const { profile } = await cdp.send("Profiler.stop");
    writeFileSync(`${profileDir}/${profileName}.cpuprofile`, JSON.stringify(profile));
    const frames = await page.evaluate(() => window.__frames);
    process.stderr.write(
      `${profileName}: typed at ${typeMs.toFixed(0)} ms; frames ${frames.map(([t, at, n]) => `${t}@${at.toFixed(0)}(${n})`).join(" ")}\n`,
    );
  }

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
      const r = await round(path, `${path.split("/").pop()}-${i + 1}`);
      const o = (out[path] ??= { typeMs: [], keyMs: [], previewMs: [], scrollMs: [] });
      for (const k of Object.keys(r)) o[k].push(Math.round(r[k] * 10) / 10);
    }
  process.stdout.write(JSON.stringify(out) + "\n");
} finally {
  await browser.close();
}
