/**
 * The parts of the client options that are not plain data, in a module without zod: the {@link ApiKey} wrapper
 * (with {@link revealApiKey}) and the {@link RetryInfo} that `retry.onRetry` receives. The SDK's generated
 * lookup types (sdk/lookup-types.ts) import these, so a program compiling the SDK's declaration files reads none
 * of zod's (whose `.d.cts` need `esModuleInterop` under TypeScript 5). settings.ts re-exports them.
 */
import { inspect } from "node:util";

/**
 * The name of {@link ApiKey}'s reader method, for {@link revealApiKey}: a symbol of this module, exported to no entry
 * point of the package (`pulumi-posthog/client` exports `ApiKey`, not this), so no enumeration, JSON, inspection or
 * serialization calls it. A constant: the key is never stored outside its `ApiKey`.
 */
export const READ_API_KEY: unique symbol = Symbol("ApiKey.read");

/**
 * A personal API key that does not reveal itself: `String(k)`, `JSON.stringify(k)` and `util.inspect(k)`
 * all give `[secret]`. The value is an ES private field (`#value`): no enumeration, reflection, serialization
 * (JSON, `structuredClone`, Pulumi's closure serialization) or copy by spreading finds it.
 */
export class ApiKey {
  readonly #value: string;
  constructor(value: string) {
    this.#value = value;
  }
  /**
   * The clear-text key, for {@link revealApiKey} only.
   * @throws TypeError when `this` is not an object made by `new ApiKey` (a copy, or another class's object)
   */
  [READ_API_KEY](): string {
    if (!(#value in this)) throw new TypeError("not an ApiKey created by this module");
    return this.#value;
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

/** The clear-text key, for the `Authorization` header only. @throws TypeError for anything but an {@link ApiKey}. */
export function revealApiKey(key: ApiKey): string {
  if (!(key instanceof ApiKey)) throw new TypeError("not an ApiKey created by this module");
  return key[READ_API_KEY]();
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
