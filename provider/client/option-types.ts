/**
 * The parts of the client options that are not plain data, in a module without zod: the {@link ApiKey} wrapper
 * (with {@link revealApiKey}) and the {@link RetryInfo} that `retry.onRetry` receives. The SDK's generated
 * lookup types (sdk/lookup-types.ts) import these, so a program compiling the SDK's declaration files reads none
 * of zod's (whose `.d.cts` need `esModuleInterop` under TypeScript 5). settings.ts re-exports them.
 */
import { inspect } from "node:util";

const keys = new WeakMap<ApiKey, string>();

/**
 * A personal API key that does not reveal itself: `String(k)`, `JSON.stringify(k)` and `util.inspect(k)`
 * all give `[secret]`. The value is kept outside the object (a module WeakMap), so no enumeration finds it.
 */
export class ApiKey {
  constructor(value: string) {
    keys.set(this, value);
  }
  toString(): string {
    return "[secret]";
  }
  toJSON(): string {
    return "[secret]";
  }
  [inspect.custom](): string {
    return "[secret]";
  }
}

/** The clear-text key, for the `Authorization` header only. */
export function revealApiKey(key: ApiKey): string {
  const value = keys.get(key);
  if (value === undefined) throw new TypeError("not an ApiKey created by this module");
  return value;
}

/** What {@link RetryInfo} reports before each retry wait. */
export interface RetryInfo {
  method: string;
  path: string;
  /** The attempt that just failed (1 = first try). */
  attempt: number;
  /** How long the client will wait before the next attempt, in milliseconds. */
  delayMs: number;
  /** Why: the HTTP status, or the connection error code. */
  reason: string;
  /** True when the wait was named by the server (Retry-After or the 429 body). */
  serverAdvised: boolean;
}
