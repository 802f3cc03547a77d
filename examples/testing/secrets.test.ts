/**
 * What `pulumi.runtime.setMocks` alone does with secret outputs: nothing. The SDK asks the engine to encrypt
 * `apiToken` (Project) and `accessToken` (DashboardSharing) with the `additionalSecretOutputs` resource option;
 * the engine applies it, the mock monitor does not. So under plain mocks `pulumi.isSecret` of those outputs is
 * false. Assert the request (this file), or use mocks that apply it as the engine does (mocks.ts,
 * program.test.ts).
 */
import * as pulumi from "@pulumi/pulumi";
import * as posthog from "pulumi-posthog";
import { beforeAll, expect, it } from "vitest";
import { settled } from "./mocks";

beforeAll(async () => {
  await pulumi.runtime.setMocks({
    newResource: (args) => ({
      id: "1",
      state: { ...args.inputs, apiToken: "phc_1", accessToken: "share_1" },
    }),
    call: () => ({}),
  });
});

it("plain setMocks does not apply additionalSecretOutputs; the resource options carry the request", async () => {
  const requested = new Map<string, string[] | undefined>();
  const record: pulumi.ResourceTransformation = ({ name, opts }) => {
    requested.set(name, (opts as pulumi.CustomResourceOptions).additionalSecretOutputs);
    return undefined;
  };
  const project = new posthog.Project("web", { name: "Web" }, { transformations: [record] });
  const sharing = new posthog.DashboardSharing("kpis", { dashboardId: 1 }, { transformations: [record] });
  expect(await settled(project.apiToken)).toBe("phc_1");

  expect(await pulumi.isSecret(project.apiToken)).toBe(false);
  expect(await pulumi.isSecret(sharing.accessToken)).toBe(false);
  expect(requested.get("web")).toEqual(["apiToken", "liveEventsToken"]);
  expect(requested.get("kpis")).toEqual(["accessToken"]);
});
