/**
 * Every file under a folder: as text, what the secret-leak tests search (a backend's checkpoints, backups, history
 * and event logs); as paths, what the docs tests read.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

/**
 * Every file below `dir` (recursively), with its content read as latin1 (any byte sequence reads; an ASCII secret is
 * found in it as it is).
 * @returns `{path, text}` per file, `path` absolute when `dir` is
 */
export function filesUnder(dir: string): { path: string; text: string }[] {
  const out: { path: string; text: string }[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...filesUnder(path));
    else out.push({ path, text: readFileSync(path, "latin1") });
  }
  return out;
}

/**
 * The files below `root`/`dir` (recursively, skipping node_modules) whose name ends with one of `exts`, as paths
 * relative to `root`, `/`-separated; none when `dir` does not exist.
 */
export function pathsUnder(root: string, dir: string, exts: readonly string[]): string[] {
  if (!existsSync(join(root, dir))) return [];
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory()) return e.name === "node_modules" ? [] : pathsUnder(root, path, exts);
    return exts.some((x) => e.name.endsWith(x)) ? [path] : [];
  });
}
