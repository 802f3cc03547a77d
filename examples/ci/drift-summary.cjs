#!/usr/bin/env node
// Writes a Markdown job summary of a drift check: which resources `pulumi preview --refresh --expect-no-changes
// --json` would change, and why. Usage (GitHub Actions):
//   node drift-summary.cjs <stack> preview.json [preview.err] [status] >> "$GITHUB_STEP_SUMMARY"
// preview.json is the preview's JSON: `steps` (each with `op`, `urn`, `oldState` = what PostHog has after the
// refresh, `newState` = what the program declares), `diagnostics` (`severity`, `message`, `urn`) and
// `changeSummary`. An error met while previewing (a wrong key or host) is in its `diagnostics`; preview.err is
// the preview's stderr, shown when it printed no JSON (a missing stack, a project that does not load); status is
// the preview's exit status (0 no change, 7 changes, 1 failed, 6 no such stack).
//
// It fails closed: the exit status is 0 ("No drift: PostHog matches git.") only when preview.json is a whole
// preview (an object with a `steps` array whose every step has an `op` and a `urn`, and a `changeSummary`) in
// which no step and no count changes anything, no diagnostic is an error, and the status, when given, is 0.
// Anything else (drift, an error, empty, truncated or unexpected output, a status that disagrees with the JSON)
// is reported and exits 1. A summary is always written. Plain Node.js, no dependencies.
"use strict";
const { readFileSync } = require("node:fs");
const { isDeepStrictEqual, stripVTControlCharacters } = require("node:util");

const [stack = "(stack)", jsonFile = "preview.json", errFile, status] = process.argv.slice(2);
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
/** Step operations (and changeSummary keys) that change nothing in PostHog. */
const UNCHANGED = new Set(["same", "read", "refresh", "discard"]);
const isObject = (value) => typeof value === "object" && value !== null && !Array.isArray(value);
/**
 * The top-level properties a step changes. The engine names them (`replaceReasons`, `diffReasons`,
 * `detailedDiff`) when the provider reports them; Pulumi's dynamic providers (every pulumi-posthog resource)
 * report none but the replacing ones, so the rest are the inputs whose value differs between what the refresh read
 * (`oldState.inputs`, where pulumi-posthog also names drift that is no input, e.g. `deleted`) and what the program
 * declares (`newState.inputs`).
 */
const changedProperties = (step) => {
  const list = (value) => (Array.isArray(value) ? value.map(String) : []);
  const reported = [
    ...list(step.replaceReasons),
    ...list(step.diffReasons),
    ...(isObject(step.detailedDiff) ? Object.keys(step.detailedDiff) : []).map(
      (path) => path.split(/[.[]/)[0],
    ),
  ];
  const olds = isObject(step.oldState) ? step.oldState.inputs : undefined;
  const news = isObject(step.newState) ? step.newState.inputs : undefined;
  // Properties named `__…` are Pulumi's and the provider's own (`__provider`, `__resource`): the CLI hides them too.
  const compared =
    isObject(olds) && isObject(news)
      ? [...new Set([...Object.keys(olds), ...Object.keys(news)])].filter(
          (k) => !k.startsWith("__") && !isDeepStrictEqual(olds[k], news[k]),
        )
      : [];
  return [...new Set([...reported, ...compared.sort()])];
};

/**
 * What is wrong with `preview` as a preview's JSON, or undefined when it has the shape the summary reads: an
 * object, `steps` an array of objects each with a string `op` and `urn`, `diagnostics` (when present) an array of
 * objects, `changeSummary` (when present) an object of counts.
 */
function shapeProblem(preview) {
  if (!isObject(preview))
    return `a JSON ${preview === null ? "null" : Array.isArray(preview) ? "array" : typeof preview}, not an object`;
  if (!Array.isArray(preview.steps)) return "no `steps` array";
  const bad = preview.steps.findIndex(
    (s) => !isObject(s) || typeof s.op !== "string" || typeof s.urn !== "string",
  );
  if (bad >= 0) return `step ${bad + 1} has no \`op\` or \`urn\``;
  if (preview.diagnostics !== undefined) {
    if (!Array.isArray(preview.diagnostics)) return "`diagnostics` is not an array";
    if (!preview.diagnostics.every(isObject)) return "a diagnostic is not an object";
  }
  if (preview.changeSummary !== undefined) {
    if (!isObject(preview.changeSummary)) return "`changeSummary` is not an object";
    if (!Object.values(preview.changeSummary).every((n) => typeof n === "number"))
      return "a `changeSummary` count is not a number";
  }
  return undefined;
}

/** The last lines of the preview's stderr, as a fenced block. */
const stderrTail = (stderr) => [
  "```text",
  stderr.trim().split("\n").slice(-20).join("\n") || "(no output)",
  "```",
];

/**
 * The summary of one stack and whether it found no drift. `json` is the preview's JSON text (may be empty),
 * `stderr` its stderr, `exitStatus` its exit status as text (undefined when not known).
 * @returns {{ markdown: string, clean: boolean }} `clean` only when the preview read in full shows no change.
 */
function judge(stack, json, stderr, exitStatus) {
  const lines = [`### Drift: ${stack}`, ""];
  const done = (clean) => ({ markdown: `${lines.join("\n")}\n`, clean });
  const unknown =
    "so it cannot tell whether PostHog matches git: treat the stack as drifted until a preview reads in full.";
  if (json.trim() === "") {
    lines.push("The preview failed before it could compare (no JSON output):", "", ...stderrTail(stderr));
    return done(false);
  }
  let preview;
  try {
    preview = JSON.parse(json);
  } catch (error) {
    lines.push(
      `The preview's output is not complete JSON (${error.message}), ${unknown}`,
      "",
      ...stderrTail(stderr),
    );
    return done(false);
  }
  const problem = shapeProblem(preview);
  if (problem) {
    lines.push(`The preview's JSON is not a preview (${problem}), ${unknown}`, "", ...stderrTail(stderr));
    return done(false);
  }
  const steps = preview.steps.filter((s) => !UNCHANGED.has(s.op));
  const errors = (preview.diagnostics ?? []).filter((d) => d.severity === "error");
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
  if (steps.length > 0 || errors.length > 0) return done(false);
  // No step changes anything and no error: "No drift" only if the preview also finished and says so itself.
  const counted = Object.entries(preview.changeSummary ?? {}).filter(
    ([op, n]) => !UNCHANGED.has(op) && n !== 0,
  );
  if (preview.changeSummary === undefined) {
    lines.push(
      `The preview's JSON has no \`changeSummary\` (the preview did not finish), ${unknown}`,
      "",
      ...stderrTail(stderr),
    );
    return done(false);
  }
  if (counted.length > 0) {
    const counts = counted.map(([op, n]) => `${op}: ${n}`).join(", ");
    lines.push(
      `The preview's \`changeSummary\` counts changes (${counts}) that its steps do not show, ${unknown}`,
    );
    return done(false);
  }
  if (exitStatus !== undefined && exitStatus !== "0") {
    lines.push(
      `The preview exited with status ${exitStatus || "(none)"} although its JSON shows no change, ${unknown}`,
      "",
      ...stderrTail(stderr),
    );
    return done(false);
  }
  lines.push("No drift: PostHog matches git.");
  return done(true);
}

/** The summary's Markdown for one stack (see `judge`). */
const summarize = (stack, json, stderr, exitStatus) => judge(stack, json, stderr, exitStatus).markdown;

if (require.main === module) {
  let result;
  try {
    result = judge(stack, read(jsonFile), read(errFile), status);
  } catch (error) {
    result = {
      markdown: `### Drift: ${stack}\n\nThe summary could not read the preview (${error?.message ?? error}): treat the stack as drifted.\n`,
      clean: false,
    };
  }
  process.stdout.write(result.markdown);
  process.exitCode = result.clean ? 0 : 1;
}
module.exports = { judge, summarize };
