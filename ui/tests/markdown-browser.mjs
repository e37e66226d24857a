// The pathological Markdown of corpus.mjs in a real Chromium, against the
// real Chopin that app/markdown_browser_test.go starts:
//
//   node tests/markdown-browser.mjs <launch URL> [plan KiB] [message bytes]
//
// For each input the Go test makes a document (asked on the line protocol
// of browser.mjs: `@@ {"ask": "document", "text": <json>}`, answered with
// one JSON line) whose plan holds the input at plan KiB (default 64)
// between "# Before" and "After the block.", and whose Chat holds it at
// message bytes (default 16,000) between "Before the message." and "After
// the message.". The step for it checks that Chat shows all three messages
// (the long one whole, after Show more), that the Preview shows the blocks
// around the input, that neither shows the plain-text fallback, and that the
// page raised no error. It prints a table of what each took: the time from
// opening the document until Chat showed the last message, until the whole
// long message showed, and from choosing Preview until the last block
// showed; and the page's JS heap after a collection, in MB. MARKDOWN_ONLY=
// <part of a name> runs only the inputs whose names hold it; with
// CHOPIN_SCREENSHOTS set, each input's page is saved there as it shows.

import { chromium } from "playwright-core";
import { createInterface } from "node:readline";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { pathological } from "./corpus.mjs";

const [launchURL, planKiB = "64", chatBytes = "16000"] = process.argv.slice(2);
if (!launchURL) throw new Error("usage: node tests/markdown-browser.mjs <launch URL> [plan KiB] [message bytes]");
const origin = new URL(launchURL).origin;
const shots = process.env.CHOPIN_SCREENSHOTS || "";
if (shots) mkdirSync(shots, { recursive: true });

const replies = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const say = (v) => process.stdout.write("@@ " + JSON.stringify(v) + "\n");
async function ask(question) {
  say(question);
  const { value, done } = await replies.next();
  if (done) throw new Error("the Go test stopped answering");
  const reply = JSON.parse(value);
  if (reply.error) throw new Error(`${question.ask}: ${reply.error}`);
  return reply;
}

// A tab that hangs fails its step; it is not a budget.
const patience = 60_000;

const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
});
const context = await browser.newContext({ viewport: { width: 1320, height: 860 } });

const rows = [];
let failed = false;
try {
  const first = await context.newPage();
  await first.goto(launchURL);
  await first.getByRole("heading", { name: "Repositories" }).waitFor();
  await first.close();

  const plans = pathological(Number(planKiB) * 1024 - 64);
  const chats = pathological(Number(chatBytes));
  // The issue's own: 2,000 ">" in a 2 KB message, 120,000 nested brackets in a plan.
  const issue = "the issue's: 2,000 > in Chat, 120,000 nested brackets in the plan";
  plans.unshift({ name: issue, text: "[".repeat(120_000) + "]".repeat(120_000) + "\n" });
  chats.unshift({ name: issue, text: ">".repeat(2000) });
  for (let i = 0; i < plans.length; i++) {
    const name = plans[i].name;
    if (process.env.MARKDOWN_ONLY && !name.includes(process.env.MARKDOWN_ONLY)) continue;
    const started = Date.now();
    const errors = [];
    let page;
    try {
      const doc = await ask({
        ask: "document",
        text: JSON.stringify({
          title: "Markdown " + name,
          plan: "# Before\n\n" + plans[i].text + "\n\nAfter the block.\n",
          messages: ["Before the message.", chats[i].text, "After the message."],
        }),
      });
      page = await context.newPage();
      page.on("pageerror", (e) => errors.push(String(e)));
      const cdp = await context.newCDPSession(page);
      const opened = Date.now();
      await page.goto(origin + doc.url);
      const messages = page.locator(".transcript .msg-body");
      await messages.filter({ hasText: "After the message." }).waitFor({ timeout: patience });
      const chatMs = Date.now() - opened;
      const long = page.locator(".transcript .msg").nth(1);
      const more = long.getByRole("button", { name: "Show more" });
      const moreStarted = Date.now();
      if (await more.count()) {
        await more.click({ timeout: patience });
        await more.waitFor({ state: "detached", timeout: patience });
      }
      const moreMs = Date.now() - moreStarted;
      if ((await messages.count()) !== 3) throw new Error(`Chat shows ${await messages.count()} messages, not 3`);
      for (const m of ["Before the message.", "After the message."])
        if (!(await messages.filter({ hasText: m }).count())) throw new Error(`Chat does not show "${m}"`);

      await page.getByRole("tab", { name: "Plan", exact: true }).click({ timeout: patience });
      const previewStarted = Date.now();
      await page.getByRole("tab", { name: "Preview" }).click({ timeout: patience });
      const preview = page.locator(".plan-view");
      await preview.getByText("After the block.").waitFor({ timeout: patience });
      const previewMs = Date.now() - previewStarted;
      // A CSS query: a role query reads the accessible name of every heading,
      // and some inputs make tens of thousands.
      if ((await preview.locator("h1").first().textContent()) !== "Before")
        throw new Error('the Preview does not show "# Before" first');
      if (await page.locator(".md-fallback").count())
        throw new Error("the input shows as plain text: its Markdown could not be converted");

      if (shots) await page.screenshot({ path: join(shots, `markdown-${i}.png`) });
      await cdp.send("HeapProfiler.collectGarbage");
      const { usedSize } = await cdp.send("Runtime.getHeapUsage");
      if (errors.length) throw new Error("the page raised: " + errors.join("; "));
      rows.push([name, chatMs, moreMs, previewMs, (usedSize / 1e6).toFixed(1)]);
      console.log(
        `${name}: Chat ${chatMs} ms, Show more ${moreMs} ms, Preview ${previewMs} ms, heap ${rows.at(-1)[4]} MB`,
      );
      say({ step: "shows " + name, ok: true, ms: Date.now() - started });
    } catch (e) {
      failed = true;
      rows.push([name, "failed", "", "", ""]);
      say({ step: "shows " + name, ok: false, error: String(e?.stack || e) });
    } finally {
      await page?.close({ runBeforeUnload: false }).catch(() => {});
    }
  }
} finally {
  const head = ["input", "Chat ms", "Show more ms", "Preview ms", "JS heap MB"];
  const widths = head.map((h, c) => Math.max(h.length, ...rows.map((r) => String(r[c]).length)));
  for (const r of [head, ...rows]) console.log(r.map((v, c) => String(v).padEnd(widths[c])).join("  "));
  await browser.close();
}
// The questions' reader keeps stdin open: leave without waiting for it.
process.exit(failed ? 1 : 0);
