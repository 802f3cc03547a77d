/**
 * `pulumi-posthog/provider`: the dynamic providers, one named export per resource (the name in the type
 * token `pulumi-nodejs:dynamic/posthog:<Name>`), and each resource's card and schemas, from the one list
 * (provider/resources/index.ts). The SDK's serialized `__provider` shims `require` this module and call
 * `[Name].check/diff/create/read/update/delete`.
 */
import "./client/node-version"; // first: fails early, in one line, on a Node.js too old for undici

export { defineResource, type Provider, type ResourceDefinition } from "./framework/lifecycle";
export * from "./resources/index";
