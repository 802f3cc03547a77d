import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadCheckpoint, saveCheckpoint } from "../../tools/stack/checkpoint";
import { envNameFor, readProject, readStackConfig, stackFilePath } from "../../tools/stack/project";
import { type Json, SECRET_SIG, SIG_KEY } from "../../tools/stack/values";

const dir = mkdtempSync(join(tmpdir(), "stack-project-"));
const root = join(__dirname, "..", "..");

describe("stack settings (Pulumi.<stack>.yaml)", () => {
  it("namespaces bare keys with the project, passes non-strings as JSON text, reads secure values from the environment", () => {
    const file = join(dir, "Pulumi.dev.yaml");
    writeFileSync(
      file,
      [
        "config:",
        "  pauseExport: true",
        "  acme:members: {a@example.com: admin}",
        "  posthog:host: http://127.0.0.1:1",
        "  acme:dbPassword:",
        "    secure: v1:AAAA",
      ].join("\n"),
    );
    const cfg = readStackConfig(file, "acme", { ACME_DB_PASSWORD: "pw", POSTHOG_API_KEY: "phx_key" });
    expect(cfg.values).toEqual({
      "acme:pauseExport": "true",
      "acme:members": '{"a@example.com":"admin"}',
      "posthog:host": "http://127.0.0.1:1",
      "acme:dbPassword": "pw",
      "posthog:apiKey": "phx_key",
    });
    expect(cfg.secretKeys).toEqual(["acme:dbPassword", "posthog:apiKey"]);
    expect(() => readStackConfig(file, "acme", {})).toThrow(/acme:dbPassword.*ACME_DB_PASSWORD/);
  });

  it("maps keys to environment variable names", () => {
    expect(envNameFor("posthog:apiKey")).toBe("POSTHOG_API_KEY");
    expect(envNameFor("posthog-gitops:samlX509Cert")).toBe("POSTHOG_GITOPS_SAML_X509_CERT");
  });

  it("treats a missing stack file as no settings and finds the example's stack files via stackConfigDir", () => {
    expect(readStackConfig(join(dir, "Pulumi.none.yaml"), "acme", {}).values).toEqual({});
    const project = readProject(root);
    expect(project).toMatchObject({ name: "posthog-gitops", main: "examples/gitops/index.ts" });
    expect(stackFilePath(root, project, "prod")).toBe(join(root, "examples", "gitops", "Pulumi.prod.yaml"));
    const prod = readStackConfig(stackFilePath(root, project, "prod"), project.name, {});
    expect(prod.values["posthog-gitops:pauseBatchExport"]).toBe("false");
    const dev = readStackConfig(stackFilePath(root, project, "dev"), project.name, {});
    expect(dev.values["posthog-gitops:pauseBatchExport"]).toBe("true");
  });
});

describe("checkpoint", () => {
  const saved = process.env.PULUMI_CONFIG_PASSPHRASE;
  afterEach(() => {
    if (saved === undefined) delete process.env.PULUMI_CONFIG_PASSPHRASE;
    else process.env.PULUMI_CONFIG_PASSPHRASE = saved;
  });
  const resource = {
    urn: "urn:pulumi:dev::p::t::n",
    type: "t",
    name: "n",
    custom: true,
    id: "1",
    dependencies: [],
    inputs: { name: "x" },
    outputs: { name: "x", token: { [SIG_KEY]: SECRET_SIG, value: "s3cr3t-value" } },
    additionalSecretOutputs: ["token"],
  };

  it("stores secret values encrypted (random key file) and reads them back", () => {
    delete process.env.PULUMI_CONFIG_PASSPHRASE;
    const path = join(dir, "a.json");
    const token = resource.outputs.token as Json;
    saveCheckpoint(path, {
      version: 1,
      project: "p",
      stack: "dev",
      resources: [resource],
      // The stored provider configuration and a pending operation's inputs are encrypted too.
      providerConfig: { "posthog:apiKey": token, "posthog:host": "http://h" },
      pendingOperations: [
        {
          urn: resource.urn,
          type: resource.type,
          name: resource.name,
          operation: "creating",
          inputs: { token },
          startedAt: new Date(0).toISOString(),
        },
      ],
    });
    const text = readFileSync(path, "utf8");
    expect(text).not.toContain("s3cr3t-value");
    expect(text).toContain('"ciphertext": "v1:');
    const back = loadCheckpoint(path, "p", "dev");
    expect(back.resources[0]?.outputs.token).toEqual(token);
    expect(back.providerConfig?.["posthog:apiKey"]).toEqual(token);
    expect(back.pendingOperations[0]?.inputs.token).toEqual(token);
  });

  it("derives the key from PULUMI_CONFIG_PASSPHRASE and fails with a wrong one", () => {
    process.env.PULUMI_CONFIG_PASSPHRASE = "right";
    const path = join(dir, "b.json");
    saveCheckpoint(path, {
      version: 1,
      project: "p",
      stack: "dev",
      resources: [resource],
      pendingOperations: [],
    });
    expect(readFileSync(path, "utf8")).not.toContain("s3cr3t-value");
    expect(loadCheckpoint(path, "p", "dev").resources[0]?.outputs.token).toEqual(resource.outputs.token);
    process.env.PULUMI_CONFIG_PASSPHRASE = "wrong";
    expect(() => loadCheckpoint(path, "p", "dev")).toThrow();
  });
});
