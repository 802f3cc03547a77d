/**
 * DomainVerification: verifies a Domain once its TXT record is published, like AWS's CertificateValidation.
 * The whole description is the card's (`domainVerification.card.description`), which schema.json and the SDK class take.
 */
import { z } from "zod";
import { type Domain, ForbiddenError, type PostHogClient, ValidationError } from "../client";
import { resource, UUID, wholeIdImport } from "../framework/card";
import { ref, res } from "../framework/examples";
import { listedOrRetrieved } from "../framework/lifecycle";

/** Inputs of a DomainVerification. */
export const DomainVerificationInputsSchema = z.strictObject({
  /** The Domain's id (UUID), e.g. `domain.id`. Changing it replaces the verification. */
  domainId: z.string({ error: "expected the id (UUID) of a Domain, e.g. domain.id" }).min(1, {
    error: "expected the id (UUID) of a Domain, e.g. domain.id",
  }),
  /** How long to keep retrying, in seconds (0..3600). Default 300. */
  timeoutSeconds: z
    .number({ error: "expected a number of seconds between 0 and 3600" })
    .min(0, { error: "expected a number of seconds between 0 and 3600" })
    .max(3600, { error: "expected a number of seconds between 0 and 3600" })
    .default(300),
});
export type DomainVerificationInputs = z.input<typeof DomainVerificationInputsSchema>;
type In = z.output<typeof DomainVerificationInputsSchema>;

/**
 * Outputs of a DomainVerification, as create, read and update return them. `required` in the package schema:
 * neither optional nor nullable. Each property's comment is its documentation (schema.json, the SDK class,
 * docs/resources).
 */
export const DomainVerificationOutputsSchema = z.object({
  /** The Domain's id (UUID; also the resource id). */
  domainId: z.string(),
  /** As declared: how long create and update keep retrying, in seconds. */
  timeoutSeconds: z.number(),
  /** The verified domain name. */
  domain: z.string(),
  /** True when the domain is verified. */
  isVerified: z.boolean(),
  /** When the domain was verified (ISO 8601), else null. */
  verifiedAt: z.string().nullable(),
});

/** Outputs of a DomainVerification. */
export type DomainVerificationOutputs = z.infer<typeof DomainVerificationOutputsSchema> &
  Record<string, unknown>;

function toOutputs(d: Domain, want: Pick<In, "timeoutSeconds">): DomainVerificationOutputs {
  return {
    domainId: d.id,
    timeoutSeconds: want.timeoutSeconds,
    domain: d.domain,
    isVerified: d.is_verified === true,
    verifiedAt: d.verified_at ?? null,
  };
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Longest wait between two verification attempts (ms): once the TXT record is published, the domain is verified
 * within this long. An attempt costs two requests (verify, then a GET when verify answers no domain), so
 * waiting costs at most 24 requests a minute of the key's 480.
 */
export const VERIFY_MAX_DELAY_MS = 5_000;

/**
 * Calls verify until the domain is verified, waiting 1 s, 2 s, 4 s, then {@link VERIFY_MAX_DELAY_MS} (never past
 * the deadline) between attempts. Requests: GET `…/domains/:id/` (done if verified), then per attempt POST
 * `…/domains/:id/verify/` and, unless its answer is the domain, GET `…/domains/:id/`.
 * `wait` is how it waits (ms; for tests).
 * @throws Error naming the TXT record when `timeoutSeconds` pass without verification.
 */
export async function verifyWithBackoff(
  api: PostHogClient,
  id: string,
  timeoutSeconds: number,
  wait: (ms: number) => Promise<void> = sleep,
): Promise<Domain> {
  const deadline = Date.now() + timeoutSeconds * 1000;
  let delay = 1000;
  let d = await api.domains.retrieve({ id });
  if (d.is_verified) return d;
  for (let attempt = 1; ; attempt++) {
    let answer: Domain | undefined;
    try {
      answer = await api.domains.verify({ id });
    } catch (e) {
      if (e instanceof ForbiddenError && /Personal API Key/i.test(e.detail ?? "")) {
        throw new Error(
          `Verifying ${d.domain} needs a personal API key without scopes: PostHog refuses scoped keys for verify`,
          { cause: e },
        );
      }
      // "already verified" is success; anything else is a real failure.
      if (!(e instanceof ValidationError && e.code === "already_verified")) throw e;
    }
    // The real service answers the domain; the seed answers no body: then read it.
    d = answer?.id === id ? answer : await api.domains.retrieve({ id });
    if (d.is_verified) return d;
    const left = deadline - Date.now();
    if (left <= 0) {
      throw new Error(
        `Domain ${d.domain} is not verified after ${timeoutSeconds} s (${attempt} attempts): publish the TXT record ` +
          `_posthog-challenge.${d.domain} with the value "${d.verification_challenge ?? ""}" and run up again ` +
          "(or raise timeoutSeconds)",
      );
    }
    await wait(Math.min(delay, left));
    delay = Math.min(delay * 2, VERIFY_MAX_DELAY_MS);
  }
}

/**
 * The error of `pulumi import` of the verification of domain `d`, which is not verified: the verification a
 * DomainVerification manages exists once PostHog has verified the domain, so there is none to import. Importing it
 * anyway would record a verification that does not exist: the program's generated code would then plan an update
 * (the verification) on its first preview, where an import promises no change, and the policy pack would count the
 * domain verified. No request.
 */
function notVerifiedOnImport(d: Domain): Error {
  return new Error(
    `Domain ${d.domain} (${d.id}) is not verified, so it has no verification to import: nothing is imported. ` +
      `Declare the DomainVerification in the program instead (domainId: "${d.id}"): \`pulumi up\` verifies the ` +
      `domain once its TXT record _posthog-challenge.${d.domain} holds "${d.verification_challenge ?? ""}"`,
  );
}

/** The DomainVerification resource: its card (everything about it) and its provider. */
export const domainVerification = resource<
  typeof DomainVerificationInputsSchema,
  DomainVerificationOutputs,
  "DomainVerification",
  typeof DomainVerificationOutputsSchema
>({
  name: "DomainVerification",
  troubleshooting: "domain-and-domainverification",
  summary: [
    "Verifies a {@link Domain} once its TXT record is published, waiting with backoff up to `timeoutSeconds`",
    "(type `pulumi-nodejs:dynamic/posthog:DomainVerification`), like AWS's CertificateValidation.",
  ].join("\n"),
  examples: {
    typescript: [
      'import * as posthog from "pulumi-posthog";',
      "",
      'const corp = new posthog.Domain("corp", { domain: "example.org" });',
      "// Your DNS provider's TXT record resource goes here; pass it in dependsOn so verification waits for it.",
      'new posthog.DomainVerification("corp", { domainId: corp.id, timeoutSeconds: 600 });',
      "",
      "export const txt = { name: corp.challengeRecordName, value: corp.verificationChallenge };",
    ],
    program: {
      statements: [
        res("Domain", "corp", { domain: "example.org" }),
        res("DomainVerification", "corp-verified", { domainId: ref("corp"), timeoutSeconds: 600 }),
      ],
      outputs: { verifiedAt: ref("corp-verified", "verifiedAt") },
      previewOnly: "up waits until the domain's TXT record is published, which no one does here",
    },
  },
  resolvedInputs: [],
  idInput: "domainId",
  description: [
    "DomainVerification: verifies a Domain once its TXT record is published, like AWS's CertificateValidation.",
    "API: POST `/api/organizations/:organization_id/domains/:id/verify/`, GET `\u2026/domains/:id/`.",
    "",
    "Create (and update after drift) calls verify and waits with backoff (1 s, 2 s, 4 s, then every 5 s) until the",
    "domain is verified or `timeoutSeconds` pass; the timeout error names the TXT record",
    "and its expected value. The id is the domain's id. Refresh shows a domain that is no longer verified as",
    "drift; the next `up` verifies again. Delete does nothing on the server (a verification cannot be undone).",
  ].join("\n"),
  outputs: DomainVerificationOutputsSchema,
  secretOutputs: [],
  exclusiveInputs: [],
  importId: wholeIdImport(
    "DomainVerification",
    "<domainId> (a UUID)",
    UUID,
    "Its id is the id of the domain it verifies: the organization has no domain of that id",
  ),
  adoption: "never" /* it verifies a domain; nothing is taken over */,
  records: { adopted: false },
  inputs: DomainVerificationInputsSchema,
  replaceOnChanges: ["domainId"],
  // A domain that lost its verification (refresh) is verified again by the next up.
  changes: (olds, _news, changed) => (olds.isVerified === false ? [...changed, "isVerified"] : changed),
  async create(api, want) {
    const d = await verifyWithBackoff(api, want.domainId, want.timeoutSeconds);
    return { id: d.id, outs: toOutputs(d, want) };
  },
  async read(api, id, props, how) {
    // A refresh reads the domain from the organization's list, shared with the Domain's read.
    const live = await listedOrRetrieved(
      how,
      () => api.domains.find({ id }),
      () => api.domains.retrieve({ id }),
    );
    // `pulumi import` (provider plugin) takes the verification of a verified domain only: an unverified domain has
    // none yet, and its import fails saying so (declare the resource instead), so every import previews no change.
    if (how.importing && live.is_verified !== true) throw notVerifiedOnImport(live);
    return toOutputs(live, props);
  },
  async update(api, id, _olds, want) {
    return toOutputs(await verifyWithBackoff(api, id, want.timeoutSeconds), want);
  },
  async delete() {
    // Nothing to undo on the server: a verification cannot be revoked through the API.
  },
});
