import { type SpawnSyncReturns, spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { describe, expect, it } from "vitest";
import { startEmulator } from "../../emulator";

// The same cycle as `npm start`, through the REAL Pulumi CLI, when it is installed. The CLI cannot be
// installed on machines without access to get.pulumi.com (it is not in any package registry we use), so
// there this test is skipped, saying so.
const pulumi = (process.env.PATH ?? "")
  .split(delimiter)
  .map((dir) => join(dir, "pulumi"))
  .find((p) => spawnSync(p, ["version"], { encoding: "utf8" }).status === 0);
const root = join(__dirname, "..", "..");

describe("the GitOps example through the real Pulumi CLI", () => {
  it.skipIf(pulumi === undefined)(
    `pulumi login --local, stack init, config set --secret, preview, up, preview --expect-no-changes, refresh, up, preview --refresh --expect-no-changes, destroy${pulumi === undefined ? " (SKIPPED: the `pulumi` CLI is not on PATH)" : ""}`,
    async () => {
      const emulator = await startEmulator({ rateLimit: false });
      // A copy of the repository (node_modules linked) so `stack init` does not edit the committed stack file.
      const work = mkdtempSync(join(tmpdir(), "pulumi-cli-"));
      cpSync(root, join(work, "repo"), {
        recursive: true,
        filter: (src) => !/[\\/](node_modules|\.git|\.stack-state)$/.test(src),
      });
      const repo = join(work, "repo");
      symlinkSync(join(root, "node_modules"), join(repo, "node_modules"));
      const env = {
        ...process.env,
        PULUMI_BACKEND_URL: `file://${join(work, "state")}`,
        PULUMI_CONFIG_PASSPHRASE: "test-passphrase",
        PULUMI_SKIP_UPDATE_CHECK: "true",
        // The nodejs language host runs `node` from PATH: use the project's Node 24, not the machine's.
        PATH: `${join(root, "node_modules", ".bin")}${delimiter}${process.env.PATH ?? ""}`,
        POSTHOG_ORGANIZATION_ID: emulator.organizationId,
      };
      const run = (...args: string[]): SpawnSyncReturns<string> =>
        spawnSync(pulumi ?? "pulumi", [...args, "--non-interactive"], {
          cwd: repo,
          env,
          encoding: "utf8",
          timeout: 300_000,
        });
      try {
        expect(run("stack", "init", "dev").status).toBe(0);
        expect(run("config", "set", "posthog:host", emulator.url).status).toBe(0);
        expect(run("config", "set", "--secret", "posthog:apiKey", emulator.apiKey).status).toBe(0);
        expect(run("preview").status).toBe(0);
        // DomainVerification waits for the TXT record; publish it as soon as the domain exists.
        const publisher = setInterval(async () => {
          const res = await fetch(`${emulator.url}/api/organizations/@current/domains/`, {
            headers: { authorization: `Bearer ${emulator.apiKey}` },
          });
          const page = (await res.json()) as {
            results: { domain: string; verification_challenge: string }[];
          };
          for (const d of page.results) {
            await fetch(`${emulator.url}/_emulator/dns`, {
              method: "POST",
              headers: { authorization: `Bearer ${emulator.apiKey}`, "content-type": "application/json" },
              body: JSON.stringify({ name: `_posthog-challenge.${d.domain}`, txt: d.verification_challenge }),
            });
          }
        }, 500);
        const up = run("up", "--yes", "--skip-preview");
        clearInterval(publisher);
        expect(up.status, up.stdout + up.stderr).toBe(0);
        expect(run("preview", "--expect-no-changes").status).toBe(0);
        expect(run("refresh", "--yes").status).toBe(0);
        expect(run("up", "--yes", "--skip-preview").status).toBe(0);
        expect(run("preview", "--refresh", "--expect-no-changes").status).toBe(0);
        const destroy = run("destroy", "--yes", "--skip-preview");
        expect(destroy.status, destroy.stdout + destroy.stderr).toBe(0);
      } finally {
        await emulator.close();
        rmSync(work, { recursive: true, force: true });
      }
    },
    900_000,
  );
});
