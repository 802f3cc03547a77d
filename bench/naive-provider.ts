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
 */

/** What the naive program captures: the API origin, key, organization and project. */
export interface NaiveConfig {
  host: string;
  apiKey: string;
  organizationId: string;
  projectId: number;
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
  const org = `/api/organizations/${config.organizationId}`;
  const dashboards = `/api/projects/${config.projectId}/dashboards`;

  return {
    Dashboard: {
      async create(inputs) {
        const d = (await call("POST", `${dashboards}/`, inputs)) as Props;
        return { id: String(d.id), outs: { ...inputs, id: d.id } };
      },
      async read(id, props) {
        const d = (await call("GET", `${dashboards}/${id}/`)) as Props;
        return { id, props: { ...props, name: d.name, description: d.description } };
      },
      async update(id, _olds, news) {
        const d = (await call("PATCH", `${dashboards}/${id}/`, news)) as Props;
        return { outs: { ...news, id: d.id } };
      },
      async delete(id) {
        await call("PATCH", `${dashboards}/${id}/`, { deleted: true });
      },
    },
    Invite: {
      async create(inputs) {
        const i = (await call("POST", `${org}/invites/`, inputs)) as Props;
        return { id: String(i.id), outs: { ...inputs, id: i.id } };
      },
      async read(id, props) {
        const found = (await listAll(`${org}/invites/`)).find((i) => String(i.id) === id);
        return found ? { id, props: { ...props, level: found.level } } : { id: "", props: {} };
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
        return { id: uuid, outs: { ...inputs } };
      },
      async read(id, props) {
        const m = (await listAll(`${org}/members/`)).find((x) => (x.user as Props).uuid === id);
        return m ? { id, props: { ...props, level: m.level } } : { id: "", props: {} };
      },
      async update(id, _olds, news) {
        await call("PATCH", `${org}/members/${id}/`, { level: news.level });
        return { outs: { ...news } };
      },
      async delete() {},
    },
    DashboardCollaborator: {
      async create(inputs) {
        await call("POST", `${dashboards}/${inputs.dashboardId}/collaborators/`, {
          user_uuid: inputs.userUuid,
          level: 37,
        });
        return { id: `${inputs.dashboardId}/${inputs.userUuid}`, outs: { ...inputs } };
      },
      async read(id, props) {
        const [dashboardId, uuid] = id.split("/");
        const list = (await call("GET", `${dashboards}/${dashboardId}/collaborators/`)) as unknown;
        const items = (
          Array.isArray(list) ? list : ((list as { results?: Props[] }).results ?? [])
        ) as Props[];
        const c = items.find((x) => (x.user as Props).uuid === uuid);
        return c ? { id, props: { ...props, level: c.level } } : { id: "", props: {} };
      },
      async delete(id) {
        const [dashboardId, uuid] = id.split("/");
        await call("DELETE", `${dashboards}/${dashboardId}/collaborators/${uuid}/`);
      },
    },
  };
}
