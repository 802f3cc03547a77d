/**
 * What the generated package.json of `pulumi-posthog export` depends on for `pulumi-posthog`: the source the
 * running copy was installed from, so `npm install` in the exported directory installs the same package (a
 * release tarball, a git URL), never a registry name the package was not published under.
 *
 * Read from the project that installed it (the directory holding `node_modules/pulumi-posthog`): its
 * package.json's dependency spec (what `npm install <source>` wrote there), else its package-lock.json's
 * `resolved`, else the `_resolved` / `_from` fields older npm versions write into the installed package.json. A
 * tarball or directory path is rewritten relative to the exported directory; a git URL, an http(s) URL or a
 * version range is kept as it is. A copy that runs from a checkout of the repository (not from node_modules) is
 * linked by its path.
 */
import { existsSync, readFileSync } from "node:fs";
import { basename, dirname, isAbsolute, relative, resolve, sep } from "node:path";
import { packageName, packageRoot, packageVersion } from "../../client/version";

/** The dependency spec to write, and a note for the summary when the user should check it. */
export interface PackageSource {
  /** The value of `dependencies["pulumi-posthog"]` in the generated package.json. */
  spec: string;
  /** How the spec was found, for the summary (e.g. "as /home/me/org installed it: file:../pulumi-posthog-0.1.0.tgz"). */
  origin: string;
  /** Set when the spec is a guess the user should check, saying what to do. */
  note?: string;
}

/** A JSON file as an object, or undefined when it is missing or not JSON. */
function readJson(file: string): Record<string, unknown> | undefined {
  if (!existsSync(file)) return undefined;
  try {
    const v: unknown = JSON.parse(readFileSync(file, "utf8"));
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** `obj[a][b]…` when every step is an object and the end a non-empty string. */
function stringAt(obj: unknown, ...path: string[]): string | undefined {
  let v = obj;
  for (const k of path) v = v && typeof v === "object" ? (v as Record<string, unknown>)[k] : undefined;
  return typeof v === "string" && v !== "" ? v : undefined;
}

/** The spec of `pulumi-posthog` in an installing project's package.json (any dependency section). */
function declaredSpec(manifest: Record<string, unknown> | undefined): string | undefined {
  for (const section of ["dependencies", "devDependencies", "optionalDependencies"]) {
    const spec = stringAt(manifest, section, packageName);
    if (spec) return spec;
  }
  return undefined;
}

/** A path of a spec: `file:x`, or a bare `./x`, `../x`, `/x` (npm takes those as paths too); else undefined. */
function pathOf(spec: string): string | undefined {
  if (spec.startsWith("file:")) return spec.slice("file:".length).replace(/^\/\/(?=\/)/, "");
  return /^(\.{1,2}[\\/]|\/)/.test(spec) ? spec : undefined;
}

/** `spec` for a package.json in `outDir`: a path spec (relative to `base`) rewritten relative to `outDir`. */
function rebased(spec: string, base: string, outDir: string): string {
  const path = pathOf(spec);
  if (path === undefined) return spec;
  const target = isAbsolute(path) ? path : resolve(base, path);
  let rel = relative(outDir, target).split(sep).join("/");
  if (!rel.startsWith(".")) rel = `./${rel}`;
  return `file:${rel}`;
}

/**
 * How the running copy of pulumi-posthog (at `root`, default this package's directory) was installed, as the
 * spec a package.json in `outDir` (absolute) needs to install the same thing.
 */
export function packageSource(outDir: string, root: string | undefined = packageRoot): PackageSource {
  const gitTag = `github:pulumi-posthog/pulumi-posthog#v${packageVersion}`;
  if (root === undefined) {
    return {
      spec: gitTag,
      origin: "the git tag of this version: the package's own directory was not found",
      note: `check the pulumi-posthog dependency in package.json: it names ${gitTag}; put the tarball path or git URL you installed from there`,
    };
  }
  const parent = dirname(root);
  if (basename(parent) !== "node_modules") {
    // A checkout of the repository (e.g. `npm run export`): link it by its path, built as it is.
    const spec = rebased(`file:${root}`, root, outDir);
    return {
      spec,
      origin: "this checkout of the repository",
      note: `package.json links this checkout (${spec}); to install a release instead, put its tarball path or ${gitTag} there`,
    };
  }
  const project = dirname(parent);
  const own = readJson(resolve(root, "package.json"));
  const found =
    declaredSpec(readJson(resolve(project, "package.json"))) ??
    stringAt(
      readJson(resolve(project, "package-lock.json")),
      "packages",
      `node_modules/${packageName}`,
      "resolved",
    );
  if (found) return { spec: rebased(found, project, outDir), origin: `as ${project} installed it: ${found}` };
  const legacy = stringAt(own, "_resolved") ?? stringAt(own, "_from");
  if (legacy)
    return { spec: rebased(legacy, project, outDir), origin: `as ${project} installed it: ${legacy}` };
  return {
    spec: gitTag,
    origin: `the git tag of this version: ${project} does not say where pulumi-posthog came from`,
    note: `check the pulumi-posthog dependency in package.json: it names ${gitTag}; put the tarball path or git URL you installed from there`,
  };
}
