import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { type EngineEvent, PULUMI_BIN, type RunResult, runStack, savedState } from "../../tools/pulumi";
import { startTestEmulator, type TestEmulator } from "../support/emulator";
import { NO_POSTHOG_ENV, ops, refreshOf, requireBuilt, root, stackWithSettings, why } from "./support";

// Issue 29: a Pulumi Go program (test/plugin/go-program) on the Go SDK generated from schema.json (sdk-gen/go, by
// `npm run gen-sdk`) and sdk/v3 at the CLI's version, run through the real CLI and the Go language host
// (`pulumi-language-go`, built by `npm run pulumi-cli` from sdk/v3 v3.62.0), with the posthog provider plugin
// (plugin/pulumi-resource-posthog, named in the program's Pulumi.yaml), against the emulator, on a local backend.
// The settings reach the plugin only through the stack config: no POSTHOG_* variable is in the CLI's environment.
// The Go builds use Go's default caches: cold, the first build of sdk/v3 takes minutes (about 6 on 2 shared cores);
// warm, each build links the program again in seconds (several CPU-seconds). So the program is linked twice: by the
// first test's `go build`, and by the language host in the first `up`, as a user's `pulumi up` in the program's
// folder builds it. The runs after that first `up` run the first test's binary (the same source, built by the same
// `go build -o` the language host runs) through the same language host: their project (binProjectDir) is a copy of
// the program's Pulumi.yaml whose Go program only execs that binary, which the language host builds in a moment. (The
// runtime option `binary` would say it directly, but this language host, of sdk/v3 v3.62.0, reads it from a flag
// that the CLI no longer passes.)
const projectDir = join(root, "test", "plugin", "go-program");
const MAX = { uuid: "0b5e7a9c-1d2f-4a6b-8c3e-5f7a9b1c2d04", email: "max.member@example.com" };
const work = mkdtempSync(join(tmpdir(), "plugin-go-"));
const stateDir = join(work, "state");
const stack = "dev";
let emu: TestEmulator;
let configFile: string;
/**
 * The project of the runs after the first `up`: test/plugin/go-program's Pulumi.yaml (same name, so the same stack;
 * its plugin path made absolute) and a Go program that execs the binary the first test builds here, with the
 * arguments and environment the language host gives it.
 */
const binProjectDir = join(work, "go-bin");
const binary = join(binProjectDir, "program");

/** Go's settings for every build here: the module files as they are, the Go installed, no cgo. */
const goEnv = { GOFLAGS: "-mod=readonly", GOTOOLCHAIN: "local", CGO_ENABLED: "0" };
/** The CLI's environment: no POSTHOG_* setting of the caller's, so only the stack config reaches the plugin. */
const env: NodeJS.ProcessEnv = { ...goEnv, ...NO_POSTHOG_ENV };

/** Runs `operation` of the stack; `built`: through the first test's binary (binProjectDir), not a build of its own. */
const run = (
  operation: RunResult["operation"],
  more: {
    expectNoChanges?: boolean;
    withPreview?: boolean;
    refresh?: boolean;
    onEvent?: (e: EngineEvent) => void;
    built?: boolean;
  } = {},
) => {
  const { built, ...rest } = more;
  return runStack({
    operation,
    projectDir: built ? binProjectDir : projectDir,
    stack,
    stateDir,
    configFile,
    env,
    timeoutMs: 900_000,
    ...rest,
  });
};

/** Runs `go args…` in the program's folder; throws with its output when it fails. */
function go(args: string[]): string {
  const r = spawnSync("go", args, {
    cwd: projectDir,
    encoding: "utf8",
    env: { ...process.env, ...goEnv },
    maxBuffer: 16 * 1024 * 1024,
  });
  if (r.status !== 0)
    throw new Error(`go ${args.join(" ")} failed (${r.error?.message ?? r.status}):\n${r.stderr}`);
  return `${r.stdout}${r.stderr}`;
}

beforeAll(async () => {
  requireBuilt(
    [join(PULUMI_BIN, "pulumi-language-go"), join(root, "sdk-gen", "go", "go.mod")],
    "`npm run build`, `npm run pulumi-cli` and `npm run gen-sdk`",
  );
  emu = await startTestEmulator();
  configFile = await stackWithSettings({
    projectDir,
    stack,
    stateDir,
    emu,
    env,
    configFile: join(work, "Pulumi.dev.yaml"),
    extra: `  posthog-go:memberEmail: ${MAX.email}\n`,
  });
}, 120_000);

afterAll(async () => {
  await emu?.close();
  rmSync(work, { recursive: true, force: true });
});

describe("a Pulumi Go program on the generated Go SDK through the posthog plugin (real CLI)", () => {
  it("the generated Go SDK and the program build and vet clean (sdk/v3 from the Go module proxy)", () => {
    // `go build` first: on a cold cache this is where sdk/v3 is compiled, once for the runs below.
    mkdirSync(binProjectDir, { recursive: true });
    go(["build", "-o", binary, "."]);
    expect(existsSync(binary)).toBe(true);
    const project = parseYaml(readFileSync(join(projectDir, "Pulumi.yaml"), "utf8")) as {
      name: string;
      runtime: string;
      plugins: { providers: { name: string; path: string }[] };
    };
    expect(project.runtime).toBe("go");
    writeFileSync(
      join(binProjectDir, "Pulumi.yaml"),
      stringifyYaml({
        ...project,
        plugins: {
          providers: project.plugins.providers.map((p) => ({ ...p, path: resolve(projectDir, p.path) })),
        },
      }),
    );
    writeFileSync(join(binProjectDir, "go.mod"), "module posthog-go-exec\n\ngo 1.21\n");
    writeFileSync(
      join(binProjectDir, "main.go"),
      [
        "// Runs the program built by test/plugin/go.test.ts in its place.",
        "package main",
        "",
        'import (\n\t"os"\n\t"syscall"\n)',
        "",
        `func main() { panic(syscall.Exec(${JSON.stringify(binary)}, os.Args, os.Environ())) }`,
        "",
      ].join("\n"),
    );
    expect(go(["vet", ".", "github.com/pulumi-posthog/pulumi-posthog/sdk-gen/go/posthog/..."])).toBe("");
    // The program takes the SDK of this repository, not one from elsewhere.
    const dir = go([
      "list",
      "-m",
      "-f",
      "{{.Replace.Dir}}",
      "github.com/pulumi-posthog/pulumi-posthog/sdk-gen/go",
    ]);
    expect(dir.trim()).toBe(join(root, "sdk-gen", "go"));
  }, 1_200_000);

  it("up creates, a change updates one resource, refresh finds nothing and a preview plans nothing, destroy removes all; the key stays secret", async () => {
    expect(existsSync(configFile)).toBe(true);
    const up = await run("up", { withPreview: true });
    expect(up.ok, why(up)).toBe(true);
    expect(ops(up)).toEqual({ web: "create", kpis: "create", "max-kpis": "create", jane: "create" });
    expect(Object.fromEntries(up.steps.map((s) => [s.name, s.type]))).toEqual({
      web: "posthog:index:Project",
      kpis: "posthog:index:Dashboard",
      "max-kpis": "posthog:index:DashboardCollaborator",
      jane: "posthog:index:Invite",
    });
    const projectId = Number(up.outputs.projectId);
    const dashboardId = Number(up.outputs.dashboardId);
    expect(up.outputs.apiToken).toBe("[secret]");

    // What PostHog (the emulator) holds now.
    const project = await emu.call("GET", `${emu.org}/projects/${projectId}/`);
    expect(project.body).toMatchObject({ name: "Go web", timezone: "Europe/Paris" });
    const dashboard = await emu.call("GET", `/api/projects/${projectId}/dashboards/${dashboardId}/`);
    expect(dashboard.body).toMatchObject({ name: "Go KPIs", restriction_level: 37, tags: ["go"] });
    const collaborators = await emu.call(
      "GET",
      `/api/projects/${projectId}/dashboards/${dashboardId}/collaborators/`,
    );
    expect(JSON.stringify(collaborators.body)).toContain(MAX.uuid);
    const invites = await emu.call("GET", `${emu.org}/invites/`);
    expect(JSON.stringify(invites.body)).toContain("jane.go@example.com");
    // The state as the backend saved it (what `pulumi stack export` prints).
    const state = savedState({ projectDir, stack, stateDir });
    expect(JSON.stringify(state)).not.toContain(emu.apiKey);
    // The resources registered the SDK's version and download URL (sdk-gen/go/posthog/internal): the default
    // provider is `default_<package.json's version>_<URL as a QName>` (issue 35; Pulumi's
    // pkg/v3@v3.274.1/resource/deploy/providers/provider.go, DefaultName).
    const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string };
    const { pluginDownloadURL } = JSON.parse(readFileSync(join(root, "schema.json"), "utf8")) as {
      pluginDownloadURL: string;
    };
    expect(
      (state.deployment.resources ?? []).map((r) => String(r.urn)).filter((u) => u.includes(":providers:")),
    ).toEqual([
      `urn:pulumi:${stack}::posthog-go::pulumi:providers:posthog::default_${version.replaceAll(".", "_")}_${pluginDownloadURL.replace("://", "_/")}`,
    ]);

    // A change of the program's input (`dashboardName`, a plain setting written into the settings file as
    // `pulumi config set` writes it): exactly one update, the dashboard's name, in place (same id).
    const settings = readFileSync(configFile, "utf8");
    expect(settings).toMatch(/^config:\n/m);
    writeFileSync(
      configFile,
      settings.replace(/^config:\n/m, "config:\n  posthog-go:dashboardName: Go KPIs, renamed\n"),
    );
    const update = await run("up", { built: true });
    if (process.env.SHOW_PLUGIN_RUN) process.stdout.write(`${up.output}\n${update.output}\n`);
    expect(update.ok, why(update)).toBe(true);
    expect(update.counts).toMatchObject({ create: 0, update: 1, replace: 0, delete: 0 });
    expect(update.steps.find((s) => s.op === "update")).toMatchObject({ name: "kpis", diffs: ["name"] });
    expect(Number(update.outputs.dashboardId)).toBe(dashboardId);
    const renamed = await emu.call("GET", `/api/projects/${projectId}/dashboards/${dashboardId}/`);
    expect(renamed.body).toMatchObject({ name: "Go KPIs, renamed" });

    // A refresh, then a preview of the program, in one `pulumi preview --refresh --expect-no-changes`: its refresh
    // steps (op "refresh" in the event log, before the preview's) read the four resources and find them as they
    // are (nothing changed outside Pulumi), the preview plans nothing, and nothing is written.
    await emu.control("DELETE", "/requests");
    const events: EngineEvent[] = [];
    const preview = await run("preview", {
      built: true,
      refresh: true,
      expectNoChanges: true,
      onEvent: (e) => events.push(e),
    });
    expect(preview.ok, why(preview)).toBe(true);
    const refresh = refreshOf(events);
    expect(ops(refresh)).toEqual({
      web: "same",
      kpis: "same",
      "max-kpis": "same",
      jane: "same",
    });
    expect(refresh.counts).toMatchObject({ create: 0, update: 0, replace: 0, delete: 0 });
    expect(preview.counts).toMatchObject({ create: 0, update: 0, replace: 0, delete: 0 });
    expect((await emu.requests()).filter((r) => r.method !== "GET")).toEqual([]);

    // Destroy: the dashboard soft-deleted, the invite and the project gone.
    const destroy = await run("destroy", { built: true });
    expect(destroy.ok, why(destroy)).toBe(true);
    expect(destroy.counts.delete).toBe(4);
    expect((await emu.call("GET", `/api/projects/${projectId}/dashboards/${dashboardId}/`)).status).toBe(404);
    expect(JSON.stringify((await emu.call("GET", `${emu.org}/invites/`)).body)).not.toContain(
      "jane.go@example.com",
    );
    expect((await emu.call("GET", `${emu.org}/projects/${projectId}/`)).status).toBe(404);
  }, 1_800_000);
});
