import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { savedState } from "../../tools/pulumi";
import { seedApi } from "../../tools/seed-api";
import { requestLogOf } from "../support/emulator";
import { useExampleStack } from "./example-stack";

// Issue 12, points 1 and 7, as a user meets them: examples/gitops (dev stack) through the real Pulumi CLI against
// the emulator (test/stack/example-stack.ts; not destroyed afterwards: the example's destroy is test/stack/gitops.test.ts's). A refresh with a wrong organization id, or a host answering 404 to everything, used to exit 0 and
// drop 9 (11) of the 13 resources from the state; an `up` with a wrong project id created the Project and paused
// the export before the Dashboard failed. Now both fail naming the setting, the state is kept as it was, and the
// wrong project id fails before any write.
const root = join(__dirname, "..", "..");
const example = useExampleStack("wrong-settings", { destroy: false });
const { work, run } = example;
let notPostHog: ReturnType<typeof createServer>;
let notPostHogUrl: string;

/**
 * The stack's resources as the local backend holds them (its checkpoint, `<stateDir>/.pulumi/stacks/<project>/dev.json`,
 * which `pulumi stack export` prints; read directly, without a CLI run): urn, id and outputs (encrypted secrets shown as
 * "[secret]": their ciphertext changes each time the state is written).
 */
function stateOf() {
  const resources =
    savedState({ projectDir: root, stack: "dev", stateDir: example.stateDir }).deployment.resources ?? [];
  const secretless = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(secretless)
      : v && typeof v === "object"
        ? "ciphertext" in v
          ? "[secret]"
          : Object.fromEntries(Object.entries(v).map(([k, x]) => [k, secretless(x)]))
        : v;
  return resources.map((r) => ({
    urn: r.urn,
    id: r.id,
    outputs: secretless(r.outputs),
  }));
}

/**
 * A refresh with `override` in the environment fails, deletes nothing, and each of its errors (at least one)
 * contains `message`.
 */
async function refreshFailsEachNaming(override: Record<string, string>, message: string): Promise<void> {
  const refresh = await run("refresh", { env: { ...example.env(), ...override } });
  expect(refresh.ok, refresh.output).toBe(false);
  expect(refresh.steps.filter((s) => s.op === "delete")).toEqual([]);
  const errors = refresh.steps.filter((s) => s.error).map((s) => s.error ?? "");
  expect(errors.length).toBeGreaterThan(0);
  for (const error of errors) expect(error).toContain(message);
}

const control = (method: string, path: string) =>
  seedApi(example.emulator().url, example.emulator().apiKey).call(method, `/_emulator${path}`);

// A server answering 404 to everything: a host that is not PostHog.
beforeAll(async () => {
  notPostHog = createServer((_req, res) => {
    res.writeHead(404, { "content-type": "text/html" });
    res.end("<html><body><h1>404 Not Found</h1></body></html>");
  });
  await new Promise<void>((resolve) => notPostHog.listen(0, "127.0.0.1", resolve));
  notPostHogUrl = `http://127.0.0.1:${(notPostHog.address() as { port: number }).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => notPostHog.close(() => resolve()));
});

describe("refresh with a wrong organization id or host keeps the state (issue 12, point 1)", () => {
  it("POSTHOG_ORGANIZATION_ID of another organization: fails naming it and the host; nothing leaves the state", async () => {
    const before = stateOf();
    // The 13 resources of the example (the stack and its default provider aside).
    expect(before.filter((r) => /::pulumi-nodejs:dynamic\//.test(String(r.urn)))).toHaveLength(13);
    const other = randomUUID();
    await refreshFailsEachNaming(
      { POSTHOG_ORGANIZATION_ID: other },
      `organization ${other} (set by the environment variable POSTHOG_ORGANIZATION_ID) was not found at ${example.emulator().url}`,
    );
    expect(stateOf()).toEqual(before);
  }, 300_000);

  it("POSTHOG_HOST answering 404 to everything: fails naming POSTHOG_HOST; nothing leaves the state", async () => {
    const before = stateOf();
    await refreshFailsEachNaming(
      { POSTHOG_HOST: notPostHogUrl },
      `check the host ${notPostHogUrl}, set by the environment variable POSTHOG_HOST`,
    );
    expect(stateOf()).toEqual(before);
  }, 300_000);

  it("with the right settings again, the program is in sync: nothing to create", async () => {
    // One `preview --refresh`: its refresh must read every resource (a failed read fails the preview; one found
    // gone would be planned as a create).
    const preview = await run("preview", { refresh: true });
    expect(preview.ok, preview.output).toBe(true);
    expect(preview.steps.filter((s) => s.op === "delete")).toEqual([]);
    expect(preview.counts).toMatchObject({ create: 0, replace: 0, delete: 0 });
  }, 300_000);
});

describe("a wrong project id fails before any write (issue 12, point 7)", () => {
  it("up of a new stack with POSTHOG_PROJECT_ID=99999: every operation fails, nothing is written", async () => {
    // A new stack: a local backend and settings file of its own.
    const stateDir = join(work, "fresh");
    const configFile = join(work, "fresh.yaml");
    await control("DELETE", "/requests");
    const up = await run("up", {
      stateDir,
      configFile,
      env: { ...example.env(), POSTHOG_PROJECT_ID: "99999" },
    });
    expect(up.ok, up.output).toBe(false);
    const log = requestLogOf(200, await control("GET", "/requests"));
    expect(log.filter((r) => r.method !== "GET")).toEqual([]);
    const errors = up.steps.filter((s) => s.error).map((s) => s.error ?? "");
    expect(errors.length).toBeGreaterThan(0);
    for (const error of errors) {
      expect(error).toContain(
        "project 99999 (set by the environment variable POSTHOG_PROJECT_ID) is not a project of",
      );
    }
    // The access check ran once, in the one provider host of the run.
    expect(log.filter((r) => r.path.endsWith("/projects/99999/"))).toHaveLength(1);
  }, 300_000);
});
