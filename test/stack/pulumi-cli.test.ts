import { type ChildProcess, spawn } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../emulator";
import { killTree, PULUMI_BIN, pulumiEnv, pulumiExecutable } from "../../tools/pulumi";
import { dnsAutomation, seedApi } from "../../tools/seed-api";

// The README's Pulumi CLI sequence on examples/gitops, typed as a user types it, against the emulator, through
// the real `pulumi` that `npm run pulumi-cli` readied in .pulumi-cli/bin (first on PATH: each command is spawned
// by its name, `pulumi`). The CLI runs on a local file backend in a temporary directory (PULUMI_BACKEND_URL,
// PULUMI_HOME and a passphrase from tools/pulumi.ts's pulumiEnv), never Pulumi Cloud.
//
// The project is a copy of the repository's (Pulumi.yaml, package.json, tsconfig.json and examples/gitops;
// dist/ and node_modules/ linked): `stack init` writes the passphrase's salt and `config set` the settings into
// examples/gitops/Pulumi.dev.yaml, which must be the copy's, never the committed file. `import "pulumi-posthog"`
// resolves in the copy as in the repository (the package's self-reference through the copy's package.json),
// and so does the provider host's `pulumi-posthog/provider` (resolved from the program's directory).
//
// Nothing here blocks the event loop while a command runs: every command is spawned asynchronously (its own
// process group, killed with its children on timeout), so the in-process emulator answers and the DNS
// automation publishes the domain's TXT record while `up` waits for it in DomainVerification.
//
// The rest of the README's sequence is `npm start`'s too (tools/start.ts), on the same example, its connection set
// with `config set` (the key `--secret`) as here, and test/stack/gitops.test.ts checks each of its steps from the raw
// results and the emulator's request log, so none of it is run again here: the first `pulumi preview` planning
// only creates and sending no write (its step "preview": no request but GETs), `pulumi up --refresh` applying the
// SSO enforcement that waited for the verification (its step "up-refresh": exactly one update, of the Domain, and
// its PATCH; the drift gate after it reads the enforcement back as the program sets it), the drift gate
// `pulumi preview --refresh --expect-no-changes` and `pulumi destroy` leaving the organization as it was found
// (its steps "drift-gate" and "destroy"). The emulator, and what the stack made in it, ends with the test.
const root = join(__dirname, "..", "..");
const COMMAND_TIMEOUT_MS = 300_000;

/** Commands still running: killed in `finally` and, should that not run, after all tests. */
const commands = new Set<ChildProcess>();
afterAll(() => {
  for (const child of commands) killTree(child);
});

interface CommandResult {
  command: string;
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `pulumi <args> --non-interactive` asynchronously in its own process group, killed on timeout. */
function pulumi(cwd: string, env: NodeJS.ProcessEnv, ...args: string[]): Promise<CommandResult> {
  const command = `pulumi ${args.join(" ")}`;
  // By name: PATH decides, as for a user (pulumiEnv puts .pulumi-cli/bin first).
  const child = spawn("pulumi", [...args, "--non-interactive"], {
    cwd,
    env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  commands.add(child);
  return new Promise((resolvePromise) => {
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr?.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    const timer = setTimeout(() => {
      stderr += `\n[test] ${command}: killed after ${COMMAND_TIMEOUT_MS} ms`;
      killTree(child);
    }, COMMAND_TIMEOUT_MS);
    const done = (code: number | null) => {
      clearTimeout(timer);
      commands.delete(child);
      killTree(child); // anything of it still running (nothing should be)
      resolvePromise({ command, code, stdout, stderr });
    };
    child.on("error", (e) => {
      stderr += `\n[test] ${command}: ${e.message}`;
      done(null);
    });
    child.on("close", (code) => done(code));
  });
}

const ok = (r: CommandResult) => expect(r.code, `${r.command}\n${r.stdout}\n${r.stderr}`).toBe(0);

/** The seed key's view of the organization: what the example manages (and what it must leave as found). */
async function snapshot(url: string, apiKey: string) {
  const api = seedApi(url, apiKey);
  const [members, invites, domains, projects, exports] = await Promise.all([
    api.all<{ user: { email: string }; level: number }>("/api/organizations/@current/members/"),
    api.all<{ target_email: string }>("/api/organizations/@current/invites/"),
    api.all<{ domain: string; is_verified: boolean; sso_enforcement: string }>(
      "/api/organizations/@current/domains/",
    ),
    api.all<{ name: string }>("/api/organizations/@current/projects/"),
    api.all<{ name: string; paused: boolean }>("/api/organizations/@current/batch_exports/"),
  ]);
  return {
    members: Object.fromEntries(members.map((m) => [m.user.email, m.level])),
    invites: invites.map((i) => i.target_email).sort(),
    domains: domains.map((d) => `${d.domain} verified=${d.is_verified} sso=${d.sso_enforcement}`).sort(),
    projects: projects.map((p) => p.name).sort(),
    batchExports: Object.fromEntries(exports.map((b) => [b.name, b.paused])),
  };
}

describe("the GitOps example through the Pulumi CLI's command line", () => {
  it("pulumi version, login, stack init, config set [--secret], up, then preview --expect-no-changes writing nothing (the real pulumi CLI)", async () => {
    pulumiExecutable(); // throws, naming `npm run pulumi-cli`, when the CLI is not readied
    const work = mkdtempSync(join(tmpdir(), "pulumi-cli-"));
    const project = join(work, "project");
    for (const entry of ["package.json", "Pulumi.yaml", "tsconfig.json", "examples/gitops"]) {
      cpSync(join(root, entry), join(project, entry), { recursive: true });
    }
    symlinkSync(join(root, "node_modules"), join(project, "node_modules"), "dir");
    symlinkSync(join(root, "dist"), join(project, "dist"), "dir");
    const stackFile = join(project, "examples", "gitops", "Pulumi.dev.yaml");
    const committed = readFileSync(join(root, "examples", "gitops", "Pulumi.dev.yaml"), "utf8");
    const stateDir = join(work, "state");
    let emulator: RunningEmulator | undefined;
    let dns: ReturnType<typeof dnsAutomation> | undefined;
    try {
      emulator = await startEmulator({ rateLimit: false });
      // Nothing of the caller's PostHog settings leaks in (their host or API key): the key comes from the
      // stack's settings only. pulumiEnv drops Pulumi Cloud credentials and fixes the backend.
      const env = pulumiEnv(stateDir, { POSTHOG_ORGANIZATION_ID: emulator.organizationId });
      for (const k of Object.keys(env)) {
        if (k.startsWith("POSTHOG_") && k !== "POSTHOG_ORGANIZATION_ID") delete env[k];
      }
      expect(env.PATH?.split(":")[0]).toBe(PULUMI_BIN);
      const run = (...args: string[]) => pulumi(project, env, ...args);

      const version = await run("version");
      ok(version);
      const [major = 0, minor = 0] = version.stdout.trim().replace(/^v/, "").split(".").map(Number);
      expect(major * 1000 + minor, `pulumi version printed ${version.stdout}`).toBeGreaterThanOrEqual(3139);
      ok(await run("login", pathToFileURL(stateDir).href));
      ok(await run("stack", "init", "dev"));
      ok(await run("config", "set", "posthog:host", emulator.url));
      ok(await run("config", "set", "--secret", "posthog:apiKey", emulator.apiKey));
      // The settings are in the stack file beside the program; the key only as a `secure:` value.
      const settings = readFileSync(stackFile, "utf8");
      expect(settings).toMatch(/^encryptionsalt: \S+$/m);
      expect(settings).toContain(`posthog:host: ${emulator.url}`);
      expect(settings).toMatch(/posthog:apiKey:\n\s+secure: \S+/);
      expect(settings).not.toContain(emulator.apiKey);

      const before = await snapshot(emulator.url, emulator.apiKey);
      dns = dnsAutomation(seedApi(emulator.url, emulator.apiKey), 250);
      ok(await run("up", "--yes", "--skip-preview"));
      expect(await dns.stop()).toEqual(["_posthog-challenge.dev.acme-analytics.com"]);
      const after = await snapshot(emulator.url, emulator.apiKey);
      // SSO enforcement waits for verification (Domain's pendingSettings): not applied by this first up.
      expect(after.domains).toEqual(["dev.acme-analytics.com verified=true sso="]);
      expect(after.invites).toEqual(["jonas.berg@acme-analytics.com", "priya.patel@acme-analytics.com"]);
      expect(after.projects).toEqual([...before.projects, "Acme Web (dev)"].sort());
      expect(after.batchExports["Events to S3"]).toBe(true);

      // The program as `up` applied it plans no change, and the preview writes nothing.
      ok(await run("preview", "--expect-no-changes"));
      expect(await snapshot(emulator.url, emulator.apiKey), "preview wrote to the API").toEqual(after);
      // The repository's stack file was never touched.
      expect(readFileSync(join(root, "examples", "gitops", "Pulumi.dev.yaml"), "utf8")).toBe(committed);
    } finally {
      await dns?.stop();
      for (const child of commands) killTree(child);
      await emulator?.close();
      rmSync(work, { recursive: true, force: true });
    }
  }, 1_800_000);
});
