import * as pulumi from "@pulumi/pulumi";
import type { DomainVerificationArgs } from "./args";
import { MODULE, named, outputKeys } from "./common";
import { providerShim } from "./provider-shim";

export type { DomainVerificationArgs } from "./args";

const provider = providerShim("DomainVerification");

/**
 * Verifies a {@link Domain} once its TXT record is published, waiting with backoff up to `timeoutSeconds`
 * (type `pulumi-nodejs:dynamic/posthog:DomainVerification`), like AWS's CertificateValidation.
 *
 * ```ts
 * const txt = new cloudflare.Record("challenge", { name: domain.challengeRecordName, type: "TXT", content: domain.verificationChallenge, zoneId });
 * new posthog.DomainVerification("corp", { domainId: domain.id }, { dependsOn: [txt] });
 * ```
 */
export class DomainVerification extends pulumi.dynamic.Resource {
  // generated:outputs (npm run codegen, from the resource's OutputsSchema; do not edit)
  /** The Domain's id (UUID; also the resource id). */
  declare readonly domainId: pulumi.Output<string>;
  /** As declared: how long create and update keep retrying, in seconds. */
  declare readonly timeoutSeconds: pulumi.Output<number>;
  /** The verified domain name. */
  declare readonly domain: pulumi.Output<string>;
  /** True when the domain is verified. */
  declare readonly isVerified: pulumi.Output<boolean>;
  /** When the domain was verified (ISO 8601), else null. */
  declare readonly verifiedAt: pulumi.Output<string | null>;
  // /generated:outputs

  /**
   * @param name the Pulumi resource name
   * @param args `domainId` and optional `timeoutSeconds` (default 300)
   * @param opts resource options (typically `dependsOn` the DNS record)
   */
  constructor(name: string, args: DomainVerificationArgs, opts?: pulumi.CustomResourceOptions) {
    const outs = outputKeys("DomainVerification");
    super(provider, name, { ...outs, ...args, ...named(name, args) }, opts, MODULE, "DomainVerification");
  }
}
