/**
 * The lookups under `pulumi.runtime.setMocks`: every `getX` and `getXOutput` is an invoke of
 * `posthog:index:<function>` that `mocks.call` answers, and nothing reaches the network: the connection
 * settings name a running emulator, whose request log stays empty. Arguments are still checked first.
 * (Its own file: setMocks holds for the rest of the process.)
 */
import { createRequire } from "node:module";
import { join } from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type * as Client from "../../provider/client";
import type * as Lookups from "../../sdk/lookups";
import { repoRoot, startTestEmulator, type TestEmulator } from "./harness";

// The compiled SDK, as programs load it (its lookups load the client and the argument checks on first use).
const nativeRequire = createRequire(__filename);
const { InvalidInputError } = nativeRequire(
  join(repoRoot, "dist", "provider", "client", "index.js"),
) as typeof Client;
const sdk = nativeRequire(join(repoRoot, "dist", "sdk", "lookups.js")) as typeof Lookups;

let emu: TestEmulator;
let options: { apiKey: string; host: string; organizationId: string };
const calls: pulumi.runtime.MockCallArgs[] = [];

/** What the mocks answer for each token (a lookup's result, as the real one would return it). */
const answers: Record<string, Record<string, unknown>> = {
  "posthog:index:getMember": { userUuid: "u-mock", email: "mock@example.com", level: 8 },
  "posthog:index:getProject": { id: 7, name: "Mocked", api_token: "phc_mocked" },
  "posthog:index:getDashboard": { id: 12, name: "Mocked KPIs" },
  "posthog:index:getDashboardSharing": { enabled: true, access_token: "tok_mocked" },
  "posthog:index:getDashboardAccessControls": { access_controls: [], default_access_level: "editor" },
  "posthog:index:getBatchExports": { batchExports: [{ id: "b-1", name: "Mocked export", paused: false }] },
};

const settled = <T>(o: pulumi.Output<T>) => new Promise<T>((resolve) => o.apply(resolve));
const requests = () => emu.requests();

beforeAll(async () => {
  emu = await startTestEmulator();
  options = { apiKey: emu.apiKey, host: emu.url, organizationId: emu.organizationId };
  // The environment too names the emulator: a lookup that went to the network would show in its log.
  process.env.POSTHOG_API_KEY = emu.apiKey;
  process.env.POSTHOG_HOST = emu.url;
  await pulumi.runtime.setMocks(
    {
      newResource: (args) => ({ id: `${args.name}-id`, state: args.inputs }),
      call: (args) => {
        calls.push(args);
        const answer = answers[args.token];
        if (!answer) throw new Error(`no mock for ${args.token}`);
        return answer;
      },
    },
    "posthog-test",
    "test",
  );
});
afterAll(async () => {
  delete process.env.POSTHOG_API_KEY;
  delete process.env.POSTHOG_HOST;
  await emu?.close();
});
beforeEach(async () => {
  calls.length = 0;
  await emu.control("DELETE", "/requests");
});

describe("lookups under setMocks", () => {
  it("getX sends each lookup to mocks.call with its token and arguments, and returns its answer", async () => {
    expect(await sdk.getMember({ email: "mock@example.com" }, options)).toEqual(
      answers["posthog:index:getMember"],
    );
    expect(await sdk.getProject({ name: "Mocked" }, options)).toEqual(answers["posthog:index:getProject"]);
    expect(await sdk.getDashboard({ id: 12, projectId: 3 }, options)).toEqual(
      answers["posthog:index:getDashboard"],
    );
    expect(await sdk.getDashboardSharing({ dashboardId: 12 })).toEqual(
      answers["posthog:index:getDashboardSharing"],
    );
    expect(await sdk.getDashboardAccessControls({ dashboardId: 12 })).toEqual(
      answers["posthog:index:getDashboardAccessControls"],
    );
    expect(await sdk.getBatchExports()).toEqual([{ id: "b-1", name: "Mocked export", paused: false }]);

    expect(calls.map((c) => [c.token, c.inputs])).toEqual([
      ["posthog:index:getMember", { email: "mock@example.com" }],
      ["posthog:index:getProject", { name: "Mocked" }],
      ["posthog:index:getDashboard", { id: 12, projectId: 3 }],
      ["posthog:index:getDashboardSharing", { dashboardId: 12 }],
      ["posthog:index:getDashboardAccessControls", { dashboardId: 12 }],
      ["posthog:index:getBatchExports", {}],
    ]);
    // The connection settings (the key among them) are not passed to the mocks.
    expect(JSON.stringify(calls)).not.toContain(emu.apiKey);
    expect(await requests()).toEqual([]);
  });

  it("getXOutput goes through mocks.call too, waits for its Inputs, and keeps token-carrying results secret", async () => {
    const member = sdk.getMemberOutput(
      { email: pulumi.output("mock@example.com") },
      { apiKey: pulumi.secret(emu.apiKey) },
    );
    expect(await settled(member.userUuid)).toBe("u-mock");
    const sharing = sdk.getDashboardSharingOutput({ dashboardId: pulumi.output(12) });
    expect(await pulumi.isSecret(sharing)).toBe(true);
    expect(await settled(sharing.apply((s) => s.access_token))).toBe("tok_mocked");
    const project = sdk.getProjectOutput({ id: pulumi.output(7) });
    expect(await pulumi.isSecret(project)).toBe(true);
    const exportsOut = sdk.getBatchExportsOutput();
    expect(await settled(exportsOut.apply((all) => all.map((b) => b.name)))).toEqual(["Mocked export"]);

    expect(calls.map((c) => c.token).sort()).toEqual(
      [
        "posthog:index:getBatchExports",
        "posthog:index:getDashboardSharing",
        "posthog:index:getMember",
        "posthog:index:getProject",
      ].sort(),
    );
    expect(await requests()).toEqual([]);
  });

  it("checks the arguments before calling the mocks", async () => {
    const error = await sdk.getDashboard({ id: "12a" }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as Error).message).toMatch(/^getDashboard: id must be a dashboard id/);
    expect(calls).toEqual([]);
  });

  it("says what to return when a getBatchExports mock answers without batchExports", async () => {
    answers["posthog:index:getBatchExports"] = { results: [] };
    await expect(sdk.getBatchExports()).rejects.toThrow(
      "mocks.call for posthog:index:getBatchExports must return { batchExports: [...] }, got keys results",
    );
  });
});
