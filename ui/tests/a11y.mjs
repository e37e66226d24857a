// axe-core (npm, pinned in package-lock.json) in the browser test: axe(page,
// screen) injects it into the page and fails on any serious or critical
// violation, naming the rule and the elements.

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

const source = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

export async function axe(page, screen) {
  // Evaluated over the DevTools protocol, so the page's CSP does not apply.
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(source);
  const found = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ["violations"] });
    return r.violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map(
        (v) =>
          `${v.id} (${v.impact}): ${v.help}\n` +
          v.nodes
            .slice(0, 6)
            .map((n) => `    ${n.target.join(" ")}: ${n.failureSummary.replace(/\s+/g, " ")}`)
            .join("\n"),
      );
  });
  if (found.length) throw new Error(`axe on ${screen}:\n` + found.join("\n"));
}
