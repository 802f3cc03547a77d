/**
 * A tiny stand-in for PostHog over real HTTP (node:http), for the bodies the real service answers where the
 * emulator, which follows the API reference, cannot produce them (an invite without e-mail, a tile without id, a
 * domain without `saml_*` fields…). Each test lists the answers it needs, read from PostHog's source; nothing of
 * ours is mocked: the client, the provider and the exporter talk to it as to any PostHog.
 */
import { createServer, type IncomingMessage } from "node:http";

/** One answer: a status (default 200) and a JSON body (none when undefined). */
export interface FakeAnswer {
  status?: number;
  body?: unknown;
}

/** A request as the fake server received it (`body` parsed as JSON, undefined when empty). */
export interface FakeRequest {
  method: string;
  /** The path without the query string. */
  path: string;
  body: unknown;
}

/** An answer, or a function of the request giving one. */
export type FakeRoute = FakeAnswer | ((req: FakeRequest) => FakeAnswer);

/** A running fake server. */
export interface FakePostHog {
  /** Base URL, e.g. `http://127.0.0.1:PORT`. */
  url: string;
  /** Its answers by `"<METHOD> <path>"` (query ignored); may be changed while it runs. */
  routes: Map<string, FakeRoute>;
  /** Every request received, oldest first. */
  requests: FakeRequest[];
  close(): Promise<void>;
}

const readBody = async (req: IncomingMessage): Promise<unknown> => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  return text === "" ? undefined : (JSON.parse(text) as unknown);
};

/**
 * Starts a fake PostHog on 127.0.0.1 (a free port) answering `routes`; any other request gets PostHog's 404
 * for an unknown endpoint (`{"type":"invalid_request","code":"not_found","detail":"Endpoint not found."}`).
 */
export async function startFakePostHog(routes: Record<string, FakeRoute>): Promise<FakePostHog> {
  const table = new Map(Object.entries(routes));
  const requests: FakeRequest[] = [];
  const server = createServer((req, res) => {
    readBody(req).then(
      (body) => {
        const path = (req.url ?? "/").split("?")[0] ?? "/";
        const request = { method: req.method ?? "GET", path, body };
        requests.push(request);
        const route = table.get(`${request.method} ${path}`);
        const answer: FakeAnswer = route
          ? typeof route === "function"
            ? route(request)
            : route
          : {
              status: 404,
              body: { type: "invalid_request", code: "not_found", detail: "Endpoint not found.", attr: null },
            };
        res.writeHead(answer.status ?? 200, { "content-type": "application/json" });
        res.end(answer.body === undefined ? "" : JSON.stringify(answer.body));
      },
      () => {
        res.writeHead(400).end();
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    routes: table,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A page of a paginated list as PostHog's `LimitOffsetPagination` answers it (everything on one page). */
export const page = (results: unknown[]) => ({ count: results.length, next: null, previous: null, results });

/**
 * PostHog's `UserBasicSerializer` (posthog/api/shared.py) as the real service embeds it (`created_by`, `user`):
 * `hedgehog_config` where the API reference says `mascot_config`.
 */
export const userBasic = (id: number, email: string) => ({
  id,
  uuid: `0190f0e2-0000-7000-8000-${String(id).padStart(12, "0")}`,
  distinct_id: `distinct-${id}`,
  first_name: email.split("@")[0] ?? "",
  last_name: "",
  email,
  is_email_verified: true,
  hedgehog_config: null,
  role_at_organization: null,
});
