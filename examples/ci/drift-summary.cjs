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
//
// It reads the first JSON value of preview.json: text the CLI prints after it on stdout (Pulumi Cloud's Neo
// diagnostics after a failed preview) is quoted, not taken for a broken preview; a second JSON value, or the
// engine's events one per line (PULUMI_ENABLE_STREAMING_JSON_PREVIEW set), is an error, since it cannot tell which
// is the preview. The summary stays under SUMMARY_BYTES (a job summary takes at most 1 MiB): each quoted text
// (a diagnostic, a name, the stderr) is cut to QUOTE_BYTES and a list that would not fit is cut, each saying what
// it left out; the whole output is in the job log (stderr) and the preview artifact (preview.json).
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
/** At most this many UTF-8 bytes of summary: GitHub refuses a job summary over 1 MiB. */
const SUMMARY_BYTES = 900 * 1024;
/** At most this many UTF-8 bytes of one quoted text: a diagnostic, a name, the preview's stderr. */
const QUOTE_BYTES = 8 * 1024;
const FULL_OUTPUT = "the full output is in the job log / the preview artifact";
const byteLength = (text) => Buffer.byteLength(text, "utf8");
/** `text` cut to `max` UTF-8 bytes (on a character), saying how much it left out. */
const clip = (text, max = QUOTE_BYTES) => {
  const whole = String(text);
  if (whole.length * 3 <= max) return whole; // a UTF-16 unit is at most 3 bytes of UTF-8
  const bytes = Buffer.from(whole, "utf8");
  if (bytes.length <= max) return whole;
  const kept = bytes
    .subarray(0, max)
    .toString("utf8")
    .replace(/\uFFFD+$/, "");
  return `${kept} … (cut: ${bytes.length - byteLength(kept)} more bytes; ${FULL_OUTPUT})`;
};
/**
 * Characters a terminal or a renderer acts on rather than shows: C0 controls (newline, carriage return, escape…),
 * DEL, C1 controls, the line and paragraph separators, the bidirectional marks, embeddings, overrides and isolates.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const ACTIVE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;
const SHORT = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };
/** `text` with each character of ACTIVE shown escaped (`\n`, `\r`, `\t`, else `\u001b`-style), nothing else changed. */
const inert = (text) =>
  String(text).replace(ACTIVE, (c) => SHORT[c] ?? `\\u${c.codePointAt(0).toString(16).padStart(4, "0")}`);
/**
 * `text` as a markdown code span for a table cell or a list item, shown as it is and rendered as nothing else (no
 * link, image, autolink, HTML, emphasis or line break): backslashes doubled, then `inert`, `|` written `\|` (a pipe
 * in a table cell), the fence one backtick longer than the longest run of backticks in it; "" for an empty text.
 * The same as `markdownCode` of pulumi-posthog audit (provider/apps/governance/audit.ts).
 */
const code = (text) => {
  const shown = inert(String(text).replace(/\\/g, "\\\\")).replace(/\|/g, "\\|");
  if (shown === "") return "";
  const fence = "`".repeat(Math.max(0, ...(shown.match(/`+/g) ?? []).map((run) => run.length)) + 1);
  const pad = shown.startsWith("`") || shown.endsWith("`") || /^ .* $/.test(shown) ? " " : "";
  return `${fence}${pad}${shown}${pad}${fence}`;
};
/** A quoted text (a name, a diagnostic) as a code span, cut to QUOTE_BYTES first. */
const cell = (text) => code(clip(text));
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

/**
 * `text` as a fenced block (its fence longer than any run of backticks in it), each line `inert` (its line breaks
 * kept, every other control character shown escaped).
 */
const fenced = (text) => {
  const shown = text.split(/\r?\n/).map(inert).join("\n");
  const fence = "`".repeat(Math.max(3, ...(shown.match(/`+/g) ?? []).map((run) => run.length + 1)));
  return [`${fence}text`, shown, fence];
};
/** The last lines of the preview's stderr, as a fenced block (cut to QUOTE_BYTES, keeping its end). */
const stderrTail = (stderr) => {
  const tail = stderr.trim().split("\n").slice(-20).join("\n");
  const bytes = Buffer.from(tail, "utf8");
  if (bytes.length <= QUOTE_BYTES) return fenced(tail || "(no output)");
  const kept = bytes
    .subarray(bytes.length - QUOTE_BYTES)
    .toString("utf8")
    .replace(/^\uFFFD+/, "");
  return fenced(`(cut: ${bytes.length - byteLength(kept)} bytes before; ${FULL_OUTPUT}) … ${kept}`);
};

/**
 * Appends `render(item)` for each of `items` to `lines` while the summary stays within SUMMARY_BYTES less
 * `reserve` (room for what follows); then one line saying how many were left out.
 */
function appendWithin(lines, items, render, what, reserve) {
  let used = byteLength(lines.join("\n"));
  for (const [i, item] of items.entries()) {
    const line = render(item);
    if (used + byteLength(line) + 1 > SUMMARY_BYTES - reserve) {
      lines.push(`… (cut: ${items.length - i} more ${what}; ${FULL_OUTPUT})`);
      return;
    }
    lines.push(line);
    used += byteLength(line) + 1;
  }
}

/** The end (exclusive) of the JSON object or array opening at `start` in `text`, or -1 when it never closes. */
function valueEnd(text, start) {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      // A backslash escapes the next character.
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

/**
 * The first JSON value of `text` and the text after it: `{ value, rest }`, or `{ error }` (JSON.parse's message)
 * when `text` does not begin with a whole JSON value (empty, truncated, invalid, or text before the JSON).
 */
function firstJson(text) {
  const start = text.search(/\S/);
  if (text[start] === "{" || text[start] === "[") {
    const end = valueEnd(text, start);
    if (end > 0) {
      try {
        return { value: JSON.parse(text.slice(start, end)), rest: text.slice(end) };
      } catch {
        // reported below, with the position in the whole text
      }
    }
  }
  try {
    return { value: JSON.parse(text), rest: "" };
  } catch (error) {
    return { error: error.message };
  }
}

/** An event of the engine's stream (`{"sequence":0,"timestamp":…,"preludeEvent":{…}}`), not a preview. */
const isEngineEvent = (value) =>
  isObject(value) &&
  typeof value.sequence === "number" &&
  Object.keys(value).some((k) => k.endsWith("Event"));

/**
 * The summary of one stack and whether it found no drift. `json` is the preview's JSON text (may be empty),
 * `stderr` its stderr, `exitStatus` its exit status as text (undefined when not known).
 * @returns {{ markdown: string, clean: boolean }} `clean` only when the preview read in full shows no change.
 */
function judge(stack, json, stderr, exitStatus) {
  const lines = [`### Drift: ${code(clip(stack, 1024))}`, ""];
  /** Said after the verdict: text the CLI printed after the preview's JSON. */
  const after = [];
  const done = (clean) => {
    const markdown = `${[...lines, ...after].join("\n")}\n`;
    // A last guard: the lists and quotes above are cut to fit already.
    return {
      markdown: byteLength(markdown) > SUMMARY_BYTES ? `${clip(markdown, SUMMARY_BYTES - 1024)}\n` : markdown,
      clean,
    };
  };
  const unknown =
    "so it cannot tell whether PostHog matches git: treat the stack as drifted until a preview reads in full.";
  if (json.trim() === "") {
    lines.push("The preview failed before it could compare (no JSON output):", "", ...stderrTail(stderr));
    return done(false);
  }
  const read = firstJson(json);
  if (read.error !== undefined) {
    lines.push(
      `The preview's output is not complete JSON (${code(clip(read.error, 1024))}), ${unknown}`,
      "",
      ...stderrTail(stderr),
    );
    return done(false);
  }
  const preview = read.value;
  const rest = read.rest.trim();
  if (isEngineEvent(preview)) {
    lines.push(
      "The preview printed the engine's events, one JSON per line (PULUMI_ENABLE_STREAMING_JSON_PREVIEW is set), " +
        `not the preview's JSON document, ${unknown} Run the preview with PULUMI_ENABLE_STREAMING_JSON_PREVIEW=false.`,
    );
    return done(false);
  }
  if (rest.startsWith("{") || rest.startsWith("[")) {
    lines.push(
      `The preview's output holds more than one JSON document (${byteLength(rest)} bytes after the first), ${unknown}`,
    );
    return done(false);
  }
  if (rest !== "") {
    after.push(
      "",
      `The CLI printed ${byteLength(rest)} bytes after the preview's JSON (not part of the preview):`,
      "",
      ...fenced(clip(stripVTControlCharacters(rest), 4 * 1024)),
    );
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
    // The errors below keep a third of the summary.
    const reserve = errors.length > 0 ? SUMMARY_BYTES / 3 : 16 * 1024;
    const row = (step) => {
      const { type, name } = parseUrn(step.urn);
      const props = changedProperties(step)
        .map((k) => cell(k))
        .join(", ");
      return `| ${cell(step.op)} | ${cell(type)} | ${cell(name)} | ${props} |`;
    };
    appendWithin(lines, steps, row, "drifted resource(s)", reserve);
    lines.push("");
  }
  if (errors.length > 0) lines.push("The preview failed: it could not compare PostHog with git.", "");
  const item = (d) => {
    const message = stripVTControlCharacters(String(d.message ?? ""))
      .trim()
      .replace(/^error: /, "");
    return `- **error**${d.urn ? ` (${cell(parseUrn(d.urn).name)})` : ""}: ${cell(message)}`;
  };
  appendWithin(lines, errors, item, "error(s)", 16 * 1024);
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
      markdown: `### Drift: ${code(clip(stack, 1024))}\n\nThe summary could not read the preview (${code(clip(error?.message ?? error, 4096))}): treat the stack as drifted.\n`,
      clean: false,
    };
  }
  process.stdout.write(result.markdown);
  process.exitCode = result.clean ? 0 : 1;
}
module.exports = { judge, summarize, code, inert };
