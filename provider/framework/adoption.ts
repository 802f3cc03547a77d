/**
 * Adoption in a preview (issue 28, item 5): a resource new to the stack whose create takes over an existing object
 * (docs/how-it-works/adoption.md) is counted by the engine under "create", for the engine knows
 * only that the resource is new to the stack. So that the preview says what will happen, `check` (in a preview,
 * for a resource new to the stack with valid inputs) reads the object the create would adopt, with one read per
 * object and no write, and says which one it is: its kind, id and name. Each resource's card says how it reads it
 * (its `adoption` probe, in provider/resources/<kebab>.ts), or that its create adopts nothing a preview can name.
 * Nothing found, an input unknown during the preview, or a failed read: nothing is said (the create decides).
 */
import type { PostHogClient } from "../client";
import { UNKNOWN } from "./values";

/** What a create will adopt: the object's kind, id and name, and the input that makes it adopt. */
export interface Adoption {
  /** The kind of object, in PostHog's words: `project`, `dashboard`, `domain`, `invite`, `member`, `batch export`. */
  kind: string;
  id: string;
  /** The object's name as PostHog shows it (a member: their e-mail; an invite: its e-mail). */
  name: string;
  /** The input that makes the create adopt (`projectId`, `adopt: true`, …), or why it always adopts. */
  by: string;
  /** More to say (a soft-deleted dashboard is restored; the level a member has now), else undefined. */
  note?: string | undefined;
}

/** Whether `v` is a value known now (not the preview's unknown marker, not empty). */
export const known = (v: unknown): v is string | number =>
  (typeof v === "string" && v !== UNKNOWN && v !== "") || typeof v === "number";

/** The line a preview prints for an adoption by the resource `resource` (its Pulumi name) of type `type`. */
export function adoptionMessage(type: string, resource: string | undefined, a: Adoption): string {
  const who = resource === undefined ? type : `${type} "${resource}"`;
  const note = a.note === undefined ? "" : `, ${a.note}`;
  return (
    `${who} adopts the existing ${a.kind} ${a.id} ${JSON.stringify(a.name)}${note} (${a.by}): nothing is ` +
    `created in PostHog; the engine counts it under "create" because the resource is new to the stack`
  );
}

/**
 * What a preview says of a create that takes over an existing object: `probe` reads the object the create would
 * adopt, as the create reads it (one GET or one list read; never writes), else undefined; `notice`, when nothing is
 * adopted, a warning the preview prints (an Invite whose address has a pending invite). `"never"`: the resource's
 * create adopts nothing a preview can name (said so, explicitly, on its card: provider/framework/card.ts).
 */
export type AdoptionProbe =
  | {
      probe(api: PostHogClient, inputs: Record<string, unknown>): Promise<Adoption | undefined>;
      notice?(
        api: PostHogClient,
        inputs: Record<string, unknown>,
        resource: string | undefined,
      ): Promise<string | undefined>;
    }
  | "never";

/**
 * In a preview, says on the provider host's standard output (the CLI shows it in the preview's output) which
 * existing object the create of `type` will adopt (its card's `probe`), if any; else the probe's `notice` as a
 * `warning:` line. Read errors say nothing: the create decides, as before. One request at most; never writes.
 */
export async function announceAdoption(
  adoption: AdoptionProbe | undefined,
  type: string,
  resource: string | undefined,
  api: PostHogClient,
  inputs: Record<string, unknown>,
): Promise<void> {
  if (adoption === undefined || adoption === "never") return;
  let found: Adoption | undefined;
  let notice: string | undefined;
  try {
    found = await adoption.probe(api, inputs);
    if (!found) notice = await adoption.notice?.(api, inputs, resource);
  } catch {
    return;
  }
  if (found) console.log(`info: ${adoptionMessage(type, resource, found)}`);
  if (notice) console.log(`warning: ${notice}`);
}
