/**
 * docs/lookups/ cannot drift from the code: every lookup the SDK exports has its page (kebab-case name), which
 * names both forms and the mock token, has a row for every argument its zod schema accepts, and a row for
 * every typed field of its result (the client's zod schema; for getMember, the keys of a live result from the
 * emulator). No HTTP except that one getMember.
 */
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import {
  AccessControlsSchema,
  BatchExportSchema,
  DashboardSchema,
  ProjectSchema,
  SharingSchema,
} from "../../provider/client";
import { LookupArgsSchemas } from "../../provider/lookups/args";
import type * as Lookups from "../../sdk/lookups";
import { repoRoot, startTestEmulator, type TestEmulator } from "./harness";

// The compiled SDK, as programs load it (its lookups load the client and the argument checks on first use).
const lookups = createRequire(__filename)(join(repoRoot, "dist", "sdk", "lookups.js")) as typeof Lookups;

const kebab = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
const page = (fn: string) => join(repoRoot, "docs", "lookups", `${kebab(fn)}.md`);
/** The names in the first column of the table that follows `## <heading>` on the page. */
function tableKeys(text: string, heading: string): string[] {
  const section = text.split(`\n## ${heading}\n`)[1]?.split("\n## ")[0] ?? "";
  return [...section.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1] as string);
}
const shapeKeys = (schemas: readonly z.ZodObject[]) => [
  ...new Set(schemas.flatMap((s) => Object.keys(s.shape))),
];

let emu: TestEmulator;
const resultKeys: Record<string, string[]> = {
  getProject: Object.keys(ProjectSchema.shape),
  getDashboard: Object.keys(DashboardSchema.shape),
  getDashboardSharing: Object.keys(SharingSchema.shape),
  getDashboardAccessControls: Object.keys(AccessControlsSchema.shape),
  getBatchExports: Object.keys(BatchExportSchema.shape),
};

beforeAll(async () => {
  emu = await startTestEmulator();
  const mia = await lookups.getMember(
    { email: "mia.member@example.com" },
    { apiKey: emu.apiKey, host: emu.url, organizationId: emu.organizationId },
  );
  resultKeys.getMember = Object.keys(mia);
});
afterAll(async () => {
  await emu?.close();
});

const exported = Object.keys(lookups).filter((k) => /^get[A-Z]\w*$/.test(k) && !k.endsWith("Output"));

describe("docs/lookups pages", () => {
  it("cover every lookup the SDK exports, each with its Output form", () => {
    expect(exported.sort()).toEqual(Object.keys(LookupArgsSchemas).sort());
    for (const fn of exported) expect(Object.keys(lookups)).toContain(`${fn}Output`);
  });

  it.each(Object.keys(LookupArgsSchemas))(
    "%s: its page names both forms, the mock token, every argument and result field",
    (fn) => {
      const file = page(fn);
      expect(existsSync(file), `${file} is missing`).toBe(true);
      const text = readFileSync(file, "utf8");
      expect(text).toContain(`# ${fn}\n`);
      expect(text).toContain(`${fn}Output(`);
      expect(text).toContain(`posthog:index:${fn}`);
      const schemas = LookupArgsSchemas[fn as keyof typeof LookupArgsSchemas];
      expect(tableKeys(text, "Arguments").sort()).toEqual(shapeKeys(schemas).sort());
      const fields = resultKeys[fn];
      expect(fields, `no result keys known for ${fn}`).toBeDefined();
      expect(tableKeys(text, "Result").sort()).toEqual([...(fields ?? [])].sort());
    },
  );
});
