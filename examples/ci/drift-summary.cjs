#!/usr/bin/env node
// Writes a Markdown job summary of a drift check: which resources `pulumi preview --refresh --expect-no-changes
// --json` would change, and why. Usage (GitHub Actions):
//   node drift-summary.cjs <stack> preview.json [preview.err] >> "$GITHUB_STEP_SUMMARY"
// preview.json is the preview's JSON: `steps` (each with `op`, `urn`, `oldState` = what PostHog has after the
// refresh, `newState` = what the program declares), `diagnostics` (`severity`, `message`, `urn`) and
// `changeSummary`. An error met while previewing (a wrong key or host) is in its `diagnostics`; preview.err is
// the preview's stderr, shown when it printed no JSON (a missing stack, a project that does not load). Never
// fails: a summary is always written. Plain Node.js, no dependencies.
"use strict";
const { readFileSync } = require("node:fs");
const { isDeepStrictEqual, stripVTControlCharacters } = require("node:util");

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
 * The top-level properties a step changes. The engine names them (`replaceReasons`, `diffReasons`,
 * `detailedDiff`) when the provider reports them; Pulumi's dynamic providers (every pulumi-posthog resource)
 * report none but the replacing ones, so the rest are the inputs the program declares (`newState.inputs`) whose
 * value differs from what the refresh read (`oldState.inputs`).
 */
const changedProperties = (step) => {
  const reported = [
    ...(step.replaceReasons ?? []),
    ...(step.diffReasons ?? []),
    ...Object.keys(step.detailedDiff ?? {}).map((path) => path.split(/[.[]/)[0]),
  ];
  const olds = step.oldState?.inputs;
  const news = step.newState?.inputs;
  const compared =
    olds && news
      ? Object.keys(news).filter((k) => k !== "__provider" && !isDeepStrictEqual(olds[k], news[k]))
      : [];
  return [...new Set([...reported, ...compared.sort()])];
};

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
  const steps = (preview.steps ?? []).filter((s) => s && !UNCHANGED.has(s.op));
  const errors = (preview.diagnostics ?? []).filter((d) => d.severity === "error");
  if (steps.length === 0 && errors.length === 0) {
    lines.push("No drift: PostHog matches git.");
    return `${lines.join("\n")}\n`;
  }
  if (steps.length > 0) {
    lines.push(
      `${steps.length} resource(s) drifted: the next \`pulumi up --refresh\` would change them.`,
      "",
    );
    lines.push("| Change | Type | Name | Properties |", "|---|---|---|---|");
    for (const step of steps) {
      const { type, name } = parseUrn(step.urn);
      const props = changedProperties(step)
        .map((k) => `\`${k}\``)
        .join(", ");
      lines.push(`| ${cell(step.op)} | ${cell(type)} | ${cell(name)} | ${cell(props)} |`);
    }
    lines.push("");
  }
  if (errors.length > 0) lines.push("The preview failed: it could not compare PostHog with git.", "");
  for (const d of errors) {
    const message = stripVTControlCharacters(String(d.message ?? ""))
      .trim()
      .replace(/^error: /, "");
    lines.push(`- **error**${d.urn ? ` (${cell(parseUrn(d.urn).name)})` : ""}: ${cell(message)}`);
  }
  return `${lines.join("\n")}\n`;
}

if (require.main === module) process.stdout.write(summarize(stack, read(jsonFile), read(errFile)));
module.exports = { summarize };
