import { spawnSync } from "node:child_process";
import { appendFileSync, cpSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

// Issue 29: the SDKs generated from schema.json by Pulumi's own generators (`npm run gen-sdk`, tools/gen-sdk.mts
// and the Go tool tools/pulumi-cli/gensdk) are checked in under sdk-gen/ and must be current; the Node.js SDK
// compiles with tsc against the installed @pulumi/pulumi, the Python SDK byte-compiles (no `pulumi` package for
// Python here, so it is not imported). The Go SDK is built, vetted and run by test/plugin/go.test.ts. The .NET SDK
// is generated and checked current, not compiled (no .NET SDK on these machines, and NuGet is not reachable).
// The first --check on a machine builds the generator: a cold build takes minutes (about 8 on 2 shared cores).
const root = join(__dirname, "..", "..");
const sdkDir = join(root, "sdk-gen");
const work = mkdtempSync(join(tmpdir(), "gen-sdk-test-"));

/** `node tools/gen-sdk.mts args…`: its exit code and output. */
function genSdk(args: string[]): { code: number | null; output: string } {
  const r = spawnSync(process.execPath, [join(root, "tools", "gen-sdk.mts"), ...args], {
    cwd: root,
    encoding: "utf8",
    maxBuffer: 16 * 1024 * 1024,
  });
  return { code: r.status, output: `${r.stdout}${r.stderr}` };
}

const hasPython = spawnSync("python3", ["--version"]).status === 0;

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("the generated SDKs (sdk-gen/)", () => {
  it("are what the generators write from schema.json today (npm run gen-sdk -- --check)", () => {
    const r = genSdk(["--check"]);
    expect(r.output).toContain("sdk-gen/ is current");
    for (const lang of ["go", "nodejs", "python", "dotnet"])
      expect(r.output).toMatch(new RegExp(`${lang}: \\d+ files`));
    expect(r.code, r.output).toBe(0);
  }, 1_200_000);

  it("--check fails naming each file out of date or extra, and says how to rewrite them", () => {
    const copy = join(work, "copy");
    cpSync(sdkDir, copy, { recursive: true });
    appendFileSync(join(copy, "nodejs", "index.ts"), "// edited by hand\n");
    writeFileSync(join(copy, "go", "posthog", "extra.go"), "package posthog\n");
    rmSync(join(copy, "python", "setup.py"));
    const r = genSdk(["--check", "--dir", copy]);
    expect(r.code).toBe(1);
    expect(r.output).toContain("3 generated file(s) differ");
    expect(r.output).toContain("nodejs: out of date: index.ts");
    expect(r.output).toContain("go: extra: posthog/extra.go");
    expect(r.output).toContain("python: missing: setup.py");
    expect(r.output).toContain("run `npm run gen-sdk`");
  }, 1_200_000);

  it("the Node.js SDK compiles with tsc against the installed @pulumi/pulumi", () => {
    const out = join(work, "nodejs-out");
    const config = join(work, "tsconfig.json");
    writeFileSync(
      config,
      JSON.stringify({
        compilerOptions: {
          target: "es2020",
          module: "nodenext",
          moduleResolution: "nodenext",
          strict: true,
          declaration: true,
          skipLibCheck: true,
          types: ["node"],
          typeRoots: [join(root, "node_modules", "@types")],
          rootDir: join(sdkDir, "nodejs"),
          outDir: out,
        },
        include: [join(sdkDir, "nodejs", "**", "*.ts")],
      }),
    );
    const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
    const r = spawnSync(process.execPath, [tsc, "-p", config], { encoding: "utf8" });
    expect(r.status, `${r.stdout}${r.stderr}`).toBe(0);
    for (const file of ["index.js", "index.d.ts", "dashboard.js", "getMember.d.ts", "config/vars.js"])
      expect(existsSync(join(out, file)), file).toBe(true);
  }, 300_000);

  it.skipIf(!hasPython)(
    "the Python SDK byte-compiles (python3 -m compileall; its caches outside sdk-gen/)",
    () => {
      const r = spawnSync("python3", ["-m", "compileall", "-q", join(sdkDir, "python")], {
        encoding: "utf8",
        env: { ...process.env, PYTHONPYCACHEPREFIX: join(work, "pycache") },
      });
      expect(r.status, `${r.stdout}${r.stderr}`).toBe(0);
      expect(existsSync(join(work, "pycache"))).toBe(true);
    },
    300_000,
  );
});
