/**
 * The BASELINE the benchmarks compare against (not part of the package): the dynamic provider users write
 * themselves when no package exists. Deliberately typical, not deliberately bad:
 *
 * - `fetch`, no retries, no rate limiting, no timeouts: a 429 or a 5xx fails the operation;
 * - the connection settings, API key included, captured in the closure at program time (so they are
 *   serialized into every resource's `__provider`, as are these functions' source texts);
 * - reading one member, invite or collaborator lists EVERY page and looks for it (as the official Terraform
 *   provider does for members);
 * - no `check` and no `diff`: Pulumi's defaults (no HTTP).
 *
 * Serialized like ours: `serializeFunction(() => provider, {allowSecrets: true})` from the compiled dist/.
 *
 * Two variants bound the engine's share of the scale bench (bench/scale.ts): with `withOutputs`, the same naive
 * provider returns the output properties ours returns ({@link oursOutputs}) instead of its inputs plus an id, so
 * the state holds what ours holds; {@link noopProviders} answers at once, without HTTP, with the same outputs.
 */

/** What the naive program captures: the API origin, key, organization and project. */
export interface NaiveConfig {
  host: string;
  apiKey: string;
  organizationId: string;
  projectId: number;
  /** Return ours' output properties ({@link oursOutputs}) rather than the inputs plus an id (default false). */
  withOutputs?: boolean;
}

type Props = Record<string, unknown>;

/** A Pulumi dynamic provider (the subset the naive one implements). */
export interface NaiveProvider {
  create(inputs: Props): Promise<{ id: string; outs: Props }>;
  read(id: string, props: Props): Promise<{ id: string; props: Props }>;
  update?(id: string, olds: Props, news: Props): Promise<{ outs: Props }>;
  delete(id: string, props: Props): Promise<void>;
}

/**
 * The naive providers, one per kind, for `config`.
 * Endpoints: dashboards `/api/projects/:id/dashboards/`, invites and members `/api/organizations/:id/…`,
 * collaborators `/api/projects/:id/dashboards/:id/collaborators/`. Every method throws `Error` with the
 * status and body text on a non-2xx answer.
 */
export function naiveProviders(config: NaiveConfig): Record<string, NaiveProvider> {
  const call = async (method: string, path: string, body?: unknown): Promise<Props | undefined> => {
    const res = await fetch(`${config.host}${path}`, {
      method,
      headers: { Authorization: `Bearer ${config.apiKey}`, "Content-Type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (!res.ok) throw new Error(`${method} ${path} failed: ${res.status} ${await res.text()}`);
    const text = await res.text();
    return text ? (JSON.parse(text) as Props) : undefined;
  };
  /** Every item of a paginated list (follows `next` to the end). */
  const listAll = async (path: string): Promise<Props[]> => {
    const items: Props[] = [];
    let next: string | null = `${config.host}${path}`;
    while (next) {
      const page = (await call("GET", next.slice(config.host.length))) as {
        results: Props[];
        next: string | null;
      };
      items.push(...page.results);
      next = page.next;
    }
    return items;
  };
  /** What a method returns: ours' outputs with `withOutputs`, else the naive provider's own `plain` ones. */
  const outs = (kind: string, api: Props, inputs: Props, plain: Props): Props =>
    config.withOutputs ? oursOutputs(kind, api, inputs, config.projectId) : plain;
  const org = `/api/organizations/${config.organizationId}`;
  const dashboards = `/api/projects/${config.projectId}/dashboards`;

  return {
    Dashboard: {
      async create(inputs) {
        const d = (await call("POST", `${dashboards}/`, inputs)) as Props;
        return { id: String(d.id), outs: outs("Dashboard", d, inputs, { ...inputs, id: d.id }) };
      },
      async read(id, props) {
        const d = (await call("GET", `${dashboards}/${id}/`)) as Props;
        return {
          id,
          props: outs("Dashboard", d, props, { ...props, name: d.name, description: d.description }),
        };
      },
      async update(id, _olds, news) {
        const d = (await call("PATCH", `${dashboards}/${id}/`, news)) as Props;
        return { outs: outs("Dashboard", d, news, { ...news, id: d.id }) };
      },
      async delete(id) {
        await call("PATCH", `${dashboards}/${id}/`, { deleted: true });
      },
    },
    Invite: {
      async create(inputs) {
        const i = (await call("POST", `${org}/invites/`, inputs)) as Props;
        return { id: String(i.id), outs: outs("Invite", i, inputs, { ...inputs, id: i.id }) };
      },
      async read(id, props) {
        const found = (await listAll(`${org}/invites/`)).find((i) => String(i.id) === id);
        return found
          ? { id, props: outs("Invite", found, props, { ...props, level: found.level }) }
          : { id: "", props: {} };
      },
      async delete(id) {
        await call("DELETE", `${org}/invites/${id}/`);
      },
    },
    Member: {
      async create(inputs) {
        const m = (await listAll(`${org}/members/`)).find((x) => (x.user as Props).email === inputs.email);
        if (!m) throw new Error(`no member ${inputs.email}`);
        const uuid = String((m.user as Props).uuid);
        await call("PATCH", `${org}/members/${uuid}/`, { level: inputs.level });
        return { id: uuid, outs: outs("Member", { ...m, level: inputs.level }, inputs, { ...inputs }) };
      },
      async read(id, props) {
        const m = (await listAll(`${org}/members/`)).find((x) => (x.user as Props).uuid === id);
        return m
          ? { id, props: outs("Member", m, props, { ...props, level: m.level }) }
          : { id: "", props: {} };
      },
      async update(id, olds, news) {
        const m = (await call("PATCH", `${org}/members/${id}/`, { level: news.level })) as Props;
        return { outs: outs("Member", { user: { uuid: id, email: olds.email }, ...m }, news, { ...news }) };
      },
      async delete() {},
    },
    DashboardCollaborator: {
      async create(inputs) {
        const c = await call("POST", `${dashboards}/${inputs.dashboardId}/collaborators/`, {
          user_uuid: inputs.userUuid,
          level: 37,
        });
        return {
          id: `${inputs.dashboardId}/${inputs.userUuid}`,
          outs: outs("DashboardCollaborator", c ?? {}, inputs, { ...inputs }),
        };
      },
      async read(id, props) {
        const [dashboardId, uuid] = id.split("/");
        const list = (await call("GET", `${dashboards}/${dashboardId}/collaborators/`)) as unknown;
        const items = (
          Array.isArray(list) ? list : ((list as { results?: Props[] }).results ?? [])
        ) as Props[];
        const c = items.find((x) => (x.user as Props).uuid === uuid);
        return c
          ? { id, props: outs("DashboardCollaborator", c, props, { ...props, level: c.level }) }
          : { id: "", props: {} };
      },
      async delete(id) {
        const [dashboardId, uuid] = id.split("/");
        await call("DELETE", `${dashboards}/${dashboardId}/collaborators/${uuid}/`);
      },
    },
  };
}

/** Ours' numeric member levels by name (sdk/member.ts: the `level` input takes either). */
const MEMBER_LEVELS: Record<string, number> = { member: 1, admin: 8, owner: 15 };

/**
 * The output properties ours returns (sdk/*.ts `declare readonly` fields, those set for the generated program of
 * bench/latency.ts) for one object of `kind`: `api` is the API's object (snake_case, as the emulator answers),
 * `inputs` the resource's inputs (naive's or ours': either spelling), `projectId` the project the provider serves.
 * Kinds: Member, Invite, Dashboard, DashboardCollaborator; throws on another.
 */
export function oursOutputs(kind: string, api: Props, inputs: Props, projectId: number): Props {
  const user = (api.user ?? {}) as Props;
  const level = (v: unknown) => (typeof v === "string" ? (MEMBER_LEVELS[v] ?? 1) : Number(v ?? 1));
  switch (kind) {
    case "Member":
      return {
        userUuid: String(user.uuid ?? ""),
        email: String(user.email ?? inputs.email ?? ""),
        level: level(api.level ?? inputs.level),
        // the generated program declares retainOnDelete: true (ours) or nothing (naive)
        retainOnDelete: inputs.retainOnDelete !== false,
        membershipId: String(api.id ?? ""),
        firstName: String(user.first_name ?? ""),
        lastName: String(user.last_name ?? ""),
        joinedAt: (api.joined_at as string | undefined) ?? null,
        is2faEnabled: Boolean(api.is_2fa_enabled ?? false),
      };
    case "Invite":
      return {
        targetEmail: String(api.target_email ?? inputs.targetEmail ?? inputs.target_email ?? ""),
        firstName: String(api.first_name ?? ""),
        level: level(api.level ?? inputs.level),
        message: String(api.message ?? ""),
        privateProjectAccess: (api.private_project_access as unknown[] | undefined) ?? [],
        sendEmail: Boolean(inputs.sendEmail ?? false),
        combinePendingInvites: false,
        adopt: false,
        isExpired: Boolean(api.is_expired ?? false),
        accepted: false,
        emailingAttemptMade: Boolean(api.emailing_attempt_made ?? false),
        createdAt: (api.created_at as string | undefined) ?? null,
      };
    case "Dashboard":
      return {
        name: String(api.name ?? inputs.name ?? ""),
        description: String(api.description ?? ""),
        pinned: Boolean(api.pinned ?? false),
        tags: (api.tags as string[] | undefined) ?? [],
        restrictionLevel: Number(
          api.restriction_level ?? inputs.restrictionLevel ?? inputs.restriction_level ?? 21,
        ),
        projectId: String(inputs.projectId ?? projectId),
        deleteInsights: false,
        deleted: Boolean(api.deleted ?? false),
        creationMode: (api.creation_mode as string | undefined) ?? null,
        effectiveRestrictionLevel: Number(
          api.effective_restriction_level ?? api.restriction_level ?? inputs.restrictionLevel ?? 21,
        ),
        isShared: Boolean(api.is_shared ?? false),
        createdAt: (api.created_at as string | undefined) ?? null,
      };
    case "DashboardCollaborator":
      return {
        dashboardId: Number(inputs.dashboardId),
        userUuid: String(inputs.userUuid),
        level: Number(api.level ?? 37),
        projectId: String(inputs.projectId ?? projectId),
        email: String(user.email ?? ""),
        addedAt: (api.added_at as string | undefined) ?? null,
      };
    default:
      throw new Error(`no outputs for ${kind}`);
  }
}

/**
 * The no-op providers, one per kind: the floor the engine sets on its own. They answer at once and send no
 * request: ids are made up (a random UUID for a Member, as ours' ids are user UUIDs; a random integer for a
 * Dashboard or an Invite; `<dashboardId>/<userUuid>` for a DashboardCollaborator), the outputs are ours'
 * ({@link oursOutputs}) derived from the inputs of ours' generated program, `read` returns the state as it is,
 * `delete` does nothing. `projectId`: the project of a resource that declares none.
 */
export function noopProviders(projectId: number): Record<string, NaiveProvider> {
  const now = () => new Date().toISOString();
  const anInt = () => 1 + Math.floor(Math.random() * 2 ** 31);
  const make = (kind: string, id: (inputs: Props) => string, api: (inputs: Props, id: string) => Props) => ({
    async create(inputs: Props) {
      const made = id(inputs);
      return { id: made, outs: oursOutputs(kind, api(inputs, made), inputs, projectId) };
    },
    async read(id: string, props: Props) {
      return { id, props };
    },
    async update(id: string, _olds: Props, news: Props) {
      return { outs: oursOutputs(kind, api(news, id), news, projectId) };
    },
    async delete() {},
  });
  return {
    Member: make(
      "Member",
      () => crypto.randomUUID(),
      (inputs, id) => ({
        id: crypto.randomUUID(),
        user: { uuid: id, email: inputs.email },
        joined_at: now(),
      }),
    ),
    Invite: make(
      "Invite",
      () => String(anInt()),
      (inputs) => ({ target_email: inputs.targetEmail, level: 1, created_at: now() }),
    ),
    Dashboard: make(
      "Dashboard",
      () => String(anInt()),
      (inputs) => ({
        name: inputs.name,
        restriction_level: inputs.restrictionLevel ?? 21,
        created_at: now(),
      }),
    ),
    DashboardCollaborator: make(
      "DashboardCollaborator",
      (inputs) => `${inputs.dashboardId}/${inputs.userUuid}`,
      () => ({ level: 37, added_at: now() }),
    ),
  };
}
