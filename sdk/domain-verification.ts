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
  /** The verified Domain's id. */
  declare readonly domainId: pulumi.Output<string>;
  /** How long create/update keep retrying, in seconds. */
  declare readonly timeoutSeconds: pulumi.Output<number>;
  /** The domain name. */
  declare readonly domain: pulumi.Output<string>;
  /** True when verified. */
  declare readonly isVerified: pulumi.Output<boolean>;
  /** When the domain was verified (ISO 8601). */
  declare readonly verifiedAt: pulumi.Output<string | null>;

  /**
   * @param name the Pulumi resource name
   * @param args `domainId` and optional `timeoutSeconds` (default 300)
   * @param opts resource options (typically `dependsOn` the DNS record)
   */
  constructor(name: string, args: DomainVerificationArgs, opts?: pulumi.CustomResourceOptions) {
    const outs = outputKeys(["domain", "isVerified", "verifiedAt"]);
    super(provider, name, { ...outs, ...args, ...named(name, args) }, opts, MODULE, "DomainVerification");
  }
}
