/**
 * Organization domains (verified e-mail domains with SSO/SAML settings).
 * Endpoints: `/api/organizations/:organization_id/domains/` (+ `:id/`, `:id/verify/`).
 */
import { z } from "zod";
import {
  type ClientContext,
  call,
  listOperations,
  type OrgParams,
  type PageParams,
  pageSchema,
  parseBody,
  sharedAll,
} from "./common";
import { path } from "./transport";

/** PostHog's domain rule: lowercase labels of letters/digits/hyphens, a TLD of 2+ letters. */
export const DOMAIN_PATTERN = /^([a-z0-9]+(-[a-z0-9]+)*\.)+[a-z]{2,}$/;

/** A domain as returned by the API (SAML fields are null/absent when not configured). */
export const DomainSchema = z.looseObject({
  id: z.string(),
  domain: z.string(),
  is_verified: z.boolean().nullish(),
  verified_at: z.string().nullish(),
  verification_challenge: z.string().nullish(),
  jit_provisioning_enabled: z.boolean().nullish(),
  sso_enforcement: z.string().nullish(),
  has_saml: z.boolean().nullish(),
  saml_entity_id: z.string().nullish(),
  saml_acs_url: z.string().nullish(),
  saml_x509_cert: z.string().nullish(),
});
export type Domain = z.output<typeof DomainSchema>;

/**
 * Create body. `sso_enforcement` is one of "", "google-oauth2", "github", "gitlab", "saml" in PostHog (not
 * enforced here). `jit_provisioning_enabled`/`sso_enforcement` need a verified domain on update.
 */
export const DomainCreateBodySchema = z.looseObject({
  domain: z
    .string()
    .regex(DOMAIN_PATTERN, "expected a lowercase domain or subdomain name such as example.com"),
  jit_provisioning_enabled: z.boolean().optional(),
  sso_enforcement: z.string().max(28).optional(),
  saml_entity_id: z.string().nullish(),
  saml_acs_url: z.string().nullish(),
  saml_x509_cert: z.string().nullish(),
});
export type DomainCreateBody = z.input<typeof DomainCreateBodySchema>;
/** Update body: any create field (`domain` itself is immutable on the server). */
export const DomainUpdateBodySchema = DomainCreateBodySchema.partial();
export type DomainUpdateBody = z.input<typeof DomainUpdateBodySchema>;

/** Verify answer: "200, no body" in the seed, the domain object in the real service. */
export const VerifyResponseSchema = z.union([z.undefined(), DomainSchema]);

export interface DomainParams extends OrgParams {
  /** Domain UUID. */
  id: string;
}

/** The page wrapper of the list (made once: see `pageSchema`). */
const DomainPageSchema = pageSchema(DomainSchema);

const listPath = (ctx: ClientContext, p: OrgParams | undefined) =>
  path`/api/organizations/${ctx.org(p)}/domains/`;
const itemPath = (ctx: ClientContext, p: DomainParams) =>
  path`/api/organizations/${ctx.org(p)}/domains/${p.id}/`;

/** Operations on domains. */
export function domains(ctx: ClientContext) {
  return {
    /** GET `/api/organizations/:organization_id/domains/` (organization:read): `list` (one page), `iterate`, `all`. */
    ...listOperations(ctx, (p?: OrgParams & PageParams) => listPath(ctx, p), DomainPageSchema),
    /**
     * The domain with this id as the organization's list shows it (the same fields as a GET), or undefined when
     * the list does not show it. Served from a list read shared by concurrent and recent `find()` calls (see
     * `coalescing.findCacheMs`).
     */
    find: async (p: DomainParams): Promise<Domain | undefined> => {
      const items = await sharedAll(ctx, listPath(ctx, p), DomainPageSchema);
      return items.find((d) => d.id === p.id);
    },
    /**
     * POST `…/domains/` (organization:write) → 201 domain.
     * @throws InvalidInputError for a malformed body (before sending); ValidationError (e.g. `unique`).
     */
    create: async (p: OrgParams & { body: DomainCreateBody }) =>
      call(
        ctx,
        {
          method: "POST",
          path: listPath(ctx, p),
          body: parseBody(DomainCreateBodySchema, p.body, "body"),
          signal: p.signal,
        },
        DomainSchema,
      ),
    /** GET `…/domains/:id/` (organization:read). @throws NotFoundError */
    retrieve: async (p: DomainParams) =>
      call(ctx, { method: "GET", path: itemPath(ctx, p), signal: p.signal }, DomainSchema),
    /** PATCH `…/domains/:id/` (organization:write) → domain. */
    update: async (p: DomainParams & { body: DomainUpdateBody }) =>
      call(
        ctx,
        {
          method: "PATCH",
          path: itemPath(ctx, p),
          body: parseBody(DomainUpdateBodySchema, p.body, "body"),
          signal: p.signal,
        },
        DomainSchema,
      ),
    /** DELETE `…/domains/:id/` (organization:write) → 204. */
    delete: async (p: DomainParams): Promise<void> => {
      await call(ctx, { method: "DELETE", path: itemPath(ctx, p), signal: p.signal }, z.unknown());
    },
    /**
     * POST `…/domains/:id/verify/` → the domain (real service) or undefined (seed: no body). A failed DNS
     * check is still 200 with `is_verified: false`; an already verified domain → ValidationError.
     */
    verify: async (p: DomainParams & { body?: DomainUpdateBody }) =>
      call(
        ctx,
        {
          method: "POST",
          path: path`/api/organizations/${ctx.org(p)}/domains/${p.id}/verify/`,
          body: p.body === undefined ? {} : parseBody(DomainUpdateBodySchema, p.body, "body"),
          signal: p.signal,
        },
        VerifyResponseSchema,
      ),
  };
}
