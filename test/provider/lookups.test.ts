/**
 * The lookups against the emulator over real HTTP: `getX` (plain values, a Promise) and `getXOutput`
 * (Inputs in, an Output out, secret when it carries a token), argument checks before any request, and the
 * settings' fallback to the environment. Under `setMocks`: lookups-mocks.test.ts.
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
const {
  getBatchExports,
  getBatchExportsOutput,
  getDashboard,
  getDashboardAccessControls,
  getDashboardAccessControlsOutput,
  getDashboardOutput,
  getDashboardSharing,
  getDashboardSharingOutput,
  getMember,
  getMemberOutput,
  getProject,
  getProjectOutput,
} = nativeRequire(join(repoRoot, "dist", "sdk", "lookups.js")) as typeof Lookups;

let emu: TestEmulator;
let options: { apiKey: string; host: string; organizationId: string; projectId: number };
let dashboardId: number;

/** The value of an Output once known (through `apply`, the public API). */
const settled = <T>(o: pulumi.Output<T>) => new Promise<T>((resolve) => o.apply(resolve));
/** The API requests the emulator received since the last clear (the control plane's request log). */
const requests = () => emu.requests();

beforeAll(async () => {
  emu = await startTestEmulator();
  options = {
    apiKey: emu.apiKey,
    host: emu.url,
    organizationId: emu.organizationId,
    projectId: emu.projectId,
  };
  const made = await emu.api("POST", `/api/projects/${emu.projectId}/dashboards/`, { name: "Looked up" });
  dashboardId = (made.body as { id: number }).id;
  await emu.api("PATCH", `/api/projects/${emu.projectId}/dashboards/${dashboardId}/sharing/`, {
    enabled: true,
  });
});
afterAll(async () => {
  await emu?.close();
});
beforeEach(async () => {
  await emu.control("DELETE", "/requests");
});

describe("getX: plain values in, a Promise out", () => {
  it("getMember finds a member by e-mail (any case) or user UUID", async () => {
    const mia = await getMember({ email: "MIA.member@example.com" }, options);
    expect(mia).toMatchObject({ email: "mia.member@example.com", level: 1, firstName: "Mia" });
    expect((await getMember({ userUuid: mia.userUuid }, options)).email).toBe(mia.email);
    await expect(getMember({ email: "nobody@example.com" }, options)).rejects.toThrow(
      `getMember: no member with e-mail nobody@example.com in organization ${emu.organizationId}`,
    );
  });

  it("getProject finds a project by id or by name, and refuses ambiguous names", async () => {
    const byId = await getProject({ id: emu.projectId }, options);
    const byName = await getProject({ name: byId.name }, options);
    expect(byName.id).toBe(emu.projectId);
    expect(byName.api_token).toMatch(/^phc_/);
    await expect(getProject({ name: "no such project" }, options)).rejects.toThrow(
      'getProject: no project named "no such project"',
    );
    await emu.api("POST", `/api/organizations/${emu.organizationId}/projects/`, { name: "Twin" });
    await emu.api("POST", `/api/organizations/${emu.organizationId}/projects/`, { name: "Twin" });
    await expect(getProject({ name: "Twin" }, options)).rejects.toThrow(
      /getProject: 2 projects are named "Twin": look it up by id \(ids \d+, \d+\)/,
    );
  });

  it("getDashboard, getDashboardSharing and getDashboardAccessControls read a dashboard", async () => {
    expect((await getDashboard({ id: dashboardId }, options)).name).toBe("Looked up");
    const sharing = await getDashboardSharing({ dashboardId }, options);
    expect(sharing.enabled).toBe(true);
    expect(sharing.access_token).toEqual(expect.any(String));
    // The emulator answers as the seed does (with the dashboard); the real service with access_controls.
    // A Dashboard's id output is a string: it is taken as it is.
    const acl = await getDashboardAccessControls({ dashboardId: String(dashboardId) }, options);
    expect(acl).toMatchObject({ id: dashboardId });
    expect((await requests()).map((r) => r.path)).toEqual([
      `/api/projects/${emu.projectId}/dashboards/${dashboardId}/`,
      `/api/projects/${emu.projectId}/dashboards/${dashboardId}/sharing/`,
      `/api/projects/${emu.projectId}/dashboards/${dashboardId}/access_controls/`,
    ]);
  });

  it("getBatchExports lists the organization's batch exports; settings fall back to the environment", async () => {
    const saved = { ...process.env };
    Object.assign(process.env, {
      POSTHOG_API_KEY: emu.apiKey,
      POSTHOG_HOST: emu.url,
      POSTHOG_ORGANIZATION_ID: emu.organizationId,
    });
    try {
      const all = await getBatchExports();
      expect(all.map((b) => b.name)).toEqual(expect.arrayContaining(["Events to S3", "Persons to BigQuery"]));
    } finally {
      for (const k of ["POSTHOG_API_KEY", "POSTHOG_HOST", "POSTHOG_ORGANIZATION_ID"]) {
        if (saved[k] === undefined) delete process.env[k];
        else process.env[k] = saved[k];
      }
    }
  });

  it("refuses bad arguments naming the property, before any request", async () => {
    const bad: [() => Promise<unknown>, string, RegExp][] = [
      [
        () => getMember({} as never, options),
        "email",
        /getMember: pass exactly one of email or userUuid \(got neither\)/,
      ],
      [
        () => getMember({ email: "a@example.com", userUuid: "u" } as never, options),
        "email",
        /exactly one of email or userUuid \(got both\)/,
      ],
      [() => getMember({ email: " " }, options), "email", /getMember: email must be a non-empty string/],
      [() => getProject({ id: 0 }, options), "id", /getProject: id must be a positive integer project id/],
      [
        () => getDashboard({ id: true } as never, options),
        "id",
        /getDashboard: id must be a dashboard id: a positive integer or a string of its digits \(a Dashboard's id\), got true/,
      ],
      [
        () => getDashboard({ id: 1.5 }, options),
        "id",
        /getDashboard: id must be a dashboard id: .*, got 1\.5/,
      ],
      [
        () => getDashboardSharing({ dashboardId: "7a" }, options),
        "dashboardId",
        /getDashboardSharing: dashboardId must be a dashboard id: .*, got the string "7a"/,
      ],
      [
        () => getDashboardAccessControls({ dashboardId: 1, projectId: true } as never, options),
        "projectId",
        /getDashboardAccessControls: projectId must be a positive integer project id/,
      ],
      [
        () => getBatchExports({ organization: "x" } as never, options),
        "args",
        /unknown argument\(s\) organization/,
      ],
    ];
    for (const [call, property, message] of bad) {
      const error = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(InvalidInputError);
      expect((error as Client.InvalidInputError).property).toBe(property);
      expect((error as Error).message).toMatch(message);
    }
    expect(await requests()).toEqual([]);
  });
});

describe("getXOutput: Inputs in, an Output out", () => {
  it("takes Outputs as arguments and connection settings, and resolves to what getX returns", async () => {
    const outputOptions = {
      apiKey: pulumi.secret(emu.apiKey),
      host: pulumi.output(emu.url),
      organizationId: pulumi.output(emu.organizationId),
      projectId: pulumi.output(emu.projectId),
    };
    const mia = getMemberOutput({ email: pulumi.output("mia.member@example.com") }, outputOptions);
    expect(await settled(mia)).toEqual(await getMember({ email: "mia.member@example.com" }, options));
    // A secret key does not make the result secret: the key never reaches it.
    expect(await pulumi.isSecret(mia)).toBe(false);
    // A secret argument does.
    expect(
      await pulumi.isSecret(getMemberOutput({ email: pulumi.secret("mia.member@example.com") }, options)),
    ).toBe(true);

    const dash = getDashboardOutput({ id: pulumi.output(dashboardId) }, outputOptions);
    expect((await settled(dash)).name).toBe("Looked up");
    expect(await pulumi.isSecret(dash)).toBe(false);
    const acl = getDashboardAccessControlsOutput({ dashboardId: pulumi.output(dashboardId) }, outputOptions);
    expect(await settled(acl)).toEqual(await getDashboardAccessControls({ dashboardId }, options));
    const exportsOut = getBatchExportsOutput({}, outputOptions);
    expect((await settled(exportsOut)).map((b) => b.name)).toContain("Events to S3");
  });

  it("returns the sharing configuration and the project as secret Outputs (they carry tokens)", async () => {
    const sharing = getDashboardSharingOutput({ dashboardId: pulumi.output(dashboardId) }, options);
    expect(await pulumi.isSecret(sharing)).toBe(true);
    const token = sharing.apply((s) => s.access_token);
    expect(await pulumi.isSecret(token)).toBe(true);
    expect(await settled(token)).toBe((await getDashboardSharing({ dashboardId }, options)).access_token);

    const project = getProjectOutput({ id: pulumi.output(emu.projectId) }, options);
    expect(await pulumi.isSecret(project)).toBe(true);
    expect((await settled(project)).api_token).toMatch(/^phc_/);
    // The typed fields lift (no index signature in the Output's type): `.id` is an Output<number>.
    const liftedId: pulumi.Output<number> = project.id;
    expect(await settled(liftedId)).toBe(emu.projectId);
  });

  it("waits for its Inputs: the request is sent once an argument resolves", async () => {
    let resolveId: (id: number) => void = () => undefined;
    const id = pulumi.output(new Promise<number>((resolve) => (resolveId = resolve)));
    const dash = getDashboardOutput({ id }, options);
    await new Promise((r) => setImmediate(r));
    expect(await requests()).toEqual([]);
    resolveId(dashboardId);
    expect((await settled(dash)).id).toBe(dashboardId);
    expect((await requests()).map((r) => r.method)).toEqual(["GET"]);
  });
});
