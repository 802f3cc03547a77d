/**
 * A plain API helper on the emulator's seed key (fetch, no retries) and the DNS automation that publishes the
 * TXT record `DomainVerification` waits for: shared by `npm start` (tools/start.ts), the engine-kill soak
 * and the tests that run the example against an emulator. Not part of the published package.
 */

/** `call` / `list` / `all` on one emulator (or PostHog) with one key. */
export interface SeedApi {
  /**
   * Sends one request; resolves the parsed JSON body (undefined when empty).
   * @throws Error naming the method, path, HTTP status and body when the status is not 2xx.
   */
  call(method: string, path: string, body?: unknown): Promise<unknown>;
  /** The items of the first page of a list endpoint (or of a plain array answer). */
  list<T>(path: string): Promise<T[]>;
  /** Every item of a paginated list endpoint, following `next` (100 per page). */
  all<T>(path: string): Promise<T[]>;
}

/** A {@link SeedApi} for the server at `url` (e.g. `http://127.0.0.1:8010`) and API key `key`. */
export function seedApi(url: string, key: string): SeedApi {
  const call = async (method: string, path: string, body?: unknown): Promise<unknown> => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path}: HTTP ${res.status} ${text}`);
    return text === "" ? undefined : (JSON.parse(text) as unknown);
  };
  const list = async <T>(path: string): Promise<T[]> => {
    const page = (await call("GET", path)) as { results?: T[] } | T[];
    return Array.isArray(page) ? page : (page.results ?? []);
  };
  const all = async <T>(path: string): Promise<T[]> => {
    const out: T[] = [];
    let next: string | null = `${path}${path.includes("?") ? "&" : "?"}limit=100`;
    while (next) {
      const page = (await call("GET", next)) as { results?: T[]; next?: string | null } | T[];
      if (Array.isArray(page)) return [...out, ...page];
      out.push(...(page.results ?? []));
      next = page.next ? new URL(page.next).pathname + new URL(page.next).search : null;
    }
    return out;
  };
  return { call, list, all };
}

/**
 * A DNS automation: until stopped, publishes the TXT record `_posthog-challenge.<domain>` of every unverified
 * domain of the organization through the emulator's control plane (`POST /_emulator/dns`), again whenever a
 * domain's challenge changes (a domain destroyed and created anew), checking every `everyMs` (default 250), as a
 * DNS provider resource or a zone-file pipeline would in real life. Errors of a round are ignored (the next round
 * tries again). `stop()` resolves the record names it published.
 */
export function dnsAutomation(a: SeedApi, everyMs = 250): { stop(): Promise<string[]> } {
  /** Record name → the challenge last published under it. */
  const published = new Map<string, string>();
  let running = true;
  const loop = (async () => {
    while (running) {
      const domains = await a
        .all<{ domain: string; is_verified?: boolean; verification_challenge?: string }>(
          "/api/organizations/@current/domains/",
        )
        .catch(() => []);
      for (const d of domains) {
        const name = `_posthog-challenge.${d.domain}`;
        const txt = d.verification_challenge;
        if (d.is_verified || !txt || published.get(name) === txt) continue;
        await a.call("POST", "/_emulator/dns", { name, txt }).then(
          () => published.set(name, txt),
          () => undefined,
        );
      }
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return [...published.keys()];
    },
  };
}
