/**
 * The resource card: everything about one resource in one typed value, declared in its own file
 * (provider/resources/<kebab>.ts) and listed once (provider/resources/index.ts `RESOURCES`). Its operations and
 * lifecycle facts are the {@link ResourceDefinition} that {@link defineResource} turns into its operations; the rest is
 * what the adapters, the generators and the docs read of it: the description, the outputs, the secret outputs, the
 * import id, what a create adopts, and what it records of an object it did not make. Nothing about a resource is kept
 * in a table beside the list (test/tools/one-list.test.ts).
 */
import type { z } from "zod";
import type { AdoptionProbe } from "./adoption";
import type { Examples } from "./examples";
import type { ExclusiveGroup } from "./inputs";
import { defineResource, type Operations, type Outputs, type ResourceDefinition } from "./lifecycle";
import type { LostObjectKind } from "./lost-create";

/** A UUID, as a regular expression's source (an import id's part). */
export const UUID = "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}";

/**
 * The id `pulumi import <type> <name> <id>` takes: its form, how it gives the id the resource keeps and the outputs
 * `read` starts from (the project of a project-scoped object), and the object it names, as the error of an import of a
 * missing one says it (`object`, and `why`: what PostHog's answer means for it).
 */
export interface ImportId {
  /** The form, as the docs and errors show it, e.g. `<projectId>/<dashboardId>`. */
  form: string;
  /** The whole id's pattern; its groups feed `parse`, `object` and `why`. */
  pattern: RegExp;
  parse(m: RegExpExecArray): { id: string; props: object };
  object(m: RegExpExecArray): string;
  why?(m: RegExpExecArray): string;
}

/**
 * The import id of a resource whose id is the whole import id (a UUID, a project's digits): `form` as the docs and
 * errors show it, `pattern` the id's regular expression source; `why`, what PostHog's answer means for a missing one.
 */
export function wholeIdImport(type: string, form: string, pattern: string, why?: string): ImportId {
  return {
    form,
    pattern: new RegExp(`^(${pattern})$`),
    parse: (m) => ({ id: m[1] ?? "", props: {} }),
    object: (m) => `${type} ${m[1]}`,
    ...(why === undefined ? {} : { why: () => why }),
  };
}

/** What a resource records of an object it did not create, so that destroy leaves it as found. */
export interface Records {
  /** Its outputs record `adopted` (an imported object is marked adopted: kept on destroy). */
  adopted: boolean;
  /** The output recording the state found (destroy sets it back), and the output an import finds it in. */
  found?: { found: string; from: string };
}

/** One resource's card: its {@link ResourceDefinition} and the facts every other part derives from it. */
export interface ResourceCard<
  S extends z.ZodType<Record<string, unknown>>,
  O extends Outputs,
  N extends string = string,
  P extends z.ZodObject = z.ZodObject,
> extends ResourceDefinition<S, O> {
  /** The resource's name, as in type tokens (`Dashboard`). */
  name: N;
  /**
   * What the resource manages and how (its id, replacements, delete, adoption, the API it calls): schema.json's
   * description of the resource.
   */
  description: string;
  /** What it is, for a program's author: the SDK class's documentation, before its example. */
  summary: string;
  /** Its example: the TypeScript program (the docs page's and the SDK class's) and the same one for the other languages. */
  examples: Examples;
  /**
   * Inputs the provider fills in when the program leaves them unset (a Dashboard's `projectId`: the key's current
   * project), which the SDK class registers as outputs too, beside the outputs that are no inputs.
   */
  resolvedInputs: readonly string[];
  /** The outputs create, read and update return (every input among them), each property described. */
  outputs: P;
  /** Outputs that are secret whatever the inputs (the SDK class's `additionalSecretOutputs`, the plugin's secrets). */
  secretOutputs: readonly string[];
  /** Mutually exclusive inputs (also enforced by the inputs schema). */
  exclusiveInputs: readonly ExclusiveGroup[];
  /** The id `pulumi import` takes. */
  importId: ImportId;
  /** What a preview says the create will adopt (provider/framework/adoption.ts). */
  adoption: AdoptionProbe;
  /** What it records of an object it did not create. */
  records: Records;
  /**
   * For a resource whose creates name their objects provisionally (provider/framework/lost-create.ts): how to list
   * and name an object such a create made that no resource holds. Absent: its creates leave nothing to look for.
   */
  lostObjects?: LostObjectKind;
}

/** A resource: its card and the operations built from it (which the adapters serve). */
export interface Resource<
  S extends z.ZodType<Record<string, unknown>> = z.ZodType<Record<string, unknown>>,
  O extends Outputs = Outputs,
  N extends string = string,
  P extends z.ZodObject = z.ZodObject,
> {
  card: ResourceCard<S, O, N, P>;
  operations: Operations;
}

/** The resource of `card`: the card and its operations ({@link defineResource}). */
export function resource<
  S extends z.ZodType<Record<string, unknown>>,
  O extends Outputs,
  N extends string,
  P extends z.ZodObject,
>(card: ResourceCard<S, O, N, P>): Resource<S, O, N, P> {
  return { card, operations: defineResource(card) };
}
