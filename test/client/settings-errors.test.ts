// Issue 12, points 8 and 9: errors name the cause and the setting to fix (with where its value came from and the
// host), a closed port fails within the connect timeout, TLS and HTTP spoken to the wrong server are not retried,
// a host may carry a path prefix, scoped keys are told where PostHog refuses them, and no part of a key survives
// in a message. Everything over real HTTP: the emulator, or a tiny server started here on 127.0.0.1 for what the
// emulator is not (a server echoing headers, a non-HTTP service, a reverse proxy under a path prefix).
import { randomUUID } from "node:crypto";
import { createServer as createHttpServer, request as httpRequest, type IncomingMessage } from "node:http";
import { createServer, type Server } from "node:net";
import { inspect } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AmbiguousWriteError,
  ConnectionError,
  createClient,
  ForbiddenError,
  type InvalidInputError,
  NotFoundError,
  type RetryInfo,
  resolveSettings,
  UnauthenticatedError,
  ValidationError,
} from "../../provider/client";
import { type Emulator, startTestEmulator } from "./helpers";

let emu: Emulator;
beforeAll(async () => {
  emu = await startTestEmulator();
});
afterAll(async () => {
  await emu.close();
});

/** Listens on 127.0.0.1 on a free port; returns the port. */
async function listen(server: Server | ReturnType<typeof createHttpServer>): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as { port: number }).port;
}
const close = (server: Server | ReturnType<typeof createHttpServer>) =>
  new Promise<void>((resolve) => {
    (server as { closeAllConnections?: () => void }).closeAllConnections?.();
    server.close(() => resolve());
  });

/** A port nobody listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  const port = await listen(server);
  await close(server);
  return port;
}

const fast = { maxAttempts: 4, baseDelayMs: 1, maxDelayMs: 5, maxTotalWaitMs: 10_000 };
const failureOf = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error("expected a failure");
    },
    (e: unknown) => e as Error,
  );

describe("errors name the setting to fix, where its value came from, and the host", () => {
  it("401: names posthog:apiKey (stack config) or POSTHOG_API_KEY (environment) and the host", async () => {
    const config = { get: (k: string) => ({ "posthog:apiKey": "phx_wrongKeyFromConfig000000" })[k] };
    const fromConfig = createClient(
      resolveSettings({ host: emu.url, rateLimit: false, retry: fast }, config, {}),
    );
    const e1 = await failureOf(fromConfig.members.list());
    expect(e1).toBeInstanceOf(UnauthenticatedError);
    expect(e1.message).toContain("the stack config posthog:apiKey");
    expect(e1.message).toContain(emu.url);

    const fromEnv = createClient(
      resolveSettings({ rateLimit: false, retry: fast }, undefined, {
        POSTHOG_API_KEY: "phx_wrongKeyFromEnv00000000000",
        POSTHOG_HOST: emu.url,
      }),
    );
    const e2 = await failureOf(fromEnv.members.list());
    expect(e2).toBeInstanceOf(UnauthenticatedError);
    expect(e2.message).toContain("the environment variable POSTHOG_API_KEY");
    expect(e2.message).toContain(`the host ${emu.url}, set by the environment variable POSTHOG_HOST`);
    expect(e2.message).not.toContain("phx_wrongKeyFromEnv");
  });

  it("wrong organization / project: NotFoundError says which, names the id, its setting and the host", async () => {
    const otherOrg = randomUUID();
    const env = {
      POSTHOG_API_KEY: emu.apiKey,
      POSTHOG_HOST: emu.url,
      POSTHOG_ORGANIZATION_ID: otherOrg,
      POSTHOG_PROJECT_ID: "99999",
    };
    const client = createClient(resolveSettings({ rateLimit: false, retry: fast }, undefined, env));
    const org = await failureOf(client.domains.list());
    expect(org).toBeInstanceOf(NotFoundError);
    expect((org as NotFoundError).missing).toBe("organization");
    expect(org.message).toContain("Organization not found.");
    expect(org.message).toContain(
      `organization ${otherOrg} (set by the environment variable POSTHOG_ORGANIZATION_ID) was not found at ${emu.url}`,
    );
    const project = await failureOf(client.dashboards.list());
    expect((project as NotFoundError).missing).toBe("project");
    expect(project.message).toContain(
      `project 99999 (set by the environment variable POSTHOG_PROJECT_ID) was not found at ${emu.url}`,
    );
    // The object itself missing, in a reachable organization: the only 404 that means "gone".
    const good = createClient({ ...optionsFor(emu), retry: fast });
    const gone = await failureOf(good.domains.retrieve({ id: randomUUID() }));
    expect((gone as NotFoundError).missing).toBe("object");
    expect((gone as NotFoundError).hint).toBeUndefined();
  });

  it("checkAccess proves host, key, organization and project in one request, or names what is wrong", async () => {
    const good = createClient({ ...optionsFor(emu), retry: fast });
    expect(await good.checkAccess()).toEqual({
      organizationId: emu.organizationId,
      projectId: String(emu.projectId),
      requests: 1,
    });
    const stray = createClient({ ...optionsFor(emu), projectId: 4242, retry: fast });
    const e = await failureOf(stray.checkAccess());
    expect((e as NotFoundError).missing).toBe("project");
    expect(e.message).toContain(`project 4242 (set by the client option \`projectId\`) is not a project of`);
  });

  it("a scoped key on create_from_template_json: says PostHog refuses keys with scopes there", async () => {
    const key = await emu.createKey({ scopes: ["dashboard:write"] });
    const scoped = createClient({ ...optionsFor(emu), apiKey: key, retry: fast });
    await scoped.dashboards.list(); // dashboard:write covers the reads and writes of dashboards…
    const e = await failureOf(
      scoped.dashboards.createFromTemplateJson({
        body: {
          template: {
            template_name: "T",
            dashboard_description: "",
            dashboard_filters: {},
            tiles: [{ type: "TEXT", body: "hi" }],
          },
        },
      }),
    );
    expect(e).toBeInstanceOf(ForbiddenError); // …but not this endpoint, whatever the scopes
    expect(e.message).toContain("This action does not support Personal API Key access");
    expect(e.message).toContain("use a key without scopes");
    const limited = createClient({
      ...optionsFor(emu),
      apiKey: await emu.createKey({ scopes: ["dashboard:read"] }),
      retry: fast,
    });
    const scope = await failureOf(limited.dashboards.create({ body: { name: "x" } }));
    expect(scope.message).toContain("lacks the scope 'dashboard:write'");
  });
});

describe("connections: closed port, TLS or HTTP not spoken", () => {
  it("a closed port fails within timeouts.connectMs, retrying meanwhile, and says so", async () => {
    const port = await closedPort();
    const retries: RetryInfo[] = [];
    // Attempts and the wait budget are far beyond what the connect timeout allows: only it can end the retries.
    const client = createClient({
      apiKey: "phx_closedPortKey",
      host: `http://127.0.0.1:${port}`,
      rateLimit: false,
      timeouts: { connectMs: 300 },
      retry: {
        maxAttempts: 200,
        maxTotalWaitMs: 600_000,
        baseDelayMs: 20,
        maxDelayMs: 40,
        onRetry: (i) => retries.push(i),
      },
    });
    const e = await failureOf(client.projects.list());
    expect(e).toBeInstanceOf(ConnectionError);
    expect((e as ConnectionError).failure).toBe("refused");
    expect(e.message).toContain("connection attempts are retried for at most timeouts.connectMs = 300 ms");
    expect(e.message).toContain(`check the host http://127.0.0.1:${port}, set by the client option \`host\``);
    expect(retries.length).toBeGreaterThan(0); // still retried (a restarting server is reached)…
    expect(client.stats().attempts).toBeLessThan(200); // …but the connect timeout, not maxAttempts, ended it
    expect(retries.reduce((sum, r) => sum + r.delayMs, 0)).toBeLessThanOrEqual(300);
  });

  it("a server that starts listening within the connect timeout is reached (transient refusals retried)", async () => {
    const port = await closedPort();
    const client = createClient({
      apiKey: "phx_restartingServerKey",
      host: `http://127.0.0.1:${port}`,
      rateLimit: false,
      timeouts: { connectMs: 20_000 },
      retry: { maxAttempts: 200, maxTotalWaitMs: 60_000, baseDelayMs: 20, maxDelayMs: 40 },
    });
    const pending = client.projects.list().catch((e: unknown) => e);
    const late = createHttpServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ count: 0, next: null, previous: null, results: [] }));
    });
    await new Promise((r) => setTimeout(r, 150));
    await new Promise<void>((resolve) => late.listen(port, "127.0.0.1", resolve));
    try {
      expect(await pending).toMatchObject({ count: 0, results: [] });
      expect(client.stats().attempts).toBeGreaterThan(1);
    } finally {
      await close(late);
    }
  });

  it("https:// against a plain-HTTP server: says the server does not speak TLS; never retried, never ambiguous", async () => {
    const https = emu.url.replace(/^http:/, "https:");
    const retries: RetryInfo[] = [];
    const client = createClient({
      ...optionsFor(emu),
      host: https,
      retry: { ...fast, onRetry: (i) => retries.push(i) },
    });
    const e = await failureOf(client.projects.list());
    expect(e).toBeInstanceOf(ConnectionError);
    expect((e as ConnectionError).failure).toBe("not-tls");
    expect(e.message).toContain("does not speak TLS");
    expect(e.message).toContain(`check the scheme of the host ${https}, set by the client option \`host\``);
    expect(e.message).toContain("use http://");
    const post = await failureOf(client.domains.create({ body: { domain: "tls.example.com" } }));
    expect(post).toBeInstanceOf(ConnectionError);
    expect(post).not.toBeInstanceOf(AmbiguousWriteError);
    expect(retries).toEqual([]);
    expect(client.stats().attempts).toBe(2);
  });

  it("a port serving another protocol: says the server does not answer HTTP; never retried", async () => {
    const ssh = createServer((socket) => socket.end("SSH-2.0-OpenSSH_9.6\r\n", () => socket.destroy()));
    const port = await listen(ssh);
    try {
      const client = createClient({
        apiKey: "phx_sshPortKey",
        host: `http://127.0.0.1:${port}`,
        rateLimit: false,
        retry: fast,
      });
      const e = await failureOf(client.members.list());
      expect(e).toBeInstanceOf(ConnectionError);
      expect((e as ConnectionError).failure).toBe("not-http");
      expect(e.message).toContain(`the server at 127.0.0.1:${port} does not answer HTTP`);
      expect(e.message).toContain("if it serves HTTPS, use https://");
      expect(client.stats().attempts).toBe(1);
    } finally {
      await close(ssh);
    }
  });

  it("a server closing every connection unanswered (http:// to a TLS port): retried within the connect timeout, says so", async () => {
    // What a TLS server does with plain HTTP: reads the bytes, closes without a byte of answer.
    const tls = createServer((socket) => socket.once("data", () => socket.destroy()));
    const port = await listen(tls);
    try {
      const client = createClient({
        apiKey: "phx_tlsPortKey",
        host: `http://127.0.0.1:${port}`,
        rateLimit: false,
        timeouts: { connectMs: 300 },
        retry: { maxAttempts: 200, maxTotalWaitMs: 600_000, baseDelayMs: 20, maxDelayMs: 40 },
      });
      const e = await failureOf(client.members.list());
      expect((e as ConnectionError).failure).toBe("no-answer");
      expect(e.message).toContain(`the server at 127.0.0.1:${port} closed the connection without answering`);
      expect(e.message).toContain("if it serves HTTPS, use https://");
      expect(client.stats().attempts).toBeGreaterThan(1);
      expect(client.stats().attempts).toBeLessThan(200); // the connect timeout ended it
      // nginx answers plain HTTP on its TLS port with a 400 page: said too.
      const nginx = createHttpServer((_req, res) => {
        res.writeHead(400, { "content-type": "text/html" });
        res.end(
          "<html><center><h1>400 Bad Request</h1></center><center>The plain HTTP request was sent to HTTPS port</center></html>",
        );
      });
      const nginxPort = await listen(nginx);
      try {
        const plain = createClient({
          apiKey: "phx_nginxKey",
          host: `http://127.0.0.1:${nginxPort}`,
          rateLimit: false,
        });
        const bad = await failureOf(plain.members.list());
        expect(bad.message).toContain("the server expects HTTPS");
        expect(bad.message).toContain("use https://");
      } finally {
        await close(nginx);
      }
    } finally {
      await close(tls);
    }
  });

  it("a server answering 404 to everything (not PostHog's error body) is named as such", async () => {
    const nginx = createHttpServer((_req, res) => {
      res.writeHead(404, { "content-type": "text/html" });
      res.end("<html><body><h1>404 Not Found</h1></body></html>");
    });
    const port = await listen(nginx);
    try {
      const client = createClient({ ...optionsFor(emu), host: `http://127.0.0.1:${port}`, retry: fast });
      const e = await failureOf(client.domains.retrieve({ id: randomUUID() }));
      expect((e as NotFoundError).missing).toBe("unrecognized");
      expect(e.message).toContain("the answer is not PostHog's");
      expect(e.message).toContain(`check the host http://127.0.0.1:${port}`);
    } finally {
      await close(nginx);
    }
  });
});

describe("a host with a path prefix (self-hosted PostHog behind a reverse proxy)", () => {
  let proxy: ReturnType<typeof createHttpServer>;
  let proxyUrl: string;
  const seen: string[] = [];
  beforeAll(async () => {
    const upstream = new URL(emu.url);
    // Forwards /posthog/… to the emulator without the prefix; anything else is the proxy's own 404.
    proxy = createHttpServer((req: IncomingMessage, res) => {
      seen.push(req.url ?? "");
      if (!req.url?.startsWith("/posthog/")) {
        res.writeHead(404, { "content-type": "text/plain" });
        res.end("no route");
        return;
      }
      const forward = httpRequest(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url.slice("/posthog".length),
          headers: req.headers,
        },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      req.pipe(forward);
    });
    proxyUrl = `http://127.0.0.1:${await listen(proxy)}`;
  });
  afterAll(async () => {
    await close(proxy);
  });

  it("sends every request under the prefix: reads, writes and pagination", async () => {
    const client = createClient({
      ...optionsFor(emu),
      host: `${proxyUrl}/posthog/`,
      pageSize: 2,
      retry: fast,
    });
    expect(client.settings.host).toBe(`${proxyUrl}/posthog`);
    expect((await client.checkAccess()).requests).toBe(1);
    const members = await client.members.all();
    expect(members.length).toBeGreaterThan(2); // more than one page, each under the prefix
    const d = await client.dashboards.create({ body: { name: "Behind a proxy" } });
    expect((await client.dashboards.retrieve({ id: d.id })).name).toBe("Behind a proxy");
    expect(seen.length).toBeGreaterThan(3);
    expect(seen.every((u) => u.startsWith("/posthog/api/"))).toBe(true);
  });

  it("refuses, in configuration, a host with a query, credentials or a trailing /api", () => {
    const bad = (host: string) => {
      try {
        resolveSettings({ apiKey: "phx_x" }, { get: (k) => (k === "posthog:host" ? host : undefined) }, {});
      } catch (e) {
        return e as InvalidInputError;
      }
      throw new Error(`${host} was accepted`);
    };
    expect(bad("https://ph.example.com/posthog?team=1").property).toBe("posthog:host");
    expect(bad("https://ph.example.com/posthog?team=1").message).toContain("must not carry a query");
    expect(bad("https://user:pw@ph.example.com/").message).toContain("must not carry credentials");
    expect(bad("https://ph.example.com/posthog/api/").message).toContain(
      "e.g. https://ph.example.com/posthog",
    );
  });
});

describe("the API key never leaks through an error (redacted before anything is cut)", () => {
  it("a non-HTTP service echoing the request back: nothing of the key in the error, its cause included", async () => {
    const key = `phx_${randomUUID().replaceAll("-", "")}EchoedBackX`;
    const echo = createServer((socket) =>
      socket.on("data", (chunk) => socket.end(chunk, () => socket.destroy())),
    );
    const port = await listen(echo);
    try {
      const client = createClient({
        apiKey: key,
        host: `http://127.0.0.1:${port}`,
        rateLimit: false,
        retry: fast,
      });
      const e = await failureOf(client.members.list());
      const everything = `${inspect(e, { depth: 20 })}\n${e.stack}`;
      expect(everything).toContain("HTTPParserError");
      expect(everything).not.toContain("Bearer");
      for (let i = 0; i + 8 <= key.length; i++) expect(everything).not.toContain(key.slice(i, i + 8));
      expect((e as ConnectionError).failure).toBe("not-http");
    } finally {
      await close(echo);
    }
  });

  it("a long 400 echoing the request headers: no part of the key, nor of any phx_ key, in the message", async () => {
    const key = `phx_${randomUUID().replaceAll("-", "")}AbCdEfGhIjK`; // 47 characters, as PostHog's
    expect(key.length).toBe(47);
    const stranger = "phx_someoneElsesKeyThatTheServerLogged1234";
    let shape: "text" | "json" = "text";
    // Pads the echo so that a cut at 500 characters falls inside the key (its last character cut off).
    const echo = createHttpServer((req, res) => {
      const auth = String(req.headers.authorization);
      const head = `bad request; headers: authorization: `;
      const pad = "x".repeat(500 - head.length - (auth.length - 1));
      const text = `${pad}${head}${auth} user-agent: ${req.headers["user-agent"]} seen: ${stranger}`;
      res.writeHead(400, { "content-type": shape === "json" ? "application/json" : "text/plain" });
      res.end(shape === "json" ? JSON.stringify({ echo: text.slice(8) }) : text);
    });
    const port = await listen(echo);
    try {
      const client = createClient({ apiKey: key, host: `http://127.0.0.1:${port}`, rateLimit: false });
      for (const s of ["text", "json"] as const) {
        shape = s;
        const e = await failureOf(client.members.list());
        expect(e).toBeInstanceOf(ValidationError);
        const text = `${e.message}\n${(e as ValidationError).detail}\n${e.stack}`;
        expect(text).toContain("Bearer [redacted]");
        expect(text).not.toMatch(/phx_[A-Za-z0-9]/);
        for (let i = 0; i + 8 <= key.length; i++) expect(text).not.toContain(key.slice(i, i + 8));
      }
    } finally {
      await close(echo);
    }
  });
});

function optionsFor(e: Emulator) {
  return {
    apiKey: e.apiKey,
    host: e.url,
    organizationId: e.organizationId,
    projectId: e.projectId,
    rateLimit: false as const,
  };
}
