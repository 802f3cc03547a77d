/**
 * Every setting the provider reads, and the one check of all of them that `check` runs before any request (issue 49,
 * item 4): a malformed value fails the preview that would meet it, naming the setting, where its value came from and
 * the accepted forms, instead of passing the preview and failing `up`. One list ({@link SETTINGS}) so that a new
 * setting cannot be forgotten: test/provider/malformed-settings.test.ts walks it (each malformed value fails a
 * preview's check with no request) and fails when the code reads a `POSTHOG_*` variable or a `posthog:*` setting
 * the list does not name.
 */
import { isAbsolute } from "node:path";
import { withoutDocsLink } from "../client/docs-link";
import { InvalidInputError } from "../client/errors";
import { type ConfigGetter, idSettingProblems, settingProblems } from "../client/settings";
import { envDuration } from "./lost-create";

/** One setting: its stack config key (none: the environment only), its environment variable, what it accepts. */
export interface SettingInfo {
  /** `posthog:<name>`, or undefined when only the environment sets it. */
  config: string | undefined;
  /** `POSTHOG_<NAME>`. */
  env: string;
  /** The accepted forms, as docs/installation-configuration.md lists them. */
  accepted: string;
}

/** Every setting the provider (and the client it builds, and the lookups) reads; docs/installation-configuration.md. */
export const SETTINGS: readonly SettingInfo[] = [
  { config: "posthog:apiKey", env: "POSTHOG_API_KEY", accepted: "a personal API key, phx_…" },
  {
    config: "posthog:host",
    env: "POSTHOG_HOST",
    accepted: "an http(s) URL, with the path prefix of a self-hosted PostHog",
  },
  { config: "posthog:organizationId", env: "POSTHOG_ORGANIZATION_ID", accepted: 'a UUID, or "@current"' },
  { config: "posthog:projectId", env: "POSTHOG_PROJECT_ID", accepted: 'a positive integer, or "@current"' },
  { config: "posthog:rateLimit", env: "POSTHOG_RATE_LIMIT", accepted: '"<perMinute>/<perHour>", or "off"' },
  {
    config: "posthog:maxRateLimitWait",
    env: "POSTHOG_MAX_RATE_LIMIT_WAIT",
    accepted: 'whole seconds, or with a unit s, m or h ("90s")',
  },
  {
    config: "posthog:retryBaseDelayMs",
    env: "POSTHOG_RETRY_BASE_DELAY_MS",
    accepted: "a whole number of milliseconds",
  },
  {
    config: "posthog:headersTimeoutMs",
    env: "POSTHOG_HEADERS_TIMEOUT_MS",
    accepted: "a positive whole number of milliseconds",
  },
  { config: "posthog:findCacheMs", env: "POSTHOG_FIND_CACHE_MS", accepted: "a whole number of milliseconds" },
  { config: undefined, env: "POSTHOG_CREATE_JOURNAL_DIR", accepted: 'an absolute path, or "off"' },
  {
    config: undefined,
    env: "POSTHOG_LOST_CREATE_WAIT",
    accepted: 'whole seconds, or with a unit s, m or h ("90s")',
  },
  {
    config: undefined,
    env: "POSTHOG_LOST_CREATE_WINDOW",
    accepted: 'whole seconds, or with a unit s, m or h ("10m")',
  },
];

/**
 * The form of `POSTHOG_CREATE_JOURNAL_DIR` (provider/framework/create-journal.ts): unset or empty (the default directory),
 * `off`, or an absolute path. A relative one (`~/…` too: nothing expands it) would be taken from the directory each
 * run's provider host starts in, the program's, so a value such as `false` or `0` would write a journal into it.
 * @throws InvalidInputError naming the variable, its value and the accepted forms
 */
function checkJournalDir(env: NodeJS.ProcessEnv): void {
  const raw = env.POSTHOG_CREATE_JOURNAL_DIR;
  if (!raw || raw === "off" || isAbsolute(raw)) return;
  const shown = JSON.stringify(raw.length > 60 ? `${raw.slice(0, 60)}…` : raw);
  throw new InvalidInputError(
    "POSTHOG_CREATE_JOURNAL_DIR",
    `Invalid POSTHOG_CREATE_JOURNAL_DIR ${shown}, set by the environment variable POSTHOG_CREATE_JOURNAL_DIR: ` +
      'expected an absolute path (the create journal\'s directory), or "off" to turn the journal off; unset, it is ' +
      "$XDG_STATE_HOME/pulumi-posthog/creates, else ~/.local/state/pulumi-posthog/creates",
  );
}

/**
 * Checks every setting of {@link SETTINGS} the stack config (`config`) and the environment set, before any
 * request, whether the API key is set or not: the client's ({@link settingProblems}: the key's form, host, timeouts,
 * rate limit, waits), the organization and project ids' forms, the lost-create wait and window (read from
 * `process.env` as provider/framework/lost-create.ts `lostCreateTimes` reads them) and the create journal's directory. No
 * request.
 * @throws InvalidInputError naming each malformed setting, where its value came from and the accepted forms (one:
 *   its own error; several: one error listing them all, so that one preview names everything to fix)
 */
export function checkProviderSettings(
  config: ConfigGetter | undefined,
  env: NodeJS.ProcessEnv = process.env,
): void {
  const problems = [...settingProblems(config, env), ...idSettingProblems(config, env)];
  const more: (() => void)[] = [
    // As lostCreateTimes (provider/framework/lost-create.ts) reads them, each on its own so that both are named.
    () => envDuration("POSTHOG_LOST_CREATE_WAIT", 0),
    () => envDuration("POSTHOG_LOST_CREATE_WINDOW", 0),
    () => checkJournalDir(env),
  ];
  for (const check of more) {
    try {
      check();
    } catch (e) {
      if (!(e instanceof InvalidInputError)) throw e;
      problems.push(e);
    }
  }
  const [first] = problems;
  if (first === undefined) return;
  if (problems.length === 1) throw first;
  throw new InvalidInputError(
    first.property,
    `${problems.length} settings are malformed: ${problems.map((p, i) => `(${i + 1}) ${withoutDocsLink(p.message)}`).join("; ")}`,
  );
}
