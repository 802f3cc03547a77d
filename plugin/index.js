// The posthog provider plugin, as the Node.js language host runs this folder (PulumiPlugin.yaml): its RunPlugin
// starts `node @pulumi/pulumi/cmd/run-plugin <this folder> <engine address>`, which loads this file with the
// engine's address as the only argument left. It starts the built plugin (`npm run build`) of this clone, as
// plugin/pulumi-resource-posthog does: the script's path as argv[1] (where run-plugin left its own), so that the
// plugin knows the engine started it and ends when the engine is gone (provider/framework/engine-watch.ts).
const { existsSync } = require("node:fs");
const { join } = require("node:path");

const plugin = join(__dirname, "..", "dist", "provider", "adapters", "plugin", "main.js");
if (!existsSync(plugin)) throw new Error(`${plugin} is missing: run \`npm run build\` in the clone first`);
process.argv[1] = plugin;
require(plugin);
