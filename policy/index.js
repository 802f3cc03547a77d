// The posthog governance policy pack (docs/governance.md), as the Pulumi CLI runs it: through the Node.js
// language host (PulumiPolicy.yaml) or directly (posthog-policy, the executable beside this file). It serves the
// built pack (`npm run build` in a clone; dist/ in the installed package). @pulumi/policy's PolicyPack reads its
// version from ./package.json of the working directory: the package's root, so that the pack's version is the
// package's.
const { existsSync } = require("node:fs");
const { join } = require("node:path");

const root = join(__dirname, "..");
const pack = join(root, "dist", "provider", "apps", "governance", "pack.js");
if (!existsSync(pack)) throw new Error(`${pack} is missing: run \`npm run build\` in the clone first`);
process.chdir(root);
require(pack).servePolicyPack();
