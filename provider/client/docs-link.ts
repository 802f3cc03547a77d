/**
 * The pointer an error message ends with when its fix is on a docs page: ` (see docs/<page>#<anchor>)`.
 *
 * Why a repository path rather than a URL: the npm package ships docs/ (package.json `files`), so the path names
 * the page of the version installed (`node_modules/pulumi-posthog/docs/…`), readable offline, and the same path
 * under the repository on GitHub; a URL to `blob/main` would name the newest page, whose headings may have moved
 * since that version. One form, written here only; test/docs/links.test.ts checks that every pointer names a page
 * and a heading anchor that exist.
 */

const PREFIX = " (see docs/";

/**
 * The pointer to a docs page's section, to append to a message: ` (see docs/<page>#<anchor>)`.
 * @param page the page under docs/, e.g. `troubleshooting/settings-and-keys.md`
 * @param anchor GitHub's anchor of the section's heading, e.g. `401-the-key-is-not-accepted`
 */
export function docsLink(page: string, anchor: string): string {
  return `${PREFIX}${page}#${anchor})`;
}

/** Whether `message` names a docs page anywhere ({@link docsLink}'s form). */
export function hasDocsLink(message: string): boolean {
  return message.includes(PREFIX);
}

/** `message` without the {@link docsLink} pointer it ends with (unchanged when it ends with none). */
export function withoutDocsLink(message: string): string {
  const at = message.lastIndexOf(PREFIX);
  return at >= 0 && message.endsWith(")") && !message.slice(at + PREFIX.length).includes(" ")
    ? message.slice(0, at)
    : message;
}

/** `message` ending with a pointer: its own when it ends with one (an error of the client), else `pointer`. */
export function withDocsLink(message: string, pointer: string): string {
  return withoutDocsLink(message) === message ? `${message}${pointer}` : message;
}
