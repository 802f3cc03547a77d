/**
 * The list `pulumi import --file FILE` takes, from a {@link Snapshot}: every object the exported program declares,
 * with its type token (`posthog:index:<Name>`, the provider plugin's), its import id (README, "Other languages":
 * provider/adapters/plugin/index.ts `IMPORT_IDS`) and the resource name the program gives it, so that the state `pulumi
 * import` writes and the program `pulumi-posthog export` writes name the same resources.
 *
 * The file's shape is the CLI's own (pulumi/pulumi pkg/v3 cmd/pulumi/operations/import.go, v3.274.1: `importFile`
 * `{"nameTable", "resources", "providerInputs"}`, each of `resources` an `importSpec` with `type`, `name`, `id`
 * and `logicalName`). `name` is the name the code `pulumi import` generates gives the resource (a variable in
 * TypeScript, Go, Python, C#; a key in YAML): unique in the file and an identifier in every language.
 * `logicalName` is the resource's Pulumi name (the first argument of `new Resource`, YAML's `name:`), written
 * when it differs from `name` (e-mail addresses, domains, `<dashboard>/<e-mail>`; the CLI defaults each of the
 * two to the other). Pure: same snapshot, same text.
 */

import type { Snapshot } from "../organization";
import { identifierMaker, programKeys, slugify } from "./program";

/** One entry of the import file (the CLI's `importSpec`: the fields this file uses). */
export interface ImportSpec {
  /** The type token, e.g. `posthog:index:Dashboard`. */
  type: string;
  /** The name in the generated code: unique in the file, an identifier. */
  name: string;
  /** The import id, in the form the resource's import takes (e.g. `<projectId>/<dashboardId>`). */
  id: string;
  /** The resource's Pulumi name (in its URN) when it is not `name`. */
  logicalName?: string;
}

/** What the import file leaves out, and why (the export's summary and docs/export.md say it). */
export const IMPORT_FILE_OMITS: readonly { type: string; why: string }[] = [
  {
    type: "posthog:index:DomainVerification",
    why:
      "the exported program declares none (a Domain is adopted as found, verified or not); import a verification " +
      "with `pulumi import posthog:index:DomainVerification <name> <domainId>`",
  },
];

/**
 * The import file of `snapshot`: its entries in the program's order (projects, dashboards, sharing,
 * collaborators, domains, members, invites, batch-export pauses), the kinds not exported left out.
 */
export function renderImportFile(snapshot: Snapshot): { resources: ImportSpec[] } {
  const keys = programKeys(snapshot);
  const ident = identifierMaker();
  const resources: ImportSpec[] = [];
  const add = (kind: string, logicalName: string, id: string) => {
    const name = ident(slugify(logicalName), kind);
    resources.push({
      type: `posthog:index:${kind}`,
      name,
      id,
      ...(name === logicalName ? {} : { logicalName }),
    });
  };
  const kinds = snapshot.kinds;
  const dashboards = snapshot.projects.flatMap((p, i) =>
    p.dashboards.map((d, j) => ({ ...d, key: keys.dashboards[i]?.[j] as string, projectId: p.project.id })),
  );
  snapshot.projects.forEach((p, i) => {
    add("Project", keys.projects[i] as string, String(p.project.id));
  });
  if (kinds.has("dashboards")) {
    for (const d of dashboards) add("Dashboard", d.key, `${d.projectId}/${d.dashboard.id}`);
  }
  if (kinds.has("sharing")) {
    for (const d of dashboards) {
      if (d.dashboard.is_shared) add("DashboardSharing", d.key, `${d.projectId}/${d.dashboard.id}`);
    }
  }
  if (kinds.has("collaborators")) {
    for (const d of dashboards) {
      for (const c of d.collaborators) {
        add(
          "DashboardCollaborator",
          `${d.key}/${c.user.email.toLowerCase()}`,
          `${d.projectId}/${d.dashboard.id}/${c.user.uuid}`,
        );
      }
    }
  }
  if (kinds.has("domains")) for (const d of snapshot.domains) add("Domain", d.domain, d.id);
  if (kinds.has("members")) for (const m of snapshot.members) add("Member", m.user.email, m.user.uuid);
  if (kinds.has("invites")) for (const i of snapshot.invites) add("Invite", i.target_email, i.id);
  if (kinds.has("batch-exports")) {
    snapshot.batchExports.forEach((b, i) => {
      add("BatchExportPause", keys.batchExports[i] as string, b.id);
    });
  }
  return { resources };
}

/** The import file's text: {@link renderImportFile} as JSON, two-space indented, one entry per line. */
export function importFileText(snapshot: Snapshot): string {
  const { resources } = renderImportFile(snapshot);
  const lines = resources.map((r) => `    ${JSON.stringify(r)}`);
  return `{\n  "resources": [\n${lines.join(",\n")}\n  ]\n}\n`;
}
