import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

// The README's Pulumi CLI sequence on examples/gitops, against the emulator. With the real `pulumi` on PATH it
// runs the real CLI. Without it (it is downloaded from get.pulumi.com, not from a package registry we use), the
// same body runs with test/stack/fake-pulumi/pulumi first on PATH: a fake that plays exactly these commands
// through the stand-in engine (tools/stack) and refuses any other (exit 2).
//
// Nothing here blocks the event loop while a command runs: the emulator is a child process, every command is
// spawned asynchronously (its own process group, killed with its children on timeout), and the DNS automation
// below publishes the domain's TXT record while `up` waits for it in DomainVerification.
const root = join(__dirname, "..", "..");
const fakeDir = join(__dirname, "fake-pulumi");
const nodeBin = join(root, "node_modules", ".bin");
const realPulumi = (process.env.PATH ?? "")
  .split(delimiter)
  .filter((dir) => dir !== "" && dir !== fakeDir)
  .map((dir) => join(dir, "pulumi"))
  .find((p) => existsSync(p) && spawnSync(p, ["version"], { encoding: "utf8" }).status === 0);
const mode =
  realPulumi === undefined ? "fake pulumi: the real CLI is not on PATH" : `real pulumi CLI: ${realPulumi}`;
const COMMAND_TIMEOUT_MS = realPulumi === undefined ? 120_000 : 300_000;

/** Kills a command's whole process group: the CLI and what it started (language host, program, provider). */
const killGroup = (child: ChildProcess): void => {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
  } catch {
    // ESRCH: nothing of it is left.
  }
};
/** Commands still running and emulators: killed in `finally` and, should that not run, after all tests. */
const commands = new Set<ChildProcess>();
const emulators = new Set<ChildProcess>();
const killAll = () => {
  for (const child of commands) killGroup(child);
  commands.clear();
  for (const child of emulators) child.kill("SIGKILL");
};
afterAll(killAll);

interface Emulator {
  url: string;
  apiKey: string;
  organizationId: string;
  child: ChildProcess;
}

/** `node dist/emulator/cli.js --rate-limit off` in a child process; resolves with the JSON line it prints. */
function startEmulatorProcess(): Promise<Emulator> {
  const child = spawn(process.execPath, [join(root, "dist", "emulator", "cli.js"), "--rate-limit", "off"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  emulators.add(child);
  child.on("exit", () => emulators.delete(child));
  return new Promise((resolvePromise, reject) => {
    let out = "";
    let err = "";
    const timer = setTimeout(
      () => reject(new Error(`the emulator printed no JSON line in 30 s: ${err}`)),
      30_000,
    );
    child.stderr?.on("data", (d: Buffer) => {
      err += d.toString();
    });
    child.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf("\n");
      if (nl < 0) return;
      clearTimeout(timer);
      try {
        const info = JSON.parse(out.slice(0, nl)) as Omit<Emulator, "child">;
        resolvePromise({ ...info, child });
      } catch (e) {
        reject(e);
      }
    });
    child.on("error", reject);
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the emulator exited (${code}) before printing its URL: ${err}`));
    });
  });
}

/** Stops the emulator child: SIGTERM (it closes and exits), SIGKILL after 5 s. */
async function stopEmulator(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
  await exited;
  clearTimeout(timer);
}

interface CommandResult {
  command: string;
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs `pulumi <args> --non-interactive` asynchronously in its own process group, killed on timeout. */
function pulumi(cwd: string, env: NodeJS.ProcessEnv, ...args: string[]): Promise<CommandResult> {
  const command = `pulumi ${args.join(" ")}`;
  const started = Date.now();
  // By name: PATH decides, as for a user (the fake is first on it when the real CLI is absent).
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
      killGroup(child);
    }, COMMAND_TIMEOUT_MS);
    const done = (code: number | null) => {
      clearTimeout(timer);
      commands.delete(child);
      killGroup(child); // anything of it still running (nothing should be)
      resolvePromise({ command, code, stdout, stderr, ms: Date.now() - started });
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
  const list = async <T>(path: string): Promise<T[]> => {
    const res = await fetch(`${url}/api/organizations/@current/${path}?limit=500`, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    if (!res.ok) throw new Error(`GET ${path}: HTTP ${res.status} ${await res.text()}`);
    return ((await res.json()) as { results: T[] }).results;
  };
  const [members, invites, domains, projects, exports] = await Promise.all([
    list<{ user: { email: string }; level: number }>("members/"),
    list<{ target_email: string }>("invites/"),
    list<{ domain: string; is_verified: boolean; sso_enforcement: string }>("domains/"),
    list<{ name: string }>("projects/"),
    list<{ name: string; paused: boolean }>("batch_exports/"),
  ]);
  return {
    members: Object.fromEntries(members.map((m) => [m.user.email, m.level])),
    invites: invites.map((i) => i.target_email).sort(),
    domains: domains.map((d) => `${d.domain} verified=${d.is_verified} sso=${d.sso_enforcement}`).sort(),
    projects: projects.map((p) => p.name).sort(),
    batchExports: Object.fromEntries(exports.map((b) => [b.name, b.paused])),
  };
}

/**
 * The DNS automation: until stopped, publishes `_posthog-challenge.<domain>` for every unverified domain
 * through the emulator's control plane, as a DNS provider would while `pulumi up` waits.
 */
function dnsAutomation(url: string, apiKey: string): { published: Set<string>; stop(): void } {
  const published = new Set<string>();
  const headers = { authorization: `Bearer ${apiKey}`, "content-type": "application/json" };
  let busy = false;
  const timer = setInterval(async () => {
    if (busy) return;
    busy = true;
    try {
      const res = await fetch(`${url}/api/organizations/@current/domains/`, { headers });
      const page = (await res.json()) as {
        results: { domain: string; is_verified: boolean; verification_challenge: string | null }[];
      };
      for (const d of page.results) {
        const name = `_posthog-challenge.${d.domain}`;
        if (d.is_verified || !d.verification_challenge || published.has(name)) continue;
        const posted = await fetch(`${url}/_emulator/dns`, {
          method: "POST",
          headers,
          body: JSON.stringify({ name, txt: d.verification_challenge }),
        });
        if (posted.ok) published.add(name);
      }
    } catch {
      // The next tick tries again (the emulator may be stopping).
    } finally {
      busy = false;
    }
  }, 250);
  return { published, stop: () => clearInterval(timer) };
}

describe("the GitOps example through the Pulumi CLI's command line", () => {
  it(
    `pulumi version, login, stack init, config set [--secret], preview, up, preview --expect-no-changes, refresh, up, preview --refresh --expect-no-changes, destroy (${mode})`,
    async () => {
      // A copy of the repository (node_modules linked) so `stack init` / `config set` never edit committed files.
      const work = mkdtempSync(join(tmpdir(), "pulumi-cli-"));
      const repo = join(work, "repo");
      cpSync(root, repo, {
        recursive: true,
        filter: (src) => !/[\\/](node_modules|\.git|\.stack-state)$/.test(src),
      });
      symlinkSync(join(root, "node_modules"), join(repo, "node_modules"));
      const stackFile = join(repo, "examples", "gitops", "Pulumi.dev.yaml");
      let emulator: Emulator | undefined;
      let dns: ReturnType<typeof dnsAutomation> | undefined;
      try {
        emulator = await startEmulatorProcess();
        const backendUrl = pathToFileURL(join(work, "state")).href;
        // Nothing of the caller's Pulumi or PostHog settings leaks in (their backend, login or API key).
        const inherited = Object.fromEntries(
          Object.entries(process.env).filter(([k]) => !k.startsWith("PULUMI_") && !k.startsWith("POSTHOG_")),
        );
        const env: NodeJS.ProcessEnv = {
          ...inherited,
          PULUMI_BACKEND_URL: backendUrl,
          PULUMI_HOME: join(work, "pulumi-home"),
          PULUMI_CONFIG_PASSPHRASE: "test-passphrase",
          PULUMI_SKIP_UPDATE_CHECK: "true",
          // The nodejs language host (and the fake) run `node` from PATH: the project's Node 24 comes first.
          PATH: [...(realPulumi === undefined ? [fakeDir] : []), nodeBin, process.env.PATH ?? ""].join(
            delimiter,
          ),
          POSTHOG_ORGANIZATION_ID: emulator.organizationId,
        };
        const run = (...args: string[]) => pulumi(repo, env, ...args);

        const version = await run("version");
        ok(version);
        expect(version.stdout.includes("fake pulumi")).toBe(realPulumi === undefined);
        ok(await run("login", backendUrl));
        ok(await run("stack", "init", "dev"));
        ok(await run("config", "set", "posthog:host", emulator.url));
        ok(await run("config", "set", "--secret", "posthog:apiKey", emulator.apiKey));
        // The settings are in the stack file beside the program; the key only as a `secure:` value.
        const settings = readFileSync(stackFile, "utf8");
        expect(settings).toContain(`posthog:host: ${emulator.url}`);
        expect(settings).toMatch(/posthog:apiKey:\n\s+secure: \S+/);
        expect(settings).not.toContain(emulator.apiKey);

        const before = await snapshot(emulator.url, emulator.apiKey);
        ok(await run("preview"));
        expect(await snapshot(emulator.url, emulator.apiKey), "preview wrote to the API").toEqual(before);

        dns = dnsAutomation(emulator.url, emulator.apiKey);
        ok(await run("up", "--yes", "--skip-preview"));
        expect([...dns.published]).toEqual(["_posthog-challenge.dev.acme-analytics.com"]);
        const after = await snapshot(emulator.url, emulator.apiKey);
        // SSO enforcement waits for verification (Domain's pendingSettings): not applied by this first up.
        expect(after.domains).toEqual(["dev.acme-analytics.com verified=true sso="]);
        expect(after.invites).toEqual(["jonas.berg@acme-analytics.com", "priya.patel@acme-analytics.com"]);
        expect(after.projects).toEqual([...before.projects, "Acme Web (dev)"].sort());
        expect(after.batchExports["Events to S3"]).toBe(true);

        ok(await run("preview", "--expect-no-changes"));
        // Once verified, refresh then up applies it (the README's `pulumi up --refresh`).
        ok(await run("refresh", "--yes"));
        ok(await run("up", "--yes", "--skip-preview"));
        expect((await snapshot(emulator.url, emulator.apiKey)).domains).toEqual([
          "dev.acme-analytics.com verified=true sso=saml",
        ]);
        ok(await run("preview", "--refresh", "--expect-no-changes"));
        ok(await run("destroy", "--yes", "--skip-preview"));
        // destroy leaves the organization as it was found.
        expect(await snapshot(emulator.url, emulator.apiKey)).toEqual(before);
      } finally {
        dns?.stop();
        for (const child of commands) killGroup(child);
        if (emulator) await stopEmulator(emulator.child);
        rmSync(work, { recursive: true, force: true });
      }
    },
    realPulumi === undefined ? 300_000 : 1_800_000,
  );
});
