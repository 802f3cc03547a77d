/**
 * Issue 51, item 4: a YAML program that declares the package as docs/installation-configuration.md says
 * (`sdks/posthog.yaml`, {@link yamlDeclaration}) and has no plugin installed gets it from the GitHub release that
 * schema.json's `pluginDownloadURL` names, not from get.pulumi.com (where the CLI looks when the declaration has
 * no `downloadUrl`). Nothing leaves the machine: HTTPS_PROXY is a closed local port, so each attempt fails at once
 * naming the URL it tried (`proxyconnect … connection refused`); the CLI's five attempts take about 2.5 s.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PULUMI_BIN, pulumi } from "../../tools/pulumi";
import { requireBuilt, root, yamlDeclaration } from "./support";

const work = mkdtempSync(join(tmpdir(), "download-url-"));
const version = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string }).version;

afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A local TCP port that nothing listens on (one the system gave, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  const { port } = server.address() as { port: number };
  await new Promise((ok) => server.close(ok));
  return port;
}

describe("the YAML package declaration of the docs", () => {
  it("is the one the docs give (each key in the README, the file's text on the installation page)", () => {
    const declaration = yamlDeclaration();
    const page = readFileSync(join(root, "docs", "installation-configuration.md"), "utf8");
    expect(page).toContain(`printf '${declaration.replaceAll("\n", "\\n")}' > sdks/posthog.yaml`);
    const readme = readFileSync(join(root, "README.md"), "utf8");
    for (const line of declaration.trimEnd().split("\n")) expect(readme).toContain(`\`${line}\``);
  });

  it("makes `pulumi plugin install` fetch the plugin from the GitHub release (api.github.com), not get.pulumi.com", async () => {
    requireBuilt([join(PULUMI_BIN, "pulumi-language-yaml")]);
    const projectDir = join(work, "yaml");
    mkdirSync(join(projectDir, "sdks"), { recursive: true });
    // No `plugins:` path: the plugin must come from where the declaration says.
    writeFileSync(
      join(projectDir, "Pulumi.yaml"),
      "name: posthog-download-url\nruntime: yaml\nresources:\n  web:\n    type: posthog:index:Project\n    properties:\n      name: web\n",
    );
    writeFileSync(join(projectDir, "sdks", "posthog.yaml"), yamlDeclaration());
    const proxy = `http://127.0.0.1:${await closedPort()}`;
    const r = await pulumi(["plugin", "install"], {
      cwd: projectDir,
      stateDir: join(work, "state"),
      env: {
        // Downloads allowed (tools/pulumi.ts disables them), through a proxy that refuses every connection.
        PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: undefined,
        HTTPS_PROXY: proxy,
        https_proxy: proxy,
        HTTP_PROXY: proxy,
        http_proxy: proxy,
        NO_PROXY: undefined,
        no_proxy: undefined,
      },
      timeoutMs: 60_000,
    });
    const output = `${r.stdout}${r.stderr}`;
    expect(r.exitCode, output).not.toBe(0);
    expect(output).toContain(
      `Get "https://api.github.com/repos/pulumi-posthog/pulumi-posthog/releases/tags/v${version}": proxyconnect`,
    );
    expect(output).not.toContain("get.pulumi.com");
  }, 60_000);
});
