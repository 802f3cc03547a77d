/**
 * The generated Args types (sdk/args.ts) and the zod schemas cannot drift: at compile time (this file is type
 * checked by `npm run lint`), each `<Name>Args` is mutually assignable with `Args<z.input<typeof Schema>>` of its
 * schema, its exclusive groups (`<Name>ExclusiveInputs`) applied as unions. A property added to a schema, a type
 * or optionality changed, or a group changed, without `npm run codegen`, fails `tsc`. At run time the same
 * relation is checked on the data: the generator reads what the schemas hold.
 */

import type * as pulumi from "@pulumi/pulumi";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import type * as Dashboard from "../../provider/resources/dashboard";
import { RESOURCES, resourceNames } from "../../provider/resources/index";
import type * as Member from "../../provider/resources/member";
import type * as G from "../../sdk/args";
import type { Args } from "../../sdk/common";
import { readResources } from "../../tools/codegen";

/** true when A and B are assignable both ways (the tuple stops distribution over unions). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** Compiles only for `true`. */
const same = <T extends true>(_proof?: T): void => undefined;

/** The branch of key P of exactly one of K (of raw inputs T): P required and defined, the others absent. */
type One<T, K extends keyof T, P extends K> = Args<Omit<T, K>> & {
  [Q in P]-?: pulumi.Input<Exclude<T[Q], undefined>>;
} & { [Q in Exclude<K, P>]?: never };
/** The branch of key P of at most one of K (of raw inputs T): P optional, the others absent. */
type AtMost<T, K extends keyof T, P extends K> = Args<Omit<T, K>> & { [Q in P]?: pulumi.Input<T[Q]> } & {
  [Q in Exclude<K, P>]?: never;
};
// `-?`: K holds optional keys of T, and a mapped type over them would copy the `?` (and add undefined).
type ExactlyOne<T, K extends keyof T> = { [P in K]-?: One<T, K, P> }[K];
type AtMostOne<T, K extends keyof T> = { [P in K]-?: AtMost<T, K, P> }[K];
/** The Args of raw inputs T with one exclusive group (as declared next to the schema) applied. */
type Grouped<T, Group> = Group extends readonly [{ kind: infer Kind; keys: readonly (infer K)[] }]
  ? Kind extends "exactlyOne"
    ? ExactlyOne<T, K & keyof T>
    : AtMostOne<T, K & keyof T>
  : never;

type From<S extends z.ZodType> = Args<z.input<S>>;

/** The cards of the list, by type. */
type Card = (typeof RESOURCES)[number]["card"];
/**
 * The cards with exclusive groups, each with its groups' literal type (the card keeps them as a plain array): their
 * Args are the schema's with the groups applied as unions.
 */
type Groups = {
  Dashboard: typeof Dashboard.DashboardExclusiveInputs;
  Member: typeof Member.MemberExclusiveInputs;
};
/** The Args a card's inputs schema gives: its exclusive groups applied, if it has some. */
type Expected<C extends Card> = C["name"] extends keyof Groups
  ? Grouped<z.input<C["inputs"]>, Groups[C["name"]]>
  : From<C["inputs"]>;
/** For each resource of the list: whether its generated Args are what its card's inputs schema gives. */
type Checked = { [C in Card as C["name"]]: Same<G.ArgsByName[C["name"]], Expected<C>> };
// Every resource of the list (a `false` anywhere makes the union `boolean`), and the generated Args name no other.
same<Checked[keyof Checked]>();
same<Same<keyof G.ArgsByName, Card["name"]>>();
// The helpers above can fail: a schema's Args without its group is not the generated union.
same<Same<G.MemberArgs, From<typeof Member.MemberInputsSchema>> extends false ? true : false>();
same<Same<G.ProjectArgs, From<typeof Member.MemberInputsSchema>> extends false ? true : false>();
// dashboard ids are numbers or strings (a Dashboard's id output), not whatever z.coerce takes (a boolean)
same<
  Same<
    G.DashboardCollaboratorArgs["dashboardId"],
    string | number | Promise<string | number> | pulumi.OutputInstance<string | number>
  >
>();

describe("generated Args and the schemas", () => {
  it("covers every resource of the list, and names the groups of each card that has some", () => {
    // The type-level checks above loop over the list; what the generator found is the same list.
    expect(
      readResources()
        .map((r) => r.name)
        .sort(),
    ).toEqual([...resourceNames].sort());
    // A card with exclusive groups needs its groups' type in `Groups` above (the card holds them untyped).
    const grouped = RESOURCES.filter((r) => r.card.exclusiveInputs.length > 0).map((r) => r.card.name);
    expect(grouped.sort()).toEqual(["Dashboard", "Member"] satisfies (keyof Groups)[]);
  });
});
