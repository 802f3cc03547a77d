/**
 * Issue 50, item 7: adding a resource, shown. In a temporary copy of the tree (what the build and the generators
 * read; node_modules linked), the hand parts of CONTRIBUTING.md's "Adding a resource" are written for a small new
 * resource, PostHog's Annotation (test/tools/add-resource-files.ts: an emulator route, a client module, the card, its
 * line in the one list), then `npm run generate` (tools/generate.mts, without the SDKs of sdk-gen/: their Go tools
 * take minutes to build, and they are written from schema.json alone). With no other edit: exactly the generated
 * files change, and a second run would write nothing; schema.json, the SDK class, the resource page's tables, the
 * docs' and README's lists of resources have it; the provider plugin imports one (marked adopted) and its destroy
 * keeps it, through the plugin's gRPC surface (as the engine calls it); the preview's check through the real
 * dynamic-provider host says the create adopts the existing one.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ProviderHost, startProviderHost } from "../../tools/provider-host";
import { loadShim, serializeProvider, stackConfigOf } from "../provider/harness";
import { HAND_EDITS, HAND_FILES } from "./add-resource-files";

const root = join(__dirname, "..", "..");
const tree = mkdtempSync(join(tmpdir(), "add-resource-"));
/** What the build (tsconfig.build.json) and the generators read, copied; the Go tools of tools/pulumi-cli are not. */
const COPIED = [
  "provider",
  "sdk",
  "emulator",
  "tools",
  "bench",
  "docs",
  "schema.json",
  "package.json",
  "tsconfig.json",
  "tsconfig.build.json",
  "biome.json",
  "README.md",
];
/** What `npm run generate` writes for the new resource: nothing else of the tree changes. */
const GENERATED = [
  "README.md",
  "docs/_index.md",
  "docs/resources/annotation.md",
  "provider/providers.ts",
  "provider/resources/modules.ts",
  "schema.json",
  "sdk/annotation.ts",
  "sdk/args.ts",
  "sdk/output-keys.ts",
  "sdk/resources.ts",
];

/** `node args…` in the copy: exit code and output. */
function node(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: tree, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (d: Buffer) => {
      output += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      output += d.toString();
    });
    child.on("close", (code) => resolve({ code, output }));
  });
}

/** A hash of every file of the copy but dist/ and node_modules, by path. */
function hashes(dir = tree, out = new Map<string, string>()): Map<string, string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory()) {
      if (!(dir === tree && (e.name === "dist" || e.name === "node_modules"))) hashes(path, out);
    } else if (e.isFile())
      out.set(relative(tree, path), createHash("sha256").update(readFileSync(path)).digest("hex"));
  }
  return out;
}

const read = (path: string) => readFileSync(join(tree, path), "utf8");
const load = createRequire(join(tree, "package.json"));

let generated: { code: number | null; output: string };
let changed: string[];
/** How long the copy, the hand edits and `npm run generate` took, in seconds (the report's cost). */
let seconds = 0;

beforeAll(async () => {
  const started = Date.now();
  for (const p of COPIED)
    cpSync(join(root, p), join(tree, p), {
      recursive: true,
      filter: (src) => !relative(root, src).startsWith(join("tools", "pulumi-cli")),
    });
  symlinkSync(join(root, "node_modules"), join(tree, "node_modules"), "dir");
  for (const f of HAND_FILES) writeFileSync(join(tree, f.path), f.text);
  for (const e of HAND_EDITS) {
    const text = read(e.path);
    const at = text.indexOf(e.after);
    if (at < 0)
      throw new Error(`${e.path} no longer holds ${JSON.stringify(e.after)}: adapt add-resource-files.ts`);
    writeFileSync(
      join(tree, e.path),
      text.slice(0, at + e.after.length) + e.insert + text.slice(at + e.after.length),
    );
  }
  const before = hashes();
  generated = await node([join(tree, "tools", "generate.mts"), "--skip-gen-sdk"]);
  const after = hashes();
  changed = [...after.keys()].filter((p) => before.get(p) !== after.get(p)).sort();
  seconds = (Date.now() - started) / 1000;
}, 240_000);

afterAll(() => {
  process.stdout.write(`add-resource: copy, hand edits and npm run generate took ${seconds.toFixed(1)} s\n`);
  rmSync(tree, { recursive: true, force: true });
});

describe("a new resource: its card, its line in the list, what it calls; npm run generate does the rest", () => {
  it("npm run generate succeeds, writes exactly the generated files, and a second run would write nothing", async () => {
    expect(generated.code, generated.output).toBe(0);
    expect(changed).toEqual(GENERATED);
    // The generators' own checks, from the build generate left: current.
    const checks = await Promise.all([
      node([join("dist", "tools", "schema.js"), "--check"]),
      node([join("dist", "tools", "codegen.js"), "--check"]),
    ]);
    for (const c of checks) expect(c.code, c.output).toBe(0);
  }, 120_000);

  it("schema.json, the SDK class and the package's exports have it", () => {
    const schema = JSON.parse(read("schema.json")) as {
      resources: Record<string, { inputProperties: object; requiredInputs: string[]; properties: object }>;
    };
    const r = schema.resources["posthog:index:Annotation"];
    expect(Object.keys(r?.inputProperties ?? {}).sort()).toEqual(["annotationId", "content", "projectId"]);
    expect(r?.requiredInputs).toEqual(["content"]);
    expect(Object.keys(r?.properties ?? {}).sort()).toEqual(["annotationId", "content", "projectId"]);
    expect(read("sdk/annotation.ts")).toContain("export class Annotation extends pulumi.dynamic.Resource {");
    expect(read("sdk/args.ts")).toContain("export interface AnnotationArgs {");
    expect(typeof (load("./dist/sdk/index.js") as Record<string, unknown>).Annotation).toBe("function");
    const provider = (load("./dist/provider/index.js") as Record<string, { create?: unknown }>).Annotation;
    expect(typeof provider?.create).toBe("function");
  });

  it("the docs: its page's tables, the docs' table of resources, the README's links and import ids", () => {
    const page = read("docs/resources/annotation.md");
    expect(page).toMatch(/^# Annotation\n/);
    expect(page).toContain("| `content` | `string` | yes |");
    expect(page).toContain("| `annotationId` | `number` |");
    expect(page).toContain('new posthog.Annotation("launch", { content: "Launch" });');
    expect(read("docs/_index.md")).toContain(
      "| [Annotation](resources/annotation.md) | a note on a project's graphs |",
    );
    expect(read("README.md")).toContain("[Annotation](docs/resources/annotation.md)");
    expect(read("README.md")).toContain("  | Annotation | `<projectId>/<annotationId>` |");
  });

  describe("against the copy's emulator", () => {
    let emu: {
      url: string;
      apiKey: string;
      organizationId: string;
      projectId: number;
      close(): Promise<void>;
    };
    const hosts: ProviderHost[] = [];
    /** A request to the copy's emulator with its key: status and JSON body. */
    const api = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${emu.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${emu.apiKey}`, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await res.text();
      return { status: res.status, body: (text ? JSON.parse(text) : undefined) as Record<string, unknown> };
    };
    const annotations = () => `/api/projects/${emu.projectId}/annotations/`;
    /** The API requests since the last call (`METHOD path`), then a cleared log. */
    const requests = async () => {
      const log = (await api("GET", "/_emulator/requests")).body as unknown as {
        method: string;
        path: string;
      }[];
      await api("DELETE", "/_emulator/requests");
      return log.map((r) => `${r.method} ${r.path}`);
    };

    beforeAll(async () => {
      const { startEmulator } = load("./dist/emulator/index.js") as typeof import("../../emulator/index");
      emu = await startEmulator({ rateLimit: false });
    }, 60_000);
    afterAll(async () => {
      await Promise.all(hosts.map((h) => h.close()));
      await emu?.close();
    });

    it("the plugin imports one made outside Pulumi, marked adopted, and its destroy keeps it", async () => {
      const made = await api("POST", annotations(), { content: "Launch" });
      expect(made.status).toBe(201);
      const id = String(made.body.id);
      const plugin = await startProviderHost({
        cwd: tree,
        main: join(tree, "dist/provider/adapters/plugin/main.js"),
      });
      hosts.push(plugin);
      await plugin.configure(
        {
          apiKey: emu.apiKey,
          host: emu.url,
          organizationId: emu.organizationId,
          projectId: String(emu.projectId),
        },
        ["apiKey"],
      );
      const urn = "urn:pulumi:dev::add-resource::posthog:index:Annotation::launch";
      // `pulumi import posthog:index:Annotation launch <projectId>/<id>`: a read with no outputs.
      const imported = await plugin.read(`${emu.projectId}/${id}`, urn, {});
      expect(imported.id).toBe(id);
      expect(imported.props).toMatchObject({ content: "Launch", annotationId: Number(id), adopted: true });
      await requests();
      await plugin.delete(imported.id, urn, imported.props);
      expect((await requests()).filter((r) => !r.startsWith("GET "))).toEqual([]);
      expect((await api("GET", `${annotations()}${id}/`)).status).toBe(200);
    }, 60_000);

    it("the preview says which existing one the create adopts (the real dynamic-provider host)", async () => {
      const made = await api("POST", annotations(), { content: "Release notes" });
      let output = "";
      const host = await startProviderHost({
        cwd: tree,
        project: "add-resource",
        onOutput: (text) => {
          output += text;
        },
      });
      hosts.push(host);
      await host.configure(stackConfigOf(emu), ["posthog:apiKey"]);
      const provider = await serializeProvider("Annotation", loadShim(join(tree, "dist", "sdk")));
      const checked = await host.check(
        "urn:pulumi:dev::add-resource::pulumi-nodejs:dynamic/posthog:Annotation::notes",
        {},
        {
          content: "Release notes",
          annotationId: made.body.id,
          __provider: provider,
          __resource: { name: "notes", stack: "add-resource/dev", preview: true },
        },
      );
      expect(checked.failures).toEqual([]);
      await expect
        .poll(() => output)
        .toContain(
          `Annotation "notes" adopts the existing annotation ${made.body.id} "Release notes" (annotationId)`,
        );
      expect(existsSync(join(tree, "dist", "sdk", "annotation.js"))).toBe(true);
    }, 60_000);
  });
});
