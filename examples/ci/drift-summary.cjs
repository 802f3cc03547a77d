#!/usr/bin/env node
// Writes a Markdown job summary of a drift check: which resources `pulumi preview --refresh --expect-no-changes
// --json` would change, and why. Usage (GitHub Actions):
//   node drift-summary.cjs <stack> preview.json [preview.err] >> "$GITHUB_STEP_SUMMARY"
// preview.json is the preview's JSON (`steps`, `diagnostics`, `changeSummary`); preview.err its stderr, shown
// when the preview failed before printing JSON (a wrong key, a missing stack). Never fails: a summary is
// always written. Plain Node.js, no dependencies.
"use strict";
const { readFileSync } = require("node:fs");
const { stripVTControlCharacters } = require("node:util");

const [stack = "(stack)", jsonFile = "preview.json", errFile] = process.argv.slice(2);
const read = (file) => {
  try {
    return file ? readFileSync(file, "utf8") : "";
  } catch {
    return "";
  }
};
/** `urn:pulumi:<stack>::<project>::<parent$type>::<name>` → { type, name } */
const parseUrn = (urn) => {
  const parts = String(urn).split("::");
  const name = parts.slice(3).join("::") || String(urn);
  const type = (parts[2] ?? "").split("$").pop() ?? "";
  return { type: type.replace(/^pulumi-nodejs:dynamic\//, ""), name };
};
const cell = (text) => String(text).replace(/\|/g, "\\|").replace(/\n/g, " ");
const UNCHANGED = new Set(["same", "read", "refresh", "discard"]);

/**
 * The summary's Markdown for one stack. `json` is the preview's JSON text (may be empty), `stderr` its stderr.
 * Drift: every step whose op is not same/read/refresh, with the properties that differ.
 */
function summarize(stack, json, stderr) {
  let preview;
  try {
    preview = JSON.parse(json);
  } catch {
    preview = undefined;
  }
  const lines = [`### Drift: ${stack}`, ""];
  if (!preview || typeof preview !== "object") {
    lines.push("The preview failed before it could compare (no JSON output):", "", "```text");
    lines.push(stderr.trim().split("\n").slice(-20).join("\n") || "(no output)", "```");
    return `${lines.join("\n")}\n`;
  }
  const steps = (preview.steps ?? []).filter((s) => !UNCHANGED.has(s.op));
  const errors = (preview.diagnostics ?? []).filter((d) => d.severity === "error");
  if (steps.length === 0 && errors.length === 0) {
    lines.push("No drift: PostHog matches git.");
    return `${lines.join("\n")}\n`;
  }
  if (steps.length > 0) {
    lines.push(`${steps.length} resource(s) drifted: the next \`pulumi up\` would change them.`, "");
    lines.push("| Change | Type | Name | Properties |", "|---|---|---|---|");
    for (const step of steps) {
      const { type, name } = parseUrn(step.urn);
      const keys = [...new Set([...(step.replaceReasons ?? []), ...(step.diffReasons ?? [])])];
      const props = keys.length ? keys.map((k) => `\`${k}\``).join(", ") : "";
      lines.push(`| ${cell(step.op)} | ${cell(type)} | ${cell(name)} | ${cell(props)} |`);
    }
    lines.push("");
  }
  for (const d of errors) {
    const message = stripVTControlCharacters(String(d.message ?? "")).trim();
    lines.push(`- **error**${d.urn ? ` (${cell(parseUrn(d.urn).name)})` : ""}: ${cell(message)}`);
  }
  return `${lines.join("\n")}\n`;
}

if (require.main === module) process.stdout.write(summarize(stack, read(jsonFile), read(errFile)));
module.exports = { summarize };
