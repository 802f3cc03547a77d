/**
 * The Pulumi program: `analytics()` with the stack settings (`Pulumi.<stack>.yaml`). The connection comes from
 * `posthog:apiKey` (secret), `posthog:host`, or the environment (POSTHOG_API_KEY, POSTHOG_HOST).
 */
import * as pulumi from "@pulumi/pulumi";
import { analytics } from "./program";

const config = new pulumi.Config();
const made = analytics({
  projectName: config.require("projectName"),
  kpiEditors: config.getObject<string[]>("kpiEditors") ?? [],
  publicKpis: config.getBoolean("publicKpis") ?? false,
  ...(config.get("pausedExport") === undefined ? {} : { pausedExport: config.require("pausedExport") }),
  host: new pulumi.Config("posthog").get("host") ?? "https://us.posthog.com",
});

export const projectId = made.project.id;
export const apiToken = made.apiToken;
export const publicUrl = made.publicUrl;
