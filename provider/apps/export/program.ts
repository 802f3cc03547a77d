/**
 * The files of `pulumi-posthog export`, from a {@link Snapshot}: a Pulumi program (`index.ts`), its project and
 * stack settings (`Pulumi.yaml`, `Pulumi.<stack>.yaml`), one template per dashboard (`dashboards/<key>.json`),
 * and, for a new directory, `package.json` and `tsconfig.json`. Pure: same snapshot, same text (no clock, no
 * randomness; keys sorted, lists in the snapshot's stable order). No secret is written: no API key, no
 * sharing token, no project API token.
 *
 * Layout of the program: what differs between environments is read from the stack settings (ids to adopt,
 * members and their levels, pending invites, domains, batch-export pause states); the dashboards (name,
 * description, pin, tags, restriction), their public sharing and their collaborators are code. A dashboard
 * whose id the stack names is adopted (`dashboardId`); on a stack that names none (promotion to another
 * project) it is created from `dashboards/<key>.json` (`templateJson`), or plainly when it has no tile a
 * template can carry.
 */
import { createHash } from "node:crypto";
import { DEFAULT_HOST } from "../../client";
import { dashboardTemplateText } from "../dashboard-template";
import type { DashboardSnapshot, ProjectSnapshot, Snapshot } from "../organization";

/** The Pulumi project name of the generated program (its stack settings are `posthog-org:<key>`). */
export const PROGRAM_PROJECT = "posthog-org";

const WIDTH = 110;

/**
 * A file-name-safe key from `name`: accents dropped (NFKD), lowercase ASCII letters and digits joined by "-",
 * at most 60 characters; "" when nothing is left (e.g. a name in Japanese).
 */
export function slugify(name: string): string {
  return name
    .normalize("NFKD")
    .replace(/\p{M}+/gu, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 60)
    .replace(/-+$/, "");
}

/**
 * The key of a named object: its {@link slugify}d name, else (nothing ASCII in it) `<kind>-<8 hex digits of the
 * name's SHA-256>`, the same in every environment (an id would differ between the stacks of a promotion).
 */
export function keyOf(name: string, kind: string): string {
  return slugify(name) || `${kind}-${createHash("sha256").update(name).digest("hex").slice(0, 8)}`;
}

/** Unique keys: `base`, then `base-2`, `base-3`… in call order. */
function keyMaker(): (base: string) => string {
  const used = new Set<string>();
  return (base) => {
    let key = base;
    for (let n = 2; used.has(key); n++) key = `${base}-${n}`;
    used.add(key);
    return key;
  };
}

const RESERVED = new Set(
  (
    "break case catch class const continue debugger default delete do else enum export extends false finally for " +
    "function if import in instanceof new null return super switch this throw true try typeof var void while with " +
    "yield let static implements interface package private protected public await any boolean number string " +
    "symbol object undefined config posthog pulumi project madeFrom adopted readFileSync settings"
  ).split(" "),
);

/**
 * The keys the program names its objects by, in the snapshot's order: each project's (`projects[i]`), each
 * dashboard's (`dashboards[i][j]`, project i), each batch export's (`batchExports[i]`). The resources of the
 * program are named by them (a dashboard's sharing by its dashboard's key, a collaborator by
 * `<dashboard key>/<e-mail>`); `pulumi-posthog export --import-file` names the resources of its list the same way
 * (provider/apps/export/import-file.ts).
 */
export function programKeys(snapshot: Snapshot): {
  projects: string[];
  dashboards: string[][];
  batchExports: string[];
} {
  const projectKey = keyMaker();
  const dashboardKey = keyMaker();
  const batchExportKey = keyMaker();
  const projects = snapshot.projects.map((p) => projectKey(keyOf(p.project.name, "project")));
  const dashboards = snapshot.projects.map((p) =>
    p.dashboards.map((d) => dashboardKey(keyOf(d.dashboard.name ?? "", "dashboard"))),
  );
  const batchExports = snapshot.batchExports.map((b) => batchExportKey(keyOf(b.name ?? "", "batch-export")));
  return { projects, dashboards, batchExports };
}

/** A unique camelCase identifier from a key (`web-kpis` → `webKpis`), never a reserved word. */
export function identifierMaker(): (key: string, suffix: string) => string {
  const used = new Set<string>(RESERVED);
  return (key, suffix) => {
    const parts = key.split("-").filter(Boolean);
    let base = parts.map((p, i) => (i === 0 ? p : p.charAt(0).toUpperCase() + p.slice(1))).join("");
    if (base === "" || /^[0-9]/.test(base)) base = `${suffix.toLowerCase()}${base}`;
    let id = base;
    if (used.has(id)) id = `${base}${suffix}`;
    for (let n = 2; used.has(id); n++) id = `${base}${suffix}${n}`;
    used.add(id);
    return id;
  };
}

/**
 * A TypeScript string literal as biome formats it: double quotes, unless the text holds more double quotes than
 * single ones (then single quotes, which escape less).
 */
function tsString(s: string): string {
  const json = JSON.stringify(s);
  const doubles = s.split('"').length - 1;
  const singles = s.split("'").length - 1;
  if (doubles <= singles) return json;
  return `'${json.slice(1, -1).replace(/\\"/g, '"').replace(/'/g, "\\'")}'`;
}

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** A value as a TypeScript expression on one line. `Raw` values are code. */
class Raw {
  constructor(readonly code: string) {}
}

function inline(v: unknown): string {
  if (v instanceof Raw) return v.code;
  if (typeof v === "string") return tsString(v);
  if (Array.isArray(v)) return `[${v.map(inline).join(", ")}]`;
  if (v !== null && typeof v === "object") {
    const entries = Object.entries(v).filter(([, x]) => x !== undefined);
    if (entries.length === 0) return "{}";
    return `{ ${entries.map(([k, x]) => `${IDENT.test(k) ? k : tsString(k)}: ${inline(x)}`).join(", ")} }`;
  }
  return String(v);
}

/** `value` at `indent`, one line when it fits in `room` characters, else one element per line. */
function printValue(v: unknown, indent: string, room: number): string {
  const one = inline(v);
  if (one.length <= room || v instanceof Raw || v === null || typeof v !== "object") return one;
  const inner = `${indent}  `;
  if (Array.isArray(v)) {
    return `[\n${v.map((x) => `${inner}${printValue(x, inner, WIDTH - inner.length - 1)},`).join("\n")}\n${indent}]`;
  }
  return printObject(v as Record<string, unknown>, indent);
}

/** An object literal, one property per line (biome keeps an object written so expanded). */
function printObject(o: Record<string, unknown>, indent: string): string {
  const inner = `${indent}  `;
  const lines = Object.entries(o)
    .filter(([, x]) => x !== undefined)
    .map(([k, x]) => {
      const key = k.startsWith("...") || IDENT.test(k) ? k : tsString(k);
      if (k.startsWith("...")) return `${inner}${key},`;
      const head = `${inner}${key}: `;
      return `${head}${printValue(x, inner, WIDTH - head.length - 1)},`;
    });
  return `{\n${lines.join("\n")}\n${indent}}`;
}

/** `new posthog.<type>(<name>, {…}, <opts>)` as a statement, optionally `const <id> = …`. */
function resource(
  type: string,
  name: string,
  args: Record<string, unknown>,
  opts: string | undefined,
  binding: string | undefined,
): string {
  const call = `${binding ? `const ${binding} = ` : ""}new posthog.${type}(`;
  const head = `${call}${tsString(name)}, {`;
  // As biome prints a call: the object hugs the parentheses when it is the last argument and the head fits.
  if (opts === undefined && head.length <= WIDTH)
    return `${call}${tsString(name)}, ${printObject(args, "")});`;
  return `${call}\n  ${tsString(name)},\n  ${printObject(args, "  ")},\n${opts ? `  ${opts},\n` : ""});`;
}

/** A section heading comment: `// --- Title ---…` to the line width. */
function heading(title: string): string {
  const text = `// --- ${title.replace(/\s+/g, " ")} `;
  return text.length >= WIDTH ? text.trimEnd() : text + "-".repeat(WIDTH - text.length);
}

/** A comment line's text (no line breaks). */
const commentText = (s: string) => s.replace(/\s+/g, " ").trim();

// ---------------------------------------------------------------------------------------------------------------
// YAML (by hand: the published package has no YAML dependency). Strings are JSON-quoted (valid YAML).

type Yaml = string | number | boolean | null | Yaml[] | { [k: string]: Yaml } | YamlCommented;
/** A map entry or list item with comment lines above it. */
class YamlCommented {
  constructor(
    readonly comment: string,
    readonly value: Yaml,
  ) {}
}

const yamlKey = (k: string) => (/^[A-Za-z0-9_][A-Za-z0-9_.:/@-]*$/.test(k) ? k : JSON.stringify(k));
const yamlScalar = (v: string | number | boolean | null) =>
  typeof v === "string" ? JSON.stringify(v) : v === null ? "null" : String(v);

function yamlLines(v: Yaml, indent: string): string[] {
  if (v instanceof YamlCommented) return yamlLines(v.value, indent);
  if (Array.isArray(v)) {
    if (v.length === 0) return [];
    const out: string[] = [];
    for (const item of v) {
      if (item instanceof YamlCommented) out.push(`${indent}# ${commentText(item.comment)}`);
      const value = item instanceof YamlCommented ? item.value : item;
      if (value !== null && typeof value === "object" && !Array.isArray(value) && Object.keys(value).length) {
        const [first, ...rest] = yamlLines(value, `${indent}  `);
        out.push(`${indent}- ${(first ?? "").trimStart()}`, ...rest);
      } else out.push(`${indent}- ${yamlInline(value)}`);
    }
    return out;
  }
  if (v !== null && typeof v === "object") {
    const out: string[] = [];
    for (const [k, raw] of Object.entries(v)) {
      if (raw instanceof YamlCommented) out.push(`${indent}# ${commentText(raw.comment)}`);
      const x = raw instanceof YamlCommented ? raw.value : raw;
      if (x !== null && typeof x === "object" && (Array.isArray(x) ? x.length : Object.keys(x).length)) {
        out.push(`${indent}${yamlKey(k)}:`, ...yamlLines(x, `${indent}  `));
      } else out.push(`${indent}${yamlKey(k)}: ${yamlInline(x)}`);
    }
    return out;
  }
  return [`${indent}${yamlInline(v)}`];
}

function yamlInline(v: Yaml): string {
  if (v instanceof YamlCommented) return yamlInline(v.value);
  if (Array.isArray(v)) return v.length === 0 ? "[]" : `[${v.map(yamlInline).join(", ")}]`;
  if (v !== null && typeof v === "object") return Object.keys(v).length === 0 ? "{}" : JSON.stringify(v);
  return yamlScalar(v);
}

// ---------------------------------------------------------------------------------------------------------------

/** Options of {@link renderProgram}. */
export interface RenderOptions {
  /** Stack name: the settings go to `Pulumi.<stack>.yaml`. */
  stack: string;
  /**
   * The generated package.json's dependency on pulumi-posthog: where the running copy was installed from (a
   * tarball path, a git URL: provider/apps/export/package-source.ts).
   */
  dependency: string;
}

/** A dashboard with the key naming its resource and template file. */
interface KeyedDashboard extends DashboardSnapshot {
  key: string;
  project: ProjectSnapshot;
  projectKey: string;
}

/** What {@link renderProgram} writes: file path (relative, "/"-separated) → text. */
export type ProgramFiles = Map<string, string>;

/** One project of the program: its snapshot, its key and the variable that holds it in `index.ts`. */
interface KeyedProject {
  p: ProjectSnapshot;
  key: string;
  variable: string;
}

/** What the files of one {@link renderProgram} are made from: the snapshot, its keys and the program's variables. */
interface ProgramPlan {
  snapshot: Snapshot;
  options: RenderOptions;
  keys: ReturnType<typeof programKeys>;
  projects: KeyedProject[];
  /** Every dashboard, project by project, in the snapshot's order. */
  dashboards: KeyedDashboard[];
  /** The shared dashboards (kind `sharing`): their sharing is declared. */
  sharingOn: KeyedDashboard[];
  /** The dashboards with collaborators (kind `collaborators`): each collaborator is declared. */
  withCollaborators: KeyedDashboard[];
  /** The variable of each dashboard another resource refers to, by dashboard key. */
  variables: Map<string, string>;
  /** The variable of each project, by project key. */
  projectVar: Map<string, string>;
}

/**
 * The plan of the program of `snapshot`: the keys of its objects and the variables of `index.ts` (the projects'
 * first, then the dashboards' that sharing or collaborators refer to, each unique and never a reserved word).
 */
function planProgram(snapshot: Snapshot, options: RenderOptions): ProgramPlan {
  const ident = identifierMaker();
  const keys = programKeys(snapshot);
  const projects = snapshot.projects.map((p, i) => {
    const key = keys.projects[i] as string;
    return { p, key, variable: ident(key, "Project") };
  });
  const dashboards: KeyedDashboard[] = projects.flatMap(({ p, key }, i) =>
    p.dashboards.map((d, j) => ({
      ...d,
      key: keys.dashboards[i]?.[j] as string,
      project: p,
      projectKey: key,
    })),
  );
  const sharingOn = snapshot.kinds.has("sharing") ? dashboards.filter((d) => d.dashboard.is_shared) : [];
  const withCollaborators = snapshot.kinds.has("collaborators")
    ? dashboards.filter((d) => d.collaborators.length > 0)
    : [];
  const referenced = new Set([...sharingOn, ...withCollaborators].map((d) => d.key));
  const variables = new Map<string, string>();
  for (const d of dashboards) if (referenced.has(d.key)) variables.set(d.key, ident(d.key, "Dashboard"));
  const projectVar = new Map(projects.map((x) => [x.key, x.variable]));
  return {
    snapshot,
    options,
    keys,
    projects,
    dashboards,
    sharingOn,
    withCollaborators,
    variables,
    projectVar,
  };
}

/**
 * The first lines of `index.ts`: what generated it, the imports, the stack settings it reads and its helpers
 * (`project`, `madeFrom`, `adopted`).
 */
function indexPreamble(snapshot: Snapshot, stack: string): string[] {
  const org = snapshot.organizationId ? ` ${snapshot.organizationId}` : "";
  return [
    `// Generated by \`pulumi-posthog export\` from the PostHog organization${org}.`,
    "// A program that adopts what exists: the first `pulumi up` creates nothing, deletes nothing and changes",
    "// nothing. What differs between environments is in the stack settings:",
    `// Pulumi.${stack}.yaml names the ids to adopt, members and their levels, pending invites, domains and`,
    "// batch-export pause states. On a stack that names no id for a dashboard (another project: promotion), the",
    "// dashboard is created from its template, dashboards/<key>.json.",
    'import { readFileSync } from "node:fs";',
    'import * as pulumi from "@pulumi/pulumi";',
    'import * as posthog from "pulumi-posthog";',
    "",
    "const config = new pulumi.Config();",
    "",
    heading("Stack settings"),
    "type Level = 1 | 8 | 15;",
    "/** Projects by key: the name, and the id of the project to adopt (none: a new project is created). */",
    'const projects = config.getObject<Record<string, { name: string; id?: number }>>("projects") ?? {};',
    "/** Ids of the dashboards to adopt, by key; a dashboard without one is created (promotion). */",
    'const dashboardIds = config.getObject<Record<string, number>>("dashboards") ?? {};',
    'const domains = config.getObject<Omit<posthog.DomainArgs, "adopt">[]>("domains") ?? [];',
    'const members = config.getObject<{ email: string; level: Level }[]>("members") ?? [];',
    "const invites =",
    '  config.getObject<{ targetEmail: string; level: Level; firstName?: string }[]>("invites") ?? [];',
    "const batchExportPauses =",
    '  config.getObject<{ key: string; batchExportId: string; paused: boolean }[]>("batchExportPauses") ?? [];',
    "",
    "/** The project of `key`: adopted when the stack names its id, else created. */",
    "function project(key: string): posthog.Project {",
    "  const p = projects[key];",
    "  if (p === undefined) {",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a template literal of the generated program
    "    throw new Error(`Stack setting projects.${key} is missing: give the project's name and its id to adopt`);",
    "  }",
    "  return new posthog.Project(key, { name: p.name, ...(p.id === undefined ? {} : { projectId: p.id }) });",
    "}",
    "",
    "/** How a dashboard is made: adopted by id when the stack names one, else from its template, if any. */",
    "function madeFrom(key: string, template: boolean) {",
    "  const id = dashboardIds[key];",
    "  if (id !== undefined) return { dashboardId: id };",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a template literal of the generated program
    '  return template ? { templateJson: readFileSync(`dashboards/${key}.json`, "utf8") } : {};',
    "}",
    "",
    "/** Sharing and collaborators of an adopted dashboard are left as found on destroy, like the dashboard. */",
    "const adopted = (key: string): pulumi.CustomResourceOptions => ({",
    "  retainOnDelete: dashboardIds[key] !== undefined,",
    "});",
  ];
}

/**
 * The sections of `index.ts` that declare, from the stack settings, the organization's objects of the kinds read:
 * domains, members, pending invites and batch-export pause states.
 */
function organizationSections(kinds: Snapshot["kinds"]): string[] {
  const out: string[] = [];
  if (kinds.has("domains")) {
    out.push(
      "",
      heading("Domains (adopted: kept on destroy)"),
      "for (const d of domains) new posthog.Domain(d.domain as string, { ...d, adopt: true });",
    );
  }
  if (kinds.has("members")) {
    out.push(
      "",
      heading("Members: their organization level (destroy gives back the level found)"),
      "for (const m of members) new posthog.Member(m.email, { email: m.email, level: m.level });",
    );
  }
  if (kinds.has("invites")) {
    out.push(
      "",
      heading("Pending invites (adopted: kept on destroy)"),
      "for (const i of invites) new posthog.Invite(i.targetEmail, { ...i, adopt: true });",
    );
  }
  if (kinds.has("batch-exports")) {
    out.push(
      "",
      heading("Batch exports: paused or running (destroy gives back the state found)"),
      "for (const b of batchExportPauses) {",
      "  new posthog.BatchExportPause(b.key, { batchExportId: b.batchExportId, paused: b.paused });",
      "}",
    );
  }
  return out;
}

/** The projects' section of `index.ts` (none without projects), then each project's dashboards (kind `dashboards`). */
function projectSections(plan: ProgramPlan): string[] {
  const { snapshot, projects, dashboards, variables, projectVar } = plan;
  const out: string[] = [];
  if (projects.length > 0) {
    out.push("", heading("Projects (adopted: kept on destroy)"));
    for (const { p, key, variable } of projects) {
      out.push(`// ${commentText(p.project.name)} (${p.project.id})`);
      out.push(`const ${variable} = project(${tsString(key)});`);
    }
  }
  for (const { p, key } of projects) {
    if (!snapshot.kinds.has("dashboards")) break;
    const mine = dashboards.filter((d) => d.projectKey === key);
    out.push("", heading(`Dashboards of ${p.project.name} (adopted: kept on destroy)`));
    if (mine.length === 0) out.push("// (none)");
    for (const d of mine) {
      const x = d.dashboard;
      const args: Record<string, unknown> = {
        [`...madeFrom(${tsString(d.key)}, ${d.template !== undefined})`]: true,
        name: x.name ?? "",
        description: x.description ? x.description : undefined,
        pinned: x.pinned ? true : undefined,
        tags: x.tags && x.tags.length > 0 ? x.tags.map(String) : undefined,
        restrictionLevel: x.restriction_level === 37 ? "only-collaborators-can-edit" : undefined,
        projectId: new Raw(`${projectVar.get(key)}.id`),
      };
      out.push(resource("Dashboard", d.key, args, undefined, variables.get(d.key)));
    }
  }
  return out;
}

/** The sections of `index.ts` declaring the dashboards' public sharing and their collaborators (when any). */
function dashboardAccessSections(plan: ProgramPlan): string[] {
  const { sharingOn, withCollaborators, variables, projectVar } = plan;
  const out: string[] = [];
  if (sharingOn.length > 0) {
    out.push("", heading("Public sharing (on; dashboards not listed here are not shared and not managed)"));
    for (const d of sharingOn) {
      const v = variables.get(d.key);
      out.push(
        resource(
          "DashboardSharing",
          d.key,
          {
            dashboardId: new Raw(`${v}.id`),
            enabled: true,
            projectId: new Raw(`${projectVar.get(d.projectKey)}.id`),
          },
          `adopted(${tsString(d.key)})`,
          undefined,
        ),
      );
    }
  }
  if (withCollaborators.length > 0) {
    out.push("", heading("Collaborators of the dashboards only collaborators may edit"));
    for (const d of withCollaborators) {
      const v = variables.get(d.key);
      for (const c of d.collaborators) {
        out.push(`// ${commentText(c.user.email)} on ${commentText(d.dashboard.name ?? d.key)}`);
        out.push(
          resource(
            "DashboardCollaborator",
            `${d.key}/${c.user.email.toLowerCase()}`,
            {
              dashboardId: new Raw(`${v}.id`),
              userUuid: c.user.uuid,
              projectId: new Raw(`${projectVar.get(d.projectKey)}.id`),
            },
            `adopted(${tsString(d.key)})`,
            undefined,
          ),
        );
      }
    }
  }
  return out;
}

/** The text of `index.ts`: the preamble, then each section of the kinds read. */
function indexText(plan: ProgramPlan): string {
  const out = [
    ...indexPreamble(plan.snapshot, plan.options.stack),
    ...organizationSections(plan.snapshot.kinds),
    ...projectSections(plan),
    ...dashboardAccessSections(plan),
  ];
  return `${out.join("\n")}\n`;
}

/**
 * The stack settings of the organization's objects of the kinds read, by setting name (without the project's
 * namespace): `domains` (SSO settings only once verified), `members`, `invites` and `batchExportPauses`.
 */
function organizationSettings(plan: ProgramPlan): Record<string, Yaml> {
  const { snapshot, keys } = plan;
  const settings: Record<string, Yaml> = {};
  if (snapshot.kinds.has("domains")) {
    settings.domains = snapshot.domains.map((d) => {
      const entry: Record<string, Yaml> = { domain: d.domain };
      // JIT provisioning and SSO enforcement apply once verified: managed only then.
      if (d.is_verified) {
        entry.jitProvisioningEnabled = d.jit_provisioning_enabled ?? false;
        entry.ssoEnforcement = d.sso_enforcement ?? "";
      }
      if (d.saml_entity_id) entry.samlEntityId = d.saml_entity_id;
      if (d.saml_acs_url) entry.samlAcsUrl = d.saml_acs_url;
      if (d.saml_x509_cert) entry.samlX509Cert = d.saml_x509_cert;
      return new YamlCommented(d.is_verified ? "verified" : "not verified yet", entry);
    });
  }
  if (snapshot.kinds.has("members")) {
    settings.members = snapshot.members.map((m) => ({ email: m.user.email, level: m.level }));
  }
  if (snapshot.kinds.has("invites")) {
    settings.invites = snapshot.invites.map((i) => {
      const entry: Record<string, Yaml> = { targetEmail: i.target_email, level: i.level };
      if (i.first_name) entry.firstName = i.first_name;
      return entry;
    });
  }
  if (snapshot.kinds.has("batch-exports")) {
    settings.batchExportPauses = snapshot.batchExports.map(
      (b, i) =>
        new YamlCommented(b.name ?? b.id, {
          key: keys.batchExports[i] as string,
          batchExportId: b.id,
          paused: b.paused,
        }),
    );
  }
  return settings;
}

/**
 * The text of `Pulumi.<stack>.yaml`: the provider's host (when not PostHog Cloud US) and organization, the projects
 * and dashboards to adopt by key, then {@link organizationSettings}, each under the program's namespace.
 */
function stackFileText(plan: ProgramPlan): string {
  const { snapshot, projects, dashboards, options } = plan;
  const ns = (k: string) => `${PROGRAM_PROJECT}:${k}`;
  const config: Record<string, Yaml> = {};
  if (snapshot.host !== DEFAULT_HOST) config["posthog:host"] = snapshot.host;
  if (snapshot.organizationId) config["posthog:organizationId"] = snapshot.organizationId;
  if (projects.length > 0) {
    const map: Record<string, Yaml> = {};
    for (const { p, key } of projects) map[key] = { name: p.project.name, id: p.project.id };
    config[ns("projects")] = map;
  }
  if (snapshot.kinds.has("dashboards") && dashboards.length > 0) {
    const map: Record<string, Yaml> = {};
    for (const d of dashboards) {
      map[d.key] = new YamlCommented(`${d.dashboard.name ?? ""} (project ${d.projectKey})`, d.dashboard.id);
    }
    config[ns("dashboards")] = map;
  }
  for (const [k, v] of Object.entries(organizationSettings(plan))) config[ns(k)] = v;
  return [
    `# Stack "${options.stack}": what differs between environments. Exported by pulumi-posthog export.`,
    "# The API key is not written here: set POSTHOG_API_KEY, or `pulumi config set --secret posthog:apiKey`.",
    "# For another environment (promotion), copy this file, point projects.<key>.id at that project and",
    "# drop the dashboard ids there: each dashboard is then created from dashboards/<key>.json.",
    "config:",
    ...yamlLines(config, "  "),
    "",
  ].join("\n");
}

/** The text of `Pulumi.yaml`: the program's project, a TypeScript Node.js program. */
const PULUMI_YAML = [
  `name: ${PROGRAM_PROJECT}`,
  "description: A PostHog organization managed as code (generated by pulumi-posthog export)",
  "runtime:",
  "  name: nodejs",
  "  options:",
  "    typescript: true",
  "",
].join("\n");

/** The text of the program's `package.json`, depending on pulumi-posthog as `dependency` says. */
function packageJsonText(dependency: string): string {
  const pkg = {
    name: PROGRAM_PROJECT,
    private: true,
    main: "index.ts",
    dependencies: { "@pulumi/pulumi": "^3.216.0", "pulumi-posthog": dependency },
    devDependencies: { "@types/node": "^22.0.0", typescript: ">=5.4 <7" },
  };
  return `${JSON.stringify(pkg, null, 2)}\n`;
}

/** The text of the program's `tsconfig.json`. */
const TSCONFIG_JSON = `${JSON.stringify(
  {
    compilerOptions: {
      strict: true,
      target: "es2022",
      module: "nodenext",
      moduleResolution: "nodenext",
      types: ["node"],
      skipLibCheck: true,
    },
    files: ["index.ts"],
  },
  null,
  2,
)}\n`;

/**
 * The files of the exported program: `index.ts`, `dashboards/<key>.json` (each dashboard with a template),
 * `Pulumi.yaml`, `Pulumi.<stack>.yaml`, `package.json` and `tsconfig.json` (the CLI writes these two only where the
 * directory has none).
 */
export function renderProgram(snapshot: Snapshot, options: RenderOptions): ProgramFiles {
  const plan = planProgram(snapshot, options);
  const files: ProgramFiles = new Map();
  files.set("index.ts", indexText(plan));
  for (const d of plan.dashboards) {
    if (d.template !== undefined) files.set(`dashboards/${d.key}.json`, dashboardTemplateText(d.template));
  }
  files.set("Pulumi.yaml", PULUMI_YAML);
  files.set(`Pulumi.${options.stack}.yaml`, stackFileText(plan));
  files.set("package.json", packageJsonText(options.dependency));
  files.set("tsconfig.json", TSCONFIG_JSON);
  return files;
}
