/**
 * The output properties each resource class registers beyond the inputs it is given (as `undefined` inputs, so
 * the engine's outputs fill them), by class name (sdk/common.ts `outputKeys`). bench/latency.ts's naive provider
 * with outputs declares the same ones, so the scale bench's baseline pays the program's cost of the properties
 * ours declares. A module of its own that imports nothing: the bench reads it without loading `@pulumi/pulumi`.
 */
export const OUTPUT_KEYS = {
  BatchExportPause: ["pausedBefore", "name", "lastPausedAt"],
  Dashboard: ["projectId", "deleted", "creationMode", "effectiveRestrictionLevel", "isShared", "createdAt"],
  DashboardCollaborator: ["projectId", "email", "addedAt"],
  DashboardSharing: ["projectId", "accessToken", "createdAt"],
  Domain: [
    "isVerified",
    "verifiedAt",
    "verificationChallenge",
    "challengeRecordName",
    "hasSaml",
    "pendingSettings",
    "samlOnDomain",
  ],
  DomainVerification: ["domain", "isVerified", "verifiedAt"],
  Invite: ["isExpired", "accepted", "emailingAttemptMade", "createdAt"],
  Member: [
    "userUuid",
    "email",
    "membershipId",
    "firstName",
    "lastName",
    "joinedAt",
    "is2faEnabled",
    "levelBefore",
  ],
  Project: ["projectId", "uuid", "organization", "apiToken", "liveEventsToken", "createdAt", "ingestedEvent"],
} as const satisfies Record<string, readonly string[]>;
