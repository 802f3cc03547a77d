/**
 * Outputs the providers record for themselves in state but keep out of the package schema (schema.json, the SDK
 * classes, the docs): each resource's `<Name>Outputs` type is its `<Name>OutputsSchema` plus the ones it records.
 * tools/schema.ts leaves them out; test/provider/outputs-schema.test.ts skips them when it checks outputs.
 */

/** Whether the resource took the object over or made it: Dashboard, DashboardCollaborator, Domain, Invite, Project. */
export interface Adopted {
  /**
   * True when this resource adopted the object (an input naming an existing one, `adopt: true`, or `pulumi import`
   * took it in), false when it created it. Absent in state written before it existed: destroy then keeps the
   * object where the outputs cannot tell (Domain and Invite delete it unless declared with `adopt: true`); see the
   * README's table "What destroy does".
   */
  adopted?: boolean;
}

/** How the program names a Member. */
export interface IdentifiedBy {
  /**
   * The input that identifies the member in the program, `email` or `userUuid`: refresh reports the inputs in
   * that form, so a later change shows only what changed. Absent in state written before it existed (refresh
   * then reports `email`) until the next create or update.
   */
  identifiedBy?: "email" | "userUuid";
}
