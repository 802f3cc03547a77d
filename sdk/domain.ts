import * as pulumi from "@pulumi/pulumi";
import type { DomainArgs } from "./args";
import { MODULE, named, outputKeys } from "./common";
import { providerShim } from "./provider-shim";

export type { DomainArgs } from "./args";

const provider = providerShim("Domain");

/**
 * An organization domain with its SAML / SSO settings (type `pulumi-nodejs:dynamic/posthog:Domain`).
 * `domain` changes replace it (old one deleted first). JIT provisioning and SSO enforcement are applied
 * once the domain is verified (see {@link DomainVerification}); `pendingSettings` says what waits.
 * Adopt an existing domain of the organization with `adopt: true`.
 *
 * ```ts
 * const domain = new posthog.Domain("corp", { domain: "example.com", ssoEnforcement: "google-oauth2" });
 * ```
 */
export class Domain extends pulumi.dynamic.Resource {
  // generated:outputs (npm run codegen, from the resource's OutputsSchema; do not edit)
  /** The domain name, e.g. `example.com`. */
  declare readonly domain: pulumi.Output<string>;
  /** Whether users with an e-mail on this domain join automatically (the declared value while unverified). */
  declare readonly jitProvisioningEnabled: pulumi.Output<boolean>;
  /** The enforced SSO provider, "" for none (the declared value while unverified). */
  declare readonly ssoEnforcement: pulumi.Output<string>;
  /** The SAML IdP entity id; "" when unset. */
  declare readonly samlEntityId: pulumi.Output<string>;
  /** The SAML assertion consumer service URL; "" when unset. */
  declare readonly samlAcsUrl: pulumi.Output<string>;
  /** The SAML X.509 certificate; "" when unset. */
  declare readonly samlX509Cert: pulumi.Output<string>;
  /** As declared: take over a domain of this name that already exists. */
  declare readonly adopt: pulumi.Output<boolean>;
  /** As declared: delete the adopted domain on destroy. */
  declare readonly deleteAdoptedOnDestroy: pulumi.Output<boolean | undefined>;
  /** True once PostHog found the TXT record (see DomainVerification). */
  declare readonly isVerified: pulumi.Output<boolean>;
  /** When the domain was verified (ISO 8601), else null. */
  declare readonly verifiedAt: pulumi.Output<string | null>;
  /** The value to publish as the TXT record named by `challengeRecordName`. */
  declare readonly verificationChallenge: pulumi.Output<string>;
  /** The DNS name of the TXT record to publish: `_posthog-challenge.<domain>`. */
  declare readonly challengeRecordName: pulumi.Output<string>;
  /** True when SAML is fully configured. */
  declare readonly hasSaml: pulumi.Output<boolean>;
  /** What is declared but waits for the verification, else null. */
  declare readonly pendingSettings: pulumi.Output<string | null>;
  /**
   * Whether this PostHog keeps SAML settings on the domain. False for current PostHog, which keeps them in the
   * domain's SSO configuration (`identity_provider_config`): the SAML inputs must then not be declared (preview
   * fails, saying so). Absent in state written before it existed.
   */
  declare readonly samlOnDomain: pulumi.Output<boolean | undefined>;
  // /generated:outputs

  /**
   * @param name the Pulumi resource name
   * @param args the domain's inputs (see {@link DomainArgs})
   * @param opts resource options
   */
  constructor(name: string, args: DomainArgs, opts?: pulumi.CustomResourceOptions) {
    const outs = outputKeys("Domain");
    super(provider, name, { ...outs, ...args, ...named(name, args) }, opts, MODULE, "Domain");
  }
}
