// The web UI in a real Chromium (Debian's /usr/bin/chromium, driven by
// playwright-core), against the real Chopin that app/browser_test.go starts.
//
//   node tests/browser.mjs <launch URL>
//
// It talks to the Go test over a line protocol: it writes `@@ {json}` lines
// to stdout, either a step's result ({"step", "ok", "error"?}) or a question
// ({"ask": ...}), which the Go test answers with one JSON line on stdin.
// Screenshots go to $CHOPIN_SCREENSHOTS when it is set.

import { chromium } from "playwright-core";
import { createInterface } from "node:readline";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createServer } from "node:http";
import { gzipSync } from "node:zlib";

const launchURL = process.argv[2];
if (!launchURL) throw new Error("usage: node tests/browser.mjs <launch URL>");
const origin = new URL(launchURL).origin;
const shots = process.env.CHOPIN_SCREENSHOTS || "";
if (shots) mkdirSync(shots, { recursive: true });

const replies = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const say = (v) => process.stdout.write("@@ " + JSON.stringify(v) + "\n");
async function ask(question) {
  say({ ask: question.ask, ...question });
  const { value, done } = await replies.next();
  if (done) throw new Error("the Go test stopped answering");
  const reply = JSON.parse(value);
  if (reply.error) throw new Error(`${question.ask}: ${reply.error}`);
  return reply;
}

let failed = false;
async function step(name, f) {
  const started = Date.now();
  try {
    await f();
    say({ step: name, ok: true, ms: Date.now() - started });
  } catch (e) {
    failed = true;
    say({ step: name, ok: false, error: String(e?.stack || e) });
    if (shots) {
      let i = 0;
      for (const p of context.pages()) await p.screenshot({ path: join(shots, `failed-${++i}.png`) }).catch(() => {});
    }
    throw e;
  }
}

async function until(what, f, timeout = 10000) {
  const deadline = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      last = await f();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (last: ${last})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

// The editor's text, line by line; a Decision line shows as a chip, which
// stands for the line's source.
const editorText = (page) =>
  page.evaluate(() =>
    Array.from(document.querySelectorAll(".cm-content .cm-line"), (l) => {
      const chip = l.querySelector(".cm-decision-chip");
      return chip ? `<Decision id="${chip.dataset.decision}" />` : l.textContent;
    }).join("\n"),
  );

// openHistory opens the Decisions pane's history of resolved cards.
async function openHistory(page) {
  const history = page.locator(".decisions .decision-history");
  await history.waitFor();
  if ((await history.getAttribute("open")) === null) await history.locator("summary").click();
}

// checkoutFits throws when the header's "reads <path> @ <branch>" runs
// past its place: the path gives way, "reads" and the branch do not, and
// nothing runs under the buttons beside it.
async function checkoutFits(page) {
  const fits = await page.locator(".top-bar .reads").evaluate((el) => {
    const next = el.nextElementSibling?.getBoundingClientRect();
    return { over: el.scrollWidth - el.clientWidth, gap: next ? next.left - el.getBoundingClientRect().right : 0 };
  });
  if (fits.over > 1 || fits.gap < 0) throw new Error(`the checkout runs past its place: ${JSON.stringify(fits)}`);
}

async function shot(page, name) {
  if (shots) await page.screenshot({ path: join(shots, name + ".png"), fullPage: false });
}

const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  headless: true,
  args: [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
});
const context = await browser.newContext({ viewport: { width: 1320, height: 860 }, acceptDownloads: true });

// Headless Chromium draws a page that has had input but is not in front at
// 2-3 frames a second, and Playwright waits for two frames before each
// click: with the walk going back and forth between pages, each action on
// the page behind took 1-2 s, most of the walk's time. A person works in the
// tab in front, and so does the walk: using a page brings it to the front.
// The request is not awaited; it goes out before the action that follows.
let front = null;
async function newPage(ctx = context) {
  const page = await ctx.newPage();
  front = page;
  return new Proxy(page, {
    get(target, prop) {
      if (front !== target && !target.isClosed()) {
        front = target;
        target.bringToFront().catch(() => {});
      }
      const v = Reflect.get(target, prop, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}

const errors = [];
context.on("weberror", (e) => errors.push(String(e.error())));
context.on("console", (m) => m.type() === "error" && process.stderr.write(`console: ${m.text()}\n`));
// Chopin needs no network: every request its pages make stays on its origin.
const offsite = [];
context.on("request", (r) => {
  const u = new URL(r.url());
  if (["http:", "https:", "ws:", "wss:"].includes(u.protocol) && u.host !== new URL(origin).host) offsite.push(r.url());
});

try {
  const a = await newPage();
  let docPath = "";
  let channel = "";

  await step("sign in through the launch link", async () => {
    await a.goto(launchURL);
    await a.getByRole("heading", { name: "Repositories" }).waitFor();
    if (new URL(a.url()).pathname !== "/") throw new Error("landed on " + a.url());
  });

  await walkRepositories(a);

  await step("add a repository", async () => {
    await a.goto(origin + "/");
    await a.getByPlaceholder("acme/website").fill("octo/plans");
    await a.getByRole("button", { name: "Add repository" }).click();
    await a.waitForURL(origin + "/documents/octo/plans");
    await a.getByRole("heading", { name: "Documents" }).waitFor();
    // Adding it again is refused in the server's words.
    await a.goto(origin + "/");
    await a.getByRole("link", { name: "octo/plans" }).waitFor();
    await a.getByPlaceholder("acme/website").fill("Octo/Plans");
    await a.getByRole("button", { name: "Add repository" }).click();
    await until("the refusal", async () => (await a.locator(".error-text").textContent())?.includes("already"));
    await shot(a, "01-repositories");
    await a.getByRole("link", { name: "octo/plans" }).click();
    await a.waitForURL(origin + "/documents/octo/plans");
  });

  let checkoutPath = "";
  await step("a repository's local checkout is validated, set and shown with its branch and commit", async () => {
    const { path, plain } = await ask({ ask: "checkout" });
    checkoutPath = path;
    await a.goto(origin + "/");
    const row = a.getByRole("listitem", { name: "octo/plans" });
    await row.getByRole("button", { name: "Set checkout" }).click();
    const field = row.getByRole("textbox", { name: "Local checkout" });
    // A folder that is no Git work tree is refused, saying why.
    await field.fill(plain);
    await row.getByRole("button", { name: "Save" }).click();
    await until("the refusal", async () =>
      (await row.locator(".error-text").textContent())?.includes("is not a Git work tree"),
    );
    // A work tree is set; its other origin is a warning, not a refusal.
    await field.fill(path);
    await row.getByRole("button", { name: "Save" }).click();
    const state = row.getByLabel("Checkout state");
    await until("the branch and commit", async () =>
      /^on main at [0-9a-f]{7}$/.test((await state.textContent()) ?? ""),
    );
    await row.getByText(path, { exact: true }).waitFor();
    const warning = await row.getByRole("status").textContent();
    if (!warning?.includes("origin remote is someone/else, not octo/plans")) throw new Error("warning: " + warning);
    // The page says the same after a reload: it is stored.
    await a.reload();
    await until("the stored checkout", async () =>
      /^on main at [0-9a-f]{7}$/.test(
        (await a.getByRole("listitem", { name: "octo/plans" }).getByLabel("Checkout state").textContent()) ?? "",
      ),
    );
    await row.getByRole("button", { name: "Change checkout" }).waitFor();
    await shot(a, "01b-checkout");
    await a.getByRole("link", { name: "octo/plans" }).click();
    await a.waitForURL(origin + "/documents/octo/plans");
  });

  await step("create a document", async () => {
    await a.getByPlaceholder("Title (optional)").fill("Launch plan");
    await a.getByRole("button", { name: "New document" }).click();
    await a.waitForURL(origin + "/documents/octo/plans/launch-plan");
    docPath = "/documents/octo/plans/launch-plan";
    await a.locator(".cm-content").waitFor();
    await until("the plan's text", async () => (await editorText(a)) === "# Launch plan\n");
    channel = await a.evaluate(
      async () => (await (await fetch("/api/repositories/octo/plans/documents/launch-plan")).json()).id,
    );
  });

  await step("typing in the plan reaches the server", async () => {
    await a.locator(".cm-content").click();
    await a.keyboard.press("Control+End");
    await a.keyboard.type("\nWe ship on Monday. Été 👋");
    const want = "# Launch plan\n\nWe ship on Monday. Été 👋";
    await until("the server's plan", async () => (await ask({ ask: "plan", channel })).source === want);
    await until("the saved state", async () => (await a.locator(".sync-status").textContent()).startsWith("Saved"));
  });

  const b = await newPage();
  await step("two pages on one document converge", async () => {
    await b.goto(origin + docPath);
    await until("b's text", async () => (await editorText(b)).includes("We ship on Monday."));
    await until("presence", async () => (await a.locator(".presence").textContent()).startsWith("2"));
    // Both type at once, at different places.
    await b.locator(".cm-content").click();
    await b.keyboard.press("Control+Home");
    await b.keyboard.press("End");
    const typeA = (async () => {
      await a.keyboard.press("Control+End");
      for (const w of [" First", " from", " A."]) await a.keyboard.type(w);
    })();
    const typeB = (async () => {
      for (const w of [" —", " B", " was", " here"]) await b.keyboard.type(w);
    })();
    await Promise.all([typeA, typeB]);
    const server = await until("convergence", async () => {
      const [ta, tb, s] = await Promise.all([editorText(a), editorText(b), ask({ ask: "plan", channel })]);
      return ta === tb && ta === s.source && ta.includes("First from A.") && ta.includes("— B was here")
        ? s.source
        : null;
    });
    if (!server.startsWith("# Launch plan — B was here\n"))
      throw new Error("unexpected text " + JSON.stringify(server));
    await shot(a, "02-workspace-plan");
  });

  await step("a chat message appears in the other page", async () => {
    const box = a.getByRole("textbox", { name: "Message" });
    await box.fill("Morning, all");
    await box.press("Shift+Enter");
    await box.pressSequentially("second line");
    await box.press("Enter");
    await b.locator(".transcript .msg-person").filter({ hasText: "second line" }).waitFor();
    const html = await b.locator(".transcript .msg-person .msg-body").last().innerHTML();
    if (!html.includes("Morning, all<br>second line")) throw new Error("line break lost: " + html);
    await until("the composer emptied", async () => (await box.inputValue()) === "");
  });

  await step("an @chopin message without a Planner is refused in Chopin's words, with Connect a Planner", async () => {
    const box = a.getByRole("textbox", { name: "Message" });
    await box.fill("@chopin draft the rollout");
    await box.press("Enter");
    const note = a.locator(".composer .not-sent");
    const got = await until("the refusal", async () => note.locator("p").textContent());
    if (!got.startsWith("Not sent: no Planner is attached to this document") || /machine|agent client/.test(got))
      throw new Error("refusal: " + got);
    await note.getByRole("button", { name: "Connect a Planner" }).waitFor();
    await shot(a, "02b-not-sent");
    if ((await box.inputValue()) !== "@chopin draft the rollout") throw new Error("the refused draft was lost");
    await box.fill("");
  });

  await step("the Connect dialog leads with the bundled Planner and the model server found running", async () => {
    await a.locator(".planner-button").click();
    const dialog = a.getByRole("dialog", { name: "Connect a Planner" });
    await dialog.waitFor();
    const session = await a.evaluate(async () => (await fetch("/api/session")).json());
    const { servers } = await ask({ ask: "model-servers" });
    const [ollama, llama] = servers;
    const docURL = origin + docPath;
    // The server found running, with its models and the exact command.
    const found = dialog.getByRole("group", { name: "llama.cpp found" });
    await found.waitFor();
    const text = await found.textContent();
    if (!text.includes(`llama.cpp is running at ${llama.baseUrl} with 2 models.`)) throw new Error("found: " + text);
    const command = () => found.getByLabel("Planner command").textContent();
    const want = (m) => `chopin planner --base-url ${llama.baseUrl} --model ${m} ${docURL}`;
    if ((await command()) !== want("qwen2.5")) throw new Error("command: " + (await command()));
    await found.getByRole("combobox", { name: "llama.cpp model" }).selectOption("llama3.2");
    if ((await command()) !== want("llama3.2")) throw new Error("after choosing llama3.2: " + (await command()));
    // The one not running: how to start it, on its port.
    const others = dialog.locator(".model-servers");
    await others.locator("summary").click();
    if ((await others.getByLabel("Start Ollama").textContent()) !== "ollama serve") throw new Error("Ollama's start");
    if (!(await others.textContent()).includes(`Ollama (port ${new URL(ollama.baseUrl).port})`))
      throw new Error("others: " + (await others.textContent()));
    // Then the ACP presets, each with how to install it and the exact command.
    for (const [title, name, install] of [
      ["Claude Code", "claude", "npm install -g @zed-industries/claude-agent-acp"],
      ["Codex", "codex", "npm install -g @zed-industries/codex-acp"],
      ["Gemini CLI", "gemini", "npm install -g @google/gemini-cli"],
    ]) {
      const command = await dialog.getByLabel(`${title} command`).textContent();
      if (command !== `chopin planner --acp ${name} ${docURL}`) throw new Error(`${title}: ${command}`);
      if ((await dialog.getByLabel(`${title} install`).textContent()) !== install) throw new Error(`${title} install`);
    }
    // The model servers first, the agent URL last, out of the way; no checkout asked for.
    const all = await dialog.textContent();
    const at = (s) => all.indexOf(s);
    if (!(at("llama.cpp is running") < at("Claude Code") && at("Claude Code") < at(session.agentUrl)))
      throw new Error("order: " + all);
    if (/checkout of/.test(all)) throw new Error("the dialog asks for a checkout: " + all);
    if (await dialog.getByLabel("Agent URL").isVisible()) throw new Error("the agent URL shows before it is asked for");
    await shot(a, "03-connect");
    await dialog.getByRole("button", { name: "Done" }).click();
    await dialog.waitFor({ state: "hidden" });
  });

  await step(
    "the Connect dialog shows each MCP client's set-up as docs/mcp.md has it, the token in no file",
    async () => {
      await a.locator(".planner-button").click();
      const dialog = a.getByRole("dialog", { name: "Connect a Planner" });
      await dialog.waitFor();
      const mcpUrl = origin + "/mcp";
      const { binary } = await a.evaluate(async () => (await fetch("/api/session")).json());
      if (!binary.startsWith("/")) throw new Error("the session names no absolute binary: " + binary);
      const client = dialog.getByRole("combobox", { name: "MCP client" });
      const snippet = async () =>
        dialog.getByLabel(`${await client.locator("option:checked").textContent()} set-up`).textContent();
      const claude = `claude mcp add --scope user --transport http chopin ${mcpUrl} \\\n  --header 'Authorization: Bearer \${CHOPIN_TOKEN}'`;
      if ((await snippet()) !== claude) throw new Error("Claude Code over HTTP: " + (await snippet()));
      if (
        (await dialog.getByLabel("Token for the environment").textContent()) !== 'export CHOPIN_TOKEN="$(chopin token)"'
      )
        throw new Error("the token's line: " + (await dialog.getByLabel("Token for the environment").textContent()));
      await client.selectOption({ label: "Codex" });
      if (
        !(await snippet()).includes(
          `[mcp_servers.chopin]\nurl = "${mcpUrl}"\nbearer_token_env_var = "CHOPIN_TOKEN"\ndefault_tools_approval_mode = "approve"`,
        )
      )
        throw new Error("Codex: " + (await snippet()));
      await dialog.getByRole("radio", { name: "chopin mcp" }).check();
      if (
        (await snippet()) !==
        `[mcp_servers.chopin]\ncommand = "${binary}"\nargs = ["mcp"]\ndefault_tools_approval_mode = "approve"`
      )
        throw new Error("Codex over chopin mcp: " + (await snippet()));
      for (const name of ["Gemini CLI", "Cursor", "VS Code", "Claude Desktop"]) {
        await client.selectOption({ label: name });
        const cfg = JSON.parse(await snippet());
        const server = (cfg.mcpServers ?? cfg.servers).chopin;
        if (server.command !== binary || server.args.join(" ") !== "mcp")
          throw new Error(name + ": " + (await snippet()));
      }
      // Claude Desktop launches commands only: HTTP is not offered for it.
      if (!(await dialog.getByRole("radio", { name: "HTTP" }).isDisabled()))
        throw new Error("HTTP is offered for Claude Desktop");
      await client.selectOption({ label: "VS Code" });
      await dialog.getByRole("radio", { name: "HTTP" }).check();
      const cfg = JSON.parse(await snippet());
      if (
        cfg.servers.chopin.url !== mcpUrl ||
        cfg.servers.chopin.headers.Authorization !== "Bearer ${input:chopin-token}"
      )
        throw new Error("VS Code over HTTP: " + (await snippet()));
      await client.selectOption({ label: "Gemini CLI" });
      const { token } = await ask({ ask: "token" });
      if ((await dialog.locator(".mcp-setup").textContent()).includes(token))
        throw new Error("the MCP set-up shows the token");
      await shot(a, "03-connect-mcp");
      await dialog.getByRole("button", { name: "Done" }).click();
      await dialog.waitFor({ state: "hidden" });
    },
  );

  let imagePath = "";
  await step("the Planner's status names the model it answers with, not the computer's login", async () => {
    await ask({ ask: "attach", channel });
    const button = a.locator(".planner-button");
    // Model Two: the default of the catalog the Planner reported.
    await until("the attached label", async () => (await button.textContent()) === "Planner · Model Two");
    const session = await a.evaluate(async () => (await fetch("/api/session")).json());
    if ((await button.getAttribute("title")).includes(session.login)) throw new Error("the title names the login");
    // A tab opened now reads it over HTTP: a joining socket gets no planner:status.
    const f = await newPage();
    await f.goto(origin + docPath);
    await until(
      "the new tab's label",
      async () => (await f.locator(".planner-button").textContent()) === "Planner · Model Two",
    );
    await f.close();
  });

  await step("the header shows the checkout the Planner reads, and when Git was not found", async () => {
    const reads = a.locator(".top-bar .reads");
    await until("reads <path> @ <branch>", async () => (await reads.textContent()) === `reads ${checkoutPath} @ main`);
    if (!(await reads.getAttribute("title"))?.includes("on branch main at commit abababababab"))
      throw new Error("title " + (await reads.getAttribute("title")));
    await ask({ ask: "nogit", text: "true" });
    await until(
      "Git was not found",
      async () => (await reads.textContent()) === `reads ${checkoutPath} · Git was not found`,
    );
    if (!(await a.locator(".planner-button").getAttribute("title"))?.includes("Git was not found on its computer"))
      throw new Error("the Planner's status does not say Git was not found");
    await shot(a, "04b-reads-nogit");
    await ask({ ask: "nogit", text: "false" });
    await until("Git found again", async () => (await reads.textContent()) === `reads ${checkoutPath} @ main`);
    await checkoutFits(a);
  });

  await step("the composer offers the Planner's models and thinking levels", async () => {
    const model = a.getByRole("combobox", { name: "Model" });
    await model.waitFor();
    const names = await model.locator("option").allTextContents();
    if (JSON.stringify(names) !== '["Default · Model Two","Model One","Model Two"]')
      throw new Error("models " + JSON.stringify(names));
    if ((await model.locator("optgroup").getAttribute("label")) !== "Acme") throw new Error("no provider group");
    // Model Two has no levels, so no level control until Model One is chosen.
    if (await a.getByRole("combobox", { name: "Thinking level" }).count())
      throw new Error("a level control for a model without levels");
    await model.selectOption({ label: "Model One" });
    const level = a.getByRole("combobox", { name: "Thinking level" });
    await level.waitFor();
    const levels = await level.locator("option").allTextContents();
    if (JSON.stringify(levels) !== '["Model default","low","xhigh","Default"]')
      throw new Error("levels " + JSON.stringify(levels));
    await level.selectOption("xhigh");
    const saved = await until("the saved choice", async () => {
      const m = await a.evaluate(async (id) => (await fetch(`/api/channels/${id}/planner/model`)).json(), channel);
      return m.model === "m-one" && m.thinkingLevel === "xhigh" ? m : null;
    });
    // Another tab shows the same choice.
    const g = await newPage();
    await g.goto(origin + docPath);
    await until(
      "g's level",
      async () => (await g.getByRole("combobox", { name: "Thinking level" }).inputValue()) === "xhigh",
    );
    await g.close();
    await shot(a, "10-model-picker");
  });

  await step("a Planner reply shows run cards as a stage tree", async () => {
    const box = a.getByRole("textbox", { name: "Message" });
    await box.fill("@chopin build and test it");
    await box.press("Enter");
    const reply = a.locator(".transcript .msg-planner").last();
    await reply.getByText("Building it now.").waitFor();
    const card = a.locator(".run-card[data-run=run-build]");
    await card.waitFor();
    if (!(await card.locator(".run-status").textContent()).includes("Running"))
      throw new Error("status " + (await card.locator(".run-status").textContent()));
    if (await card.locator(".stages").count()) throw new Error("the card opened by itself");
    await card.locator(".run-head").click();
    await card.locator(".stages").first().waitFor();
    await card.getByText("3 earlier stages not sent").waitFor();
    const shown = async (c, id) => c.locator(`[data-stage="${id}"]`).first().getAttribute("data-shown");
    const want = { plan: "completed", compile: "failed", link: "stopped", test: "running", unit: "completed" };
    for (const [id, st] of Object.entries(want))
      if ((await shown(card, id)) !== st) throw new Error(`${id} shows ${await shown(card, id)}, want ${st}`);
    // The tree: link under compile, unit under test.
    if ((await card.locator('[data-stage="compile"] [data-stage="link"]').count()) !== 1)
      throw new Error("link is not under compile");
    if ((await card.locator('[data-stage="test"] [data-stage="unit"]').count()) !== 1)
      throw new Error("unit is not under test");
    // A stopped run stops every unfinished stage's display.
    const docs = a.locator(".run-card[data-run=run-docs]");
    await docs.locator(".run-head").click();
    if ((await shown(docs, "upload")) !== "stopped")
      throw new Error("upload of a stopped run shows " + (await shown(docs, "upload")));
    await shot(a, "11-run-cards");
  });

  await step("a tool's images show as a gallery, refused ones explained", async () => {
    const reply = a.locator(".transcript .msg-planner").last();
    const img = reply.locator(".gallery img");
    await img.waitFor();
    if ((await img.getAttribute("alt")) !== "Build times chart")
      throw new Error("alt " + (await img.getAttribute("alt")));
    imagePath = new URL(await img.getAttribute("src"), origin).pathname;
    if (!/^\/images\/[0-9a-f]{64}\.png$/.test(imagePath)) throw new Error("src " + imagePath);
    await until("the thumbnail drawn", async () => img.evaluate((el) => el.complete && el.naturalWidth > 0));
    await reply.getByText("Build times this week").waitFor();
    const refused = await reply.locator(".refused-image").textContent();
    if (!refused.startsWith("Image couldn't be shown:")) throw new Error("refused " + refused);
    await reply.locator(".gallery-open").click();
    const box = a.locator("dialog.lightbox");
    await box.waitFor();
    await shot(a, "12-gallery-open");
    await box.getByRole("button", { name: "Close" }).click();
    await box.waitFor({ state: "hidden" });
  });

  await step("the reply's Work details show its tool call as the server sent it", async () => {
    const work = a.locator(".transcript .msg-planner").last().locator("details.work");
    await work.locator("summary").click();
    const summary = await work.locator("summary").textContent();
    if (summary !== "Work details · 1 action") throw new Error("summary " + summary);
    const row = work.locator(".work-row");
    await until("the tool row done", async () => (await row.getAttribute("class")) === "work-row done");
    const name = await row.locator(".mono").textContent();
    if (name !== "draw_chart") throw new Error("row name " + name);
    const status = await row.locator(".muted").first().textContent();
    if (status !== "Done") throw new Error("row status " + status);
  });

  await step("a message the working Planner did not read shows as a quiet notice", async () => {
    const box = a.getByRole("textbox", { name: "Message" });
    await box.fill("@chopin also check the docs");
    await box.press("Enter");
    await a.locator(".transcript .msg-person").filter({ hasText: "also check the docs" }).waitFor();
    const session = await a.evaluate(async () => (await fetch("/api/session")).json());
    const want = `The Planner did not read @${session.login}'s message while it worked, and it will not be sent again: the build is half done. Send it again once the Planner has replied.`;
    const notice = a.getByRole("note", { name: "Notice" }).filter({ hasText: "did not read" });
    await notice.waitFor();
    const got = await notice.locator(".notice-text").textContent();
    if (got !== want) throw new Error(`notice\n got ${got}\nwant ${want}`);
    // A notice, not a person's message: no author, its own quiet band.
    if (await notice.locator(".msg-author, .msg-body").count()) throw new Error("the notice looks like a message");
    const look = await notice.evaluate((el) => {
      const s = getComputedStyle(el);
      const person = getComputedStyle(document.querySelector(".transcript .msg-person"));
      return {
        bg: s.backgroundColor,
        size: parseFloat(s.fontSize),
        personBg: person.backgroundColor,
        personSize: parseFloat(getComputedStyle(document.querySelector(".transcript .msg-person .msg-body")).fontSize),
      };
    });
    if (look.bg === look.personBg || look.size >= look.personSize)
      throw new Error("the notice is styled as a message: " + JSON.stringify(look));
    const seen = await ask({ ask: "planner", channel });
    if (JSON.stringify(seen.steers) !== JSON.stringify([`@${session.login}: @chopin also check the docs`]))
      throw new Error("steers " + JSON.stringify(seen.steers));
    await shot(a, "17-notice");
  });

  await step("Stop Planner and Resume Planner show what the Planner did", async () => {
    const bar = a.getByLabel("Planner controls");
    await bar.getByRole("button", { name: "Stop Planner" }).click();
    const result = bar.locator(".control-result");
    await until(
      "the stop result",
      async () =>
        (await result.textContent()).includes("Stopped the Planner's reply.") &&
        (await result.textContent()).includes("The Planner paused its runs: Paused at Run the tests."),
    );
    await a.locator(".transcript .msg-planner.status-stopped").last().waitFor();
    const card = a.locator(".run-card[data-run=run-build]");
    await until("the paused run", async () => (await card.locator(".run-status").textContent()) === "Paused");
    // A paused run's unfinished stages stay as they are: only stopped, failed or blocked runs stop them.
    if ((await card.locator('[data-stage="test"]').first().getAttribute("data-shown")) !== "running")
      throw new Error("a paused run stopped its stages");
    await shot(a, "13-stopped");
    await bar.getByRole("button", { name: "Resume Planner" }).click();
    await until("the resume result", async () =>
      (await result.textContent()).includes("The Planner resumed its runs."),
    );
    await until("the running run", async () => (await card.locator(".run-status").textContent()) === "Running");
    // One run alone, from its card.
    await card.getByRole("button", { name: "Stop this run" }).click();
    await until("the run's stop result", async () =>
      (await result.textContent()).includes("The Planner paused the run"),
    );
    const seen = await ask({ ask: "planner", channel });
    if (seen.model !== "m-one" || seen.thinkingLevel !== "xhigh")
      throw new Error("the turn ran " + JSON.stringify(seen));
    if (JSON.stringify(seen.stops) !== '["","run-build"]' || JSON.stringify(seen.resumes) !== '[""]')
      throw new Error("the Planner saw " + JSON.stringify(seen));
    await result.getByRole("button", { name: "Dismiss" }).click();
  });

  await step("answer a Decision card asked through the app", async () => {
    await ask({ ask: "decision", channel });
    // The card's line arrives in both editors as the server's own update.
    await until("the decision line in b", async () => (await editorText(b)).includes("<Decision id="));
    const tab = a.getByRole("tab", { name: /Decisions/ });
    await until("the unanswered badge", async () => (await tab.textContent()).includes("1"));
    await tab.click();
    const card = a.locator(".decisions .decision-card").first();
    await card.getByText("Which store?").waitFor();
    await card.getByText("We need durability.").waitFor();
    await card.getByText("SQLite", { exact: true }).click();
    await shot(a, "04-decision-open");
    await card.getByRole("button", { name: "Answer" }).click();
    await until("decided", async () => (await ask({ ask: "decisions", channel })).decisions[0].status === "decided");
    const d = (await ask({ ask: "decisions", channel })).decisions[0];
    if (JSON.stringify(d.answer) !== '{"labels":["SQLite"]}') throw new Error("answer " + JSON.stringify(d.answer));
    // A decided card goes to the history, which starts collapsed.
    await a.getByText("Nothing waits for an answer.").waitFor();
    if (await a.locator(".decisions .decision-card").count()) throw new Error("the history is not collapsed");
    await openHistory(a);
    await a.locator(".decisions .decision-card.status-decided").waitFor();
    await until("the badge cleared", async () => !(await tab.textContent()).match(/\d/));
    // Nobody waited on this question, so its answer reaches the Planner as a turn of its own.
    await until("the answer's turn", async () =>
      (await ask({ ask: "planner", channel })).other.includes("Which store?"),
    );
    await until(
      "its reply",
      async () => (await a.locator(".transcript .msg-planner.status-done").filter({ hasText: "Noted." }).count()) === 1,
    );
    // "Show in plan" opens the Plan at the card's line.
    await a.locator(".decisions .decision-card").first().getByRole("button", { name: "Show in plan" }).click();
    await until(
      "the Plan tab",
      async () => (await a.getByRole("tab", { name: "Plan", exact: true }).getAttribute("aria-selected")) === "true",
    );
    await until("the card's line selected", async () =>
      (await a.locator(".cm-activeLine .cm-decision-chip").textContent())?.includes("Which store?"),
    );
  });

  await step(
    "a decided card is reopened and answered again, another discarded, each confirmed, live in both tabs",
    async () => {
      await a.getByRole("tab", { name: /Decisions/ }).click();
      await b.getByRole("tab", { name: /Decisions/ }).click();
      await openHistory(a);
      const card = a.locator(".decisions .decision-card.status-decided", { hasText: "Which store?" });
      await card.getByRole("button", { name: "Reopen…" }).click();
      await card.getByText("Its answer stays under it as the previous one").waitFor();
      await shot(a, "50-decision-reopen-confirm");
      await card.getByRole("button", { name: "Reopen", exact: true }).click();
      // The other tab sees it waiting again, its earlier answer under it, and answers it.
      const other = b.locator(".decisions .decision-card.status-reopened", { hasText: "Which store?" });
      await other.locator(".previous-answers", { hasText: "SQLite" }).waitFor();
      await other.getByText("Postgres", { exact: true }).click();
      await other.getByRole("button", { name: "Answer" }).click();
      await until("decided again", async () => {
        const d = (await ask({ ask: "decisions", channel })).decisions[0];
        return (
          d.status === "decided" &&
          d.answer?.labels?.[0] === "Postgres" &&
          d.previous?.[0]?.answer?.labels?.[0] === "SQLite"
        );
      });
      await a.locator(".transcript").getByText("reopened the decision “Which store?” (it was: SQLite)").waitFor();
      await a
        .locator(".transcript")
        .getByText("answered the reopened decision “Which store?”: Postgres (before: SQLite)")
        .waitFor();
      await openHistory(a);
      const decided = a.locator(".decisions .decision-card.status-decided", { hasText: "Which store?" });
      await decided.locator(".previous-answers", { hasText: "SQLite" }).waitFor();
      await decided.getByText("Postgres", { exact: true }).waitFor();

      // Discard, from the other tab: Keep it changes nothing; Discard does.
      await ask({
        ask: "decision-apart",
        channel,
        text: '{"method": "confirm", "title": "Ship it on Friday?", "message": ""}',
      });
      const ship = b.locator(".decisions .decision-card.status-open", { hasText: "Ship it on Friday?" });
      await ship.getByRole("button", { name: "Discard…" }).click();
      await ship.getByText("Discard this question?").waitFor();
      await ship.getByRole("button", { name: "Keep it" }).click();
      await ship.getByRole("button", { name: "Yes" }).waitFor();
      await ship.getByRole("button", { name: "Discard…" }).click();
      await ship.getByRole("button", { name: "Discard", exact: true }).click();
      await until("discarded", async () =>
        (await ask({ ask: "decisions", channel })).decisions.some((d) => d.status === "discarded" && d.discardedBy),
      );
      await openHistory(a);
      await a
        .locator(".decisions .decision-card.status-discarded", { hasText: "Ship it on Friday?" })
        .getByText("Discarded by")
        .waitFor();
      const size = a.viewportSize();
      for (const [w, h] of [
        [1280, 800],
        [390, 844],
      ]) {
        await a.setViewportSize({ width: w, height: h });
        if (w < 900) await a.getByRole("navigation", { name: "Destinations" }).getByText("Decisions").click();
        await openHistory(a);
        await decided.scrollIntoViewIfNeeded();
        for (const scheme of ["light", "dark"]) {
          await a.emulateMedia({ colorScheme: scheme });
          await shot(a, `50-decision-history-${w}-${scheme}`);
        }
      }
      await a.emulateMedia({ colorScheme: "light" });
      await a.setViewportSize(size);
    },
  );

  await step(
    "the answer being composed is shared live with the other tab, who is where shows, and either tab submits",
    async () => {
      await ask({
        ask: "decision-apart",
        channel,
        text: JSON.stringify({
          method: "questionnaire",
          params: {
            questions: [
              {
                question: "Which cache?",
                header: "Cache",
                options: [
                  { label: "Redis", description: "a server" },
                  { label: "In memory", description: "per process" },
                ],
              },
            ],
          },
        }),
      });
      await a.getByRole("tab", { name: /Decisions/ }).click();
      await b.getByRole("tab", { name: /Decisions/ }).click();
      const mine = a.locator(".decisions .decision-card.status-open", { hasText: "Which cache?" });
      const theirs = b.locator(".decisions .decision-card.status-open", { hasText: "Which cache?" });
      await theirs.waitFor();
      await mine.getByText("Redis", { exact: true }).click();
      await until("the pick in the other tab", async () => theirs.getByRole("radio", { name: /Redis/ }).isChecked());
      await theirs.locator(".draft-presence", { hasText: "is choosing" }).waitFor();
      await mine.getByText("Write my own answer").click();
      await mine.getByRole("textbox", { name: "Written answer" }).fill("Redis, with a local cache in front");
      await until(
        "the text in the other tab",
        async () =>
          (await theirs.getByRole("textbox", { name: "Written answer" }).inputValue()) ===
          "Redis, with a local cache in front",
      );
      await theirs.locator(".draft-presence", { hasText: "is writing an answer" }).waitFor();
      await shot(b, "52-decision-shared-draft");
      // Nothing is stored until a tab submits: here the other one.
      if (
        (await ask({ ask: "decisions", channel })).decisions.find(
          (d) => d.call.params?.questions?.[0]?.question === "Which cache?",
        ).answer
      )
        throw new Error("a draft was stored");
      const noted = a.locator(".transcript .msg-planner.status-done").filter({ hasText: "Noted." });
      const before = await noted.count();
      await theirs.getByRole("button", { name: "Answer" }).click();
      await until("decided by the other tab", async () => {
        const d = (await ask({ ask: "decisions", channel })).decisions.find(
          (d) => d.call.params?.questions?.[0]?.question === "Which cache?",
        );
        return d.status === "decided" && d.answer?.text === "Redis, with a local cache in front" && d.answeredBy;
      });
      await mine.waitFor({ state: "detached" });
      // Nobody waited on it: the answer reaches the Planner as a turn of its own, done before the next step.
      await until("the answer's turn", async () =>
        (await ask({ ask: "planner", channel })).other.includes("Which cache?"),
      );
      await until("its reply", async () => (await noted.count()) === before + 1);
    },
  );

  await step(
    "Show in plan marks the card's passage for a moment; a card asked apart from the plan has no place there",
    async () => {
      await ask({ ask: "decision-after", channel, text: "We ship on Monday." });
      await ask({ ask: "decision-apart", channel });
      await a.getByRole("tab", { name: /Decisions/ }).click();
      const apart = a.locator(".decisions .decision-card.status-open", { hasText: "Run the build?" });
      await apart.waitFor();
      if (await apart.getByRole("button", { name: "Show in plan" }).count())
        throw new Error("a card asked apart from the plan offers Show in plan");
      const card = a.locator(".decisions .decision-card.status-open", { hasText: "About this passage?" });
      await card.getByRole("button", { name: "Show in plan" }).click();
      await until(
        "the Plan tab",
        async () => (await a.getByRole("tab", { name: "Plan", exact: true }).getAttribute("aria-selected")) === "true",
      );
      // The passage, not the card's line nor any other, for a moment only.
      await a.waitForFunction(() => {
        const marked = [...document.querySelectorAll(".cm-line.cm-passage-flash")].map((l) => l.textContent);
        const shown = [...document.querySelectorAll(".cm-line.cm-passage-flash")].every(
          (l) => getComputedStyle(l).backgroundColor !== "rgba(0, 0, 0, 0)",
        );
        return marked.length === 1 && marked[0].startsWith("We ship on Monday.") && shown;
      });
      await shot(a, "51-show-in-plan-passage");
      await a.locator(".cm-line.cm-passage-flash").first().waitFor({ state: "detached", timeout: 5000 });
      // Both set aside again, for the steps after.
      await a.getByRole("tab", { name: /Decisions/ }).click();
      for (const c of [card, apart]) {
        await c.getByRole("button", { name: "Discard…" }).click();
        await c.getByRole("button", { name: "Discard", exact: true }).click();
        await c.waitFor({ state: "detached" });
      }
    },
  );

  await step("Retry under a failed reply runs the message again", async () => {
    const box = a.getByRole("textbox", { name: "Message" });
    await box.fill("@chopin fail once, then answer");
    await box.press("Enter");
    const failed = a.locator(".transcript .msg-planner.status-failed").last();
    await failed.getByText("The model's provider is down.").waitFor();
    // Only the sender sees Retry; b is the same account here, so both do.
    const count = await a.locator(".transcript .msg-planner").count();
    await failed.getByRole("button", { name: "Retry" }).click();
    await a.locator(".transcript .msg-planner").filter({ hasText: "Here is the whole answer." }).waitFor();
    // The failed attempt left the transcript for everyone; the message stayed.
    for (const p of [a, b]) {
      await until(
        "the failed reply gone",
        async () => (await p.locator(".transcript").textContent()).includes("Half an ans") === false,
      );
      if ((await p.locator(".transcript .msg-person", { hasText: "fail once" }).count()) !== 1)
        throw new Error("the message was not kept once");
    }
    if ((await a.locator(".transcript .msg-planner").count()) !== count)
      throw new Error("the retried reply did not replace the failed one");
  });

  await step("files go with a message, and the Planner's turn gets them", async () => {
    const png = Buffer.from(
      "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
      "base64",
    );
    await a.locator('input[type=file][aria-label="Files"]').setInputFiles([
      { name: "sketch.png", mimeType: "image/png", buffer: png },
      { name: "notes.md", mimeType: "text/markdown", buffer: Buffer.from("# Notes\nShip Monday.\n") },
    ]);
    const pending = a.getByRole("list", { name: "Files to send" });
    await pending.getByText("sketch.png").waitFor();
    await pending.getByText("notes.md").waitFor();
    const box = a.getByRole("textbox", { name: "Message" });
    await box.fill("@chopin look at these");
    // Model One lists no image input: the composer says the image is not read.
    await a.locator(".file-note").waitFor();
    await shot(a, "15-attachments");
    await box.press("Enter");
    await a.locator(".transcript .msg-planner").filter({ hasText: "Seen the notes." }).waitFor();
    await pending.waitFor({ state: "detached" });
    const sent = b.locator(".transcript .msg-person").filter({ hasText: "look at these" });
    await sent.locator(".file-image img[alt='sketch.png']").waitFor();
    await sent.locator(".file-chip", { hasText: "notes.md" }).waitFor();
    const seen = await ask({ ask: "planner", channel });
    if (JSON.stringify(seen.files) !== '["notes.md:file"]')
      throw new Error("the turn got " + JSON.stringify(seen.files));
  });

  await step("typing / offers the Planner's commands, by keyboard", async () => {
    const box = a.getByRole("textbox", { name: "Message" });
    await box.fill("");
    await box.pressSequentially("/re");
    const list = a.getByRole("listbox", { name: "Planner commands" });
    await list.waitFor();
    const names = () => list.locator(".command-name").allTextContents();
    if (JSON.stringify(await names()) !== '["/review","/release notes","/retro"]')
      throw new Error("commands " + JSON.stringify(await names()));
    await list
      .getByRole("option", { name: /release notes/ })
      .getByText("Write the release notes")
      .waitFor();
    await box.pressSequentially("l");
    await until("the filtered list", async () => JSON.stringify(await names()) === '["/release notes"]');
    await box.press("Backspace");
    await until("the whole list again", async () => (await names()).length === 3);
    // The arrows move the active option, which the textbox points at.
    const activeName = async () => {
      const id = await box.getAttribute("aria-activedescendant");
      const opt = a.locator(`[id="${id}"]`);
      return (await opt.getAttribute("aria-selected")) === "true" ? opt.locator(".command-name").textContent() : "";
    };
    await until("the first active", async () => (await activeName()) === "/review");
    await box.press("ArrowDown");
    await until("the second active", async () => (await activeName()) === "/release notes");
    await box.press("ArrowUp");
    await until("the first active again", async () => (await activeName()) === "/review");
    await shot(a, "16-commands");
    await box.press("Enter");
    const chip = a.getByRole("group", { name: "Command" });
    await chip.getByText("/review").waitFor();
    await list.waitFor({ state: "detached" });
    if ((await box.inputValue()) !== "") throw new Error("the command's name stayed in the words");
    await box.pressSequentially("the rollout");
    await box.press("Enter");
    await a.locator(".transcript .msg-planner").filter({ hasText: "Ran the command." }).waitFor();
    await b.locator(".transcript .msg-person").filter({ hasText: "@chopin /review the rollout" }).waitFor();
    await until(
      "the skill's prompt",
      async () => (await ask({ ask: "planner", channel })).prompt === "/review the rollout",
    );
    await chip.waitFor({ state: "detached" });
    // A workflow typed out in full runs as a start request.
    await box.fill("/release notes for 2.0");
    if (await list.count()) throw new Error("the list stayed open over the words");
    await box.press("Enter");
    await until(
      "the workflow's prompt",
      async () =>
        (await ask({ ask: "planner", channel })).prompt ===
        'Start the workflow "release notes" with this input: for 2.0',
    );
    await until(
      "its reply",
      async () => (await a.locator(".transcript .msg-planner").filter({ hasText: "Ran the command." }).count()) === 2,
    );
    await until("the composer emptied", async () => (await box.inputValue()) === "");
  });

  await step("a command the Planner no longer offers is refused in the server's words", async () => {
    const box = a.getByRole("textbox", { name: "Message" });
    await box.pressSequentially("/rev");
    const list = a.getByRole("listbox", { name: "Planner commands" });
    await list.waitFor();
    await box.press("Tab");
    const chip = a.getByRole("group", { name: "Command" });
    await chip.getByText("/review").waitFor();
    await box.pressSequentially("again");
    // The client reports its commands again, without review.
    await ask({ ask: "commands", channel, text: "review" });
    await until("the new report", async () => {
      const m = await a.evaluate(async (id) => (await fetch(`/api/channels/${id}/planner/model`)).json(), channel);
      return m.commands.length === 2;
    });
    await box.press("Enter");
    const want = "The attached Planner's client does not offer the skill command /review.";
    const got = await until("the refusal", async () => a.locator(".composer .error-text").textContent());
    if (got !== want) throw new Error(`refusal\n got ${got}\nwant ${want}`);
    if ((await box.inputValue()) !== "again" || !(await chip.isVisible()))
      throw new Error("the refused command was lost");
    await chip.getByRole("button", { name: "Remove the command" }).click();
    await chip.waitFor({ state: "detached" });
    await box.fill("");
    await box.pressSequentially("/");
    await until(
      "the list without review",
      async () =>
        JSON.stringify(await list.locator(".command-name").allTextContents()) === '["/release notes","/retro"]',
    );
    await box.press("Escape");
    await list.waitFor({ state: "detached" });
    await box.fill("");
  });

  await step("card text shows the document's own images and Mermaid, other images as alt text", async () => {
    const call = {
      method: "questionnaire",
      params: {
        questions: [
          {
            question: `Which chart?\nThe current one:\n\n![Build chart](${imagePath})\n\nNot this: ![remote chart](https://example.com/x.png)`,
            header: "Chart",
            options: [
              {
                label: "Flow",
                description: "as a diagram",
                preview: "```mermaid\ngraph LR\n  A[Build] --> B[Test] --> C[Ship]\n```",
              },
              { label: "Picture", description: "as the picture", preview: `![Build chart, large](${imagePath})` },
            ],
          },
        ],
      },
    };
    await ask({ ask: "decision", channel, text: JSON.stringify(call) });
    await a.getByRole("tab", { name: /Decisions/ }).click();
    const card = a.locator(".decisions .decision-card.status-open").first();
    await card.getByText("Which chart?").waitFor();
    const own = card.locator(`.card-body img[src="${imagePath}"]`);
    await own.waitFor();
    await card.locator(".card-body .image-alt", { hasText: "remote chart" }).waitFor();
    if (await card.locator('img[src^="https:"]').count()) throw new Error("a remote image was loaded");
    const flow = card.getByRole("group", { name: "Preview of Flow" });
    await flow.locator(".mermaid-diagram svg").waitFor({ timeout: 15000 });
    const h = await flow.locator(".mermaid-diagram").evaluate((el) => el.getBoundingClientRect().height);
    if (h > 241) throw new Error("the preview's diagram is not bounded: " + h);
    // A click on a preview's picture opens it large and chooses nothing.
    await card.getByRole("group", { name: "Preview of Picture" }).locator("img").click();
    await a.locator("dialog.lightbox").waitFor();
    await shot(a, "14-card-image-open");
    await a.locator("dialog.lightbox").getByRole("button", { name: "Close" }).click();
    if (await card.locator("input:checked").count()) throw new Error("the picture's click chose an option");
    await shot(a, "14-card-text");
  });

  await step("the rendered plan shows components and escapes raw HTML", async () => {
    await ask({
      ask: "append",
      channel,
      text:
        '\n<Callout type="warning">\nMind the **gap**.\n</Callout>\n\n| Step | Owner |\n| --- | --- |\n| Ship | ada |\n\n' +
        '<Tabs>\n<Tab title="Linux">\nRun `make`.\n</Tab>\n<Tab title="macOS">\nRun `xcodebuild`.\n</Tab>\n</Tabs>\n\n' +
        '```mermaid\ngraph TD\n  A[Draft] --> B[Ship]\n```\n\n<script>window.pwned = 1</script> <img src=x onerror="window.pwned=2">\n',
    });
    await a.getByRole("tab", { name: "Plan", exact: true }).click();
    await a.getByRole("tab", { name: "Preview" }).click();
    const view = a.locator(".plan-view");
    await view.locator("aside.callout-warning strong", { hasText: "gap" }).waitFor();
    await view.locator("table td", { hasText: "ada" }).waitFor();
    await view.locator(".decision-card.status-decided", { hasText: "Which store?" }).waitFor();
    await view.getByRole("button", { name: "macOS" }).click();
    await view.getByText("xcodebuild").waitFor({ state: "visible" });
    // A diagram draws when it comes near the screen.
    await view.locator(".prose > div > .mermaid-block").last().scrollIntoViewIfNeeded();
    await view.locator(".prose > div > .mermaid-block .mermaid-diagram svg").waitFor({ timeout: 15000 });
    await view.getByText("<script>window.pwned = 1</script>").waitFor();
    if (
      await a.evaluate(
        () => window.pwned || document.querySelector(".plan-view script, .plan-view img[src=x]") !== null,
      )
    )
      throw new Error("raw HTML was rendered");
    await shot(a, "05-preview");
    await view.locator(".prose h1").scrollIntoViewIfNeeded();
    await shot(a, "05-preview-top");
    await a.getByRole("tab", { name: "Edit" }).click();
  });

  await step("the Planner's description shows as text in the header and the list, and search finds it", async () => {
    await ask({ ask: "describe-hold" });
    await ask({ ask: "append", channel, text: "\n\nThe checklist comes next." });
    // Opening the document asks for a description of its current plan.
    const d = await newPage();
    await d.goto(origin + docPath);
    await d.locator(".doc-description .describing", { hasText: "describing…" }).waitFor();
    await shot(d, "20-describing");
    await ask({ ask: "describe-release" });
    const want = "Plan for the <b>spring</b> launch";
    for (const p of [d, a]) {
      await until(
        "the description in the header",
        async () => (await p.locator(".doc-description-text").textContent()) === want,
      );
    }
    if ((await d.locator(".doc-description b").count()) !== 0) throw new Error("the description was rendered as HTML");
    await until("describing… gone", async () => (await d.locator(".describing").count()) === 0);
    await shot(d, "21-description");
    await d.goto(origin + "/documents/octo/plans");
    const row = d.locator(".doc-row", { hasText: "Launch plan" });
    await row.locator(".description", { hasText: want }).waitFor();
    // The server's search matches the description, not only the title.
    await d.getByPlaceholder("Search titles, descriptions and plans").fill("spring");
    await until("the search hit", async () => (await d.locator(".doc-row").count()) === 1 && (await row.count()) === 1);
    await shot(d, "22-description-search");
    await d.getByPlaceholder("Search titles, descriptions and plans").fill("autumn");
    await until("no hit", async () => (await d.locator(".doc-row").count()) === 0);
    await d.close();
  });

  await step("a historical slug opens the document at its canonical address", async () => {
    const r = await a.evaluate(
      async (id) =>
        (
          await fetch(`/api/channels/${id}`, {
            method: "PATCH",
            headers: { "Content-Type": "application/json" },
            body: JSON.stringify({ title: "Launch plan v2" }),
          })
        ).status,
      channel,
    );
    if (r !== 200) throw new Error("rename: " + r);
    await until("the live rename", async () => new URL(a.url()).pathname === "/documents/octo/plans/launch-plan-v2");
    await b.goto(origin + docPath + "?view=plan#top");
    await b.waitForURL(origin + "/documents/octo/plans/launch-plan-v2?view=plan#top");
    docPath = "/documents/octo/plans/launch-plan-v2";
  });

  await step("the legacy /channels/:id route becomes the canonical one", async () => {
    await b.goto(`${origin}/channels/${channel}?from=old#decisions`);
    await b.waitForURL(`${origin}${docPath}?from=old#decisions`);
    await b.locator(".cm-content").waitFor();
    await b.goto(`${origin}/repositories/octo/plans?query=launch`);
    await b.waitForURL(`${origin}/documents/octo/plans?query=launch`);
    await b.locator(".doc-row", { hasText: "Launch plan v2" }).waitFor();
  });

  await step("Download .md gives the plan's source exactly", async () => {
    const [download] = await Promise.all([
      a.waitForEvent("download"),
      a.getByRole("link", { name: "Download .md" }).click(),
    ]);
    if (download.suggestedFilename() !== "launch-plan-v2.md") throw new Error("named " + download.suggestedFilename());
    const got = readFileSync(await download.path(), "utf8");
    const want = (await ask({ ask: "plan", channel })).source;
    if (got !== want) throw new Error(`downloaded ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
  });

  await step("Import .md makes a document, and Save to checkout never clobbers a changed file", async () => {
    const { dir } = await ask({ ask: "repository-checkout", text: "octo/site" });
    const c = await newPage();
    await c.goto(origin + "/documents/octo/site");
    const picker = c.locator('input[type=file][name="import"]');
    // A refused file names each problem's line, and makes nothing.
    await picker.setInputFiles({
      name: "bad.md",
      mimeType: "text/markdown",
      buffer: Buffer.from('# Bad\n\n<Decision id="x1" />\n'),
    });
    await until("the refusal", async () =>
      (await c.locator(".error-text").textContent())?.includes("line 3: <Decision"),
    );
    await shot(c, "15-import-refused");
    const file = '# Imported 🚀\r\n\r\n<Callout type="note">\r\nKeep **CRLF**.\r\n</Callout>\r\n';
    await picker.setInputFiles({ name: "imported.md", mimeType: "text/markdown", buffer: Buffer.from(file) });
    await c.waitForURL(origin + "/documents/octo/site/imported");
    await until("the imported text", async () => (await editorText(c)) === file.replaceAll("\r\n", "\n"));
    // The same file again: its title is taken, so the copy gets the next
    // free one, and says so.
    await c.goto(origin + "/documents/octo/site");
    await picker.setInputFiles({ name: "imported.md", mimeType: "text/markdown", buffer: Buffer.from(file) });
    await c.waitForURL(origin + "/documents/octo/site/imported-2");
    await c
      .getByText("octo/site already has a document titled “Imported 🚀”, so this one is “Imported 🚀 2”.")
      .waitFor();
    await shot(c, "15b-import-next-free-title");
    await c.goto(origin + "/documents/octo/site/imported");
    await until("the first import's text", async () => (await editorText(c)) === file.replaceAll("\r\n", "\n"));
    await c.getByRole("button", { name: "Save to checkout" }).click();
    await c.getByText("Saved to docs/plans/imported.md in the checkout.").waitFor();
    const saved = dir + "/docs/plans/imported.md";
    if ((await ask({ ask: "read-file", text: saved })).text !== file)
      throw new Error("the saved file differs from the imported one");
    await c.getByRole("button", { name: "Close" }).click();
    // Someone edits the file on disk; saving again asks first.
    await ask({ ask: "write-file", channel: saved, text: "my own edit\n" });
    await c.getByRole("button", { name: "Save to checkout" }).click();
    await c.getByText("docs/plans/imported.md was changed on disk since Chopin last saved it").waitFor();
    await shot(c, "16-save-asks");
    await c.getByRole("button", { name: "Keep the file" }).click();
    if ((await ask({ ask: "read-file", text: saved })).text !== "my own edit\n")
      throw new Error("the changed file was replaced");
    await c.getByRole("button", { name: "Save to checkout" }).click();
    await c.getByRole("button", { name: "Replace the file" }).click();
    await c.getByText("Saved to docs/plans/imported.md in the checkout.").waitFor();
    if ((await ask({ ask: "read-file", text: saved })).text !== file)
      throw new Error("Replace the file did not replace it");
    await c.close();
  });

  await step("Download a backup gives a SQLite database", async () => {
    const c = await newPage();
    await c.goto(origin + "/");
    const [download] = await Promise.all([
      c.waitForEvent("download"),
      c.getByRole("link", { name: "Download a backup" }).click(),
    ]);
    if (!/^chopin-backup-\d{8}-\d{6}\.db$/.test(download.suggestedFilename()))
      throw new Error("named " + download.suggestedFilename());
    const head = readFileSync(await download.path())
      .subarray(0, 16)
      .toString("latin1");
    if (head !== "SQLite format 3\0") throw new Error("not a SQLite database: " + JSON.stringify(head));
    await c.close();
  });

  await step("edits of a closed tab that never reached the server are not lost", async () => {
    const d = await newPage();
    // This tab's pushes never reach the server, as on a connection that dies.
    await d.routeWebSocket(/\/ws\?channel=/, (ws) => {
      const server = ws.connectToServer();
      ws.onMessage((m) => {
        if (!String(m).includes('"plan:push"')) server.send(m);
      });
    });
    await d.goto(origin + docPath);
    await until("d's text", async () => (await editorText(d)).includes("We ship on Monday."));
    await d.locator(".cm-content").click();
    await d.keyboard.press("Control+End");
    await d.keyboard.type("Kept while offline.");
    await until("the unsent edit", async () => Number(await d.locator(".sync-status").getAttribute("data-unsent")) > 0);
    if ((await ask({ ask: "plan", channel })).source.includes("Kept while offline."))
      throw new Error("the push got through");
    // close() with runBeforeUnload does not wait for the page to go: wait
    // for it, so the next tab never sees the outbox still claimed.
    const gone = d.waitForEvent("close");
    await d.close({ runBeforeUnload: true });
    await gone;
    const e = await newPage();
    await e.goto(origin + docPath);
    await until("the adopted edit on the server", async () =>
      (await ask({ ask: "plan", channel })).source.includes("Kept while offline."),
    );
    // The edit is at the end of a long plan: the editor draws it once it comes near the screen.
    await until("the adopted edit in a", async () => {
      await a.locator(".cm-content .cm-line").last().scrollIntoViewIfNeeded();
      return (await editorText(a)).includes("Kept while offline.");
    });
    await until("the outbox emptied", async () =>
      e.evaluate(() => !Object.keys(localStorage).some((k) => k.startsWith("chopin:outbox:") && !k.endsWith(":alive"))),
    );
    await e.close();
  });

  await step("a Mermaid label pointing elsewhere loads nothing", async () => {
    await ask({
      ask: "append",
      channel,
      text: "\n```mermaid\ngraph LR\n  X[\"<img src='http://127.0.0.2:9/beacon.png?plan=secret'>\"] --> Y[Ship]\n```\n",
    });
    await a.getByRole("tab", { name: "Plan", exact: true }).click();
    await a.getByRole("tab", { name: "Preview" }).click();
    const view = a.locator(".plan-view");
    // A diagram draws when it comes near the screen: bring each in turn.
    await until(
      "both diagrams",
      async () => {
        await view.evaluate((v) => v.querySelector(".mermaid-block:not([data-drawn])")?.scrollIntoView());
        return (await view.locator(".mermaid-block .mermaid-diagram svg").count()) >= 2;
      },
      15000,
    );
    await a.waitForTimeout(500);
    if (await view.locator(".mermaid-diagram img").count()) throw new Error("a diagram label holds an <img>");
    if (offsite.length) throw new Error("requests left the origin: " + offsite.join(", "));
    await a.getByRole("tab", { name: "Edit" }).click();
  });

  await step("a page on another port cannot frame Chopin", async () => {
    const framer = createServer((_, res) => {
      res.writeHead(200, { "Content-Type": "text/html" });
      res.end(
        `<!doctype html><title>Elsewhere</title><iframe id="f" src="${origin + docPath}" width="800" height="600"></iframe>`,
      );
    });
    await new Promise((r) => framer.listen(0, "127.0.0.1", r));
    const elsewhere = `http://127.0.0.1:${framer.address().port}`;
    try {
      const p = await newPage();
      await p.goto(elsewhere + "/");
      await p.waitForTimeout(1500);
      const child = p.frames().find((f) => f !== p.mainFrame());
      const framed = child
        ? await child.evaluate(() => document.getElementById("app") !== null).catch(() => false)
        : false;
      if (framed) throw new Error("Chopin drew inside another page's frame");
      await p.close();
    } finally {
      framer.close();
      // The framing page itself is another origin; it is not Chopin's request.
      for (let i = offsite.length - 1; i >= 0; i--) if (offsite[i].startsWith(elsewhere)) offsite.splice(i, 1);
    }
  });

  // ---- keyboard, accessibility and no dead ends (issue 16, part b) ----
  const { axe } = await import("./a11y.mjs");
  const inEditor = (page) => page.evaluate(() => !!document.activeElement?.closest(".cm-content"));
  const hint = (page) => page.locator("#editor-keys-hint").textContent();

  await step(
    "Tab leaves the plan editor unless Tab indents is on or in a list item, and Esc leaves it with a hint",
    async () => {
      await a.getByRole("tab", { name: "Plan", exact: true }).click();
      await a.getByRole("tab", { name: "Edit" }).click();
      const before = await editorText(a);
      await a.locator(".cm-content").click();
      await a.keyboard.press("Control+End");
      if ((await hint(a)) !== "Esc or Tab leaves the editor.") throw new Error("hint: " + (await hint(a)));
      await a.keyboard.press("Tab");
      if (await inEditor(a)) throw new Error("Tab stayed in the editor");
      if ((await editorText(a)) !== before) throw new Error("Tab changed the plan");
      // Esc leaves too, to the editor's frame; Enter goes back in.
      await a.locator(".cm-content").click();
      await a.keyboard.press("Escape");
      if (await inEditor(a)) throw new Error("Esc stayed in the editor");
      if (!(await a.evaluate(() => document.activeElement?.classList.contains("editor-host"))))
        throw new Error("Esc did not leave to the editor's frame");
      await until("the left hint", async () => (await hint(a)).startsWith("Left the editor"));
      await a.keyboard.press("Enter");
      if (!(await inEditor(a))) throw new Error("Enter did not go back into the editor");
      // Turned on, Tab indents, Esc then Tab leaves, and the choice is kept.
      await a.getByRole("checkbox", { name: "Tab indents" }).check();
      await a.locator(".cm-content").click();
      await a.keyboard.press("Control+End");
      await a.keyboard.press("Tab");
      if (!(await inEditor(a))) throw new Error("Tab left the editor with Tab indents on");
      if ((await editorText(a)) === before) throw new Error("Tab did not indent");
      if ((await hint(a)) !== "Tab indents. Esc, then Tab, leaves the editor.")
        throw new Error("hint: " + (await hint(a)));
      await a.keyboard.press("Control+z");
      await until("the indent undone", async () => (await editorText(a)) === before);
      await a.keyboard.press("Escape");
      await a.keyboard.press("Tab");
      if (await inEditor(a)) throw new Error("Esc, Tab did not leave the editor");
      await a.reload();
      const box = a.getByRole("checkbox", { name: "Tab indents" });
      await box.waitFor();
      if (!(await box.isChecked())) throw new Error("Tab indents was not kept");
      await box.uncheck();
      if (await a.evaluate(() => localStorage.getItem("chopin:tab-indents"))) throw new Error("Tab indents still kept");
      await until("the server's plan", async () => (await ask({ ask: "plan", channel })).source === before);
      // In a Markdown list item, Tab indents the item and Shift+Tab outdents
      // it, with a hint saying so; Esc then Tab still leaves, and out of the
      // list Tab moves on again.
      const listHint = "Tab indents this list item; Esc then Tab leaves the editor.";
      await a.locator(".cm-content").click();
      await a.keyboard.press("Control+End");
      await a.keyboard.press("Enter");
      await a.keyboard.press("Enter");
      await a.keyboard.type("- first item");
      await a.keyboard.press("Enter");
      await a.keyboard.type("second item");
      await until("the list hint", async () => (await hint(a)) === listHint);
      const flat = await editorText(a);
      if (!flat.endsWith("\n- first item\n- second item"))
        throw new Error("the list came out as " + JSON.stringify(flat));
      await a.keyboard.press("Tab");
      if (!(await inEditor(a))) throw new Error("Tab left the editor in a list item");
      await until("the item indented", async () => (await editorText(a)).endsWith("\n- first item\n  - second item"));
      await a.keyboard.press("Shift+Tab");
      if (!(await inEditor(a))) throw new Error("Shift+Tab left the editor in an indented list item");
      await until("the item outdented", async () => (await editorText(a)) === flat);
      await a.keyboard.press("Escape");
      await a.keyboard.press("Tab");
      if (await inEditor(a)) throw new Error("Esc, Tab did not leave a list item");
      if ((await editorText(a)) !== flat) throw new Error("Esc, Tab changed the list");
      await a.locator(".cm-content").click();
      await a.keyboard.press("Control+Home");
      await until("the usual hint", async () => (await hint(a)) === "Esc or Tab leaves the editor.");
      await a.keyboard.press("Tab");
      if (await inEditor(a)) throw new Error("Tab stayed in the editor out of the list");
      await a.locator(".cm-content").click();
      await until("the list undone", async () => {
        if ((await editorText(a)) === before) return true;
        await a.keyboard.press("Control+z");
        return false;
      });
      await until(
        "the server's plan without the list",
        async () => (await ask({ ask: "plan", channel })).source === before,
      );
    },
  );

  await step("? lists every shortcut; Alt+1, 2, 3 go to Plan, Decisions and Chat; Ctrl+Enter sends", async () => {
    const box = a.getByRole("textbox", { name: "Message" });
    await box.click();
    await a.keyboard.type("?");
    if (await a.getByRole("dialog", { name: "Keyboard shortcuts" }).count())
      throw new Error("? in the message box opened the list");
    await box.fill("");
    await a.locator(".doc-title").click();
    await a.keyboard.press("?");
    const list = a.getByRole("dialog", { name: "Keyboard shortcuts" });
    await list.waitFor();
    const text = await list.textContent();
    for (const want of [
      "Quick switcher",
      "Show the Plan",
      "Show the Decisions",
      "Chat message box",
      "Send the message",
      "Stop the Planner",
      "Leave the editor",
    ])
      if (!text.includes(want)) throw new Error("the list lacks " + want);
    if (
      (await list.locator(".shortcut", { hasText: "Quick switcher" }).locator("kbd").allTextContents()).join("+") !==
      "Ctrl+K"
    )
      throw new Error("the quick switcher is not Ctrl+K");
    if (
      (
        await list.locator(".shortcut", { hasText: "Comment on the selected text" }).locator("kbd").allTextContents()
      ).join("+") !== "Ctrl+Alt+M"
    )
      throw new Error("the list lacks Comment, Ctrl+Alt+M");
    await axe(a, "the shortcut list");
    await shot(a, "16b-shortcuts");
    await a.keyboard.press("Escape");
    await list.waitFor({ state: "hidden" });
    // On a small screen the list is taller than the dialog: it opens at
    // its title, not scrolled to Close.
    const size = a.viewportSize();
    await a.setViewportSize({ width: 390, height: 560 });
    await a.evaluate(() => document.activeElement?.blur());
    await a.keyboard.press("?");
    await list.waitFor();
    const scroll = await list.evaluate((d) => [d.scrollTop, d.scrollHeight > d.clientHeight]);
    if (!scroll[1]) throw new Error("the list fits at 390 × 560: nothing to scroll");
    if (scroll[0] !== 0) throw new Error("the list opened scrolled by " + scroll[0]);
    await shot(a, "16c-shortcuts-narrow");
    await a.keyboard.press("Escape");
    await list.waitFor({ state: "hidden" });
    await a.setViewportSize(size);
    await a.keyboard.press("Alt+2");
    await until(
      "Decisions shown",
      async () => (await a.getByRole("tab", { name: /^Decisions/ }).getAttribute("aria-selected")) === "true",
    );
    await a.locator(".decisions").waitFor();
    await a.keyboard.press("Alt+1");
    await until("the editor focused", () => inEditor(a));
    await a.keyboard.press("Alt+3");
    await until("the message box focused", () => box.evaluate((el) => el === document.activeElement));
    await a.keyboard.type("Sent with Ctrl+Enter");
    await a.keyboard.press("Control+Enter");
    await a.locator(".transcript .msg-person").filter({ hasText: "Sent with Ctrl+Enter" }).waitFor();
  });

  let busyPath = "";
  let busyChannel = "";
  await step("without a Planner, the composer says so and Connect shows the commands with the token", async () => {
    const made = await a.evaluate(async () => {
      const r = await fetch("/api/repositories/octo/plans/channels", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ title: "Region plan" }),
      });
      return { status: r.status, body: await r.json(), location: r.headers.get("Location") };
    });
    if (made.status !== 201) throw new Error("create: " + JSON.stringify(made));
    busyPath = made.location;
    busyChannel = made.body.id;
    await a.goto(origin + busyPath);
    const box = a.getByRole("textbox", { name: "Message" });
    await box.fill("@chopin where should the data live?");
    const note = a.locator(".composer .no-planner");
    await note.getByText("No Planner is attached to this document").waitFor();
    await note.getByRole("button", { name: "Connect a Planner" }).click();
    const dialog = a.getByRole("dialog", { name: "Connect a Planner" });
    await dialog.waitFor();
    const docURL = origin + busyPath;
    const { servers } = await ask({ ask: "model-servers" });
    const command = () => dialog.getByLabel("Planner command").textContent();
    const want = `chopin planner --base-url ${servers[1].baseUrl} --model qwen2.5 ${docURL}`;
    await until("the command", async () => (await command()) === want);
    const { token } = await ask({ ask: "token" });
    if ((await dialog.textContent()).includes(token)) throw new Error("the token shows before Show token");
    // The token is for a client written by hand: chopin planner reads it itself.
    await dialog.getByText("A Planner client you write yourself").click();
    await dialog.getByRole("button", { name: "Show token" }).click();
    await until("the token shown", async () => (await dialog.getByLabel("Agent token").textContent()) === token);
    if ((await command()) !== want) throw new Error("with the token: " + (await command()));
    const claude = await dialog.getByLabel("Claude Code command").textContent();
    if (claude !== `chopin planner --acp claude ${docURL}`) throw new Error("Claude Code: " + claude);
    await axe(a, "the Connect dialog");
    await shot(a, "16b-connect-from-composer");
    await dialog.getByRole("button", { name: "Done" }).click();
    await dialog.waitFor({ state: "hidden" });
    if ((await box.inputValue()) !== "@chopin where should the data live?") throw new Error("the draft was lost");
    await box.fill("");
  });

  await step(
    "Chat says the Planner asked; a busy refusal names and links the open Decisions; Ctrl+. stops it",
    async () => {
      await ask({ ask: "attach-asking", channel: busyChannel });
      await until("the attached label", async () =>
        (await a.locator(".planner-button").textContent()).startsWith("Planner · "),
      );
      const box = a.getByRole("textbox", { name: "Message" });
      await box.fill("@chopin ask me first");
      await box.press("Enter");
      const asked = "The Planner asked a question and waits for an answer in Decisions: “Which region?”.";
      await a.getByRole("note", { name: "Notice" }).filter({ hasText: asked }).waitFor();
      await box.fill("@chopin and the backups?");
      await box.press("Enter");
      const refusal = "chopin can't take messages while it works on this machine. Stop it to ask now.";
      await until("the refusal", async () => (await a.locator(".composer .error-text").textContent()) === refusal);
      const waiting = a.locator(".composer .waiting-on");
      if (!(await waiting.textContent()).includes("The Planner is waiting for your answers to this open Decision"))
        throw new Error("waiting: " + (await waiting.textContent()));
      await waiting.getByRole("link", { name: "Which region?" }).click();
      await until("the card focused", () =>
        a.evaluate(() => document.activeElement?.matches(".decisions .decision-card.status-open") ?? false),
      );
      await axe(a, "the workspace with Decisions and a refusal");
      await shot(a, "16b-busy-refusal");
      await box.fill("");
      await a.locator(".planner-working").getByRole("button", { name: "Stop Planner" }).waitFor();
      await a.keyboard.press("Control+.");
      await a.locator(".control-result").filter({ hasText: "Stopped the Planner's reply." }).waitFor();
      await a.getByRole("note", { name: "Notice" }).filter({ hasText: "stopped the Planner." }).waitFor();
      await a.goto(origin + docPath);
    },
  );

  await step("axe finds no serious violation on any screen", async () => {
    const p = await newPage();
    await p.goto(origin + "/");
    await p.getByRole("heading", { name: "Repositories" }).waitFor();
    await axe(p, "the repositories");
    await p.goto(origin + "/documents/octo/plans");
    await p.locator(".doc-row").first().waitFor();
    await axe(p, "the documents");
    await p.goto(origin + docPath);
    await p.locator(".cm-content").waitFor();
    await p.locator(".transcript .msg").first().waitFor();
    await axe(p, "the workspace");
    await p.getByRole("tab", { name: "Preview" }).click();
    await p.locator(".plan-view").waitFor();
    await axe(p, "the workspace's Preview");
    await p.getByRole("tab", { name: "Edit" }).click();
    await p.locator(".top-bar").getByRole("button", { name: "History" }).click();
    const history = p.getByRole("dialog", { name: "History of the plan" });
    await history.locator(".history-pick").first().click();
    await history.locator(".history-plan").waitFor();
    await axe(p, "the History");
    await p.keyboard.press("Escape");
    await history.waitFor({ state: "detached" });
    await p.locator(".planner-button").click();
    await p.getByRole("dialog", { name: "Connect a Planner" }).waitFor();
    await axe(p, "the Connect dialog with a Planner attached");
    await p.keyboard.press("Escape");
    await p.setViewportSize({ width: 400, height: 800 });
    await p.getByRole("navigation", { name: "Destinations" }).waitFor();
    await axe(p, "the compact workspace");
    await p.close();
    // The signed-out page names the page it was asked for.
    const signedOut = await browser.newContext();
    try {
      const s = await newPage(signedOut);
      await s.goto(origin + docPath);
      const command = await s.locator(".open-command").textContent();
      if (command !== "chopin open " + docPath) throw new Error("the signed-out page says " + command);
      await axe(s, "the signed-out page");
    } finally {
      await signedOut.close();
    }
  });

  // ---- issue 16: layout, document actions, reading comfort ----
  await step(
    "at 1000 px the plan and Chat sit side by side, Chat hides and comes back, the way back shows",
    async () => {
      const w = await newPage();
      await w.setViewportSize({ width: 1000, height: 800 });
      await w.goto(origin + docPath);
      await w.locator(".cm-content").waitFor();
      const chat = w.locator(".chat-pane");
      const doc = w.locator(".doc-pane");
      await chat.waitFor();
      const [cb, db] = [await chat.boundingBox(), await doc.boundingBox()];
      if (!cb || !db || cb.x + cb.width > db.x + 1 || Math.abs(cb.y - db.y) > 1)
        throw new Error(`not side by side: Chat ${JSON.stringify(cb)}, plan ${JSON.stringify(db)}`);
      if (await w.getByRole("navigation", { name: "Destinations" }).count()) throw new Error("a bottom bar at 1000 px");
      const crumb = w.locator(".top-bar a.crumb");
      if (!(await crumb.isVisible())) throw new Error("no way back to the document list at 1000 px");
      await shot(w, "30-two-columns-1000");
      await w.getByRole("button", { name: "Hide Chat" }).click();
      await chat.waitFor({ state: "hidden" });
      if ((await doc.boundingBox()).width < 990) throw new Error("the plan did not take the width");
      // This browser remembers it.
      await w.reload();
      await w.locator(".cm-content").waitFor();
      if (await chat.isVisible()) throw new Error("Chat came back after a reload");
      await shot(w, "31-chat-hidden");
      await w.getByRole("button", { name: "Show Chat" }).click();
      await chat.waitFor();
      // Narrow too, the way back shows and leads to the list.
      await w.setViewportSize({ width: 400, height: 800 });
      await crumb.waitFor();
      await shot(w, "32-crumb-400");
      await crumb.click();
      await w.getByRole("heading", { name: "Documents" }).waitFor();
      await w.close();
    },
  );

  await step("rename the document from its header; a taken title is refused in plain words", async () => {
    const made = await a.evaluate(
      async () =>
        (
          await fetch("/api/repositories/octo/plans/channels", {
            method: "POST",
            headers: { "Content-Type": "application/json" },
            body: JSON.stringify({ title: "Rollout notes" }),
          })
        ).status,
    );
    if (made !== 201) throw new Error("create: " + made);
    const header = a.locator(".top-bar");
    const input = header.getByRole("textbox", { name: "Document title" });
    await header.getByRole("button", { name: "Rename document" }).click();
    await input.fill("rollout NOTES");
    await input.press("Enter");
    await header
      .getByRole("alert")
      .filter({ hasText: "Another document in octo/plans is already called “rollout NOTES”. Choose another title." })
      .waitFor();
    await shot(a, "33-rename-taken");
    await input.press("Escape");
    await a.locator("h1.doc-title", { hasText: "Launch plan v2" }).waitFor();
    for (const [title, slug] of [
      ["Launch plan v3", "launch-plan-v3"],
      // A document may take back its own former address.
      ["Launch plan v2", "launch-plan-v2"],
    ]) {
      await header.getByRole("button", { name: "Rename document" }).click();
      await input.fill(title);
      await input.press("Enter");
      await until("the new address", async () => new URL(a.url()).pathname === "/documents/octo/plans/" + slug);
      await a.locator("h1.doc-title", { hasText: title }).waitFor();
      await until("the server's title", async () =>
        a
          .evaluate(async (id) => (await (await fetch(`/api/channels/${id}`)).json()).title, channel)
          .then((t) => t === title),
      );
    }
  });

  await step("archive from the header, Undo in the toast, archive again, Restore from the banner", async () => {
    const header = a.locator(".top-bar");
    const bar = a.locator(".archived-bar");
    const editable = async () => (await a.locator(".cm-content").getAttribute("contenteditable")) === "true";
    const archivedAt = () =>
      a.evaluate(async (id) => (await (await fetch(`/api/channels/${id}`)).json()).archivedAt, channel);
    await header.getByRole("button", { name: "Archive" }).click();
    await bar.waitFor();
    if (!(await archivedAt())) throw new Error("Archive did not archive");
    const toast = a.locator(".toast");
    await toast.getByText("Archived “Launch plan v2”.", { exact: false }).waitFor();
    // The toast covers neither Send nor the message box, wide or narrow.
    const size = a.viewportSize();
    for (const [w, h] of [
      [1280, 800],
      [390, 844],
    ]) {
      await a.setViewportSize({ width: w, height: h });
      if (w < 900) await a.getByRole("navigation", { name: "Destinations" }).getByText("Chat").click();
      const t = await toast.boundingBox();
      const send = await a.locator(".composer").boundingBox();
      if (!t || !send) throw new Error(`at ${w} px: no toast or no composer`);
      const overlap =
        t.x < send.x + send.width && send.x < t.x + t.width && t.y < send.y + send.height && send.y < t.y + t.height;
      if (overlap) throw new Error(`at ${w} px the toast covers the message box: ${JSON.stringify([t, send])}`);
      for (const scheme of ["light", "dark"]) {
        await a.emulateMedia({ colorScheme: scheme });
        await shot(a, `34-archive-undo-${w}-${scheme}`);
      }
    }
    await a.emulateMedia({ colorScheme: "light" });
    await a.setViewportSize(size);
    await toast.getByRole("button", { name: "Undo" }).click();
    await bar.waitFor({ state: "detached" });
    await until("editable after Undo", editable);
    if (await archivedAt()) throw new Error("Undo left it archived");
    await toast.waitFor({ state: "detached" });
    await header.getByRole("button", { name: "Archive" }).click();
    await bar.getByRole("button", { name: "Restore" }).waitFor();
    if (await editable()) throw new Error("an archived plan is editable");
    await shot(a, "35-archived-restore");
    await bar.getByRole("button", { name: "Restore" }).click();
    await bar.waitFor({ state: "detached" });
    await until("editable after Restore", editable);
    if (await archivedAt()) throw new Error("Restore left it archived");
    await a.locator(".toast .toast-close").click();
    // Archiving ended the document's Planner, and restoring does not bring it
    // back: attach it again for the steps after, which ask it.
    await ask({ ask: "attach", channel });
    await until("the Planner attached again", async () =>
      (await a.locator(".planner-button").textContent()).startsWith("Planner · "),
    );
    // The document list's Archive offers Undo too.
    const l = await newPage();
    await l.goto(origin + "/documents/octo/plans");
    const row = l.locator(".doc-row", { hasText: "Rollout notes" });
    await row.getByRole("button", { name: "Archive" }).click();
    await row.waitFor({ state: "detached" });
    await l.locator(".toast").getByRole("button", { name: "Undo" }).click();
    await row.getByRole("button", { name: "Archive" }).waitFor();
    await l.close();
  });

  await step("a Decision line shows as a chip naming its question; typing around it cannot break it", async () => {
    const chip = a.locator(".cm-content .cm-decision-chip", { hasText: "Which store?" });
    await chip.waitFor();
    const line = `<Decision id="${await chip.getAttribute("data-decision")}" />`;
    if (await a.locator(".cm-content").getByText("<Decision id=").count()) throw new Error("a raw Decision line shows");
    await shot(a, "36-decision-chip");
    // Typed right after the chip, the text goes on a line of its own.
    const box = await chip.boundingBox();
    await a.mouse.click(box.x + box.width + 40, box.y + box.height / 2);
    await a.keyboard.type("after");
    // Home from the chip's line end lands before it; typed there, the same.
    await a.keyboard.press("ArrowUp");
    await a.keyboard.press("End");
    await a.keyboard.press("Home");
    await a.keyboard.type("before");
    const want = `before\n${line}\nafter`;
    await until("the text around the chip", async () => (await editorText(a)).includes(want));
    await until("the server's plan", async () => (await ask({ ask: "plan", channel })).source.includes(want));
    // Backspace at the start of the next line, and Delete at the end of the
    // line before, would join a line to the chip's: neither happens.
    await a.locator(".cm-content .cm-line", { hasText: /^after$/ }).click({ position: { x: 2, y: 5 } });
    await a.keyboard.press("Home");
    await a.keyboard.press("Backspace");
    await a.locator(".cm-content .cm-line", { hasText: /^before$/ }).click();
    await a.keyboard.press("End");
    await a.keyboard.press("Delete");
    // A mark typed after them shows they were handled, and changed nothing.
    await a.keyboard.type("!");
    await until("the mark", async () => (await editorText(a)).includes("before!\n"));
    if (!(await editorText(a)).includes(`before!\n${line}\nafter`))
      throw new Error("the chip's line was joined: " + (await editorText(a)));
    if (await a.locator(".plan .notice").count()) throw new Error("the server refused an edit");
    // Out again, so the plan is as it was.
    await a.keyboard.press("Shift+Home");
    await a.keyboard.press("Backspace");
    await a.keyboard.press("Backspace");
    await until("the server's plan as it was", async () => {
      const source = (await ask({ ask: "plan", channel })).source;
      return !source.includes("before!") && !(await editorText(a)).includes("before!");
    });
  });

  await step("code blocks get syntax colours, loaded on demand; Edit and Preview side by side", async () => {
    const early = await a.evaluate(() =>
      performance.getEntriesByType("resource").some((r) => r.name.includes("/chunks/hljs-languages-")),
    );
    await ask({
      ask: "append",
      channel,
      text: '\n```go\nfunc main() {\n\tfmt.Println("hi") // greet\n}\n```\n',
    });
    await a.getByRole("tab", { name: "Plan", exact: true }).click();
    await a.getByRole("tab", { name: "Preview" }).click();
    const code = a.locator(".plan-view pre code.language-go");
    const kw = code.locator(".hljs-keyword", { hasText: "func" });
    await kw.waitFor();
    await code.locator(".hljs-string", { hasText: '"hi"' }).waitFor();
    const colour = (l) => l.evaluate((el) => getComputedStyle(el).color);
    const plain = await code.evaluate((el) => getComputedStyle(el).color);
    if ((await colour(kw)) === plain) throw new Error("the keyword has the text's colour");
    if (
      !early &&
      !(await a.evaluate(() =>
        performance.getEntriesByType("resource").some((r) => r.name.includes("/chunks/hljs-languages-")),
      ))
    )
      throw new Error("the colours did not come from their own chunk");
    await code.scrollIntoViewIfNeeded();
    await shot(a, "37-code-colours");
    // Side by side: the editor and the Preview both show, next to each other.
    await a.getByRole("button", { name: "Side by side" }).click();
    const ed = a.locator(".editor-host");
    const view = a.locator(".plan-view");
    await view.waitFor();
    const [eb, vb] = [await ed.boundingBox(), await view.boundingBox()];
    if (!eb || !vb || eb.x + eb.width > vb.x + 1) throw new Error("Edit and Preview are not side by side");
    await shot(a, "38-side-by-side");
    await a.getByRole("button", { name: "Side by side" }).click();
    await a.getByRole("tab", { name: "Edit" }).click();
  });

  await step("dark theme by the toggle, remembered, and following the system", async () => {
    const bg = (sel) =>
      a
        .locator(sel)
        .first()
        .evaluate((el) => getComputedStyle(el).backgroundColor);
    const light = "rgb(251, 251, 250)";
    const dark = "rgb(21, 24, 28)";
    const toggle = a.getByRole("combobox", { name: "Theme" });
    await a.emulateMedia({ colorScheme: "light" });
    if ((await bg("body")) !== light) throw new Error("not light at first: " + (await bg("body")));
    await toggle.selectOption("dark");
    await until("a dark page", async () => (await bg("body")) === dark);
    if ((await bg(".editor-host")) !== "rgb(28, 32, 37)") throw new Error("the editor is not dark");
    await shot(a, "39-dark-editor");
    await a.getByRole("tab", { name: "Preview" }).click();
    if ((await bg(".plan-view")) !== "rgb(28, 32, 37)") throw new Error("the Preview is not dark");
    // Diagrams are drawn again in Mermaid's dark theme.
    await until(
      "dark diagrams",
      async () =>
        (await a.locator(".plan-view .mermaid-diagram").count()) > 0 &&
        (await a.locator('.plan-view .mermaid-diagram:not([data-theme="dark"])').count()) === 0,
      15000,
    );
    await shot(a, "40-dark-preview");
    await a.getByRole("tab", { name: "Edit" }).click();
    // Remembered by this browser, on every page.
    await a.reload();
    await a.locator(".cm-content").waitFor();
    if ((await bg("body")) !== dark) throw new Error("dark was not remembered");
    const list = await newPage();
    await list.goto(origin + "/documents/octo/plans");
    await list.getByRole("heading", { name: "Documents" }).waitFor();
    if ((await list.evaluate(() => getComputedStyle(document.body).backgroundColor)) !== dark)
      throw new Error("the document list is not dark");
    await shot(list, "41-dark-list");
    await list.close();
    // System follows prefers-color-scheme.
    await toggle.selectOption("system");
    await until("light with the system", async () => (await bg("body")) === light);
    await a.emulateMedia({ colorScheme: "dark" });
    await until("dark with the system", async () => (await bg("body")) === dark);
    await a.emulateMedia({ colorScheme: "light" });
    await until("light again", async () => (await bg("body")) === light);
  });

  // ---- comment threads on passages (issue 19) ----
  // selectLine selects the text of the editor's line that reads text.
  const selectLine = async (page, text) => {
    const line = page.locator(".cm-content .cm-line", { hasText: text }).last();
    // The passages end a long plan, which the editor may show from its top.
    if (!(await line.count())) await page.locator(".cm-scroller").evaluate((el) => el.scrollTo(0, el.scrollHeight));
    await line.click({ clickCount: 3 });
  };
  const commentOn = async (page, text, note, how = "button") => {
    await selectLine(page, text);
    if (how === "button") await page.getByRole("button", { name: "Comment", exact: true }).click();
    else await page.keyboard.press("Control+Alt+m");
    const card = page.getByRole("region", { name: "New comment" });
    await card.getByRole("textbox", { name: "Comment" }).fill(note);
    await card.getByRole("button", { name: "Comment", exact: true }).click();
    await card.waitFor({ state: "detached" });
  };
  const threadOf = async (quote) =>
    (await ask({ ask: "comments", channel })).threads.find((t) => t.passage.quote === quote);

  await step("comments: select a passage and comment on it", async () => {
    await ask({
      ask: "append",
      channel,
      text: "\n\nUse Postgres for everything.\n\nKeep backups daily.\n\nBackups go offsite.\n",
    });
    await a.getByRole("tab", { name: "Edit" }).click();
    // The passages end a long plan, past the lines the editor draws from its
    // top: bring the end into view.
    await until("the passages in a", async () => {
      await a.locator(".cm-scroller").evaluate((el) => el.scrollTo(0, el.scrollHeight));
      return (await editorText(a)).includes("Backups go offsite.");
    });
    await commentOn(a, "Use Postgres for everything.", "Why not SQLite? One file is enough.");
    const t = await until("the thread on the server", () => threadOf("Use Postgres for everything."));
    if (t.status !== "open" || t.notes[0].text !== "Why not SQLite? One file is enough.")
      throw new Error("thread " + JSON.stringify(t));
    await a.locator(".cm-comment-wash", { hasText: "Postgres" }).waitFor();
    await a.locator(".cm-comment-line").first().waitFor();
    const card = a.getByRole("region", { name: "Comment thread" });
    await card.getByText("Why not SQLite? One file is enough.").waitFor();
    await shot(a, "20-comment-thread");
    // Escape closes it.
    await a.keyboard.press("Escape");
    await card.waitFor({ state: "detached" });
  });

  await step("comments: a reply from a second tab shows live, typing too", async () => {
    const c = await newPage();
    await c.goto(origin + docPath);
    // The passage is at the end of a long plan: bring it into view.
    await c.locator(".cm-content").click();
    await c.keyboard.press("Control+End");
    await c.locator(".cm-comment-wash", { hasText: "Postgres" }).click();
    const cCard = c.getByRole("region", { name: "Comment thread" });
    await cCard.getByText("Why not SQLite?").waitFor();
    await a.locator(".cm-comment-wash", { hasText: "Postgres" }).click();
    const aCard = a.getByRole("region", { name: "Comment thread" });
    await aCard.getByRole("button", { name: "Accept" }).waitFor();
    await cCard.getByRole("textbox", { name: "Reply" }).pressSequentially("Agreed: SQLite.");
    await aCard.getByText("is writing a reply").waitFor();
    await cCard.getByRole("button", { name: "Reply" }).click();
    await aCard.getByText("Agreed: SQLite.").waitFor();
    await c.close();
  });

  await step("comments: Accept asks the Planner to revise the passage, and the record shows", async () => {
    const aCard = a.getByRole("region", { name: "Comment thread" });
    await aCard.getByRole("button", { name: "Accept" }).click();
    await until("the revised plan", async () => {
      const src = (await ask({ ask: "plan", channel })).source;
      return src.includes("Use SQLite for everything.") && /<Comment id="[^"]+" \/>/.test(src);
    });
    const t = await until("the result", async () => {
      const t = await threadOf("Use Postgres for everything.");
      return t.result?.state === "revised" && t;
    });
    if (t.status !== "accepted" || t.result.blocks !== "Use SQLite for everything.")
      throw new Error("accepted thread " + JSON.stringify(t));
    // The card and the editor's record line say so.
    await aCard.getByText("Revised by the Planner:").waitFor();
    // Chat shows a line for the Accept, not the prompt it sent.
    await a.locator(".msg-system", { hasText: "accepted a comment" }).first().waitFor();
    if (await a.locator(".msg-person", { hasText: "revise exactly this passage" }).count())
      throw new Error("Chat shows the Accept's prompt as the person's message");
    await a.locator(".cm-comment-record", { hasText: "revised by the Planner" }).waitFor();
    if (await a.locator(".cm-comment-wash", { hasText: "Postgres" }).count())
      throw new Error("an accepted thread still washes its passage");
    await a.keyboard.press("Escape");
    await a.getByRole("tab", { name: "Preview" }).click();
    await a.locator(".plan-view .comment-record", { hasText: "Accepted comment" }).waitFor();
    await shot(a, "21-comment-record");
    await a.getByRole("tab", { name: "Edit" }).click();
  });

  await step("comments: Dismiss closes a thread without the Planner", async () => {
    await commentOn(a, "Keep backups daily.", "Is daily enough?", "shortcut");
    const aCard = a.getByRole("region", { name: "Comment thread" });
    await aCard.getByRole("button", { name: "Dismiss" }).click();
    await until("dismissed", async () => (await threadOf("Keep backups daily."))?.status === "dismissed");
    await until("the wash gone", async () => (await a.locator(".cm-comment-wash").count()) === 0);
  });

  await step("comments: a thread whose text is deleted is orphaned and counted", async () => {
    await commentOn(a, "Backups go offsite.", "Where to?");
    await a.locator(".cm-comment-wash", { hasText: "offsite" }).waitFor();
    await a.keyboard.press("Escape");
    await selectLine(a, "Backups go offsite.");
    await a.keyboard.press("Backspace");
    await until("orphaned", async () => (await threadOf("Backups go offsite."))?.passage.state === "orphaned");
    const count = a.getByRole("button", { name: "1 orphaned comment" });
    await count.click();
    await a.getByRole("button", { name: /“Backups go offsite\.”/ }).click();
    await a.getByRole("region", { name: "Comment thread" }).getByText("The commented text was deleted").waitFor();
    await a.keyboard.press("Escape");
    await a.getByRole("region", { name: "Comment thread" }).waitFor({ state: "detached" });
  });

  await step("comments: a passage selected in Preview takes a comment too", async () => {
    await a.getByRole("tab", { name: "Preview" }).click();
    await a.locator(".plan-view p", { hasText: "Keep backups daily." }).click({ clickCount: 3 });
    await a.getByRole("button", { name: "Comment", exact: true }).click();
    const card = a.getByRole("region", { name: "New comment" });
    await card.getByRole("textbox", { name: "Comment" }).fill("Say where they go.");
    await card.getByRole("button", { name: "Comment", exact: true }).click();
    await until("the thread from Preview", async () =>
      (await ask({ ask: "comments", channel })).threads.some(
        (t) =>
          t.status === "open" && t.passage.quote === "Keep backups daily." && t.notes[0].text === "Say where they go.",
      ),
    );
    await a.getByRole("region", { name: "Comment thread" }).getByText("Say where they go.").waitFor();
    await a.keyboard.press("Escape");
    await a.getByRole("tab", { name: "Edit" }).click();
    await a.locator(".cm-comment-wash", { hasText: "Keep backups" }).waitFor();
  });

  // ---- search: plan text and the quick switcher (issues 16 and 17) ----
  await step("search finds a document by a word only in its plan, and shows the line", async () => {
    await b.goto(origin + "/documents/octo/plans");
    await b.getByPlaceholder("Title (optional)").fill("Travel notes");
    await b.getByRole("button", { name: "New document" }).click();
    await b.waitForURL(origin + "/documents/octo/plans/travel-notes");
    await until("the plan's text", async () => (await editorText(b)) === "# Travel notes\n");
    await b.locator(".cm-content").click();
    await b.keyboard.press("Control+End");
    await b.keyboard.type("\nBook the Zanzibar ferry before June.");
    await until("the saved state", async () => (await b.locator(".sync-status").textContent()).startsWith("Saved"));
    // Leaving the document closes its room, whose last checkpoint indexes the plan.
    await b.goto(origin + "/documents/octo/plans");
    const box = b.getByRole("searchbox", { name: "Search documents" });
    const row = b.locator(".doc-row", { hasText: "Travel notes" });
    await until("the plan-text hit", async () => {
      await box.fill("");
      await box.fill("zanzibar ferry");
      await b.waitForTimeout(400);
      return (await b.locator(".doc-row").count()) === 1 && (await row.count()) === 1;
    });
    const line = await row.locator(".match-line").textContent();
    if (line !== "Plan, line 3: Book the Zanzibar ferry before June.") throw new Error("the matching line: " + line);
    if ((await row.locator(".match-line mark").textContent()) !== "Zanzibar ferry")
      throw new Error("the match is not marked");
    await shot(b, "30-plan-search");
    await box.fill("");
  });

  await step(
    "Ctrl-K opens the quick switcher: it finds documents and repositories, Enter opens, Escape closes",
    async () => {
      await b.goto(origin + "/documents/octo/plans");
      const box = b.getByRole("searchbox", { name: "Search documents" });
      await box.focus();
      await b.keyboard.press("Control+k");
      const dialog = b.getByRole("dialog", { name: "Go to a document or a repository" });
      await dialog.waitFor();
      const input = dialog.getByRole("combobox", { name: "Find a document or a repository" });
      await until("the switcher's box focused", () => input.evaluate((el) => el === document.activeElement));
      const list = dialog.getByRole("listbox", { name: "Documents and repositories" });
      // A repository, by its name.
      await input.fill("octo/pl");
      await list.getByRole("option", { name: /octo\/plans\s*Repository/ }).waitFor();
      // A document, by a word of its plan, with the line.
      await input.fill("zanzibar");
      const option = list.getByRole("option", { name: /Travel notes/ });
      await option.waitFor();
      if (!(await option.textContent()).includes("Plan, line 3: Book the Zanzibar ferry before June."))
        throw new Error("the option does not show the line: " + (await option.textContent()));
      await until("the document chosen", async () => (await option.getAttribute("aria-selected")) === "true");
      if ((await input.getAttribute("aria-activedescendant")) !== (await option.getAttribute("id")))
        throw new Error("aria-activedescendant does not name the chosen option");
      await shot(b, "31-switcher");
      await b.keyboard.press("Enter");
      await b.waitForURL(origin + "/documents/octo/plans/travel-notes");
      await dialog.waitFor({ state: "detached" });
      await b.locator(".cm-content").waitFor();
      // From inside the editor too; Escape closes and gives the focus back.
      await b.locator(".cm-content").click();
      await b.keyboard.press("Control+k");
      await dialog.waitFor();
      await input.fill("oct");
      await list.getByRole("option").first().waitFor();
      await b.keyboard.press("ArrowDown");
      await b.keyboard.press("Escape");
      await dialog.waitFor({ state: "detached" });
      if (!(await b.evaluate(() => document.activeElement?.classList.contains("cm-content"))))
        throw new Error("Escape did not give the focus back to the editor");
      if ((await editorText(b)) !== "# Travel notes\n\nBook the Zanzibar ferry before June.")
        throw new Error("the switcher's keys reached the editor: " + (await editorText(b)));
    },
  );

  // ---- fast Chat and long messages (issue 16, part a) ----
  // A document of its own, so the walk's document keeps its Chat.
  let longChat = { id: "", url: "" };
  await step("# in the composer refers to another document; both tabs show it under its current title", async () => {
    await a.goto(origin + docPath);
    await b.goto(origin + docPath);
    const box = a.getByRole("textbox", { name: "Message" });
    await box.fill("");
    await box.pressSequentially("Compare with #trav");
    const option = a.locator(".reference-list").getByRole("option", { name: /Travel notes/ });
    await option.waitFor();
    await shot(a, "31-reference-picker");
    await box.press("Enter");
    await until("the chosen title in the text", async () => (await box.inputValue()) === "Compare with #Travel notes ");
    await a.locator(".reference-chips .reference-chip", { hasText: "Travel notes" }).waitFor();
    // The words after a chosen document do not open the list again.
    await a.locator(".reference-list").waitFor({ state: "detached" });
    await box.pressSequentially("please");
    await box.press("Enter");
    // Both tabs show the reference, linking to the document.
    for (const p of [a, b]) {
      const chip = p.locator(".transcript .msg-person").last().locator("a.reference-chip");
      await until("the reference chip", async () => (await chip.textContent()) === "#Travel notes");
      if ((await chip.getAttribute("href")) !== "/documents/octo/plans/travel-notes")
        throw new Error("the chip links to " + (await chip.getAttribute("href")));
    }
    if (await a.locator(".reference-chips").count()) throw new Error("the chips stayed after sending");
    // A rename shows under the new title; the link still leads there.
    const travel = await a.evaluate(
      async () => (await (await fetch("/api/repositories/octo/plans/documents/travel-notes")).json()).id,
    );
    const rename = (title) =>
      a.evaluate(
        async ([id, title]) =>
          (
            await fetch("/api/channels/" + id, {
              method: "PATCH",
              headers: { "Content-Type": "application/json" },
              body: JSON.stringify({ title }),
            })
          ).status,
        [travel, title],
      );
    if ((await rename("Ferry notes")) !== 200) throw new Error("rename refused");
    await b.reload();
    const renamed = b.locator(".transcript .msg-person").last().locator("a.reference-chip");
    await until("the current title", async () => (await renamed.textContent()) === "#Ferry notes");
    await shot(b, "32-reference-in-chat");
    await b.emulateMedia({ colorScheme: "dark" });
    await shot(b, "32-reference-in-chat-dark");
    await b.emulateMedia({ colorScheme: "light" });
    // The referenced document lists who refers to it, in its header.
    await renamed.click();
    await b.waitForURL(/\/documents\/octo\/plans\/(ferry|travel)-notes$/);
    await b.getByText("Referenced by 1").click();
    await b.locator(".referenced-by-list a", { hasText: "Launch plan" }).waitFor();
    await shot(b, "33-referenced-by");
    if ((await rename("Travel notes")) !== 200) throw new Error("rename back refused");
  });

  await step(
    "references: a passage of another plan is picked after its document, shows in both tabs as it reads now, and opens marked",
    async () => {
      // A document of its own, so the walk's other documents keep their text.
      const packing = await a.evaluate(async () => {
        const r = await fetch("/api/repositories/octo/plans/channels", {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ title: "Packing list" }),
        });
        if (r.status !== 201) throw new Error(`POST channels: ${r.status} ${await r.text()}`);
        return r.json();
      });
      const putPlan = (source) =>
        a.evaluate(
          async ([id, source]) => {
            const plan = await (await fetch(`/api/channels/${id}/plan`)).json();
            const r = await fetch(`/api/channels/${id}/plan`, {
              method: "PUT",
              headers: { "Content-Type": "application/json" },
              body: JSON.stringify({ revision: plan.revision, source }),
            });
            if (r.status !== 200) throw new Error(`PUT plan: ${r.status} ${await r.text()}`);
          },
          [packing.id, source],
        );
      await putPlan(
        "# Packing list\n\n## Papers\n\nPassports and the ferry tickets.\n\n## Clothes\n\nSunscreen, a hat and sandals.\n",
      );
      await a.goto(origin + docPath);
      await b.goto(origin + docPath);
      const box = a.getByRole("textbox", { name: "Message" });
      await box.fill("");
      await box.pressSequentially("Check #pack");
      await a
        .locator(".reference-list")
        .getByRole("option", { name: /Packing list/ })
        .waitFor();
      await box.press("Enter");
      // The second step: Whole document first and chosen, then the blocks.
      const search = a.getByRole("textbox", { name: "Search the passages of Packing list" });
      await search.waitFor();
      await until("the passage search focused", () => search.evaluate((el) => el === document.activeElement));
      const options = a.locator("#passage-options [role=option]");
      await until("the blocks", async () => (await options.count()) === 6);
      const first = options.first();
      if (
        (await first.getAttribute("aria-selected")) !== "true" ||
        !(await first.textContent()).startsWith("Whole document")
      )
        throw new Error("Whole document is not first and chosen: " + (await first.textContent()));
      await shot(a, "33b-passage-picker");
      await a.emulateMedia({ colorScheme: "dark" });
      await shot(a, "33b-passage-picker-dark");
      await a.emulateMedia({ colorScheme: "light" });
      // Searching picks the first block that matches; arrows move; Enter takes it.
      await search.pressSequentially("sun");
      await until("one block found", async () => (await options.count()) === 2);
      await search.press("ArrowUp");
      await search.press("ArrowDown");
      await search.press("Enter");
      await a.locator(".passage-list").waitFor({ state: "detached" });
      const chip = a.locator(".reference-chips .reference-chip");
      await until("the passage chip", async () =>
        (await chip.textContent()).startsWith("Packing list › Clothes: “Sunscreen, a hat and sandals.”"),
      );
      if ((await chip.count()) !== 1) throw new Error("the whole document's chip stayed beside the passage's");
      // The focus comes back at the next frame, which a tab in the
      // background may get late.
      await until("the focus back in the message", () => box.evaluate((el) => el === document.activeElement));
      await shot(a, "33c-passage-chip");
      await box.pressSequentially("please");
      await box.press("Enter");
      // Both tabs show the passage as it reads now, with a link to it.
      for (const p of [a, b]) {
        const ref = p.locator(".transcript .msg-person").last().locator(".reference-passage");
        await until(
          "the passage in Chat",
          async () => (await ref.locator("q").textContent()) === "Sunscreen, a hat and sandals.",
        );
        await ref.getByRole("link", { name: "Show passage (line 9)" }).waitFor();
        if ((await ref.locator("a.reference-chip").textContent()) !== "#Packing list › Clothes")
          throw new Error("the chip reads " + (await ref.locator("a.reference-chip").textContent()));
      }
      await checkoutFits(b);
      await shot(b, "33d-passage-in-chat");
      await b.emulateMedia({ colorScheme: "dark" });
      await shot(b, "33d-passage-in-chat-dark");
      await b.emulateMedia({ colorScheme: "light" });
      const size = b.viewportSize();
      await b.setViewportSize({ width: 390, height: 700 });
      await b.getByRole("navigation", { name: "Destinations" }).getByText("Chat").click();
      await b.locator(".transcript .msg-person").last().locator(".reference-passage").scrollIntoViewIfNeeded();
      await shot(b, "33d-passage-in-chat-390");
      await b.setViewportSize(size);
      // Edited above it and inside it, it is found where it moved and reads anew.
      await putPlan(
        "# Packing list\n\nFor the June trip.\n\n## Papers\n\nPassports and the ferry tickets.\n\n## Clothes\n\nSunscreen, a hat, water and sandals.\n",
      );
      await b.reload();
      const moved = b.locator(".transcript .msg-person").last().locator(".reference-passage");
      await until(
        "the passage as it reads now",
        async () => (await moved.locator("q").textContent()) === "Sunscreen, a hat, water and sandals.",
      );
      await moved.getByText("(changed since)").waitFor();
      const show = moved.getByRole("link", { name: "Show passage (line 11)" });
      await shot(b, "33e-passage-moved");
      // Show passage opens the document with the passage marked.
      await show.click();
      await b.waitForURL(/\/documents\/octo\/plans\/packing-list$/);
      await until(
        "the passage marked",
        async () =>
          (await b.locator(".cm-line.cm-passage-flash").allTextContents()).join("|") ===
          "Sunscreen, a hat, water and sandals.",
      );
      await shot(b, "33f-passage-shown");
      // Deleted, Chat says so.
      await putPlan("# Packing list\n\nFor the June trip.\n\n## Papers\n\nPassports and the ferry tickets.\n");
      await a.reload();
      const gone = a.locator(".transcript .msg-person").last().locator(".reference-passage");
      await gone.getByText("The passage was deleted or rewritten since; it is not in the document now.").waitFor();
      await shot(a, "33g-passage-deleted");
      // Escape keeps the whole document.
      await box.fill("");
      await box.pressSequentially("See #pack");
      await a
        .locator(".reference-list")
        .getByRole("option", { name: /Packing list/ })
        .waitFor();
      await box.press("Enter");
      await search.waitFor();
      await search.press("Escape");
      await until("the document chip", async () => (await chip.textContent()).startsWith("Packing list×"));
      await a.getByRole("button", { name: "Do not refer to Packing list" }).click();
      await box.fill("");
    },
  );

  await step("scrolling up in Chat reads older messages back to the first", async () => {
    longChat = await a.evaluate(async () => {
      const r = await fetch("/api/repositories/octo/plans/channels", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ title: "Long chat" }),
      });
      if (r.status !== 201) throw new Error(`POST channels: ${r.status} ${await r.text()}`);
      return r.json();
    });
    await ask({ ask: "messages", channel: longChat.id, text: "250" });
    await a.goto(origin + new URL(longChat.url, origin).pathname);
    const list = a.locator(".transcript");
    await list.locator("[data-seq]").first().waitFor();
    const all = await a.evaluate(async (id) => {
      const r = await fetch(`/api/channels/${id}/messages?limit=1000`);
      return (await r.json()).messages.map((m) => m.seq);
    }, longChat.id);
    // Only the newest are mounted at first, scrolled to the newest.
    if ((await list.locator("[data-seq]").count()) >= all.length) throw new Error("every message was mounted at once");
    await until("Chat at its newest message", () =>
      list.evaluate(
        (el, seq) => !!el.querySelector(`[data-seq="${seq}"]`) && el.scrollHeight - el.scrollTop - el.clientHeight < 40,
        all[all.length - 1],
      ),
    );
    await until(
      "the first message",
      async () => {
        await list.evaluate((el) => (el.scrollTop = 0));
        return (await list.locator(`[data-seq="${all[0]}"]`).count()) === 1;
      },
      30000,
    );
    await list.locator(".chat-start").waitFor();
    const shown = await list.locator("[data-seq]").evaluateAll((els) => els.map((e) => Number(e.dataset.seq)));
    if (JSON.stringify(shown) !== JSON.stringify(all))
      throw new Error(`Chat shows ${shown.length} messages, the server has ${all.length}`);
  });

  await step("a long message shows its first page and Show more", async () => {
    await ask({ ask: "long-message", channel: longChat.id });
    const msg = a.locator(".msg", { hasText: "Long message start" });
    await msg.waitFor();
    if ((await msg.textContent()).includes("Long message end")) throw new Error("the whole long message came at once");
    const more = msg.getByRole("button", { name: "Show more" });
    await more.scrollIntoViewIfNeeded();
    await more.click();
    await until("the rest of the message", async () => (await msg.textContent()).includes("Long message end"));
    if (await more.count()) throw new Error("Show more is still offered after the last page");
    await a.goto(origin + docPath);
    await a.locator(".cm-content").waitFor();
  });

  await step("the first-load JS stays under 250 KiB gzip", async () => {
    const p = await newPage();
    const scripts = [];
    p.on("response", (r) => r.request().resourceType() === "script" && scripts.push(r));
    await p.goto(origin + "/", { waitUntil: "load" });
    await p.getByRole("heading", { name: "Repositories" }).waitFor();
    let total = 0;
    for (const r of scripts) total += gzipSync(await r.body(), { level: 9 }).length;
    await p.close();
    if (!scripts.length) throw new Error("the page loaded no script");
    process.stderr.write(`first-load JS: ${scripts.length} files, ${(total / 1024).toFixed(1)} KiB gzip\n`);
    if (total > 250 * 1024)
      throw new Error(`the first load is ${(total / 1024).toFixed(1)} KiB of JS gzip, over 250 KiB`);
  });

  // ---- the Planner's changes marked ----
  await step("the Planner's edits are marked in every tab; the chip steps through them and clears them", async () => {
    await ask({ ask: "append", channel, text: "\n\nThis sentence will be revised.\n\nThis line will go.\n" });
    const c = await newPage();
    await c.goto(a.url());
    // The editor draws the lines in view: both look at the end of the plan.
    for (const p of [a, c]) {
      await p.locator(".cm-content").click();
      await p.keyboard.press("Control+End");
      await until("the passages", async () => (await editorText(p)).includes("This line will go."));
    }
    const box = a.getByRole("textbox", { name: "Message" });
    await box.fill("@chopin revise the plan");
    await box.press("Enter");
    await a.locator(".transcript .msg-planner").filter({ hasText: "Revised the plan." }).waitFor();
    for (const p of [a, c]) {
      await p.locator(".planner-changes", { hasText: "3 changes" }).waitFor();
      await p.locator(".cm-planner-changed", { hasText: "This sentence was revised by the Planner." }).waitFor();
      await p.locator(".cm-planner-added", { hasText: "A step the Planner added." }).waitFor();
      await p.locator(".cm-planner-removed", { hasText: "removed" }).waitFor();
    }
    if (await a.locator(".cm-planner-changed, .cm-planner-added", { hasText: "We ship on Monday." }).count())
      throw new Error("a block the Planner did not touch is marked");
    // Stepping goes to each change in the text's order, the cursor on it.
    const activeLine = async () => (await a.locator(".cm-activeLine").first().textContent()) ?? "";
    await a.getByRole("button", { name: "Next change" }).click();
    await a.locator(".planner-changes-at", { hasText: "1 of 3" }).waitFor();
    await until(
      "the cursor on the changed block",
      async () => (await activeLine()) === "This sentence was revised by the Planner.",
    );
    await a.getByRole("button", { name: "Next change" }).click();
    await a.getByRole("button", { name: "Next change" }).click();
    await a.locator(".planner-changes-at", { hasText: "3 of 3" }).waitFor();
    await until("the cursor on the added block", async () => (await activeLine()) === "A step the Planner added.");
    // The Preview marks the same blocks, and steps there too.
    await a.getByRole("tab", { name: "Preview" }).click();
    await a
      .locator(".plan-view .plan-change-changed", { hasText: "This sentence was revised by the Planner." })
      .waitFor();
    await a.locator(".plan-view .plan-change-added", { hasText: "A step the Planner added." }).waitFor();
    await a.locator(".plan-view .plan-change-removed", { hasText: "removed" }).waitFor();
    await a.getByRole("button", { name: "Previous change" }).click();
    await a.locator(".planner-changes-at", { hasText: "2 of 3" }).waitFor();
    await shot(a, "06-planner-changes");
    // Clear takes them away in this tab only: marks are per tab.
    await a.getByRole("button", { name: "Clear" }).click();
    await a.locator(".planner-changes").waitFor({ state: "detached" });
    await until(
      "the Preview unmarked",
      async () => (await a.locator(".plan-view .plan-change, .plan-view .plan-change-removed").count()) === 0,
    );
    await a.getByRole("tab", { name: "Edit" }).click();
    if (await a.locator(".cm-planner-changed, .cm-planner-added, .cm-planner-removed").count())
      throw new Error("the editor still shows marks after Clear");
    await c.locator(".planner-changes", { hasText: "3 changes" }).waitFor();
    await c.close();
  });

  // ---- the plan's history: sessions, old versions, diff, restore, revert (issue 31) ----
  await walkHistory(a, { channel, docPath });

  await step("archiving makes the editor read-only", async () => {
    await b.goto(origin + "/documents/octo/plans");
    const row = b.locator(".doc-row", { hasText: "Launch plan v2" });
    await row.getByRole("button", { name: "Archive" }).click();
    await row.waitFor({ state: "detached" });
    await a.locator(".readonly-label").waitFor();
    await a.locator(".archived-bar").waitFor();
    if ((await a.locator(".cm-content").getAttribute("contenteditable")) !== "false")
      throw new Error("the editor is still editable");
    const before = await editorText(a);
    await a.locator(".cm-content").click();
    await a.keyboard.type("nope");
    if ((await editorText(a)) !== before) throw new Error("an archived plan took typing");
    await shot(a, "06-archived");
  });

  await step("the compact layout at 400 px shows the bottom bar", async () => {
    const c = await newPage();
    await c.setViewportSize({ width: 400, height: 800 });
    await c.goto(origin + docPath);
    const bar = c.getByRole("navigation", { name: "Destinations" });
    await bar.waitFor();
    await c.locator(".cm-content").waitFor();
    if (await c.locator(".chat-pane").isVisible()) throw new Error("Chat shows beside the plan at 400 px");
    await shot(c, "07-compact-plan");
    await bar.getByRole("button", { name: "Chat" }).click();
    await c.locator(".transcript").getByText("second line").waitFor();
    // The runs come from GET .../planner on opening; the archived document's
    // link closed, so its live run shows as stopped.
    await c.locator(".run-card[data-run=run-build] .run-status", { hasText: "Stopped" }).waitFor();
    if (await c.locator(".cm-content").isVisible()) throw new Error("the plan still shows in Chat");
    await shot(c, "08-compact-chat");
    await bar.getByRole("button", { name: "Decisions" }).click();
    await c.locator(".decisions .decision-card").first().waitFor();
    await shot(c, "09-compact-decisions");
    await c.close();
  });

  await walkTaskLists(a);
  await walkNoDeadEnds(a, { selectLine });
  await walkAbout(a);
  await walkOnlyDocumentArchived(a);

  await step("sign out everywhere ends this browser's sign-in too", async () => {
    // A tab open on a document: its socket closes (4401) and it shows the
    // sign-in page too.
    const open = await newPage();
    await open.goto(origin + docPath);
    await open.locator(".cm-content").waitFor();
    await a.goto(origin + "/");
    const browsers = a.getByRole("region", { name: "Browsers" });
    await browsers.getByRole("button", { name: "Sign out everywhere" }).click();
    await browsers.getByRole("button", { name: "Yes, sign out every browser" }).click();
    await a.getByText("This browser is not signed in to Chopin.").waitFor();
    await open.getByText("This browser is not signed in to Chopin.").waitFor();
    await open.close();
    const status = await a.evaluate(async () => (await fetch("/api/session")).status);
    if (status !== 401) throw new Error("after signing out, /api/session answered " + status);
  });

  await walkQuit(docPath);

  if (offsite.length) {
    failed = true;
    say({ step: "no request left the origin", ok: false, error: offsite.join("\n") });
  }
  if (errors.length) {
    failed = true;
    say({ step: "no uncaught page errors", ok: false, error: errors.join("\n") });
  }
} catch {
  // The failing step has said why.
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);

// ---- a person's path with no dead ends: first run, Planner, review, quit ----
// Each step makes what it needs through the HTTP API; page a is signed in.
async function walkNoDeadEnds(a, { selectLine }) {
  const make = (title) =>
    a.evaluate(async (title) => {
      const r = await fetch("/api/repositories/octo/plans/channels", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ title }),
      });
      return { status: r.status, body: await r.json(), location: r.headers.get("Location") };
    }, title);

  await step("Accept on a comment waits for a Planner, says so, and offers Connect a Planner", async () => {
    const made = await make("Review without a Planner");
    if (made.status !== 201) throw new Error("create: " + JSON.stringify(made));
    await ask({ ask: "append", channel: made.body.id, text: "# Review\n\n## Risks\n\nNone yet.\n" });
    await a.goto(origin + made.location);
    await a.getByRole("tab", { name: "Edit" }).click();
    await until("the plan in the editor", async () =>
      (await a.locator(".cm-content").textContent()).includes("None yet."),
    );
    await selectLine(a, "None yet.");
    await a.getByRole("button", { name: "Comment", exact: true }).click();
    const draft = a.getByRole("region", { name: "New comment" });
    await draft.getByRole("textbox", { name: "Comment" }).fill("Name one.");
    await draft.getByRole("button", { name: "Comment", exact: true }).click();
    await draft.waitFor({ state: "detached" });
    await a.locator(".cm-comment-wash", { hasText: "None yet." }).click();
    const card = a.getByRole("region", { name: "Comment thread" });
    await card.locator(".comment-waits", { hasText: "No Planner is attached" }).waitFor();
    if (!(await card.getByRole("button", { name: "Accept" }).isDisabled()))
      throw new Error("Accept is offered without a Planner");
    await shot(a, "50-accept-waits");
    await card.getByRole("button", { name: "Connect a Planner" }).click();
    const dialog = a.getByRole("dialog", { name: "Connect a Planner" });
    await dialog.waitFor();
    await dialog.getByRole("button", { name: "Done" }).click();
    await dialog.waitFor({ state: "hidden" });
  });
}

// ---- the About page: where Chopin keeps things, the last backup; Quit ----
// shots: each width (1280 and 390 px) in light and dark.
async function aboutShots(page, name) {
  for (const [w, h] of [
    [1280, 800],
    [390, 844],
  ]) {
    await page.setViewportSize({ width: w, height: h });
    for (const scheme of ["light", "dark"]) {
      await page.emulateMedia({ colorScheme: scheme });
      await shot(page, `${name}-${w}-${scheme}`);
    }
  }
  await page.emulateMedia({ colorScheme: "light" });
}

async function walkAbout(a) {
  await step("About, from the header: version, directories to copy, database size, the last backup", async () => {
    await a.goto(origin + "/");
    await a.getByRole("link", { name: "About", exact: true }).click();
    await a.waitForURL(origin + "/about");
    await a.getByRole("heading", { name: "About Chopin" }).waitFor();
    const status = await a.evaluate(async () => (await fetch("/api/status")).json());
    const facts = a.getByRole("definition");
    for (const label of ["Data directory", "Config directory", "Program"])
      if (
        (await a.getByLabel(label, { exact: true }).textContent()) !==
        status[label === "Program" ? "binary" : label === "Data directory" ? "dataDir" : "configDir"]
      )
        throw new Error(`${label} does not show the server's`);
    await a.getByRole("button", { name: "Copy data directory" }).click();
    await a.getByRole("button", { name: "Copy data directory" }).filter({ hasText: "Copied" }).waitFor();
    if (!(await facts.filter({ hasText: /\d+(\.\d)? (bytes|KB|MB)/ }).count())) throw new Error("no database size");
    // The backup downloaded earlier in the walk is the last one.
    if (!status.lastBackup) throw new Error("the earlier download is not recorded as the last backup");
    await a
      .locator(".facts", { hasText: "Last backup" })
      .locator("dd", { hasText: /ago|just now/ })
      .waitFor();
    await aboutShots(a, "60-about");
    // Quit asks once; Cancel leaves Chopin running.
    await a.setViewportSize({ width: 1320, height: 860 });
    const quit = a.getByRole("region", { name: "Quit" });
    await quit.getByRole("button", { name: "Quit Chopin" }).click();
    await shot(a, "61-about-quit-asks");
    await quit.getByRole("button", { name: "Cancel" }).click();
    await quit.getByRole("button", { name: "Quit Chopin" }).waitFor();
    // The documents page's header links here too.
    await a.goto(origin + "/documents/octo/plans");
    await a.getByRole("link", { name: "About", exact: true }).click();
    await a.getByRole("heading", { name: "About Chopin" }).waitFor();
  });
}

// walkQuit ends the walk: signed in again (the walk signed every browser
// out), Quit on the About page stops Chopin, and the page says so.
async function walkQuit(docPath) {
  let doc = null;
  await step("Quit on the About page stops Chopin, and the page says how to start it again", async () => {
    const { url } = await ask({ ask: "launch" });
    const q = await newPage();
    await q.goto(url);
    // A document left open in another tab, to see what it says after.
    doc = await newPage();
    await doc.goto(origin + docPath);
    await doc.locator(".cm-content").waitFor();
    await q.bringToFront();
    await q.goto(origin + "/about");
    const quit = q.getByRole("region", { name: "Quit" });
    await quit.getByRole("button", { name: "Quit Chopin" }).click();
    await quit.getByRole("button", { name: "Yes, quit Chopin" }).click();
    await q.getByRole("heading", { name: "Chopin stopped" }).waitFor();
    await q.getByLabel("Start command").getByText("chopin", { exact: true }).waitFor();
    await aboutShots(q, "62-stopped");
    await until("Chopin to stop answering", async () =>
      q.evaluate(() =>
        fetch("/healthz").then(
          () => false,
          () => true,
        ),
      ),
    );
  });

  await step("a document's tab says Chopin is not running and the command that starts it", async () => {
    if (!doc) throw new Error("no document tab");
    await doc.bringToFront();
    const bar = doc.locator(".stopped-bar");
    await bar.waitFor({ timeout: 20000 });
    const text = await bar.textContent();
    if (!text.includes("Chopin is not running") || !text.includes("Start it again with chopin in a terminal"))
      throw new Error("the bar says: " + text);
    if ((await doc.locator(".conn-label").textContent()) !== "Chopin is not running")
      throw new Error("the header says: " + (await doc.locator(".conn-label").textContent()));
    await aboutShots(doc, "63-not-running");
  });
}

// ---- the list after archiving a repository's only document ----
async function walkOnlyDocumentArchived(a) {
  await step("after archiving the only document, the list says it is archived and how to see it", async () => {
    const made = await a.evaluate(async () => {
      await fetch("/api/repositories", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ name: "octo/solo" }),
      });
      const r = await fetch("/api/repositories/octo/solo/channels", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ title: "Only one" }),
      });
      return r.status;
    });
    if (made !== 201) throw new Error("create: " + made);
    await a.goto(origin + "/documents/octo/solo");
    const row = a.locator(".doc-row", { hasText: "Only one" });
    await row.getByRole("button", { name: "Archive" }).click();
    await row.waitFor({ state: "detached" });
    const empty = a.locator(".empty");
    await until("the empty list's words", async () =>
      (await empty.textContent()).startsWith("Every document here is archived."),
    );
    if ((await empty.textContent()).includes("No documents yet"))
      throw new Error("the list says: " + (await empty.textContent()));
    await shot(a, "64-only-document-archived");
    await empty.getByRole("button", { name: "Show archived" }).click();
    await row.waitFor();
  });
}

// ---- task lists: checkboxes in Preview (ticked to edit the plan) and Chat ----
async function walkTaskLists(a) {
  await step("a task list shows checkboxes; ticking one in Preview edits the plan's source, and it stays", async () => {
    const made = await a.evaluate(async () => {
      const r = await fetch("/api/repositories/octo/plans/channels", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ title: "Checklist" }),
      });
      return { status: r.status, body: await r.json(), location: r.headers.get("Location") };
    });
    if (made.status !== 201) throw new Error("create: " + JSON.stringify(made));
    const channel = made.body.id;
    await ask({
      ask: "append",
      channel,
      text:
        "\n- [ ] Write the plan\n- [x] Pick a name\n  - [ ] Nested step\n\n" +
        '<input type="text" name="x" value="raw"> <input type="checkbox" class="task-box" checked>\n',
    });
    await a.goto(origin + made.location);
    await a.getByRole("tab", { name: "Preview" }).click();
    const view = a.locator(".plan-view");
    const boxes = view.locator("input.task-box");
    await until("three checkboxes", async () => (await boxes.count()) === 3);
    // Raw HTML stays text: the only inputs are the task items'.
    await view.getByText('<input type="text" name="x" value="raw">', { exact: false }).waitFor();
    if ((await view.locator("input").count()) !== 3) throw new Error("an input other than a task's checkbox");
    const states = await boxes.evaluateAll((els) => els.map((e) => [e.checked, e.disabled, e.type, e.name]));
    if (
      JSON.stringify(states) !==
      JSON.stringify([
        [false, false, "checkbox", ""],
        [true, false, "checkbox", ""],
        [false, false, "checkbox", ""],
      ])
    )
      throw new Error("boxes: " + JSON.stringify(states));
    await shot(a, "70-task-list");
    // Ticking the nested one flips exactly its brackets in the source.
    await boxes.nth(2).click();
    const want = "- [ ] Write the plan\n- [x] Pick a name\n  - [x] Nested step\n";
    await until("the server's plan", async () => (await ask({ ask: "plan", channel })).source.includes(want));
    await until("the box ticked", async () => view.locator("input.task-box").nth(2).isChecked());
    // By keyboard: Space on the focused box unticks the second.
    await view.locator("input.task-box").nth(1).focus();
    await a.keyboard.press("Space");
    const want2 = "- [ ] Write the plan\n- [ ] Pick a name\n  - [x] Nested step\n";
    await until("the second unticked", async () => (await ask({ ask: "plan", channel })).source.includes(want2));
    // A reload shows what the plan holds.
    await a.reload();
    await a.getByRole("tab", { name: "Preview" }).click();
    await until("the stored ticks", async () => {
      const s = await a.locator(".plan-view input.task-box").evaluateAll((els) => els.map((e) => e.checked));
      return JSON.stringify(s) === "[false,false,true]";
    });
    // In Chat a task list shows its boxes read-only.
    const box = a.getByRole("textbox", { name: "Message" });
    await box.fill("- [x] done\n- [ ] to do");
    await box.press("Control+Enter");
    const msg = a.locator(".transcript .msg-person .msg-body").filter({ hasText: "to do" });
    await msg.waitFor();
    const chat = await msg.locator("input").evaluateAll((els) => els.map((e) => [e.type, e.checked, e.disabled]));
    if (
      JSON.stringify(chat) !==
      JSON.stringify([
        ["checkbox", true, true],
        ["checkbox", false, true],
      ])
    )
      throw new Error("Chat's boxes: " + JSON.stringify(chat));
    await shot(a, "71-task-list-chat");
    await a.getByRole("tab", { name: "Edit" }).click();
  });
}

// ---- repositories: the first run's personal repository, rename, remove ----
// Runs first, on an empty Chopin, and leaves it empty again.
async function walkRepositories(a) {
  await step("a first run offers a personal repository; renaming keeps its documents and old links", async () => {
    await a.goto(origin + "/");
    const start = a.getByRole("region", { name: "Start" });
    await start.getByText("ada/plans").waitFor();
    await a.getByPlaceholder("acme/website").waitFor();
    await shot(a, "80-first-run");
    await start.getByRole("button", { name: "Start with a personal repository" }).click();
    await a.waitForURL(origin + "/documents/ada/plans");
    await a.getByPlaceholder("Title (optional)").fill("Reading list");
    await a.getByRole("button", { name: "New document" }).click();
    await a.waitForURL(origin + "/documents/ada/plans/reading-list");
    // A bad name is refused with an example; then renamed.
    await a.goto(origin + "/");
    const row = a.getByRole("listitem", { name: "ada/plans" });
    await row.getByRole("button", { name: "Rename" }).click();
    const field = row.getByRole("textbox", { name: "New name" });
    await field.fill("notes");
    await row.getByRole("button", { name: "Rename", exact: true }).click();
    await until("the refusal", async () => (await row.locator(".error-text").textContent())?.includes("acme/website"));
    await shot(a, "81-rename-refused");
    await field.fill("ada/notes");
    await row.getByRole("button", { name: "Rename", exact: true }).click();
    await a.getByRole("link", { name: "ada/notes" }).waitFor();
    // The old deep link opens the document at its new address.
    await a.goto(origin + "/documents/ada/plans/reading-list");
    await a.waitForURL(origin + "/documents/ada/notes/reading-list");
    await a.locator(".cm-content").waitFor();
    await a.goto(origin + "/documents/ada/plans");
    await a.waitForURL(origin + "/documents/ada/notes");
  });

  await step("removing a repository with documents asks: archive them, or keep it", async () => {
    await a.goto(origin + "/");
    const row = a.getByRole("listitem", { name: "ada/notes" });
    await row.getByRole("button", { name: "Remove" }).click();
    const ask1 = a.getByRole("alertdialog", { name: "Remove ada/notes" });
    await ask1.getByRole("button", { name: "Remove ada/notes" }).click();
    await ask1.getByText("ada/notes still has active documents").waitFor();
    for (const [w, h] of [
      [1280, 800],
      [390, 844],
    ]) {
      await a.setViewportSize({ width: w, height: h });
      for (const scheme of ["light", "dark"]) {
        await a.emulateMedia({ colorScheme: scheme });
        await shot(a, `82-remove-asks-${w}-${scheme}`);
      }
    }
    await a.emulateMedia({ colorScheme: "light" });
    await a.setViewportSize({ width: 1320, height: 860 });
    // Keeping it changes nothing.
    await ask1.getByRole("button", { name: "Keep the repository" }).click();
    await row.getByRole("button", { name: "Remove" }).click();
    await ask1.getByRole("button", { name: "Remove ada/notes" }).click();
    await ask1.getByRole("button", { name: "Archive documents and remove" }).click();
    await a.getByRole("region", { name: "Start" }).waitFor();
    const left = await a.evaluate(async () => (await (await fetch("/api/repositories")).json()).repositories.length);
    if (left !== 0) throw new Error(left + " repositories left");
  });
}

// ---- the plan's history (issue 31) ----
// Two tabs on the document whose Planner is attached: a person's typing, an
// append over HTTP and a Planner turn become sessions with their authors; an
// old version shows as it was; the diff marks changed words; Revert this
// turn undoes the Planner's turn, and again once the person has edited its
// text is refused, naming the version in the way; Restore asks, naming the
// time, and the second tab (its History open too) follows. It ends with
// the plan as the person's first edit left it.
async function walkHistory(a, { channel, docPath }) {
  const { axe } = await import("./a11y.mjs");
  const planSource = async () => (await ask({ ask: "plan", channel })).source;
  const dialog = (page) => page.getByRole("dialog", { name: "History of the plan" });
  const sessions = (page) => dialog(page).locator(".history-session");
  const whoOf = (loc) => loc.locator(".history-who").textContent();
  // The sessions this walk made: versions after it began.
  let start = 0;
  const ours = async (page, kind) => {
    const out = [];
    for (const s of await sessions(page).all())
      if (Number(await s.getAttribute("data-from")) > start && (!kind || (await s.getAttribute("data-kind")) === kind))
        out.push(s);
    return out;
  };
  const revise = async () => {
    const box = a.getByRole("textbox", { name: "Message" });
    await box.fill("@chopin revise the plan");
    await box.press("Enter");
    try {
      await until("the Planner's revision", async () => !(await planSource()).includes("This line will go."), 20000);
    } catch (e) {
      const said = await a.locator(".transcript .msg").last().textContent();
      const composer = await a.locator(".composer").textContent();
      throw new Error(
        `${e.message}; Chat's last message: ${JSON.stringify(said)}; the box holds ${JSON.stringify(await box.inputValue())}; the composer says ${JSON.stringify(composer)}`,
      );
    }
  };
  let c;

  await step(
    "history: a person's typing, an HTTP edit and a Planner turn show as sessions with their authors",
    async () => {
      start = (await ask({ ask: "plan", channel })).version;
      await a.getByRole("tab", { name: "Edit" }).click();
      await a.locator(".cm-content").click();
      await a.keyboard.press("Control+End");
      await a.keyboard.type("\n\nHistory budget: ten thousand.");
      await until("the typing on the server", async () =>
        (await planSource()).includes("History budget: ten thousand."),
      );
      await ask({ ask: "append", channel, text: "\n\nThis sentence will be revised.\n\nThis line will go.\n" });
      await until("the append in a", async () => (await editorText(a)).includes("This line will go."));
      await revise();
      c = await newPage();
      await c.goto(origin + docPath);
      await c.locator(".cm-content").waitFor();
      // Opened from the header; Escape closes it and the focus goes back.
      // Pages of 5 sessions here (the UI asks for 30), so Show older has more to read.
      const small = (route) => route.continue({ url: route.request().url().replace("limit=30", "limit=5") });
      await a.route(/\/timeline\?/, small);
      await a.locator(".top-bar").getByRole("button", { name: "History" }).click();
      await dialog(a).waitFor();
      await until("the first page", async () => (await sessions(a).count()) === 5);
      await dialog(a).getByRole("button", { name: "Show older" }).click();
      await until("the second page", async () => (await sessions(a).count()) === 10);
      await a.unroute(/\/timeline\?/, small);
      await until("the three sessions", async () => (await ours(a)).length >= 3);
      const [planner, server, person] = await ours(a);
      const who = [await whoOf(planner), await whoOf(server), await whoOf(person)];
      if (!/^Planner( · .+)?$/.test(who[0]) || who[1] !== "Chopin" || who[2] !== "You")
        throw new Error("the newest sessions are by " + JSON.stringify(who));
      const text = await planner.textContent();
      if (!/just now|minute/.test(text) || !/1 version/.test(text))
        throw new Error("the Planner's session says " + text);
      await shot(a, "90-history-timeline");
      await a.keyboard.press("Escape");
      await dialog(a).waitFor({ state: "detached" });
      if (!(await a.evaluate(() => document.activeElement?.classList.contains("history-button"))))
        throw new Error("the focus did not go back to History");
      // Alt+4 opens it too, and it is listed under ?.
      await a.keyboard.press("?");
      const list = a.getByRole("dialog", { name: "Keyboard shortcuts" });
      await list.waitFor();
      const keys = await list
        .locator(".shortcut", { hasText: "Open the plan's history" })
        .locator("kbd")
        .allTextContents();
      if (keys.join("+") !== "Alt+4") throw new Error("the shortcut list gives History as " + keys.join("+"));
      await list.locator(".shortcut", { hasText: "The older session" }).waitFor();
      await a.keyboard.press("Escape");
      await list.waitFor({ state: "hidden" });
      await a.keyboard.press("Alt+4");
      await dialog(a).waitFor();
      await until("the sessions again", async () => (await ours(a)).length >= 3);
    },
  );

  await step("history: an old version shows as it was; the diff marks changed words and folds the rest", async () => {
    const [planner, , person] = await ours(a);
    // Chosen by keyboard: the arrow keys step from session to session, Enter chooses.
    await planner.locator(".history-pick").focus();
    await a.keyboard.press("ArrowDown");
    await a.keyboard.press("ArrowDown");
    if (!(await person.locator(".history-pick").evaluate((el) => el === document.activeElement)))
      throw new Error("ArrowDown twice from the Planner's session did not reach the person's");
    await a.keyboard.press("Enter");
    if ((await person.locator(".history-pick").getAttribute("aria-pressed")) !== "true")
      throw new Error("Enter did not choose the session");
    const old = dialog(a).locator(".history-plan");
    await old.getByText("History budget: ten thousand.").waitFor();
    if (await old.getByText("This line will go.").count()) throw new Error("the old version shows a later line");
    // What the Planner's turn changed: its session against the version before it.
    await planner.locator(".history-pick").click();
    await dialog(a).getByRole("tab", { name: "Diff" }).click();
    await dialog(a).getByText("From version").waitFor();
    const compare = dialog(a).getByRole("combobox", { name: "Compare with…" });
    await compare.selectOption(
      await compare.locator("option", { hasText: "Just before this session" }).getAttribute("value"),
    );
    const diff = dialog(a).locator(".history-diff");
    await diff.locator(".diff-changed del", { hasText: "will be" }).waitFor();
    await diff.locator(".diff-changed ins", { hasText: /was/ }).waitFor();
    // The line that went and the one that came (the server may pair them as one change).
    await diff.locator("del", { hasText: "This line will go" }).waitFor();
    await diff.locator("ins", { hasText: "A step the Planner added" }).waitFor();
    // Colour and a mark that is not colour.
    const deco = (sel) =>
      diff
        .locator(sel)
        .first()
        .evaluate((el) => getComputedStyle(el).textDecorationLine);
    if ((await deco("del")) !== "line-through" || (await deco("ins")) !== "underline")
      throw new Error("changed words are not struck through and underlined");
    const fold = diff.getByRole("button", { name: /^\d+ unchanged blocks$/ });
    const n = Number((await fold.textContent()).split(" ")[0]);
    const shown = await diff.locator("pre.diff-same").count();
    await fold.click();
    await until(
      "the unchanged blocks unfolded",
      async () => (await diff.locator("pre.diff-same").count()) === shown + n,
    );
    await axe(a, "the History's diff");
    for (const [w, h] of [
      [1280, 800],
      [420, 860],
    ]) {
      await a.setViewportSize({ width: w, height: h });
      for (const scheme of ["light", "dark"]) {
        await a.emulateMedia({ colorScheme: scheme });
        await shot(a, `91-history-diff-${w}-${scheme}`);
      }
    }
    await axe(a, "the History, narrow and dark");
    await a.emulateMedia({ colorScheme: "light" });
    await a.setViewportSize({ width: 1320, height: 860 });
  });

  await step("history: Revert this turn undoes the Planner's turn, and the other tab follows", async () => {
    const [planner] = await ours(a, "planner");
    await planner.locator(".history-pick").click();
    await dialog(a).getByRole("button", { name: "Revert this turn" }).click();
    await dialog(a).getByRole("group", { name: "Confirm" }).getByRole("button", { name: "Revert this turn" }).click();
    await dialog(a).getByRole("status").getByText("Reverted the Planner's turn.").waitFor();
    const src = await planSource();
    if (
      !src.includes("This sentence will be revised.\n\nThis line will go.") ||
      /A step the Planner added\.\s*$/.test(src)
    )
      throw new Error("after the revert the plan ends " + JSON.stringify(src.slice(-160)));
    await until(
      "the revert first in the timeline",
      async () => (await whoOf(sessions(a).first())) === "Reverted by you",
    );
    await c.locator(".cm-content").click();
    await c.keyboard.press("Control+End");
    await until("the revert in c", async () => (await editorText(c)).includes("This line will go."));
  });

  await step("history: a revert whose text was edited since is refused, naming the version in the way", async () => {
    await a.keyboard.press("Escape");
    await dialog(a).waitFor({ state: "detached" });
    await revise();
    await until("the revision in a", async () =>
      (await editorText(a)).includes("This sentence was revised by the Planner."),
    );
    // The person rewrites the sentence the Planner wrote.
    await a.locator(".cm-scroller").evaluate((el) => el.scrollTo(0, el.scrollHeight));
    await a.locator(".cm-content .cm-line", { hasText: "This sentence was revised by the Planner." }).last().click();
    await a.keyboard.press("Home");
    await a.keyboard.press("Shift+End");
    await a.keyboard.type("Ada rewrote this sentence.");
    await until("the rewrite on the server", async () => (await planSource()).includes("Ada rewrote this sentence."));
    await a.keyboard.press("Escape");
    await a.keyboard.press("Alt+4");
    await dialog(a).waitFor();
    await until("the rewrite in the timeline", async () => (await whoOf(sessions(a).first())) === "You");
    const [planner] = await ours(a, "planner");
    await planner.locator(".history-pick").click();
    await dialog(a).getByRole("button", { name: "Revert this turn" }).click();
    await dialog(a).getByRole("group", { name: "Confirm" }).getByRole("button", { name: "Revert this turn" }).click();
    const refused = dialog(a).locator(".history-refused[role=alert]");
    await refused.waitFor();
    const links = refused.locator(".history-conflicts button");
    await links.first().waitFor();
    if (!(await planSource()).includes("Ada rewrote this sentence."))
      throw new Error("the refused revert changed the plan");
    await shot(a, "92-history-conflict");
    // The version in the way is the person's rewrite: its link chooses it.
    const [rewrite] = await ours(a, "person");
    const [from, to] = [Number(await rewrite.getAttribute("data-from")), Number(await rewrite.getAttribute("data-to"))];
    const label = await links.first().textContent();
    // One link for the burst of typing, however many versions it made.
    const m = /^Versions? (\d+)(?:–(\d+))? by You, \d\d:\d\d$/.exec(label);
    if (!m || Number(m[1]) < from || Number(m[2] ?? m[1]) > to || (await links.count()) !== 1)
      throw new Error(
        `the conflicts name ${JSON.stringify(await links.allTextContents())}, not versions of ${from}–${to}`,
      );
    await links.first().click();
    await until(
      "the rewrite chosen",
      async () => (await rewrite.locator(".history-pick").getAttribute("aria-pressed")) === "true",
    );
  });

  await step(
    "history: Restore asks, naming the time, then restores; the other tab and its History follow",
    async () => {
      await c.keyboard.press("Escape");
      await c.keyboard.press("Alt+4");
      await dialog(c).waitFor();
      const people = await ours(a, "person");
      const first = people[people.length - 1]; // the typing that began the walk
      await first.locator(".history-pick").click();
      await dialog(a).getByRole("button", { name: "Restore this version" }).click();
      const confirm = dialog(a).getByRole("group", { name: "Confirm" });
      const question = await confirm.locator("p").textContent();
      if (!/^Restore the plan as it was at \d\d:\d\d\? Everything after stays in the history\.$/.test(question))
        throw new Error("Restore asks " + JSON.stringify(question));
      // Escape takes back the question, not the History.
      await a.keyboard.press("Escape");
      await confirm.waitFor({ state: "detached" });
      await dialog(a).waitFor();
      await dialog(a).getByRole("button", { name: "Restore this version" }).click();
      await confirm.getByRole("button", { name: "Restore" }).click();
      await dialog(a)
        .getByRole("status")
        .getByText(/^Restored the plan as it was at/)
        .waitFor();
      const src = await planSource();
      if (
        !src.includes("History budget: ten thousand.") ||
        src.includes("This line will go.") ||
        src.includes("Ada rewrote")
      )
        throw new Error("the restored plan ends " + JSON.stringify(src.slice(-160)));
      for (const p of [a, c])
        await until(
          "Restored by you in the timeline",
          async () => (await whoOf(sessions(p).first())) === "Restored by you",
        );
      await shot(c, "93-history-restored-other-tab");
      await c.keyboard.press("Escape");
      await dialog(c).waitFor({ state: "detached" });
      await c.locator(".cm-content").click();
      await c.keyboard.press("Control+End");
      await until("the restore in c", async () => {
        const t = await editorText(c);
        return t.includes("History budget: ten thousand.") && !t.includes("Ada rewrote");
      });
      await c.close();
      await a.keyboard.press("Escape");
      await dialog(a).waitFor({ state: "detached" });
    },
  );
}
