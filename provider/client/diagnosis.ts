/**
 * Hints for failures that point at a setting: which setting to check, where its value came from (client option,
 * stack config `posthog:<name>` or environment variable `POSTHOG_<NAME>`), the host and the id. The transport
 * asks {@link diagnoseResponse} / {@link diagnoseConnection} when it builds an error; the hint ends the message.
 * A hint is never built from the key's value (only from where it came from).
 */
import type { ConnectionFailure, ErrorDetails, NotFoundTarget } from "./errors";
import { type Settings, settingOrigin } from "./settings";

/** The organization and project ids a request path addresses (decoded), when it addresses them. */
export function idsOfPath(path: string): { organizationId?: string; projectId?: string } {
  const segments = path.split("?")[0]?.split("/") ?? [];
  const out: { organizationId?: string; projectId?: string } = {};
  const at = (i: number) => {
    const s = segments[i];
    if (s === undefined || s === "") return undefined;
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  };
  for (let i = 0; i < segments.length - 1; i++) {
    if (segments[i] !== "api") continue;
    if (segments[i + 1] === "organizations") {
      const org = at(i + 2);
      if (org !== undefined) out.organizationId = org;
      if (segments[i + 3] === "projects") {
        const project = at(i + 4);
        if (project !== undefined) out.projectId = project;
      }
    } else if (segments[i + 1] === "projects" || segments[i + 1] === "environments") {
      const project = at(i + 2);
      if (project !== undefined) out.projectId = project;
    }
    break;
  }
  return out;
}

/** "organization <id> (<where the id came from>)". */
function organizationOf(settings: Settings, id: string | undefined): string {
  if (id === undefined) return "the organization";
  if (id === "@current" && settings.organizationId === undefined) {
    return "the key owner's current organization (@current: no organization id is set; set posthog:organizationId or POSTHOG_ORGANIZATION_ID)";
  }
  if (id === settings.organizationId) {
    return `organization ${id} (set by ${settingOrigin(settings, "organizationId")})`;
  }
  return `organization ${id} (the organizationId given to this operation)`;
}

/** "project <id> (<where the id came from>)". */
function projectOf(settings: Settings, id: string | undefined): string {
  if (id === undefined) return "the project";
  if (id === "@current" && settings.projectId === undefined) {
    return "the key owner's current project (@current: no project id is set; set posthog:projectId or POSTHOG_PROJECT_ID)";
  }
  if (id === settings.projectId) return `project ${id} (set by ${settingOrigin(settings, "projectId")})`;
  return `project ${id} (the projectId given to this operation: a resource's projectId input, else posthog:projectId)`;
}

/** "check the host <value>, set by <source>" with what the host must be. */
function checkHost(settings: Settings): string {
  return `check the host ${settings.host}, set by ${settingOrigin(settings, "host")}: it must be the address PostHog is served at, with its path prefix if it has one (e.g. https://us.posthog.com, https://tools.example.com/posthog)`;
}

/** What {@link diagnoseResponse} is told about a non-2xx answer. */
export type ResponseFailure = ErrorDetails & { missing?: NotFoundTarget; location?: string | undefined };

/**
 * The hint for a non-2xx answer, or undefined when the answer is about the object or the body (a validation
 * error, a missing object, a server error) rather than the settings.
 */
export function diagnoseResponse(settings: Settings, f: ResponseFailure): string | undefined {
  const ids = idsOfPath(f.path);
  const key = `the API key, set by ${settingOrigin(settings, "apiKey")}`;
  const detail = f.detail ?? "";
  const status = f.status ?? 0;
  if (status === 401) {
    return `${settings.host} did not accept ${key}: it must be a personal API key (phx_…) created on this PostHog instance (a key of us.posthog.com is refused by eu.posthog.com and by a self-hosted one), not revoked; ${checkHost(settings)}`;
  }
  if (status === 403) {
    const scope = /missing required scope '([^']+)'/.exec(detail)?.[1];
    if (scope) {
      return `${key} lacks the scope '${scope}': add '${scope}' to the key's scopes in PostHog (Settings → Personal API keys), or use a key without scopes`;
    }
    if (/does not support Personal API Key access/i.test(detail)) {
      return `PostHog refuses personal API keys with scopes on ${f.method} ${f.path.replace(/\/\d+\//g, "/:id/")}, whatever their scopes: ${key} has scopes; use a key without scopes (all access) for this`;
    }
    if (/scoped projects are only supported on project-based endpoints/i.test(detail)) {
      return `${key} is restricted to projects, and PostHog accepts such keys only on project endpoints (dashboards, collaborators, sharing): organization resources (Domain, DomainVerification, Invite, Member, Project, BatchExportPause) need a key without a project restriction`;
    }
    if (/does not have access to the requested organization/i.test(detail)) {
      return `${key} is restricted to other organizations: check ${organizationOf(settings, ids.organizationId)}, or the key's organization restriction`;
    }
    if (/does not have access to the requested project/i.test(detail)) {
      return `${key} is restricted to other projects: check ${projectOf(settings, ids.projectId)}, or the key's project restriction`;
    }
    if (/^You do not have permission to perform this action\.?$/.test(detail)) {
      return `the key's user is not allowed here: check ${organizationOf(settings, ids.organizationId)}${ids.projectId ? ` and ${projectOf(settings, ids.projectId)}` : ""} (the user must be a member) at ${settings.host}`;
    }
    if (/don't have access to the project/i.test(detail)) {
      return `the key's user cannot reach ${projectOf(settings, ids.projectId)} at ${settings.host}: check the project id`;
    }
    return undefined;
  }
  if (status === 404) {
    switch (f.missing) {
      case "organization":
        return `${organizationOf(settings, ids.organizationId)} was not found at ${settings.host}, or the API key cannot reach it: check the organization id`;
      case "project":
        return `${projectOf(settings, ids.projectId)} was not found at ${settings.host}, or the API key cannot reach it: check the project id (if that project was deleted, its dashboards went with it: remove their resources from the program, and from the state with \`pulumi state delete\`)`;
      case "endpoint":
        return `${settings.host} has no such API endpoint: ${checkHost(settings)}`;
      case "unrecognized":
        return `the answer is not PostHog's (a 404 without PostHog's error body): ${checkHost(settings)}`;
      default:
        return undefined;
    }
  }
  if (/plain HTTP request was sent to HTTPS port/i.test(detail)) {
    return `the server expects HTTPS: check the scheme of the host ${settings.host}, set by ${settingOrigin(settings, "host")}: use https://`;
  }
  if (status >= 300 && status < 400) {
    return `the server redirected the request${f.location ? ` to ${f.location}` : ""}: ${checkHost(settings)} (scheme, domain and path prefix as PostHog is served)`;
  }
  return undefined;
}

/** The hint for a failure without a usable answer (see {@link ConnectionFailure}), or undefined. */
export function diagnoseConnection(
  settings: Settings,
  f: ErrorDetails & { failure: ConnectionFailure },
): string | undefined {
  const url = new URL(settings.host);
  const host = `the host ${settings.host}, set by ${settingOrigin(settings, "host")}`;
  const window = `connection attempts are retried for at most timeouts.connectMs = ${settings.timeouts.connectMs} ms`;
  switch (f.failure) {
    case "refused":
      return `nothing accepts connections at ${url.host} (connection refused; ${window}): check ${host} (scheme, name and port) and that the server is running`;
    case "dns":
      return `the name ${url.hostname} was not found (DNS; ${window}): check ${host}`;
    case "unreachable":
      return `${url.hostname} cannot be reached from this machine (${window}): check ${host} and the network`;
    case "connect-timeout":
      return `no connection to ${url.host} within timeouts.connectMs = ${settings.timeouts.connectMs} ms (a firewall dropping packets, a wrong port?): check ${host} and the network`;
    case "no-answer":
      return `the server at ${url.host} closed the connection without answering (${window})${url.protocol === "http:" ? ": if it serves HTTPS, use https://" : ""}; check ${host}`;
    case "not-tls":
      return `the server at ${url.host} does not speak TLS, so https:// cannot work: check the scheme of ${host}: use http:// for a plain-HTTP server`;
    case "certificate":
      return `the TLS certificate of ${url.hostname} is not trusted: check ${host}; for a private certificate authority, give Node its certificate with NODE_EXTRA_CA_CERTS`;
    case "not-http":
      return `the server at ${url.host} does not answer HTTP (another service on that port?): check ${host}${url.protocol === "http:" ? "; if it serves HTTPS, use https://" : ""}`;
    default:
      return undefined;
  }
}
