/**
 * `pulumi-posthog/provider`: the dynamic providers, one named export per resource (the name in the type
 * token `pulumi-nodejs:dynamic/posthog:<Name>`: ./providers.ts, generated from the one list), and each resource's
 * card and schemas (provider/resources/index.ts). The SDK's serialized `__provider` shims `require` this module and
 * call `[Name].check/diff/create/read/update/delete`.
 */
import "./client/node-version"; // first: fails early, in one line, on a Node.js too old for undici

export { dynamicProvider, dynamicProviders, IMPORT_READ, type Provider } from "./adapters/dynamic";
export { defineResource, type Operations, type ResourceDefinition } from "./framework/lifecycle";
export * from "./providers";
export * from "./resources/index";
