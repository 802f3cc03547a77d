/**
 * The SDK's declaration files stand on their own (issue 26, part 7): a user's program compiling them reads none
 * of zod's or undici's declarations, whatever its compiler options (Pulumi's template sets no `esModuleInterop`,
 * under which TypeScript 5 refuses zod's `.d.cts` with 63 × TS1259). So the lookups' options and results are
 * plain interfaces generated from the client's zod schemas (sdk/lookup-types.ts, `LOOKUP_TYPES` of
 * tools/codegen.ts), and they cannot drift: at compile time (this file is type checked by `npm run lint`) each is
 * mutually assignable with `z.input`/`z.output` of its schema.
 */
import { join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import type { BatchExportSchema } from "../../provider/client/batch-exports";
import type { AccessControlsSchema, DashboardSchema } from "../../provider/client/dashboards";
import type { ProjectSchema } from "../../provider/client/projects";
import type { ClientOptionsSchema } from "../../provider/client/settings";
import type { SharingSchema } from "../../provider/client/sharing";
import type * as L from "../../sdk/lookup-types";
import { LOOKUP_TYPES } from "../../tools/codegen";
import { repoRoot } from "../provider/harness";

/** true when A and B are assignable both ways (the tuple stops distribution over unions). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** Compiles only for `true`. */
const same = <T extends true>(_proof?: T): void => undefined;

same<Same<L.LookupOptions, z.input<typeof ClientOptionsSchema>>>();
same<Same<L.ProjectInfo, z.output<typeof ProjectSchema>>>();
same<Same<L.DashboardInfo, z.output<typeof DashboardSchema>>>();
same<Same<L.SharingInfo, z.output<typeof SharingSchema>>>();
same<Same<L.AccessControlsInfo, z.output<typeof AccessControlsSchema>>>();
same<Same<L.BatchExportInfo, z.output<typeof BatchExportSchema>>>();
// The check can fail: another schema's type is not the same.
same<Same<L.ProjectInfo, z.output<typeof DashboardSchema>> extends false ? true : false>();
same<
  Same<L.LookupOptions["retry"], z.input<typeof ClientOptionsSchema>["timeouts"]> extends false ? true : false
>();

const options: ts.CompilerOptions = {
  strict: true,
  target: ts.ScriptTarget.ES2020,
  module: ts.ModuleKind.CommonJS,
  moduleResolution: ts.ModuleResolutionKind.Node10,
  ignoreDeprecations: "6.0",
  esModuleInterop: false,
  noEmit: true,
};
/**
 * A compiler host whose parsed files are shared by the programs of this file (the same options, files that do not
 * change meanwhile): the default libraries and the declarations both programs read are parsed once. Which files a
 * program reads is still its own: it asks for each it resolves.
 */
const host = ts.createCompilerHost(options);
const parsed = new Map<string, ts.SourceFile | undefined>();
const getSourceFile = host.getSourceFile.bind(host);
host.getSourceFile = (fileName, languageVersion, ...rest) => {
  if (!parsed.has(fileName)) parsed.set(fileName, getSourceFile(fileName, languageVersion, ...rest));
  return parsed.get(fileName);
};

/** The declaration files a program importing `entry` reads, compiled with Pulumi's template options. */
function declarationsRead(entry: string): { files: string[]; diagnostics: string[] } {
  const program = ts.createProgram([entry], options, host);
  return {
    files: program.getSourceFiles().map((f) => f.fileName),
    diagnostics: ts
      .getPreEmitDiagnostics(program)
      .map(
        (d) =>
          `${d.file?.fileName ?? ""}: TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`,
      ),
  };
}

describe("the SDK's declaration files (dist/sdk, as `npm run build` emits them)", () => {
  it("read no zod or undici declarations: the lookups' types are the generated plain ones", () => {
    const { files, diagnostics } = declarationsRead(join(repoRoot, "dist", "sdk", "index.d.ts"));
    expect(diagnostics).toEqual([]);
    expect(files.filter((f) => /\/node_modules\/(zod|undici)\//.test(f))).toEqual([]);
    const ours = files.filter((f) => f.startsWith(join(repoRoot, "dist")));
    expect(ours).toContain(join(repoRoot, "dist", "sdk", "lookup-types.d.ts"));
    // …and the client's zod-typed modules are not among them (option-types.d.ts holds ApiKey and RetryInfo; the
    // lookups' types.d.ts MemberInfo, the one result no client schema gives).
    expect(
      ours.filter((f) => f.includes("/dist/provider/")).map((f) => f.slice(repoRoot.length + 1)),
    ).toEqual([
      "dist/provider/client/node-version.d.ts",
      "dist/provider/lookups/types.d.ts",
      "dist/provider/client/option-types.d.ts",
    ]);
  });

  it("while the client's own declarations do read zod's (what the SDK's no longer pull in)", () => {
    const { files } = declarationsRead(join(repoRoot, "dist", "provider", "client", "index.d.ts"));
    expect(files.filter((f) => /\/node_modules\/zod\//.test(f)).length).toBeGreaterThan(10);
  });
});

describe("generated lookup types and the client's schemas", () => {
  it("covers every type of LOOKUP_TYPES: the assertions above name each one", () => {
    expect(LOOKUP_TYPES.map((t) => t.name)).toEqual([
      "LookupOptions",
      "ProjectInfo",
      "DashboardInfo",
      "SharingInfo",
      "AccessControlsInfo",
      "BatchExportInfo",
    ]);
  });
});
