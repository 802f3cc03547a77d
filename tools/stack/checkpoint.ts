/**
 * The stand-in engine's checkpoint: a JSON file with one entry per resource, kept between runs
 * (default `.stack-state/<stack>.json`). Secret values are never written in clear text: each is stored as
 * `{"4dabf…": "1b47…", "ciphertext": "v1:<iv>:<tag>:<data>"}` (AES-256-GCM, base64), the same shape Pulumi's
 * own state files use. The key is derived (scrypt) from `PULUMI_CONFIG_PASSPHRASE` when set, else it is a
 * random 32-byte key kept beside the checkpoint in `<state>.key` (mode 0600).
 */
import { createCipheriv, createDecipheriv, randomBytes, scryptSync } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { z } from "zod";
import { isSecret, type Json, type Props, SECRET_SIG, SIG_KEY } from "./values";

const JsonSchema: z.ZodType<Json> = z.json() as z.ZodType<Json>;
const PropsSchema = z.record(z.string(), JsonSchema);

/** One resource in the checkpoint. `inputs`/`outputs` hold secrets in their wire form (encrypted on disk). */
export const ResourceStateSchema = z.object({
  urn: z.string(),
  type: z.string(),
  name: z.string(),
  custom: z.boolean(),
  id: z.string().optional(),
  parent: z.string().optional(),
  dependencies: z.array(z.string()).default([]),
  inputs: PropsSchema.default({}),
  outputs: PropsSchema.default({}),
  additionalSecretOutputs: z.array(z.string()).default([]),
  deleteBeforeReplace: z.boolean().optional(),
  /** Resource option `protect`: the engine refuses to delete (or replace) it. */
  protect: z.boolean().optional(),
  /** Resource option `retainOnDelete`: deleting it only drops it from the checkpoint. */
  retainOnDelete: z.boolean().optional(),
  /** Resource option `deletedWith`: its Delete is skipped when this URN is deleted in the same run. */
  deletedWith: z.string().optional(),
  /** Resource option `customTimeouts` (Go durations such as "5m"); none means no deadline. */
  customTimeouts: z
    .object({ create: z.string(), update: z.string(), delete: z.string(), read: z.string() })
    .partial()
    .optional(),
  /**
   * The old half of a create-before-delete replacement, still to be deleted (the engine's `Delete: true`):
   * the next run deletes it.
   */
  delete: z.boolean().optional(),
});
export type ResourceState = z.output<typeof ResourceStateSchema>;

/**
 * A provider operation that had started and not finished when the checkpoint was written (the engine's
 * `resource.Operation`, pkg/resource/deploy/snapshot.go): a run that was killed or stopped during it leaves it
 * here, so the next run can say what may have happened.
 */
export const PendingOperationSchema = z.object({
  urn: z.string(),
  type: z.string(),
  name: z.string(),
  operation: z.enum(["creating", "updating", "deleting"]),
  /** The id, for updating/deleting. */
  id: z.string().optional(),
  /** The inputs being applied (secrets in wire form, encrypted on disk). */
  inputs: PropsSchema.default({}),
  /** When the operation started (ISO 8601). */
  startedAt: z.string(),
});
export type PendingOperation = z.output<typeof PendingOperationSchema>;

export const CheckpointSchema = z.object({
  version: z.literal(1),
  project: z.string(),
  stack: z.string(),
  /** scrypt salt (base64) when the key comes from PULUMI_CONFIG_PASSPHRASE. */
  salt: z.string().optional(),
  /** Resources in dependency order: every resource comes after those it depends on and its parent. */
  resources: z.array(ResourceStateSchema),
  /**
   * The configuration the dynamic-provider host was configured with at the last preview-free run that ran the
   * program (the engine stores it as the default provider's inputs): standalone refresh and destroy use it.
   * Namespaced keys; secret values in wire form (encrypted on disk).
   */
  providerConfig: PropsSchema.optional(),
  /** Provider operations under way when the checkpoint was written (see {@link PendingOperationSchema}). */
  pendingOperations: z.array(PendingOperationSchema).default([]),
});
export type Checkpoint = z.output<typeof CheckpointSchema>;

/** Keys derived from a passphrase, by `salt:passphrase` (scrypt costs ~50 ms; the checkpoint is saved per step). */
const derived = new Map<string, Buffer>();

function keyFor(statePath: string, salt: string | undefined): { key: Buffer; salt?: string } {
  const passphrase = process.env.PULUMI_CONFIG_PASSPHRASE;
  if (passphrase !== undefined && passphrase !== "") {
    const s = salt ?? randomBytes(16).toString("base64");
    const id = `${s}:${passphrase}`;
    let key = derived.get(id);
    if (!key) {
      key = scryptSync(passphrase, Buffer.from(s, "base64"), 32);
      derived.set(id, key);
    }
    return { key, salt: s };
  }
  const keyFile = `${statePath}.key`;
  if (!existsSync(keyFile)) {
    mkdirSync(dirname(keyFile), { recursive: true });
    writeFileSync(keyFile, randomBytes(32).toString("base64"), { mode: 0o600 });
  }
  return { key: Buffer.from(readFileSync(keyFile, "utf8").trim(), "base64") };
}

function mapSecrets(v: Json, f: (secretObject: Record<string, Json>) => Json): Json {
  if (Array.isArray(v)) return v.map((x) => mapSecrets(x, f));
  if (v !== null && typeof v === "object") {
    if (v[SIG_KEY] === SECRET_SIG) return f(v);
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, mapSecrets(x, f)]));
  }
  return v;
}

function mapProps(p: Props, f: (secretObject: Record<string, Json>) => Json): Props {
  return Object.fromEntries(Object.entries(p).map(([k, v]) => [k, mapSecrets(v, f)]));
}

/** An empty checkpoint for a stack. */
export function emptyCheckpoint(project: string, stack: string): Checkpoint {
  return { version: 1, project, stack, resources: [], pendingOperations: [] };
}

/** Applies `f` to every property bag of a checkpoint that may hold secrets. */
function mapCheckpoint(cp: Checkpoint, f: (p: Props) => Props): Checkpoint {
  return {
    ...cp,
    resources: cp.resources.map((r) => ({ ...r, inputs: f(r.inputs), outputs: f(r.outputs) })),
    pendingOperations: cp.pendingOperations.map((o) => ({ ...o, inputs: f(o.inputs) })),
    ...(cp.providerConfig ? { providerConfig: f(cp.providerConfig) } : {}),
  };
}

/**
 * Reads the checkpoint at `path` (an empty one when the file does not exist) and decrypts its secrets
 * back into wire form `{sig, value}`. Throws when the file is not a checkpoint or the key is wrong.
 */
export function loadCheckpoint(path: string, project: string, stack: string): Checkpoint {
  if (!existsSync(path)) return emptyCheckpoint(project, stack);
  const cp = CheckpointSchema.parse(JSON.parse(readFileSync(path, "utf8")));
  if (!JSON.stringify(cp).includes('"ciphertext"')) return cp;
  const { key } = keyFor(path, cp.salt);
  const decrypt = (o: Record<string, Json>): Json => {
    const [, iv, tag, data] = String(o.ciphertext).split(":");
    const d = createDecipheriv("aes-256-gcm", key, Buffer.from(iv ?? "", "base64"));
    d.setAuthTag(Buffer.from(tag ?? "", "base64"));
    const text = Buffer.concat([d.update(Buffer.from(data ?? "", "base64")), d.final()]).toString("utf8");
    return { [SIG_KEY]: SECRET_SIG, value: JSON.parse(text) as Json };
  };
  return mapCheckpoint(cp, (p) => mapProps(p, decrypt));
}

/** Writes the checkpoint atomically (temp file + rename), encrypting every secret value. */
export function saveCheckpoint(path: string, cp: Checkpoint): void {
  const hasSecrets = JSON.stringify(cp).includes(SECRET_SIG);
  let out: Checkpoint = cp;
  if (hasSecrets) {
    const { key, salt } = keyFor(path, cp.salt);
    const encrypt = (o: Record<string, Json>): Json => {
      if (!isSecret(o)) return o;
      const iv = randomBytes(12);
      const c = createCipheriv("aes-256-gcm", key, iv);
      const data = Buffer.concat([c.update(JSON.stringify(o.value), "utf8"), c.final()]);
      const ct = ["v1", iv, c.getAuthTag(), data].map((x) =>
        typeof x === "string" ? x : x.toString("base64"),
      );
      return { [SIG_KEY]: SECRET_SIG, ciphertext: ct.join(":") };
    };
    out = { ...mapCheckpoint(cp, (p) => mapProps(p, encrypt)), ...(salt === undefined ? {} : { salt }) };
  }
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, `${JSON.stringify(out, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, path);
}
