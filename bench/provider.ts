/**
 * Benchmark of the provider path (not a test): what the thin `__provider` and the real dynamic-provider host
 * cost on top of the client, and what coalescing saves on refresh.
 *
 *   npm run build && node_modules/.bin/node dist/bench/provider.js [--reads 200] [--members 50]
 *
 * Prints one JSON object: the `__provider` size per resource and the time to serialize it; the host's
 * startup time; the median latency of a Dashboard Read through the host (gRPC → shim → require → lifecycle →
 * client → emulator) against a direct `client.dashboards.retrieve` of the same dashboard, alternating the two
 * (ABBA) so other load hits both alike, and their ratio; and the HTTP requests made by a refresh of
 * `--members` Member resources read concurrently (coalesced list reads) against one per member.
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startEmulator } from "../emulator";
import { clientShared, createClient } from "../provider/client";
import { resourceNames } from "../provider/index";
import { providerShim } from "../sdk/provider-shim";
import { startProviderHost } from "../tools/provider-host";

const serializer = require("@pulumi/pulumi/runtime/closure/serializeClosure") as {
  serializeFunction(f: () => unknown, o: { allowSecrets: boolean }): Promise<{ text: string }>;
};

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;

async function main() {
  const { values } = parseArgs({
    options: { reads: { type: "string", default: "200" }, members: { type: "string", default: "50" } },
  });
  const reads = Number(values.reads);
  const memberCount = Number(values.members);

  const sizes: Record<string, { bytes: number; serializeMs: number }> = {};
  const texts: Record<string, string> = {};
  for (const name of resourceNames) {
    const provider = providerShim(name);
    const t0 = performance.now();
    const { text } = await serializer.serializeFunction(() => provider, { allowSecrets: true });
    sizes[name] = { bytes: text.length, serializeMs: round(performance.now() - t0) };
    texts[name] = text;
  }

  const emu = await startEmulator({ rateLimit: false, inviteBudget: false });
  const t0 = performance.now();
  const host = await startProviderHost({ cwd: join(__dirname, "..", "..") });
  const hostStartupMs = round(performance.now() - t0, 0);
  await host.configure({
    "posthog:apiKey": emu.apiKey,
    "posthog:host": emu.url,
    "posthog:organizationId": emu.organizationId,
    "posthog:projectId": String(emu.projectId),
  });
  // The bench run's one ClientShared (the direct reads): its pools are closed at the end.
  const shared = clientShared();
  const client = createClient({
    apiKey: emu.apiKey,
    host: emu.url,
    organizationId: emu.organizationId,
    projectId: emu.projectId,
    rateLimit: false,
    shared,
  });

  // One dashboard, read through the host and directly, alternating.
  const urn = "urn:pulumi:bench::bench::pulumi-nodejs:dynamic/posthog:Dashboard::d";
  const checked = await host.check(urn, {}, { name: "Bench", __provider: texts.Dashboard });
  const created = await host.create(urn, checked.inputs);
  const viaHost: number[] = [];
  const direct: number[] = [];
  const timeHost = async () => {
    const s = performance.now();
    await host.read(created.id, urn, created.outs, checked.inputs);
    viaHost.push(performance.now() - s);
  };
  const timeDirect = async () => {
    const s = performance.now();
    await client.dashboards.retrieve({ id: Number(created.id) });
    direct.push(performance.now() - s);
  };
  for (let i = 0; i < 20; i++) await timeHost(); // warm-up (first require of the provider code)
  viaHost.length = 0;
  for (let i = 0; i < reads; i += 2) {
    if (i % 4 === 0) {
      await timeHost();
      await timeDirect();
    } else {
      await timeDirect();
      await timeHost();
    }
  }

  // Refresh of N members, read concurrently.
  const memberUrns: { id: string; urn: string; outs: Record<string, unknown> }[] = [];
  for (let i = 0; i < memberCount; i++) {
    const email = `bench${i}@example.com`;
    await fetch(`${emu.url}/_emulator/users`, {
      method: "POST",
      headers: { authorization: `Bearer ${emu.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ email, level: 1 }),
    });
    const u = `urn:pulumi:bench::bench::pulumi-nodejs:dynamic/posthog:Member::m${i}`;
    const c = await host.check(u, {}, { email, level: 1, retainOnDelete: true, __provider: texts.Member });
    const m = await host.create(u, c.inputs);
    memberUrns.push({ id: m.id, urn: u, outs: m.outs });
  }
  await fetch(`${emu.url}/_emulator/requests`, {
    method: "DELETE",
    headers: { authorization: `Bearer ${emu.apiKey}` },
  });
  const s = performance.now();
  await Promise.all(memberUrns.map((m) => host.read(m.id, m.urn, m.outs)));
  const refreshMs = round(performance.now() - s, 0);
  const log = (await (
    await fetch(`${emu.url}/_emulator/requests`, { headers: { authorization: `Bearer ${emu.apiKey}` } })
  ).json()) as unknown[];

  await host.close();
  await shared.close();
  await emu.close();

  const hostMedianUs = round(median(viaHost) * 1000, 0);
  const directMedianUs = round(median(direct) * 1000, 0);
  console.log(
    JSON.stringify({
      providerBytes: sizes,
      hostStartupMs,
      dashboardRead: { reads, hostMedianUs, directMedianUs, ratio: round(hostMedianUs / directMedianUs) },
      memberRefresh: {
        members: memberCount,
        httpRequests: log.length,
        uncoalescedRequests: memberCount,
        refreshMs,
      },
    }),
  );
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
