/**
 * Adoption in a preview (issue 28, item 5): a resource new to the stack whose create takes over an existing object
 * (docs/how-it-works.md, "The adoption pattern") is counted by the engine under "create", for the engine knows
 * only that the resource is new to the stack. So that the preview says what will happen, `check` (in a preview,
 * for a resource new to the stack with valid inputs) reads the object the create would adopt, with one read per
 * object and no write, and says which one it is: its kind, id and name.
 *
 * What a create adopts, read as the create reads it:
 * - Project with `projectId`: GET `/api/organizations/:organization_id/projects/:id/`;
 * - Dashboard with `dashboardId`: GET `/api/projects/:project_id/dashboards/:id/` (a soft-deleted one answers 404:
 *   it is restored, and said so);
 * - Domain with `adopt: true`: the organization's domains (one list read), the one of that name;
 * - Invite with `adopt: true`: the organization's invites (one list read), a pending unexpired one of that e-mail
 *   and level;
 * - Member (always): the organization's members (one list read), the one of that e-mail or user UUID;
 * - BatchExportPause (always): GET `/api/organizations/:organization_id/batch_exports/:id/`.
 * Nothing found, an input unknown during the preview, or a failed read: nothing is said (the create decides, as
 * before). DashboardCollaborator's adoption (a user who already is a collaborator) is not announced. An Invite without
 * `adopt: true` whose address has a pending invite is said too, as a warning: its create will fail on it.
 */
import type { PostHogClient } from "../client";

/** Pulumi's marker for a value not known during preview. */
const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

/** What a create will adopt: the object's kind, id and name, and the input that makes it adopt. */
export interface Adoption {
  /** The kind of object, in PostHog's words: `project`, `dashboard`, `domain`, `invite`, `member`, `batch export`. */
  kind: string;
  id: string;
  /** The object's name as PostHog shows it (a member: their e-mail; an invite: its e-mail). */
  name: string;
  /** The input that makes the create adopt (`projectId`, `adopt: true`, …), or why it always adopts. */
  by: string;
  /** More to say (a soft-deleted dashboard is restored; the level a member has now), else undefined. */
  note?: string | undefined;
}

const known = (v: unknown): v is string | number =>
  (typeof v === "string" && v !== UNKNOWN && v !== "") || typeof v === "number";

/**
 * The existing object the create of resource type `type` with checked `inputs` will adopt, read with one request
 * (a GET of the object, or one list read), else undefined (nothing to adopt, an unknown input, the object not
 * found). Never writes.
 * @throws the client's errors of that read (the caller ignores them: the create decides)
 */
export async function adoptionOf(
  type: string,
  api: PostHogClient,
  inputs: Record<string, unknown>,
): Promise<Adoption | undefined> {
  switch (type) {
    case "Project": {
      if (!known(inputs.projectId) || inputs.projectId === "@current") return undefined;
      const p = await api.projects.retrieve({ id: String(inputs.projectId) });
      return { kind: "project", id: String(p.id), name: p.name ?? "", by: "projectId" };
    }
    case "Dashboard": {
      if (!known(inputs.dashboardId)) return undefined;
      const projectId = known(inputs.projectId) ? String(inputs.projectId) : undefined;
      const id = Number(inputs.dashboardId);
      try {
        const d = await api.dashboards.retrieve({ projectId, id });
        return { kind: "dashboard", id: String(d.id), name: d.name ?? "", by: "dashboardId" };
      } catch {
        return undefined;
      }
    }
    case "Domain": {
      if (inputs.adopt !== true || !known(inputs.domain)) return undefined;
      const d = (await api.domains.all()).find((x) => x.domain === inputs.domain);
      return d && { kind: "domain", id: d.id, name: d.domain, by: "adopt: true" };
    }
    case "Invite": {
      if (inputs.adopt !== true || !known(inputs.targetEmail)) return undefined;
      const i = await api.invites.find({ email: String(inputs.targetEmail) });
      if (!i || i.is_expired || i.level !== inputs.level) return undefined;
      return {
        kind: "invite",
        id: i.id,
        name: i.target_email ?? String(inputs.targetEmail),
        by: "adopt: true",
      };
    }
    case "Member": {
      const by = known(inputs.userUuid) ? { userUuid: String(inputs.userUuid) } : undefined;
      const email = known(inputs.email) ? String(inputs.email) : undefined;
      if (!by && email === undefined) return undefined;
      const m = await api.members.find(by ?? { email: email ?? "" });
      if (!m) return undefined;
      const who = [m.user.first_name, m.user.last_name].filter(Boolean).join(" ");
      return {
        kind: "member",
        id: m.user.uuid,
        name: who ? `${m.user.email} (${who})` : m.user.email,
        by: "a Member always takes over an existing member",
        note: `level ${m.level} now`,
      };
    }
    case "BatchExportPause": {
      if (!known(inputs.batchExportId)) return undefined;
      const b = await api.batchExports.retrieve({ id: String(inputs.batchExportId) });
      return {
        kind: "batch export",
        id: b.id,
        name: b.name ?? "",
        by: "a BatchExportPause always takes over an existing batch export",
        note: b.paused ? "paused now" : "running now",
      };
    }
    default:
      return undefined;
  }
}

/** The line a preview prints for an adoption by the resource `resource` (its Pulumi name) of type `type`. */
export function adoptionMessage(type: string, resource: string | undefined, a: Adoption): string {
  const who = resource === undefined ? type : `${type} "${resource}"`;
  const note = a.note === undefined ? "" : `, ${a.note}`;
  return (
    `${who} adopts the existing ${a.kind} ${a.id} ${JSON.stringify(a.name)}${note} (${a.by}): nothing is ` +
    `created in PostHog; the engine counts it under "create" because the resource is new to the stack`
  );
}

/**
 * The line a preview prints when the create of an Invite without `adopt: true` (checked `inputs`) will fail because
 * its address already has a pending invite (PostHog keeps one per address; the create refuses to replace one that
 * no resource of the run holds: provider/resources/invite.ts), else undefined. One list read (GET
 * `/api/organizations/:organization_id/invites/`); never writes.
 * @throws the client's errors of that read (the caller ignores them: the create decides)
 */
export async function pendingInviteNotice(
  resource: string | undefined,
  api: PostHogClient,
  inputs: Record<string, unknown>,
): Promise<string | undefined> {
  if (inputs.adopt === true || !known(inputs.targetEmail)) return undefined;
  const email = String(inputs.targetEmail);
  const i = await api.invites.find({ email });
  if (!i || i.is_expired) return undefined;
  return (
    `${resource === undefined ? "Invite" : `Invite "${resource}"`}: PostHog already has a pending invite for ` +
    `${email}, ${i.id} (level ${i.level}, created ${i.created_at ?? "at an unknown time"}): pulumi up will fail on ` +
    "it, sending nothing, unless the Invite declares adopt: true (PostHog keeps one invite per address: creating " +
    "would replace it and send a second e-mail)"
  );
}

/**
 * In a preview, says on the provider host's standard output (the CLI shows it in the preview's output) which
 * existing object the create of `type` will adopt ({@link adoptionOf}), if any; for an Invite whose create will fail
 * on a pending invite of its address, a `warning:` line ({@link pendingInviteNotice}). Read errors say nothing: the
 * create decides, as before. One request at most; never writes.
 */
export async function announceAdoption(
  type: string,
  resource: string | undefined,
  api: PostHogClient,
  inputs: Record<string, unknown>,
): Promise<void> {
  let found: Adoption | undefined;
  let pending: string | undefined;
  try {
    found = await adoptionOf(type, api, inputs);
    if (type === "Invite" && !found) pending = await pendingInviteNotice(resource, api, inputs);
  } catch {
    return;
  }
  if (found) console.log(`info: ${adoptionMessage(type, resource, found)}`);
  if (pending) console.log(`warning: ${pending}`);
}
