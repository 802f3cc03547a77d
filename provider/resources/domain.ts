/**
 * Domain: an organization's verified e-mail domain with its SAML / SSO settings.
 * The whole description is the card's (`domain.card.description`), which schema.json and the SDK class take.
 */
import { z } from "zod";
import {
  AmbiguousWriteError,
  DOMAIN_PATTERN,
  type Domain,
  type PostHogClient,
  ValidationError,
} from "../client";
import { keptOnDestroy } from "../framework/adopted";
import { known } from "../framework/adoption";
import type { Adopted } from "../framework/bookkeeping";
import { resource, UUID, wholeIdImport } from "../framework/card";
import { ref, res } from "../framework/examples";
import { listedOrRetrieved } from "../framework/lifecycle";
import { beginCreate, journalContext } from "../framework/lost-create";
import { UNKNOWN } from "../framework/values";

/** SSO providers PostHog can enforce ("" = none). */
export const SSO_PROVIDERS = ["", "google-oauth2", "github", "gitlab", "saml"] as const;

/** Inputs of a Domain. */
export const DomainInputsSchema = z.strictObject({
  /**
   * The domain name, lowercase, at most 128 characters, e.g. `example.com`. Changing it replaces the domain
   * (delete first). One Domain per name in a program.
   */
  domain: z
    .string({ error: "expected a lowercase domain or subdomain name such as example.com" })
    .max(128, { error: "expected a domain name of at most 128 characters" })
    .regex(DOMAIN_PATTERN, {
      error:
        "expected a lowercase domain or subdomain name such as example.com (no scheme, no e-mail address)",
    }),
  /** Let users with an e-mail on this domain join automatically (applied once verified). Default false. */
  jitProvisioningEnabled: z.boolean({ error: "expected true or false" }).default(false),
  /**
   * Enforce logging in with this SSO provider (applied once verified): one of "", "google-oauth2",
   * "github", "gitlab", "saml". Default "" (none).
   */
  ssoEnforcement: z
    .enum(SSO_PROVIDERS, { error: 'expected one of "", "google-oauth2", "github", "gitlab", "saml"' })
    .default(""),
  /** SAML IdP entity id, at most 512 characters. Unset = not managed. */
  samlEntityId: z
    .string({ error: "expected a string" })
    .max(512, { error: "expected at most 512 characters" })
    .optional(),
  /** SAML assertion consumer service URL of the IdP, at most 512 characters. Unset = not managed. */
  samlAcsUrl: z
    .string({ error: "expected a string" })
    .max(512, { error: "expected at most 512 characters" })
    .optional(),
  /** SAML X.509 certificate of the IdP (PEM). Unset = not managed. */
  samlX509Cert: z.string().optional(),
  /**
   * Take over a domain of this name that already exists in the organization instead of failing. Default false.
   * An adopted domain is kept on destroy unless `deleteAdoptedOnDestroy` is true.
   */
  adopt: z.boolean({ error: "expected true or false" }).default(false),
  /**
   * Delete the domain on destroy even though it was adopted (`adopt: true` found it). Default: an adopted domain
   * is left as it was found (a domain this resource created is always deleted on destroy).
   */
  deleteAdoptedOnDestroy: z.boolean({ error: "expected true or false" }).optional(),
});
export type DomainInputs = z.input<typeof DomainInputsSchema>;
type In = z.output<typeof DomainInputsSchema>;

/**
 * Outputs of a Domain, as create, read and update return them: the settings (while the domain is unverified, JIT
 * provisioning and SSO enforcement as declared) and the server's fields. `required` in the package schema: neither
 * optional nor nullable. Each property's comment is its documentation (schema.json, the SDK class, docs/resources).
 */
export const DomainOutputsSchema = z.object({
  /** The domain name, e.g. `example.com`. */
  domain: z.string(),
  /** Whether users with an e-mail on this domain join automatically (the declared value while unverified). */
  jitProvisioningEnabled: z.boolean(),
  /** The enforced SSO provider, "" for none (the declared value while unverified). */
  ssoEnforcement: z.string(),
  /** The SAML IdP entity id; "" when unset. */
  samlEntityId: z.string(),
  /** The SAML assertion consumer service URL; "" when unset. */
  samlAcsUrl: z.string(),
  /** The SAML X.509 certificate; "" when unset. */
  samlX509Cert: z.string(),
  /** As declared: take over a domain of this name that already exists. */
  adopt: z.boolean(),
  /** As declared: delete the adopted domain on destroy. */
  deleteAdoptedOnDestroy: z.boolean().optional(),
  /** True once PostHog found the TXT record (see DomainVerification). */
  isVerified: z.boolean(),
  /** When the domain was verified (ISO 8601), else null. */
  verifiedAt: z.string().nullable(),
  /** The value to publish as the TXT record named by `challengeRecordName`. */
  verificationChallenge: z.string(),
  /** The DNS name of the TXT record to publish: `_posthog-challenge.<domain>`. */
  challengeRecordName: z.string(),
  /** True when SAML is fully configured. */
  hasSaml: z.boolean(),
  /** What is declared but waits for the verification, else null. */
  pendingSettings: z.string().nullable(),
  /**
   * Whether this PostHog keeps SAML settings on the domain. False for current PostHog, which keeps them in the
   * domain's SSO configuration (`identity_provider_config`): the SAML inputs must then not be declared (preview
   * fails, saying so). Absent in state written before it existed.
   */
  samlOnDomain: z.boolean().optional(),
});

/** The SAML inputs and the wire field each is sent as. */
const SAML_FIELDS = [
  ["samlEntityId", "saml_entity_id"],
  ["samlAcsUrl", "saml_acs_url"],
  ["samlX509Cert", "saml_x509_cert"],
] as const;

/**
 * Whether this PostHog keeps SAML settings on the domain: its answer `d` carries a `saml_*` field (null when
 * unset). Current PostHog answers none (posthog/api/organization_domain.py `OrganizationDomainSerializer`: SAML
 * lives in the linked `identity_provider_config`) and ignores them when sent.
 */
export function samlOnDomain(d: Domain): boolean {
  return SAML_FIELDS.some(([, wire]) => Object.hasOwn(d, wire));
}

/**
 * The SAML inputs `v` declares with something to apply: a non-empty string ("" sets nothing where there is
 * nothing; a value unknown during preview cannot be judged and is left to create or update).
 */
function declaredSaml(v: Record<string, unknown>): string[] {
  return SAML_FIELDS.filter(([input]) => {
    const value = v[input];
    return typeof value === "string" && value !== "" && value !== UNKNOWN;
  }).map(([input]) => input);
}

/** The error of a Domain declaring SAML inputs on a PostHog that keeps SAML elsewhere: what, why, what to do. */
function samlElsewhere(domain: string, declared: readonly string[]): string {
  const names = declared.join(", ");
  return (
    `Domain ${domain} declares ${names}, but this PostHog keeps SAML settings in the domain's ` +
    "identity_provider_config (its SSO configuration), not on the domain: its domains carry no saml_* field and it " +
    `ignores them when sent, so ${names} could never be applied. Remove ${names} from the Domain and configure ` +
    `SAML for ${domain} in PostHog's SSO settings (ssoEnforcement "saml" then takes effect once it is set up there)`
  );
}

/** Outputs of a Domain: the inputs (live values) plus the server's fields. */
export type DomainOutputs = z.infer<typeof DomainOutputsSchema> & Adopted & Record<string, unknown>;

function pendingOf(
  d: Domain,
  want: { jitProvisioningEnabled: boolean; ssoEnforcement: string },
): string | null {
  if (d.is_verified) return null;
  const waiting: string[] = [];
  if (want.jitProvisioningEnabled !== (d.jit_provisioning_enabled ?? false)) {
    waiting.push(`jitProvisioningEnabled=${want.jitProvisioningEnabled}`);
  }
  if (want.ssoEnforcement !== (d.sso_enforcement ?? ""))
    waiting.push(`ssoEnforcement="${want.ssoEnforcement}"`);
  if (waiting.length === 0) return null;
  return (
    `${waiting.join(", ")} will be applied once ${d.domain} is verified: publish TXT _posthog-challenge.${d.domain} ` +
    `= "${d.verification_challenge ?? ""}", verify it (DomainVerification), then run \`pulumi up --refresh\``
  );
}

/**
 * Maps the wire domain to outputs. While unverified, JIT/SSO outputs keep the declared values (`want`),
 * because the server cannot hold them yet; `pendingSettings` says so.
 */
function toOutputs(d: Domain, want: In | DomainOutputs, adopted?: boolean): DomainOutputs {
  const verified = d.is_verified === true;
  return {
    ...(adopted !== undefined ? { adopted } : {}),
    ...(want.deleteAdoptedOnDestroy !== undefined
      ? { deleteAdoptedOnDestroy: want.deleteAdoptedOnDestroy }
      : {}),
    domain: d.domain,
    jitProvisioningEnabled: verified ? (d.jit_provisioning_enabled ?? false) : want.jitProvisioningEnabled,
    ssoEnforcement: verified ? (d.sso_enforcement ?? "") : want.ssoEnforcement,
    // null and "" both mean "not set" on the server: report "" so a declared "" shows no diff
    samlEntityId: d.saml_entity_id ?? "",
    samlAcsUrl: d.saml_acs_url ?? "",
    samlX509Cert: d.saml_x509_cert ?? "",
    adopt: want.adopt,
    isVerified: verified,
    verifiedAt: d.verified_at ?? null,
    verificationChallenge: d.verification_challenge ?? "",
    challengeRecordName: `_posthog-challenge.${d.domain}`,
    hasSaml: d.has_saml ?? false,
    pendingSettings: pendingOf(d, want),
    samlOnDomain: samlOnDomain(d),
  };
}

/** The PATCH body converging `d` to `want`: SAML fields when declared, JIT/SSO only when verified. */
function convergeBody(d: Domain, want: In) {
  const body: Record<string, unknown> = {};
  if (want.samlEntityId !== undefined && want.samlEntityId !== (d.saml_entity_id ?? "")) {
    body.saml_entity_id = want.samlEntityId;
  }
  if (want.samlAcsUrl !== undefined && want.samlAcsUrl !== (d.saml_acs_url ?? ""))
    body.saml_acs_url = want.samlAcsUrl;
  if (want.samlX509Cert !== undefined && want.samlX509Cert !== (d.saml_x509_cert ?? "")) {
    body.saml_x509_cert = want.samlX509Cert;
  }
  if (d.is_verified) {
    if (want.jitProvisioningEnabled !== (d.jit_provisioning_enabled ?? false)) {
      body.jit_provisioning_enabled = want.jitProvisioningEnabled;
    }
    if (want.ssoEnforcement !== (d.sso_enforcement ?? "")) body.sso_enforcement = want.ssoEnforcement;
  }
  return body;
}

/** The wire shape of the domain as last read (from its outputs; JIT/SSO count as unset while unverified). */
function wireOf(id: string, o: DomainOutputs): Domain {
  return {
    id,
    domain: o.domain,
    is_verified: o.isVerified,
    jit_provisioning_enabled: o.isVerified ? o.jitProvisioningEnabled : false,
    sso_enforcement: o.isVerified ? o.ssoEnforcement : "",
    saml_entity_id: o.samlEntityId ?? null,
    saml_acs_url: o.samlAcsUrl ?? null,
    saml_x509_cert: o.samlX509Cert ?? null,
  };
}

async function converge(api: PostHogClient, d: Domain, want: In): Promise<Domain> {
  const body = convergeBody(d, want);
  return Object.keys(body).length === 0 ? d : api.domains.update({ id: d.id, body });
}

async function findByName(api: PostHogClient, name: string): Promise<Domain | undefined> {
  return (await api.domains.all()).find((d) => d.domain === name);
}

/**
 * {@link samlElsewhere} when the server keeps SAML elsewhere (`onDomain` false: what an answer showed or the
 * outputs recorded; undefined: not known) and `v` declares SAML inputs; else undefined.
 */
function samlRefusal(
  onDomain: boolean | undefined,
  domain: string,
  v: Record<string, unknown>,
): string | undefined {
  const declared = declaredSaml(v);
  return onDomain === false && declared.length > 0 ? samlElsewhere(domain, declared) : undefined;
}

/** Throws {@link samlRefusal}'s error when the server's answer `d` shows `want` cannot be applied. */
function refuseSamlElsewhere(d: Domain, want: In): void {
  const refusal = samlRefusal(samlOnDomain(d), want.domain, want);
  if (refusal !== undefined) throw new Error(refusal);
}

/** Prints what waits for verification (the host's stdout reaches `pulumi up` as a log line). */
function announce(outs: DomainOutputs): DomainOutputs {
  if (outs.pendingSettings) console.log(`warning: Domain ${outs.domain}: ${outs.pendingSettings}`);
  return outs;
}

/** The Domain resource: its card (everything about it) and its provider. */
export const domain = resource<
  typeof DomainInputsSchema,
  DomainOutputs,
  "Domain",
  typeof DomainOutputsSchema
>({
  name: "Domain",
  troubleshooting: "domain-and-domainverification",
  summary: [
    "An organization domain with its SAML / SSO settings (type `pulumi-nodejs:dynamic/posthog:Domain`).",
    "`domain` changes replace it (old one deleted first). JIT provisioning and SSO enforcement are applied",
    "once the domain is verified (see {@link DomainVerification}); `pendingSettings` says what waits.",
    "Adopt an existing domain of the organization with `adopt: true`.",
  ].join("\n"),
  examples: {
    typescript: [
      'import * as posthog from "pulumi-posthog";',
      "",
      'const pem = "-----BEGIN CERTIFICATE-----\\n\u2026\\n-----END CERTIFICATE-----";',
      'const corp = new posthog.Domain("corp", {',
      '  domain: "example.com",',
      '  ssoEnforcement: "saml",',
      "  jitProvisioningEnabled: true,",
      '  samlEntityId: "https://idp.example.com/entity",',
      '  samlAcsUrl: "https://idp.example.com/acs",',
      "  samlX509Cert: pem,",
      "});",
      "",
      "// Publish this TXT record with your DNS provider, then verify with a DomainVerification.",
      "export const txt = { name: corp.challengeRecordName, value: corp.verificationChallenge };",
    ],
    program: {
      statements: [res("Domain", "corp", { domain: "example.com" })],
      outputs: {
        txtName: ref("corp", "challengeRecordName"),
        txtValue: ref("corp", "verificationChallenge"),
      },
    },
  },
  resolvedInputs: [],
  description: [
    "Domain: an organization's verified e-mail domain with its SAML / SSO settings.",
    "API: `/api/organizations/:organization_id/domains/` (POST create, GET retrieve, PATCH update, DELETE).",
    "",
    "- `domain` is immutable and unique across the whole instance: changing it replaces the domain, deleting the",
    "  old one first.",
    "- `jitProvisioningEnabled` and `ssoEnforcement` can only be set once the domain is verified (the server",
    "  drops them on create and refuses them on update). Until then the outputs keep the declared values and",
    "  `pendingSettings` says what is waiting, so there is no perpetual diff; after verification (see",
    "  DomainVerification) the next `pulumi up --refresh` (or refresh, then up) applies them.",
    "- Creating a Domain never waits for DNS.",
    "- Adoption: `adopt: true` takes over a domain of that name already in the organization and converges it.",
    "- Current PostHog keeps SAML settings off the domain, in its linked `identity_provider_config`",
    "  (posthog/api/organization_domain.py): its domains carry no `saml_*` field and it ignores them when sent. The",
    "  outputs record what the server's answers showed (`samlOnDomain`), and a Domain declaring SAML inputs on such a",
    "  PostHog fails, saying where SAML lives there: in preview (diff) once create, read or update recorded it; at",
    "  create before any write when the organization's domain list shows it, else after the POST, deleting the",
    "  domain it just made; never as a perpetual diff.",
  ].join("\n"),
  outputs: DomainOutputsSchema,
  secretOutputs: [],
  exclusiveInputs: [],
  importId: wholeIdImport("Domain", "<domainId> (a UUID)", UUID),
  adoption: {
    // With `adopt: true`: the organization's domains (one list read), the one of that name.
    async probe(api, inputs) {
      if (inputs.adopt !== true || !known(inputs.domain)) return undefined;
      const d = (await api.domains.all()).find((x) => x.domain === inputs.domain);
      return d && { kind: "domain", id: d.id, name: d.domain, by: "adopt: true" };
    },
  },
  records: { adopted: true },
  inputs: DomainInputsSchema,
  identity: (v) =>
    typeof v.domain === "string"
      ? [{ key: `domain:${v.domain}`, property: "domain", object: `the domain ${v.domain}` }]
      : [],
  replaceOnChanges: ["domain"],
  deleteBeforeReplace: true,
  // The last answer showed this PostHog keeps SAML elsewhere: declared SAML inputs fail the preview, no request.
  unsatisfiable: (olds, news) =>
    samlRefusal(
      olds.samlOnDomain,
      typeof news.domain === "string" && news.domain !== UNKNOWN ? news.domain : olds.domain,
      news,
    ),
  async create(api, want, ctx) {
    const organization = api.settings.organizationId ?? "";
    const op = beginCreate(
      ctx.creates,
      "Domain",
      organization,
      want.domain,
      journalContext(api.settings, ctx.resource),
    );
    // One GET first: a domain that exists before the create is adopted (adopt: true) or refused, so a create whose
    // answer is lost can only have made the domain it finds afterwards. The list also shows, before any write,
    // whether this PostHog keeps SAML on the domain (any domain of it answers alike).
    const all = await api.domains.all();
    for (const d of all) refuseSamlElsewhere(d, want);
    const existing = all.find((d) => d.domain === want.domain);
    if (existing && op.previous) {
      // A create of this resource never returned (its run was killed) after finding no such domain: it made this one.
      op.made(existing.id);
      return { id: existing.id, outs: announce(toOutputs(await converge(api, existing, want), want, false)) };
    }
    if (existing) {
      if (!want.adopt) {
        throw new Error(
          `Domain ${want.domain} already exists in this organization (id ${existing.id}); set adopt: true to manage it`,
        );
      }
      const d = await converge(api, existing, want);
      return { id: d.id, outs: toOutputs(d, want, true) };
    }
    let created: Domain | undefined;
    /** The create's answer was lost and the domain it made was found. */
    let lost = false;
    await op.journal();
    try {
      created = await api.domains.create({
        body: {
          domain: want.domain,
          ...(want.samlEntityId !== undefined ? { saml_entity_id: want.samlEntityId } : {}),
          ...(want.samlAcsUrl !== undefined ? { saml_acs_url: want.samlAcsUrl } : {}),
          ...(want.samlX509Cert !== undefined ? { saml_x509_cert: want.samlX509Cert } : {}),
        },
      });
    } catch (e) {
      // A create whose answer was lost: the domain is there if the write went through; adopt it, never duplicate.
      if (e instanceof AmbiguousWriteError) created = await findByName(api, want.domain);
      if (!created) {
        op.failed();
        if (e instanceof ValidationError && e.attr === "domain" && e.code === "unique") {
          const mine = await findByName(api, want.domain);
          throw new Error(
            mine
              ? `Domain ${want.domain} already exists in this organization (id ${mine.id}); set adopt: true to manage it`
              : `Domain ${want.domain} is already claimed by another organization (domains are unique across PostHog)`,
            { cause: e },
          );
        }
        throw e;
      }
      lost = true;
    }
    // SAML fields were sent with the create; a PostHog that keeps SAML elsewhere ignored them (nothing in the list
    // showed it: the organization had no domain). The domain is deleted again: it was made only for a failure.
    const refusal = samlRefusal(samlOnDomain(created), want.domain, want);
    if (refusal !== undefined) {
      try {
        await api.domains.delete({ id: created.id });
      } catch (e) {
        op.made(created.id);
        throw new Error(
          `${refusal}. The domain this create made (id ${created.id}) could not be deleted again: delete it in ` +
            "PostHog, or remove the SAML inputs and take it over with adopt: true",
          { cause: e },
        );
      }
      op.failed();
      throw new Error(`${refusal}. The domain this create made was deleted again: nothing is left`);
    }
    op.made(created.id);
    if (lost) return { id: created.id, outs: toOutputs(await converge(api, created, want), want, false) };
    // JIT/SSO cannot be set before verification; SAML fields were sent with the create.
    return { id: created.id, outs: announce(toOutputs(created, want, false)) };
  },
  async read(api, id, props, how) {
    // A refresh reads it from the organization's list (the same fields as a GET).
    const live = await listedOrRetrieved(
      how,
      () => api.domains.find({ id }),
      () => api.domains.retrieve({ id }),
    );
    return toOutputs(live, props, props.adopted);
  },
  async update(api, id, olds, want) {
    // One PATCH against the state last read; a second only if the domain turned out verified meanwhile
    // and JIT/SSO are still to apply (a GET only when there is nothing to send).
    const refusal = samlRefusal(olds.samlOnDomain, want.domain, want);
    if (refusal !== undefined) throw new Error(refusal);
    const body = convergeBody(wireOf(id, olds), want);
    const d =
      Object.keys(body).length > 0
        ? await api.domains.update({ id, body })
        : await api.domains.retrieve({ id });
    // State written before `samlOnDomain` existed: the answer shows it (the SAML fields sent were ignored).
    refuseSamlElsewhere(d, want);
    return announce(toOutputs(await converge(api, d, want), want, olds.adopted));
  },
  async delete(api, id, props) {
    // Adopted objects are left as they were found (README, "What destroy does"). State written before the marker
    // existed: a domain declared with adopt: true may have been adopted, so it is kept.
    const adopted = props.adopted ?? props.adopt === true;
    if (adopted && props.deleteAdoptedOnDestroy !== true) {
      keptOnDestroy(`Domain ${props.domain} (${id})`, props.adopted === undefined, "deleteAdoptedOnDestroy");
      return;
    }
    await api.domains.delete({ id });
  },
});
