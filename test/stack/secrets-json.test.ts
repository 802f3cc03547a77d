import { describe, expect, it } from "vitest";
import { errorsOf, type RunResult } from "../../tools/pulumi";
import { filesUnder } from "../support/files";
import { type Declared, useFixtureProgram } from "./fixture-program";

// Issue 34, point 3 (b): `pulumi up --json` printed a Project's apiToken and a sharing's accessToken in clear, in
// `debug:` diagnostic events. Every output stream of every command (`up`, `preview`, `preview --refresh`, `refresh`,
// `destroy`, each with --json, and `up --debug`) and every file of the backend is searched for the API key and each
// secret output's value. The provider returns them as secrets (the SDK classes' additionalSecretOutputs; the state
// holds them encrypted): the one place they are in clear is Pulumi's own Node.js runtime, which logs every
// RegisterResource answer at debug level (`RegisterResource RPC finished: … resp: …`, @pulumi/pulumi
// runtime/resource.js), the secret envelope's value included, and which `--json` and `--debug` print. The test proves
// that this is the only place (docs/troubleshooting.md says how to keep it out of CI logs). A program using the SDK,
// through the real Pulumi CLI.
const fx = useFixtureProgram({ prefix: "secrets-json" });
const why = (r: RunResult) => `${JSON.stringify(errorsOf(r), null, 1)}\n${r.output}`;

/** The Node.js runtime's own debug line of a RegisterResource answer, as a --json event or a --debug line. */
const RUNTIME_LOG = /RegisterResource RPC finished: resource:/;

describe("secret outputs and the API key in every output stream (real Pulumi CLI, dynamic SDK)", () => {
  it("appear in clear only in the Node.js runtime's own RegisterResource debug lines; never in the backend", async () => {
    const s = fx.stack("secrets");
    const emu = fx.emu();
    const made = await emu.call("POST", `${emu.project}/dashboards/`, { body: { name: "Shared by Pulumi" } });
    const dashboardId = (made.body as { id: number }).id;
    const program: Declared = [
      ["Project", "web", { name: "Secret outputs web" }],
      ["DashboardSharing", "shared", { dashboardId, enabled: true }],
    ];
    const runs: RunResult[] = [];
    const run = async (
      operation: "up" | "preview" | "refresh" | "destroy",
      args: string[],
      refresh = false,
    ) => {
      const r = await s.run(operation, program, { args, refresh });
      expect(r.ok, why(r)).toBe(true);
      runs.push(r);
      return r;
    };
    await run("up", ["--json"]);
    const projects = (await emu.call("GET", `/api/organizations/${emu.organizationId}/projects/?limit=100`))
      .body as { results: { id: number; name: string }[] };
    const web = projects.results.find((p) => p.name === "Secret outputs web");
    const project = (await emu.call("GET", `/api/organizations/${emu.organizationId}/projects/${web?.id}/`))
      .body as { api_token: string; live_events_token?: string | null };
    const sharing = (await emu.call("GET", `${emu.project}/dashboards/${dashboardId}/sharing/`)).body as {
      access_token: string;
    };
    const secrets: Record<string, string> = {
      apiKey: emu.apiKey,
      apiToken: project.api_token,
      accessToken: sharing.access_token,
    };
    for (const v of Object.values(secrets)) expect(v.length).toBeGreaterThan(8);
    await run("preview", ["--json"]);
    await run("preview", ["--json"], true);
    await run("refresh", ["--json"]);
    await run("up", ["--debug"]);
    const backend = filesUnder(s.stateDir);
    await run("destroy", ["--json"]);

    for (const [what, value] of Object.entries(secrets)) {
      // The backend: checkpoints, backups, history, event logs.
      const files = [...backend, ...filesUnder(s.stateDir)].filter((f) => f.text.includes(value));
      expect(
        files.map((f) => f.path),
        `${what} in the backend`,
      ).toEqual([]);
      // The output streams: with --json, each line (an event) that holds the value is the runtime's debug event;
      // in text (--debug), the value appears no more often than in the runtime's debug messages the run logged.
      const count = (text: string) => text.split(value).length - 1;
      for (const r of runs) {
        expect(JSON.stringify(r.diagnostics.filter((d) => !RUNTIME_LOG.test(d.message)))).not.toContain(
          value,
        );
        const runtime = r.diagnostics.filter((d) => RUNTIME_LOG.test(d.message)).map((d) => d.message);
        if (r.output.startsWith("{")) {
          const lines = r.output.split("\n").filter((l) => l.includes(value));
          for (const line of lines) expect(line, `${what} in ${r.operation} --json`).toMatch(RUNTIME_LOG);
        } else {
          expect(count(r.output), `${what} in ${r.operation} --debug`).toBeLessThanOrEqual(
            count(runtime.join("\n")),
          );
        }
      }
    }
    // The key never, not even there.
    for (const r of runs) expect(r.output).not.toContain(emu.apiKey);
  }, 600_000);
});
