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
import type * as S1 from "../../provider/resources/batch-export-pause";
import type * as S2 from "../../provider/resources/dashboard";
import type * as S3 from "../../provider/resources/dashboard-collaborator";
import type * as S4 from "../../provider/resources/dashboard-sharing";
import type * as S5 from "../../provider/resources/domain";
import type * as S6 from "../../provider/resources/domain-verification";
import type * as S7 from "../../provider/resources/invite";
import type * as S8 from "../../provider/resources/member";
import type * as S9 from "../../provider/resources/project";
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

same<Same<G.BatchExportPauseArgs, From<typeof S1.BatchExportPauseInputsSchema>>>();
same<
  Same<G.DashboardArgs, Grouped<z.input<typeof S2.DashboardInputsSchema>, typeof S2.DashboardExclusiveInputs>>
>();
same<Same<G.DashboardCollaboratorArgs, From<typeof S3.DashboardCollaboratorInputsSchema>>>();
same<Same<G.DashboardSharingArgs, From<typeof S4.DashboardSharingInputsSchema>>>();
same<Same<G.DomainArgs, From<typeof S5.DomainInputsSchema>>>();
same<Same<G.DomainVerificationArgs, From<typeof S6.DomainVerificationInputsSchema>>>();
same<Same<G.InviteArgs, From<typeof S7.InviteInputsSchema>>>();
same<Same<G.MemberArgs, Grouped<z.input<typeof S8.MemberInputsSchema>, typeof S8.MemberExclusiveInputs>>>();
same<Same<G.ProjectArgs, From<typeof S9.ProjectInputsSchema>>>();
// The helpers above can fail: a schema's Args without its group is not the generated union.
same<Same<G.MemberArgs, From<typeof S8.MemberInputsSchema>> extends false ? true : false>();
// dashboard ids are numbers or strings (a Dashboard's id output), not whatever z.coerce takes (a boolean)
same<
  Same<
    G.DashboardCollaboratorArgs["dashboardId"],
    string | number | Promise<string | number> | pulumi.OutputInstance<string | number>
  >
>();

describe("generated Args and the schemas", () => {
  it("covers every resource: the assertions above name each one", () => {
    // A new resource needs its line above; this lists what the generator found, to compare.
    expect(readResources().map((r) => r.name)).toEqual([
      "BatchExportPause",
      "DashboardCollaborator",
      "DashboardSharing",
      "Dashboard",
      "DomainVerification",
      "Domain",
      "Invite",
      "Member",
      "Project",
    ]);
  });
});
