/**
 * Reads a Pulumi project (`Pulumi.yaml`) and a stack's settings (`Pulumi.<stack>.yaml`) the way the Pulumi CLI
 * does, with one deliberate difference: there is no secrets provider in this stand-in, so `secure:` values
 * (and `posthog:apiKey` when the stack file does not set it) are taken from the environment.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { z } from "zod";

export const ProjectFileSchema = z.object({
  name: z.string().min(1),
  runtime: z.union([
    z.literal("nodejs"),
    z.object({ name: z.literal("nodejs"), options: z.record(z.string(), z.unknown()).optional() }),
  ]),
  main: z.string().optional(),
  /** Directory of the Pulumi.<stack>.yaml files, relative to Pulumi.yaml (default: the same directory). */
  stackConfigDir: z.string().optional(),
  description: z.string().optional(),
});
export type ProjectFile = z.output<typeof ProjectFileSchema>;

const ConfigValueSchema = z.union([z.object({ secure: z.string() }), z.unknown()]);
export const StackFileSchema = z
  .object({ config: z.record(z.string(), ConfigValueSchema).optional() })
  .loose()
  .nullable();

/** A stack's resolved configuration: namespaced keys → string values, and which keys are secret. */
export interface StackConfig {
  values: Record<string, string>;
  secretKeys: string[];
}

/**
 * The environment variable a secure config key is read from: `posthog:apiKey` → `POSTHOG_API_KEY`,
 * `acme-gitops:samlCert` → `ACME_GITOPS_SAML_CERT`.
 */
export function envNameFor(key: string): string {
  return key
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/[^A-Za-z0-9]+/g, "_")
    .toUpperCase();
}

/** Reads `<dir>/Pulumi.yaml`. Throws naming the file when it is missing or not a nodejs project. */
export function readProject(dir: string): ProjectFile {
  const file = join(dir, "Pulumi.yaml");
  if (!existsSync(file)) throw new Error(`no Pulumi.yaml in ${dir}`);
  const parsed = ProjectFileSchema.safeParse(parse(readFileSync(file, "utf8")));
  if (!parsed.success) throw new Error(`${file}: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

/** The stack settings file: `<dir>/<stackConfigDir>/Pulumi.<stack>.yaml`. */
export function stackFilePath(dir: string, project: ProjectFile, stack: string): string {
  return join(dir, project.stackConfigDir ?? ".", `Pulumi.${stack}.yaml`);
}

/**
 * Reads a stack settings file, e.g. `Pulumi.dev.yaml` (an absent file means no settings). Keys without a namespace get the
 * project's (`batchExportPaused` → `<project>:batchExportPaused`), non-string values become JSON text, as the
 * Pulumi CLI passes them. A `secure:` value is read from the environment variable named by
 * {@link envNameFor}; throws naming that variable when it is unset.
 */
export function readStackConfig(
  file: string,
  project: string,
  env: NodeJS.ProcessEnv = process.env,
): StackConfig {
  const values: Record<string, string> = {};
  const secretKeys: string[] = [];
  if (existsSync(file)) {
    const parsed = StackFileSchema.safeParse(parse(readFileSync(file, "utf8")));
    if (!parsed.success) throw new Error(`${file}: ${z.prettifyError(parsed.error)}`);
    for (const [rawKey, v] of Object.entries(parsed.data?.config ?? {})) {
      const key = rawKey.includes(":") ? rawKey : `${project}:${rawKey}`;
      if (typeof v === "object" && v !== null && "secure" in v) {
        const name = envNameFor(key);
        const fromEnv = env[name];
        if (fromEnv === undefined || fromEnv === "") {
          throw new Error(
            `${file}: ${key} is a secure value; this stand-in has no secrets provider, so set it in the environment variable ${name}`,
          );
        }
        values[key] = fromEnv;
        secretKeys.push(key);
      } else {
        values[key] = typeof v === "string" ? v : JSON.stringify(v);
      }
    }
  }
  const apiKey = env.POSTHOG_API_KEY;
  if (values["posthog:apiKey"] === undefined && apiKey !== undefined && apiKey !== "") {
    values["posthog:apiKey"] = apiKey;
    secretKeys.push("posthog:apiKey");
  }
  return { values, secretKeys: [...new Set(secretKeys)].sort() };
}
