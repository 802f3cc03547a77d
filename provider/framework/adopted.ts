/**
 * What destroy does with an object this provider did not create (issue 12, point 4): it leaves it as it was
 * found, unless the resource's explicit input (`deleteAdoptedOnDestroy`, Member's
 * `removeFromOrganizationOnDestroy`) says to delete it. State written before the `adopted` marker existed counts
 * as adopted where the outputs cannot tell (the safe side: nothing is deleted). See the README's table
 * "What destroy does".
 */

/**
 * Says on the provider host's stdout (it reaches `pulumi destroy` as a log line) that destroy kept `what` (e.g. `Project 1001 (Shop)`): adopted, or
 * (`unknown`) state too old to tell; `input` is the input that makes destroy delete it. No HTTP request.
 */
export function keptOnDestroy(what: string, unknown: boolean, input: string): void {
  const why = unknown
    ? "its state predates the adopted marker, so whether this resource created it is unknown"
    : "this resource adopted it";
  console.log(
    `warning: destroy kept ${what}: ${why}. Adopted objects are left as they were found; set ${input}: true ` +
      "before destroy to delete it, or delete it in PostHog.",
  );
}
