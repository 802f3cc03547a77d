/**
 * docs/troubleshooting.md and its topic pages (docs/troubleshooting/*.md) stay honest: every error a user can meet
 * is on one of them ("the page" below is the index and the topic pages together).
 *
 * 1. Every error class: each class exported by provider/client/errors.ts (found at run time) and each class
 *    declared in the sources below that extends an Error is named on the page (as `ClassName`).
 * 2. Every message template, read from the sources with the TypeScript parser: the text of each
 *    `new …Error(…)` and `super(…)` of an Error class, the `detail`/`hint`/`message` of an error built from an
 *    object, each `warning:` line, each emulator command-line `fail(…)`, each check failure (`error:`/`message:`
 *    of the resource schemas, `reason:` of the lifecycle), and each hint the client appends (diagnosis.ts and the
 *    helpers naming a setting). A template is split at its placeholders (`${…}`, calls, variables; a `const`
 *    holding text is inlined); every literal piece of at least {@link MIN_PIECE} characters must appear on the
 *    page, whitespace aside. So a new or reworded message fails here until the page quotes it.
 * 3. Errors produced at run time, as a user meets them (the client against the emulator over real HTTP, with the
 *    settings coming from the stack config; a closed port; the providers' `check`): the stable part of each
 *    message (its text without the host, port, ids and the server's own wording) is on the page. An error of the
 *    client's classes ends with the pointer to its section (`(see docs/<page>#<anchor>)`, docs-link.ts; the quotes on
 *    the pages leave it out): the stable part must then be on the page it points at.
 * Fast: one parse of the sources, one emulator, no provider host.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FastifyNotInstalledError, fastifyProblem } from "../../emulator/fastify-installed";
import * as providers from "../../provider";
import {
  AmbiguousWriteError,
  ConnectionError,
  createClient,
  ForbiddenError,
  InvalidInputError,
  MissingApiKeyError,
  NotFoundError,
  PostHogError,
  RateLimitedError,
  resolveSettings,
  ServerError,
  UnauthenticatedError,
} from "../../provider/client";
import * as errors from "../../provider/client/errors";
import { assertNodeVersion, minimumNodeVersion } from "../../provider/client/node-version";
import { type ExclusiveGroup, ruleOf } from "../../provider/framework/inputs";
import { control, type Emulator, startTestEmulator } from "../client/helpers";

const root = join(__dirname, "..", "..");
/** The index, then each topic page of docs/troubleshooting/ (relative to the root, sorted). */
const pagePaths = [
  "docs/troubleshooting.md",
  ...readdirSync(join(root, "docs", "troubleshooting"))
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => `docs/troubleshooting/${f}`),
];
/** Each page's text, by its path. */
const pages = new Map(pagePaths.map((p) => [p, readFileSync(join(root, p), "utf8")]));
/** Every page, one after the other. */
const page = [...pages.values()].join("\n");
/** The pages with every run of whitespace turned into one space (messages are wrapped freely on the pages). */
const flat = squash(page);

/** Literal pieces shorter than this (", ", " (", "Invalid ") are not required on the page. */
const MIN_PIECE = 12;

function squash(text: string): string {
  return text.replace(/\s+/g, " ");
}

const ls = (dir: string) =>
  readdirSync(join(root, dir))
    .filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))
    .map((f) => join(dir, f));

/** Where the errors a user can meet are written. */
const SOURCES = [
  ...ls("provider/client"),
  ...ls("provider"),
  ...ls("provider/framework"),
  ...ls("provider/resources"),
  ...ls("provider/apps"),
  ...ls("provider/apps/export"),
  ...ls("sdk"),
  "emulator/cli.ts",
  "emulator/fastify-installed.ts",
].filter((rel) => existsSync(join(root, rel)));
/** Files whose zod `error:`/`message:` texts and `reason:` texts are check failures (shown by preview). */
const CHECK_FAILURE_FILES = /^provider\/(resources\/[^/]+|framework\/(lifecycle|limits|inputs))\.ts$/;
/** Functions whose returned text becomes part of a message (the hint, a setting's origin, a check failure). */
const MESSAGE_FUNCTIONS: Record<string, RegExp> = {
  "provider/client/diagnosis.ts": /./,
  "provider/client/settings.ts": /^settingOrigin$/,
  "provider/framework/limits.ts": /^timeZoneProblem$/,
  "provider/framework/claims.ts": /^conflictMessage$/,
  "provider/resources/domain.ts": /^(pendingOf|samlElsewhere)$/,
  "emulator/fastify-installed.ts": /^fastifyProblem$/,
  "sdk/dashboard.ts": /^restrictionNotInEffect$/,
};

/** One message template: where it is written and its literal pieces (placeholders between them). */
interface Template {
  where: string;
  pieces: string[];
}

const PLACEHOLDER = "\u0000";

/** The literal text of a string-ish expression, with PLACEHOLDER for every part computed at run time. */
function textOf(node: ts.Expression, consts: Map<string, ts.Expression>, depth = 0): string[] {
  if (ts.isParenthesizedExpression(node)) return textOf(node.expression, consts, depth);
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return [node.text];
  if (ts.isTemplateExpression(node)) {
    const out = [node.head.text];
    for (const span of node.templateSpans) {
      for (const alt of textOf(span.expression, consts, depth + 1).slice(0, 1)) out.push(alt);
      out.push(span.literal.text);
    }
    return [out.join("")];
  }
  if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken) {
    const [left] = textOf(node.left, consts, depth + 1);
    const [right] = textOf(node.right, consts, depth + 1);
    return [`${left ?? PLACEHOLDER}${right ?? PLACEHOLDER}`];
  }
  if (ts.isConditionalExpression(node)) {
    // Both branches are messages of their own (the first one stands in when this is inside a template).
    return [...textOf(node.whenTrue, consts, depth + 1), ...textOf(node.whenFalse, consts, depth + 1)];
  }
  if (ts.isIdentifier(node) && depth < 4) {
    const init = consts.get(node.text);
    if (init) return textOf(init, consts, depth + 1);
  }
  return [PLACEHOLDER];
}

/** True for an expression whose value is text written in the source (not a bare variable or call). */
function isStringish(node: ts.Expression): boolean {
  if (ts.isParenthesizedExpression(node)) return isStringish(node.expression);
  return (
    ts.isStringLiteral(node) ||
    ts.isNoSubstitutionTemplateLiteral(node) ||
    ts.isTemplateExpression(node) ||
    (ts.isBinaryExpression(node) &&
      node.operatorToken.kind === ts.SyntaxKind.PlusToken &&
      (isStringish(node.left) || isStringish(node.right))) ||
    (ts.isConditionalExpression(node) && (isStringish(node.whenTrue) || isStringish(node.whenFalse)))
  );
}

/** `const name = <text>` declarations of a file (by name; the text of a message built in steps). */
function constsOf(file: ts.SourceFile): Map<string, ts.Expression> {
  const consts = new Map<string, ts.Expression>();
  const visit = (node: ts.Node) => {
    if (
      ts.isVariableDeclaration(node) &&
      ts.isIdentifier(node.name) &&
      node.initializer &&
      isStringish(node.initializer) &&
      ts.isVariableDeclarationList(node.parent) &&
      (node.parent.flags & ts.NodeFlags.Const) !== 0
    ) {
      consts.set(node.name.text, node.initializer);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return consts;
}

const calleeName = (e: ts.Expression): string =>
  ts.isIdentifier(e)
    ? e.text
    : ts.isPropertyAccessExpression(e)
      ? `${calleeName(e.expression)}.${e.name.text}`
      : "";

function enclosingFunctionName(node: ts.Node): string | undefined {
  for (let n: ts.Node | undefined = node.parent; n; n = n.parent) {
    if (ts.isFunctionDeclaration(n) && n.name) return n.name.text;
    if (ts.isMethodDeclaration(n) && ts.isIdentifier(n.name)) return n.name.text;
    if (ts.isVariableDeclaration(n) && ts.isIdentifier(n.name)) return n.name.text;
  }
  return undefined;
}

function extendsError(node: ts.ClassLikeDeclaration): boolean {
  return (node.heritageClauses ?? []).some(
    (h) =>
      h.token === ts.SyntaxKind.ExtendsKeyword && h.types.some((t) => /Error$/.test(t.expression.getText())),
  );
}

let scanned: { classes: string[]; templates: Template[] } | undefined;

/** Every exported error class declared in the sources and every message template (parsed once). */
function scan(): { classes: string[]; templates: Template[] } {
  scanned ??= scanSources();
  return scanned;
}

function scanSources(): { classes: string[]; templates: Template[] } {
  const classes: string[] = [];
  const templates: Template[] = [];
  for (const rel of SOURCES) {
    const text = readFileSync(join(root, rel), "utf8");
    const file = ts.createSourceFile(rel, text, ts.ScriptTarget.Latest, true);
    const consts = constsOf(file);
    const add = (node: ts.Expression) => {
      const line = file.getLineAndCharacterOfPosition(node.getStart()).line + 1;
      for (const t of textOf(node, consts)) {
        templates.push({ where: `${rel}:${line}`, pieces: t.split(PLACEHOLDER) });
      }
    };
    /** The texts of a message argument: itself, or the detail/hint/message of an object literal. */
    const addArgument = (arg: ts.Expression) => {
      if (isStringish(arg) || (ts.isIdentifier(arg) && consts.has(arg.text))) add(arg);
      else if (ts.isObjectLiteralExpression(arg)) {
        for (const p of arg.properties) {
          if (
            ts.isPropertyAssignment(p) &&
            ts.isIdentifier(p.name) &&
            ["detail", "hint", "message"].includes(p.name.text) &&
            isStringish(p.initializer)
          ) {
            add(p.initializer);
          }
        }
      }
    };
    const messageFunctions = MESSAGE_FUNCTIONS[rel];
    const visit = (node: ts.Node) => {
      if (
        ts.isClassDeclaration(node) &&
        node.name &&
        extendsError(node) &&
        node.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)
      ) {
        classes.push(node.name.text);
      }
      // TypeError marks a programming error of this package (e.g. revealApiKey of a foreign object), not a user's.
      const callee = ts.isNewExpression(node) ? calleeName(node.expression) : "";
      if (ts.isNewExpression(node) && /Error$/.test(callee) && callee !== "TypeError") {
        for (const arg of node.arguments ?? []) addArgument(arg);
      }
      if (ts.isCallExpression(node)) {
        const called = calleeName(node.expression);
        const [first] = node.arguments;
        if (node.expression.kind === ts.SyntaxKind.SuperKeyword) {
          const cls = ts.findAncestor(node, ts.isClassLike);
          if (cls && extendsError(cls)) for (const arg of node.arguments) addArgument(arg);
        } else if (/^console\.(log|warn|error)$/.test(called) && first && isStringish(first)) {
          if (textOf(first, consts).some((t) => t.startsWith("warning:"))) add(first);
        } else if (/(^|\.)log\.(warn|error)$/.test(called) && first) {
          addArgument(first);
        } else if (rel === "emulator/cli.ts" && called === "fail" && first) {
          addArgument(first);
        }
      }
      if (
        CHECK_FAILURE_FILES.test(rel) &&
        (ts.isPropertyAssignment(node) || ts.isVariableDeclaration(node)) &&
        ts.isIdentifier(node.name) &&
        ["error", "message", "reason"].includes(node.name.text) &&
        node.initializer
      ) {
        // A text, or a zod error function returning one (`error: (iss) => \`expected …, got ${…}\``).
        const init = node.initializer;
        const text = ts.isArrowFunction(init) && !ts.isBlock(init.body) ? init.body : init;
        const named = ts.isIdentifier(text) && consts.has(text.text); // `{ error: projectIdError }`
        if ((isStringish(text) || named) && (ts.isPropertyAssignment(node) || text !== init)) add(text);
      }
      if (messageFunctions && ts.isReturnStatement(node) && node.expression && isStringish(node.expression)) {
        const fn = enclosingFunctionName(node);
        if (fn && messageFunctions.test(fn)) add(node.expression);
      }
      ts.forEachChild(node, visit);
    };
    visit(file);
  }
  return { classes: [...new Set(classes)], templates };
}

/** The literal pieces of `template` that the page must quote (long enough to be stable words, not glue). */
const required = (pieces: readonly string[]) =>
  pieces.map((p) => squash(p).trim()).filter((p) => p.length >= MIN_PIECE);

const missingFrom = (pieces: readonly string[]) => required(pieces).filter((p) => !flat.includes(p));

describe("docs/troubleshooting.md names every error class", () => {
  const { classes } = scan();

  it("every Error class exported by provider/client/errors.ts", () => {
    const exported = Object.entries(errors)
      .filter(([, v]) => typeof v === "function" && v.prototype instanceof Error)
      .map(([name]) => name);
    expect(exported).toContain("PostHogError");
    expect(exported.length).toBeGreaterThanOrEqual(13);
    expect(exported.filter((name) => !flat.includes(`\`${name}\``))).toEqual([]);
  });

  it("every exported class extending an Error in the provider, client, SDK lookups and emulator CLI sources", () => {
    expect(classes).toContain("AmbiguousWriteError");
    expect(classes.filter((name) => !flat.includes(`\`${name}\``))).toEqual([]);
  });
});

describe("docs/troubleshooting.md quotes every message template of the sources", () => {
  const { templates } = scan();

  it("finds the templates (the scan itself works)", () => {
    // Kinds the scan must see, one each: a thrown Error, a hint, a check failure, a warning, a super() text.
    const all = templates.map((t) => t.pieces.join("…"));
    expect(all.some((t) => t.includes("already exists in this organization"))).toBe(true);
    expect(all.some((t) => t.includes("did not accept"))).toBe(true);
    expect(all.some((t) => t.includes("expected a dashboard name"))).toBe(true);
    expect(all.some((t) => t.startsWith("warning: destroy kept"))).toBe(true);
    expect(all.some((t) => t.startsWith("No PostHog API key"))).toBe(true);
    expect(templates.length).toBeGreaterThan(100);
  });

  it("every literal piece of every template is on the page", () => {
    const missing = templates
      .map((t) => ({ where: t.where, missing: missingFrom(t.pieces) }))
      .filter((t) => t.missing.length > 0);
    expect(missing).toEqual([]);
  });
});

describe("docs/troubleshooting.md quotes no message the sources no longer have", () => {
  const { templates } = scan();
  const texts = new Set(templates.map((t) => squash(t.pieces.join(PLACEHOLDER)).trim()));
  // The rules of the exclusive inputs are composed at run time from their groups (provider/framework/inputs.ts).
  for (const [name, groups] of Object.entries(providers)) {
    if (!name.endsWith("ExclusiveInputs")) continue;
    for (const g of groups as readonly ExclusiveGroup[]) {
      const rule = g.kind === "exactlyOne" ? `expected ${ruleOf(g)}` : `use ${ruleOf(g)}`;
      texts.add(rule);
      texts.add(`${rule} (got ${g.keys.join(", ")})`); // all of them given
    }
  }

  it("each message of the table of check messages is a template of the sources", () => {
    const table = page.split("## Every check message, by resource")[1]?.split("\n#")[0] ?? "";
    const rows = table.split("\n").filter((l) => l.startsWith("| ") && !l.startsWith("| Resource"));
    expect(rows.length).toBeGreaterThan(30);
    const quoted = rows.flatMap((row) => {
      const message = row.split(" | ")[2] ?? "";
      // Code spans: `` … `…` … `` or `…`; those with a <placeholder> stand for several texts.
      return [...message.matchAll(/``\s(.+?)\s``|`([^`]+)`/g)]
        .map((m) => (m[1] ?? m[2] ?? "").trim())
        .filter((q) => !q.includes("<"));
    });
    expect(quoted.length).toBeGreaterThan(40);
    expect(quoted.filter((q) => !texts.has(q))).toEqual([]);
  });
});

/** Pieces of a real message once its variable parts are cut out (they become placeholders). */
function stablePieces(message: string, variable: readonly string[]): string[] {
  let pieces = [message];
  for (const v of variable.filter((x) => x.length > 0).sort((a, b) => b.length - a.length)) {
    pieces = pieces.flatMap((p) => p.split(v));
  }
  return pieces;
}

/**
 * A message without the pointer to the docs it ends with (`(see docs/<page>#<anchor>)`, docs-link.ts), the page
 * pointed at, and the text the message must be quoted in (squashed): that page's, else every page's.
 */
function pointedAt(message: string): { text: string; pointer: string | undefined; pointed: string } {
  const m = / \(see (docs\/[\w./-]+\.md)#[\w-]+\)$/.exec(message);
  if (!m) return { text: message, pointer: undefined, pointed: flat };
  const target = pages.get(m[1] ?? "");
  expect(target, `${m[1]} is no troubleshooting page`).toBeDefined();
  return { text: message.slice(0, m.index), pointer: m[1], pointed: squash(target ?? "") };
}

/** The error a promise rejects with. */
const failureOf = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error("expected a failure");
    },
    (e: unknown) => e as Error,
  );

describe("errors met at run time are on the page (their stable part)", () => {
  let emu: Emulator;
  const fast = { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2, maxTotalWaitMs: 1_000 };
  /** Settings as a Pulumi program gives them: stack config `posthog:<name>` (no environment). */
  const fromStack = (values: Record<string, string | undefined>) =>
    createClient(
      resolveSettings(
        { rateLimit: false, retry: fast, timeouts: { connectMs: 200 } },
        { get: (k) => values[k] },
        {},
      ),
    );
  beforeAll(async () => {
    emu = await startTestEmulator();
  });
  afterAll(async () => {
    await emu?.close();
  });

  /**
   * Asserts the stable part of `e.message` (without `variable`) is on the page: the page its pointer names, which an
   * error of the client's classes must end with, else any of them.
   */
  const onPage = (e: Error, variable: string[]) => {
    const { text, pointer, pointed } = pointedAt(e.message);
    if (e instanceof PostHogError || e instanceof InvalidInputError || e instanceof MissingApiKeyError) {
      expect(pointer, `no pointer to the docs at the end of: ${e.message}`).toBeDefined();
    }
    const pieces = required(stablePieces(text, variable));
    expect(pieces.length, e.message).toBeGreaterThan(0);
    expect(
      pieces.filter((p) => !pointed.includes(p)),
      e.message,
    ).toEqual([]);
  };

  it("no API key anywhere", () => {
    let e: Error | undefined;
    try {
      resolveSettings({}, { get: () => undefined }, {});
    } catch (x) {
      e = x as Error;
    }
    expect(e).toBeInstanceOf(MissingApiKeyError);
    onPage(e as Error, []);
  });

  it("a Node.js below the floor: one line naming the version found, the one needed and PATH", () => {
    let e: Error | undefined;
    try {
      assertNodeVersion("22.14.0", "/usr/bin/node");
    } catch (x) {
      e = x as Error;
    }
    expect(e?.message).toContain(`needs Node.js >= ${minimumNodeVersion.replace(/\.0$/, "")}`);
    onPage(e as Error, []);
  });

  it("the emulator without fastify 5: one line naming the install command", () => {
    const missing = fastifyProblem(() => {
      throw Object.assign(new Error("Cannot find module 'fastify'"), { code: "MODULE_NOT_FOUND" });
    });
    const dir = mkdtempSync(join(tmpdir(), "fastify-4-"));
    try {
      const manifest = join(dir, "package.json");
      writeFileSync(manifest, JSON.stringify({ name: "fastify", version: "4.28.1" }));
      const old = fastifyProblem(() => manifest);
      for (const problem of [missing, old]) {
        expect(problem).toContain("npm install --save-dev fastify@5");
        onPage(new FastifyNotInstalledError(`pulumi-posthog/emulator: ${problem}`), []);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a host with /api, from the stack config", () => {
    let e: Error | undefined;
    try {
      resolveSettings(
        {},
        { get: (k) => ({ "posthog:apiKey": "phx_x", "posthog:host": "https://eu.posthog.com/api" })[k] },
        {},
      );
    } catch (x) {
      e = x as Error;
    }
    expect(e).toBeInstanceOf(InvalidInputError);
    onPage(e as Error, ["https://eu.posthog.com"]);
  });

  it("bad client options and request bodies: InvalidInputError before any request", async () => {
    let options: Error | undefined;
    try {
      createClient({ apiKey: "phx_x", retry: { maxAttempts: 0 } });
    } catch (x) {
      options = x as Error;
    }
    expect(options).toBeInstanceOf(InvalidInputError);
    onPage(options as Error, []);
    const client = fromStack({ "posthog:apiKey": emu.apiKey, "posthog:host": emu.url });
    const body = await failureOf(client.domains.create({ body: { domain: "Not A Domain" } }));
    expect(body).toBeInstanceOf(InvalidInputError);
    onPage(body, []);
  });

  it("a wrong key: 401 naming posthog:apiKey and the host", async () => {
    const e = await failureOf(
      fromStack({ "posthog:apiKey": "phx_notAKeyOfThisInstance", "posthog:host": emu.url }).checkAccess(),
    );
    expect(e).toBeInstanceOf(UnauthenticatedError);
    expect(e.message).toContain("the stack config posthog:apiKey");
    onPage(e, [emu.url, (e as UnauthenticatedError).detail ?? ""]);
  });

  it("a wrong organization id: 404 Organization not found naming posthog:organizationId", async () => {
    const org = "01900000-0000-7000-8000-000000000000";
    const e = await failureOf(
      fromStack({
        "posthog:apiKey": emu.apiKey,
        "posthog:host": emu.url,
        "posthog:organizationId": org,
      }).checkAccess(),
    );
    expect(e).toBeInstanceOf(NotFoundError);
    expect((e as NotFoundError).missing).toBe("organization");
    onPage(e, [emu.url, org]);
  });

  it("a project id of no project of the organization: refused before any write", async () => {
    const e = await failureOf(
      fromStack({
        "posthog:apiKey": emu.apiKey,
        "posthog:host": emu.url,
        "posthog:organizationId": emu.organizationId,
        "posthog:projectId": "99999",
      }).checkAccess(),
    );
    expect((e as NotFoundError).missing).toBe("project");
    onPage(e, [emu.url, emu.organizationId, "99999"]);
  });

  it("a scoped key lacking a scope: 403 naming the scope", async () => {
    const key = await emu.createKey({ scopes: ["dashboard:read"] });
    const client = fromStack({ "posthog:apiKey": key, "posthog:host": emu.url });
    const e = await failureOf(client.dashboards.create({ projectId: emu.projectId, body: { name: "x" } }));
    expect(e).toBeInstanceOf(ForbiddenError);
    expect((e as ForbiddenError).missingScope).toBe("dashboard:write");
    onPage(e, [String(emu.projectId), "dashboard:write", (e as ForbiddenError).detail ?? ""]);
  });

  it("429 and 5xx once the retries gave up, and a create whose outcome is unknown", async () => {
    const settings = {
      "posthog:apiKey": emu.apiKey,
      "posthog:host": emu.url,
      "posthog:organizationId": emu.organizationId,
    };
    const client = fromStack(settings);
    await control(emu, "POST", "/_emulator/faults", {
      path: "/members/",
      status: 429,
      retryAfter: 0,
      times: 2,
    });
    const throttled = await failureOf(client.members.list());
    expect(throttled).toBeInstanceOf(RateLimitedError);
    onPage(throttled, [emu.organizationId, "in 0 seconds"]);
    await control(emu, "POST", "/_emulator/faults", { path: "/projects/", status: 500, times: 2 });
    const failing = await failureOf(client.projects.retrieve({ id: emu.projectId }));
    expect(failing).toBeInstanceOf(ServerError);
    onPage(failing, [emu.organizationId, String(emu.projectId)]);
    await control(emu, "POST", "/_emulator/faults", {
      method: "POST",
      path: "/projects/",
      status: 502,
      times: 1,
    });
    const unknown = await failureOf(client.projects.create({ body: { name: "Lost" } }));
    expect(unknown).toBeInstanceOf(AmbiguousWriteError);
    onPage(unknown, [emu.organizationId]);
    await control(emu, "DELETE", "/_emulator/faults");
  });

  it("a closed port: connection refused, within timeouts.connectMs", async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as { port: number }).port;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const host = `http://127.0.0.1:${port}`;
    const e = await failureOf(fromStack({ "posthog:apiKey": "phx_x", "posthog:host": host }).checkAccess());
    expect(e).toBeInstanceOf(ConnectionError);
    expect((e as ConnectionError).failure).toBe("refused");
    // The page quotes the default connectMs (10000); this test waits 200 ms.
    onPage(e, [host, `127.0.0.1:${port}`, (e as ConnectionError).detail ?? "", "200"]);
  });

  it("https:// against the plain-HTTP emulator: does not speak TLS", async () => {
    const host = emu.url.replace(/^http:/, "https:");
    const e = await failureOf(
      fromStack({ "posthog:apiKey": emu.apiKey, "posthog:host": host }).checkAccess(),
    );
    expect((e as ConnectionError).failure).toBe("not-tls");
    onPage(e, [host, new URL(host).host, (e as ConnectionError).detail ?? ""]);
  });

  it("check failures of the providers (no request): a bad value, exactly one of two, an unknown property", async () => {
    const dash = await providers.Dashboard.check({}, { name: "KPIs", restrictionLevel: 30 });
    const member = await providers.Member.check({}, { level: "admin" });
    const invite = await providers.Invite.check({}, { targetEmail: "a@example.com", levle: 8 });
    const failures = [...(dash.failures ?? []), ...(member.failures ?? []), ...(invite.failures ?? [])];
    expect(failures.map((f) => f.property)).toEqual(["restrictionLevel", "userUuid", "levle"]);
    for (const f of failures) {
      const { text, pointed } = pointedAt(f.reason);
      const pieces = required(text.split(/: |, /));
      expect(
        pieces.filter((p) => !pointed.includes(p)),
        f.reason,
      ).toEqual([]);
    }
    expect(pointedAt(failures[2]?.reason ?? "").pointer).toBe("docs/troubleshooting/input-validation.md");
  });

  it("two resources of one program managing one object: the check failure names both", async () => {
    const first = await providers.Invite.check(
      {},
      { targetEmail: "dup@example.com", __resourceName: "dup-lower" },
    );
    expect(first.failures ?? []).toEqual([]);
    const second = await providers.Invite.check(
      {},
      { targetEmail: "DUP@example.com", __resourceName: "dup-upper" },
    );
    const [conflict] = second.failures ?? [];
    expect(conflict?.property).toBe("targetEmail");
    onPage(new Error(conflict?.reason), ["dup-upper", "dup-lower", "DUP@example.com"]);
  });
});

/** GitHub's heading anchors of a page: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const [, heading] of text.replace(/```[\s\S]*?```/g, "").matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = slugOf(heading ?? "");
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return out;
}

const slugOf = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");

describe("docs/troubleshooting.md and its topic pages: links", () => {
  it("every link to a section of the same page names a heading of that page", () => {
    let count = 0;
    const broken = [...pages].flatMap(([path, text]) => {
      const anchors = anchorsOf(text);
      const targets = [...text.matchAll(/\]\(#([^)]+)\)/g)].map((m) => m[1] ?? "");
      count += targets.length;
      return targets.filter((t) => !anchors.has(t)).map((t) => `${path}#${t}`);
    });
    expect(count).toBeGreaterThan(30);
    expect(broken).toEqual([]);
  });

  it("the index lists every topic page, and the contents of each topic page list every section heading", () => {
    const index = pages.get("docs/troubleshooting.md") ?? "";
    const topics = pagePaths.slice(1);
    expect(topics.length).toBeGreaterThan(5);
    expect(topics.filter((p) => !index.includes(`](${p.slice("docs/".length)})`))).toEqual([]);
    const unlisted = topics.flatMap((path) => {
      const text = pages.get(path) ?? "";
      const listed = new Set(
        [...(text.split("## Contents")[1]?.split("\n## ")[0] ?? "").matchAll(/\]\(#([^)]+)\)/g)].map(
          (m) => m[1],
        ),
      );
      const sections = [...text.replace(/```[\s\S]*?```/g, "").matchAll(/^#{2,3} (.+)$/gm)]
        .map((m) => m[1] ?? "")
        .filter((h) => h !== "Contents");
      // A page of one section needs no contents.
      return sections.length < 2
        ? []
        : sections
            .map(slugOf)
            .filter((s) => !listed.has(s))
            .map((s) => `${path}#${s}`);
    });
    expect(unlisted).toEqual([]);
  });
});
