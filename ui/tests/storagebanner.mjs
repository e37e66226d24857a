// The damaged-database banner in a real Chromium, against the real Chopin
// that app/storagebanner_test.go starts:
//
//   node tests/storagebanner.mjs <launch URL> <document path>
//
// A document's tab and the repositories page are open when the Go test
// damages the database and runs the background check (asked with
// {"ask": "damage"}): the document's tab shows the banner at once (its
// socket is told), a page loaded after shows it too, on every screen; the
// page keeps the rest of the window and scrolls inside it, so the banner
// stays in view. The line protocol is browser.mjs's.

import { chromium } from "playwright-core";
import { createInterface } from "node:readline";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { axe } from "./a11y.mjs";

const [launchURL, documentPath] = process.argv.slice(2);
if (!launchURL || !documentPath) throw new Error("usage: node tests/storagebanner.mjs <launch URL> <document path>");
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

async function step(name, f) {
  const started = Date.now();
  try {
    await f();
    say({ step: name, ok: true, ms: Date.now() - started });
  } catch (e) {
    say({ step: name, ok: false, error: String(e?.stack || e) });
    throw e;
  }
}

async function shot(page, name) {
  if (shots) await page.screenshot({ path: join(shots, name + ".png") });
}

const banner = (page) => page.locator('.storage-banner[role="alert"]');

// scrolls says whether the page is taller than its window.
const scrolls = (page) =>
  page.evaluate(() => document.scrollingElement.scrollHeight > document.scrollingElement.clientHeight + 1);

const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
});
const context = await browser.newContext({ viewport: { width: 1320, height: 860 } });
let message = "";
try {
  const doc = await context.newPage();
  const list = await context.newPage();

  await step("before any damage, no banner", async () => {
    await doc.goto(launchURL);
    await doc.goto(origin + documentPath);
    await doc.locator(".cm-content").waitFor();
    await list.goto(origin + "/");
    await list
      .getByRole("heading", { name: /repositories/i })
      .first()
      .waitFor();
    for (const p of [doc, list]) if ((await banner(p).count()) !== 0) throw new Error("a banner before any damage");
  });

  await step("the document's tab is told at once", async () => {
    ({ message } = await ask({ ask: "damage" }));
    await banner(doc).waitFor({ timeout: 10000 });
    const text = await banner(doc).innerText();
    if (!text.includes("Chopin's database is damaged: nothing you change now is saved.") || !text.includes(message))
      throw new Error(`the banner says:\n${text}\nwant the server's words:\n${message}`);
    if (await scrolls(doc)) throw new Error("with the banner the workspace scrolls");
    await shot(doc, "storage-banner-workspace");
    await axe(doc, "the workspace with the damaged-database banner");
  });

  await step("a page loaded after the damage shows it", async () => {
    await list.reload();
    await banner(list).waitFor({ timeout: 10000 });
    if (!(await banner(list).innerText()).includes(message))
      throw new Error("the repositories page's banner lacks the message");
    if (await scrolls(list)) throw new Error("with the banner the repositories page scrolls");
    await shot(list, "storage-banner-repositories");
    await axe(list, "the repositories page with the damaged-database banner");
  });

  await step("the banner on a narrow window and in the dark", async () => {
    await doc.setViewportSize({ width: 390, height: 760 });
    await banner(doc).waitFor();
    const box = await banner(doc).boundingBox();
    if (!box || box.y > 1 || box.width > 391) throw new Error(`narrow, the banner is at ${JSON.stringify(box)}`);
    await shot(doc, "storage-banner-narrow");
    await doc.emulateMedia({ colorScheme: "dark" });
    await shot(doc, "storage-banner-narrow-dark");
    await axe(doc, "the narrow workspace with the banner, dark");
    await doc.emulateMedia({ colorScheme: "light" });
  });
} finally {
  await browser.close();
}
// stdin (the Go test's answers) would keep the process alive.
process.exit(0);
