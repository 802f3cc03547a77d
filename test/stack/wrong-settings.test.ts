import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedApi } from "../../tools/stack/seed-api";
import { useExampleStack } from "./example-stack";

// Issue 12, points 1 and 7, as a user meets them: examples/gitops (dev stack) through the stand-in engine against
// the emulator. A refresh with a wrong organization id, or a host answering 404 to everything, used to exit 0 and
// drop 9 (11) of the 13 resources from the state; an `up` with a wrong project id created the Project and paused
// the export before the Dashboard failed. Now both fail naming the setting, the state is kept as it was, and the
// wrong project id fails before any write.
const example = useExampleStack("wrong-settings");
const { work, statePath, run } = example;
let notPostHog: ReturnType<typeof createServer>;
let notPostHogUrl: string;

/** The checkpoint's resources: urn, id and outputs (encrypted secrets shown as "[secret]": their IV changes). */
function stateOf(path = statePath) {
  const checkpoint = JSON.parse(readFileSync(path, "utf8")) as {
    resources: { urn: string; id?: string; outputs: Record<string, unknown> }[];
  };
  const secretless = (v: unknown): unknown =>
    v && typeof v === "object"
      ? "ciphertext" in v
        ? "[secret]"
        : Object.fromEntries(Object.entries(v).map(([k, x]) => [k, secretless(x)]))
      : v;
  return checkpoint.resources.map((r) => ({ urn: r.urn, id: r.id, outputs: secretless(r.outputs) }));
}

/**
 * A refresh with `override` in the environment fails, deletes nothing, and each of its errors (at least one)
 * contains `message`.
 */
async function refreshFailsEachNaming(override: Record<string, string>, message: string): Promise<void> {
  const refresh = await run("refresh", { env: { ...example.env(), ...override } });
  expect(refresh.ok).toBe(false);
  expect(refresh.steps.filter((s) => s.op === "delete")).toEqual([]);
  const errors = refresh.steps.filter((s) => s.error).map((s) => s.error ?? "");
  expect(errors.length).toBeGreaterThan(0);
  for (const error of errors) expect(error).toContain(message);
}

type Logged = { method: string; path: string };
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
    expect(before.filter((r) => r.id !== undefined).length).toBeGreaterThanOrEqual(13);
    const other = randomUUID();
    await refreshFailsEachNaming(
      { POSTHOG_ORGANIZATION_ID: other },
      `organization ${other} (set by the environment variable POSTHOG_ORGANIZATION_ID) was not found at ${example.emulator().url}`,
    );
    expect(stateOf()).toEqual(before);
  }, 90_000);

  it("POSTHOG_HOST answering 404 to everything: fails naming POSTHOG_HOST; nothing leaves the state", async () => {
    const before = stateOf();
    await refreshFailsEachNaming(
      { POSTHOG_HOST: notPostHogUrl },
      `check the host ${notPostHogUrl}, set by the environment variable POSTHOG_HOST`,
    );
    expect(stateOf()).toEqual(before);
  }, 90_000);

  it("with the right settings again, the program is in sync: nothing to create", async () => {
    const refresh = await run("refresh");
    expect(refresh.ok, JSON.stringify(refresh.steps.filter((s) => s.error))).toBe(true);
    expect(refresh.steps.filter((s) => s.op === "delete")).toEqual([]);
    const preview = await run("preview");
    expect(preview.ok).toBe(true);
    expect(preview.counts).toMatchObject({ create: 0, replace: 0, delete: 0 });
  }, 90_000);
});

describe("a wrong project id fails before any write (issue 12, point 7)", () => {
  it("up of a new stack with POSTHOG_PROJECT_ID=99999: every operation fails, nothing is written", async () => {
    const fresh = join(work, "fresh.json");
    await control("DELETE", "/requests");
    const up = await run("up", { statePath: fresh, env: { ...example.env(), POSTHOG_PROJECT_ID: "99999" } });
    expect(up.ok).toBe(false);
    const log = (await control("GET", "/requests")) as Logged[];
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
  }, 90_000);
});
