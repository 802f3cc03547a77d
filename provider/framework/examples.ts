/**
 * A resource's example as its card holds it (provider/framework/card.ts `examples`): the TypeScript program, as text,
 * and the same program as plain data, which tools/examples.ts renders in each language of the provider plugin's
 * package (Pulumi YAML, Python, Go, C#) for the resource's docs page. Plain data and builders only.
 */

/** A reference to another statement of the example: a resource's `id` (no `prop`) or one of its outputs, or a field of a function's result. */
export interface Ref {
  ref: string;
  prop?: string;
}

/** A property value: a literal, a list of values, or a reference. */
export type Value = string | number | boolean | readonly Value[] | Ref;

/** A resource of the example: its type name (`Dashboard`), its logical name, its inputs. */
export interface ResourceStatement {
  kind: "resource";
  type: string;
  name: string;
  args: Readonly<Record<string, Value>>;
}

/** A function call (its Output form) of the example: the function (`getMember`), a name for its result, arguments. */
export interface InvokeStatement {
  kind: "invoke";
  fn: string;
  name: string;
  args: Readonly<Record<string, Value>>;
}

export type Statement = ResourceStatement | InvokeStatement;

/** An example program as data. */
export interface ExampleProgram {
  /** The statements, in order: what the subject refers to first. */
  statements: readonly Statement[];
  /** The stack outputs: name → reference. */
  outputs: Readonly<Record<string, Ref>>;
  /**
   * Why `pulumi up` of this example is not run by test/docs/examples-yaml.test.ts (only `preview`), if it is not:
   * e.g. a DomainVerification waits for a DNS record no one publishes.
   */
  previewOnly?: string;
}

/** A resource's examples: the TypeScript program (its lines) and the program as data for the other languages. */
export interface Examples {
  /** The TypeScript program of the docs page and of the SDK class's documentation, one entry per line. */
  typescript: readonly string[];
  /** The program rendered in Pulumi YAML, Python, Go and C# (it runs through the plugin in the docs tests). */
  program: ExampleProgram;
}

/** A resource statement. */
export const res = (type: string, name: string, args: Record<string, Value>): ResourceStatement => ({
  kind: "resource",
  type,
  name,
  args,
});

/** A function call statement. */
export const call = (fn: string, name: string, args: Record<string, Value> = {}): InvokeStatement => ({
  kind: "invoke",
  fn,
  name,
  args,
});

/** A reference to statement `name`'s id, or to its output (or result field) `prop`. */
export const ref = (name: string, prop?: string): Ref =>
  prop === undefined ? { ref: name } : { ref: name, prop };
