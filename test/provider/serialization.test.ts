/**
 * The serialized `__provider` of every resource: small, key-free, free of any path of the machine, identical
 * across package versions and checkouts, and resolving the INSTALLED provider code in the provider host (or
 * this package itself, from a program inside a checkout). Also: connection settings from the environment at
 * call time when the stack config has none.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startProviderHost } from "../../tools/provider-host";
import {
  failure,
  loadShim,
  repoRoot,
  serializeProvider,
  stackConfigOf,
  startTestEmulator,
  type TestEmulator,
  urnOf,
} from "./harness";

const nativeRequire = createRequire(__filename);
const { resourceNames } = nativeRequire(join(repoRoot, "dist", "provider", "index.js")) as {
  resourceNames: readonly string[];
};

/** Installs this checkout's compiled package as `<dir>/node_modules/pulumi-posthog` with another version. */
function installCopy(version: string): { dir: string; sdkDir: string } {
  const dir = mkdtempSync(join(tmpdir(), "posthog-install-"));
  const pkgDir = join(dir, "node_modules", "pulumi-posthog");
  for (const part of ["sdk", "provider"])
    cpSync(join(repoRoot, "dist", part), join(pkgDir, "dist", part), { recursive: true });
  const pkg = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as Record<string, unknown>;
  writeFileSync(join(pkgDir, "package.json"), JSON.stringify({ ...pkg, version }));
  // its dependencies (zod, undici, @pulumi/pulumi) come from this checkout
  symlinkSync(join(repoRoot, "node_modules"), join(pkgDir, "node_modules"), "dir");
  return { dir, sdkDir: join(pkgDir, "dist", "sdk") };
}

/**
 * A second checkout of this repository at another path, as a CI runner or a colleague has it: package.json,
 * the compiled `dist/sdk` and `dist/provider`, `node_modules` (a symlink to this checkout's), and the empty
 * program directory `examples/gitops`, where the engine starts the provider host.
 */
function checkoutCopy(): { dir: string; programDir: string; sdkDir: string } {
  const dir = mkdtempSync(join(tmpdir(), "posthog-checkout-"));
  for (const part of ["sdk", "provider"])
    cpSync(join(repoRoot, "dist", part), join(dir, "dist", part), { recursive: true });
  cpSync(join(repoRoot, "package.json"), join(dir, "package.json"));
  symlinkSync(join(repoRoot, "node_modules"), join(dir, "node_modules"), "dir");
  const programDir = join(dir, "examples", "gitops");
  mkdirSync(programDir, { recursive: true });
  return { dir, programDir, sdkDir: join(dir, "dist", "sdk") };
}

/** Every string literal of `text` that is an absolute path (POSIX `/…`, Windows `C:\…` or `\\…`). */
const absolutePaths = (text: string) =>
  [...text.matchAll(/"((?:\/|[A-Za-z]:\\\\|\\\\\\\\)[^"]*)"/g)].map((m) => m[1]);

let emu: TestEmulator;
let v1: { dir: string; sdkDir: string };
let v2: { dir: string; sdkDir: string };

beforeAll(async () => {
  emu = await startTestEmulator();
  v1 = installCopy("0.1.0");
  v2 = installCopy("9.9.9");
});
afterAll(async () => {
  await emu?.close();
  for (const c of [v1, v2]) if (c) rmSync(c.dir, { recursive: true, force: true });
});

describe("the serialized __provider of every resource", () => {
  it("is at most 2,150 bytes, holds no API key and no captured config, and only requires the provider module", async () => {
    process.env.POSTHOG_API_KEY = emu.apiKey; // present in the program's environment: must not leak
    try {
      for (const name of resourceNames) {
        const text = await serializeProvider(name);
        expect(text.length, name).toBeLessThanOrEqual(2150);
        expect(text).not.toContain(emu.apiKey);
        expect(text).not.toContain("phx_");
        expect(text).toContain(`s: "pulumi-posthog/provider", n: "${name}"`);
        expect(text.match(/require\([^)]*\)/g)).toEqual(['require("node:module")']);
      }
    } finally {
      delete process.env.POSTHOG_API_KEY;
    }
  });

  // Regression (issue 11, point 7): inside a checkout the specifier was the absolute path of its
  // dist/provider/index.js, so refresh/destroy from any other path failed with MODULE_NOT_FOUND.
  it("names no path of the machine, from a checkout as from an installed package", async () => {
    const here = loadShim();
    expect(here.providerModule).toBe("pulumi-posthog/provider");
    const machinePaths = [repoRoot, homedir(), tmpdir(), process.cwd(), v1.dir];
    for (const name of resourceNames) {
      const text = await serializeProvider(name, here);
      expect(absolutePaths(text), name).toEqual([]);
      for (const path of machinePaths) expect(text, name).not.toContain(path);
      expect(text).toBe(await serializeProvider(name, loadShim(v1.sdkDir)));
    }
  });

  it("is identical across package versions when installed, and names pulumi-posthog/provider", async () => {
    const a = loadShim(v1.sdkDir);
    const b = loadShim(v2.sdkDir);
    expect(a.providerModule).toBe("pulumi-posthog/provider");
    for (const name of resourceNames) {
      const t1 = await serializeProvider(name, a);
      const t2 = await serializeProvider(name, b);
      expect(t1).toBe(t2);
      expect(t1).toContain('s: "pulumi-posthog/provider"');
      expect(t1.length).toBeLessThanOrEqual(2150);
    }
  });

  // Regression (issue 11, point 7): `up` from one checkout, then refresh and destroy from another path.
  it("created from one checkout, is read and deleted by a host in another checkout after the first is gone", async () => {
    const first = checkoutCopy();
    const second = checkoutCopy();
    const config = stackConfigOf(emu);
    const urn = urnOf("Dashboard", "moved");
    let created: { id: string; outs: Record<string, unknown> };
    let inputs: Record<string, unknown>;
    try {
      const provider = await serializeProvider("Dashboard", loadShim(first.sdkDir));
      const up = await startProviderHost({ cwd: first.programDir, deadlineMs: 30_000 });
      try {
        await up.configure(config, ["posthog:apiKey"]);
        const checked = await up.check(urn, {}, { name: "Moved between checkouts", __provider: provider });
        expect(checked.failures).toEqual([]);
        inputs = checked.inputs;
        created = await up.create(urn, inputs);
      } finally {
        await up.close();
      }
    } finally {
      rmSync(first.dir, { recursive: true, force: true }); // the first runner is gone
    }
    const host = await startProviderHost({ cwd: second.programDir, deadlineMs: 30_000 });
    try {
      await host.configure(config, ["posthog:apiKey"]);
      // Read and Delete load the provider from the stored outputs' __provider, as the engine sends them
      const read = await host.read(created.id, urn, created.outs, inputs);
      expect(read.props).toMatchObject({ name: "Moved between checkouts", deleted: false });
      await host.delete(created.id, urn, read.props);
      const gone = await emu.api("GET", `/api/projects/${emu.projectId}/dashboards/${created.id}/`);
      expect(gone.status).toBe(404);
    } finally {
      await host.close();
      rmSync(second.dir, { recursive: true, force: true });
    }
  });

  it("runs the installed package's code in the host, with settings from the environment at call time", async () => {
    // State written by version 0.1.0; the program directory now has 9.9.9 installed (an upgrade).
    const provider = await serializeProvider("Dashboard", loadShim(v1.sdkDir));
    const host = await startProviderHost({
      cwd: v2.dir,
      // no project configured: the key's current project is resolved to its id at create
      env: { POSTHOG_API_KEY: emu.apiKey, POSTHOG_HOST: emu.url, POSTHOG_PROJECT_ID: "" },
    });
    try {
      await host.configure({ "aws:region": "eu-west-1" }); // stack config without posthog keys
      const urn = urnOf("Dashboard", "installed");
      const checked = await host.check(urn, {}, { name: "From the installed package", __provider: provider });
      expect(checked.failures).toEqual([]);
      const created = await host.create(urn, checked.inputs);
      expect(created.outs.projectId).toBe(String(emu.projectId));
      const read = await host.read(created.id, urn, created.outs, checked.inputs);
      expect(read.props).toMatchObject({ name: "From the installed package", deleted: false });
      await host.delete(created.id, urn, read.props);
      expect((await emu.api("GET", `/api/projects/${emu.projectId}/dashboards/${created.id}/`)).status).toBe(
        404,
      );
    } finally {
      await host.close();
    }
  });

  it("fails create with a clear message when no API key is configured anywhere", async () => {
    const provider = await serializeProvider("Domain");
    const host = await startProviderHost({ cwd: repoRoot, env: { POSTHOG_API_KEY: "" } });
    try {
      await host.configure({});
      const urn = urnOf("Domain", "nokey");
      const checked = await host.check(urn, {}, { domain: "nokey.example.com", __provider: provider });
      expect(checked.failures).toEqual([]); // check needs no key (no HTTP)
      const msg = await failure(host.create(urn, checked.inputs));
      expect(msg).toContain("posthog:apiKey");
      expect(msg).toContain("POSTHOG_API_KEY");
    } finally {
      await host.close();
    }
  });
});
