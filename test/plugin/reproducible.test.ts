/**
 * The plugin tarball's bytes depend on the commit only (tools/plugin-tarball.mts `writeTarGz`, issue 51 item 2),
 * checked on a small tree: written twice, and again after the files' times, modes, owners and listing order
 * changed, it is the same bytes; its entries are sorted, dated by the time given, owned by 0/0 with no names, mode
 * 0755 or 0644, in a gzip with no time or file name, and the system's `tar` extracts them. The double pack of the
 * real artifacts (npm tarball and plugin tarball, a minute) is `npm run reproducible` (tools/reproducible.mts).
 */
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";
import { sourceDateEpoch, type TarEntry, writeTarGz } from "../../tools/plugin-tarball.mjs";
import { root } from "./support";

const work = mkdtempSync(join(tmpdir(), "reproducible-tar-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A path over ustar's 100 bytes of name (written as prefix and name). */
const LONG = `node_modules/${"long-package-name/".repeat(6)}lib/index.js`;
const FILES: Record<string, string> = {
  "dist/cli.js": "console.log('cli');\n",
  "dist/sub/empty.json": "",
  LICENSE: "Apache-2.0\n",
  [LONG]: "module.exports = 1;\n",
};
const tree = join(work, "tree");
for (const [name, text] of Object.entries(FILES)) {
  mkdirSync(join(tree, name, ".."), { recursive: true });
  writeFileSync(join(tree, name), text);
}
/** The fixture's entries (a command from content, the files from disk), in the order given. */
const entries = (order: string[]): TarEntry[] => [
  { name: "run", content: "#!/bin/sh\necho run\n", executable: true },
  ...order.map((name) => ({ name, source: join(tree, name) })),
];
const MTIME = 1_700_000_000;

/** Writes a tarball of `list` at `mtime` into `work/<name>.tar.gz` and returns its bytes. */
async function pack(name: string, list: TarEntry[], mtime = MTIME): Promise<Buffer> {
  const file = join(work, `${name}.tar.gz`);
  await writeTarGz(file, list, mtime);
  return readFileSync(file);
}

/** Each ustar header of `tar` (uncompressed): path, mode, owner, group, their names, time, type. */
function headers(tar: Buffer) {
  const out = [];
  const field = (h: Buffer, at: number, len: number) =>
    h
      .subarray(at, at + len)
      .toString("utf8")
      .replace(/\0.*$/s, "");
  for (let at = 0; at + 512 <= tar.length; ) {
    const h = tar.subarray(at, at + 512);
    if (h.every((b) => b === 0)) break;
    const prefix = field(h, 345, 155);
    const size = Number.parseInt(field(h, 124, 12), 8);
    out.push({
      path: prefix ? `${prefix}/${field(h, 0, 100)}` : field(h, 0, 100),
      mode: Number.parseInt(field(h, 100, 8), 8),
      uid: Number.parseInt(field(h, 108, 8), 8),
      gid: Number.parseInt(field(h, 116, 8), 8),
      names: field(h, 265, 32) + field(h, 297, 32),
      mtime: Number.parseInt(field(h, 136, 12), 8),
      type: field(h, 156, 1),
    });
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return out;
}

describe("the plugin tarball's writer (one commit, one set of bytes)", () => {
  it("gives the same bytes twice, and after the files' times, modes, owners and order changed", async () => {
    const first = await pack("first", entries(Object.keys(FILES)));
    expect((await pack("second", entries(Object.keys(FILES)))).equals(first)).toBe(true);
    for (const name of Object.keys(FILES)) {
      utimesSync(join(tree, name), new Date("2001-02-03T04:05:06Z"), new Date("2001-02-03T04:05:06Z"));
      chmodSync(join(tree, name), 0o700);
      if (process.getuid?.() === 0) chownSync(join(tree, name), 1234, 5678);
    }
    const changed = await pack("changed", entries(Object.keys(FILES).reverse()));
    expect(changed.equals(first)).toBe(true);
    // The time given is what the entries carry: another one, other bytes.
    expect((await pack("later", entries(Object.keys(FILES)), MTIME + 1)).equals(first)).toBe(false);
  });

  it("sorts its entries (each parent directory one), dated by the time given, 0/0 with no names, 0755 or 0644; gzip with no time or name", async () => {
    const gz = await pack("listed", entries(Object.keys(FILES)));
    // gzip: FLG without FNAME, MTIME zero.
    expect(gz[3]).toBe(0);
    expect(gz.readUInt32LE(4)).toBe(0);
    const listed = headers(gunzipSync(gz));
    const paths = listed.map((h) => h.path);
    expect(paths).toEqual([...paths].sort());
    expect(paths).toContain("dist/sub/");
    expect(paths).toContain(LONG);
    for (const h of listed) {
      expect([h.uid, h.gid, h.names, h.mtime], h.path).toEqual([0, 0, "", MTIME]);
      const executable = h.type === "5" || h.path === "run";
      expect(h.mode, h.path).toBe(executable ? 0o755 : 0o644);
    }
    // The system's tar reads it back, the long name included.
    const out = join(work, "extracted");
    mkdirSync(out);
    const tar = spawnSync("tar", ["-xzf", join(work, "listed.tar.gz"), "-C", out], { encoding: "utf8" });
    expect(tar.status, tar.stderr).toBe(0);
    for (const [name, text] of Object.entries(FILES))
      expect(readFileSync(join(out, name), "utf8")).toBe(text);
  });

  it("dates the entries by SOURCE_DATE_EPOCH when set, else by the commit (git log -1 --format=%ct)", () => {
    expect(sourceDateEpoch(root, { SOURCE_DATE_EPOCH: "123" })).toBe(123);
    const commit = spawnSync("git", ["log", "-1", "--format=%ct"], {
      cwd: root,
      encoding: "utf8",
    }).stdout.trim();
    expect(sourceDateEpoch(root, {})).toBe(Number(commit));
    expect(() => sourceDateEpoch(root, { SOURCE_DATE_EPOCH: "yesterday" })).toThrow(
      "SOURCE_DATE_EPOCH=yesterday is not a number of seconds",
    );
  });
});
