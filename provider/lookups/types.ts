/**
 * The plain result types of the lookups that the client's schemas do not give (provider/lookups/index.ts): no zod
 * type here, so that the SDK's declaration files, which name them, make a user's compile read none of zod's.
 */

/** A member as returned by `getMember`. */
export interface MemberInfo {
  /** The user's UUID (what Member, DashboardCollaborator take). */
  userUuid: string;
  email: string;
  firstName: string;
  lastName: string;
  /** Organization level: 1 member, 8 admin, 15 owner. */
  level: number;
  /** The membership id (UUID). */
  membershipId: string;
  /** When the person joined (ISO 8601). */
  joinedAt: string | null;
}
