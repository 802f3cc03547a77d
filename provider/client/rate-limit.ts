/**
 * Client-side rate limiting, shared per API key by the clients of one run (`shared.ts`).
 *
 * PostHog throttles a personal API key with DRF's sliding-window throttles (480 requests in any 60 s,
 * 4,800 in any hour). A classic token bucket with the same numbers can still exceed a sliding window (a full
 * bucket plus a minute of refill is ~2× the limit in one window), so each limit here is a sliding window
 * over the send times of the last `limit` requests: a request is sent only when fewer than `limit` were
 * sent in the trailing window (plus a small margin for latency differences). Waiters are served in FIFO order.
 */
import { createHash } from "node:crypto";
import type { ClientShared } from "./shared";

/**
 * The identity of "one API key at one origin", under which the rate limiter and the shared reads are kept in a
 * {@link ClientShared}: `sha256(key)|origin` (the key itself is never stored).
 */
export function scopeOf(apiKey: string, origin: string): string {
  return `${createHash("sha256").update(apiKey).digest("hex")}|${origin}`;
}

/** One limit: at most `limit` requests in any `windowMs`. */
export interface WindowSpec {
  limit: number;
  windowMs: number;
}

class Window {
  private readonly times: Float64Array;
  private head = 0;
  private size = 0;
  constructor(readonly spec: WindowSpec) {
    this.times = new Float64Array(spec.limit);
  }
  /** Earliest time (ms) at which one more request fits. */
  nextFree(now: number, marginMs: number): number {
    if (this.size < this.spec.limit) return now;
    const oldest = this.times[this.head] ?? 0;
    return Math.max(now, oldest + this.spec.windowMs + marginMs);
  }
  /**
   * When a request that has `ahead` requests queued before it could be sent (ms since epoch): the
   * (ahead - free)-th oldest send must leave the window first. Beyond one window's worth it is a lower bound.
   */
  slotFor(ahead: number, now: number, marginMs: number): number {
    const free = this.spec.limit - this.size;
    if (ahead < free) return now;
    const idx = ahead - free;
    if (idx < this.size) {
      return Math.max(
        now,
        (this.times[(this.head + idx) % this.spec.limit] ?? 0) + this.spec.windowMs + marginMs,
      );
    }
    return now + this.spec.windowMs * (1 + Math.floor(idx / this.spec.limit));
  }
  record(t: number): void {
    if (this.size < this.spec.limit) {
      this.times[(this.head + this.size) % this.spec.limit] = t;
      this.size++;
    } else {
      this.times[this.head] = t;
      this.head = (this.head + 1) % this.spec.limit;
    }
  }
}

interface Waiter {
  resolve: () => void;
  reject: (e: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
}

/** A FIFO limiter over one or more sliding windows. */
export class RateLimiter {
  private readonly windows: Window[];
  private readonly queue: Waiter[] = [];
  private timer: NodeJS.Timeout | undefined;
  private blockedUntil = 0;
  /** Number of requests admitted so far (for tests and diagnostics). */
  admitted = 0;

  constructor(
    specs: WindowSpec[],
    private readonly marginMs = 1_000,
  ) {
    this.windows = specs.map((s) => new Window(s));
  }

  /** Requests currently waiting for a slot. */
  get queued(): number {
    return this.queue.length;
  }

  /**
   * Waits for a slot and records the send. Rejects with the signal's reason if `signal` aborts first.
   * Fast path (a slot is free and nobody waits): resolves synchronously-in-a-microtask, no timer.
   */
  acquire(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.queue.length === 0 && this.tryAdmit(Date.now())) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { resolve, reject, signal, onAbort: undefined };
      if (signal) {
        waiter.onAbort = () => {
          const i = this.queue.indexOf(waiter);
          if (i >= 0) this.queue.splice(i, 1);
          reject(signal.reason);
          this.schedule();
        };
        signal.addEventListener("abort", waiter.onAbort, { once: true });
      }
      this.queue.push(waiter);
      this.schedule();
    });
  }

  /** Takes a slot at once if one is free and nobody waits (no promise); false means: call {@link acquire}. */
  tryAcquire(): boolean {
    return this.queue.length === 0 && this.tryAdmit(Date.now());
  }

  /** Estimated wait in ms for a request joining the queue now (0 when a slot is free). */
  estimateWaitMs(now = Date.now()): number {
    let at = Math.max(now, this.blockedUntil);
    for (const w of this.windows) at = Math.max(at, w.slotFor(this.queue.length, now, this.marginMs));
    return at - now;
  }

  /** Holds every request until `untilMs` (epoch ms), e.g. after the server answered 429 with a wait. */
  blockUntil(untilMs: number): void {
    if (untilMs > this.blockedUntil) this.blockedUntil = untilMs;
  }

  private tryAdmit(now: number): boolean {
    if (now < this.blockedUntil) return false;
    for (const w of this.windows) if (w.nextFree(now, this.marginMs) > now) return false;
    for (const w of this.windows) w.record(now);
    this.admitted++;
    return true;
  }

  private schedule(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const now = Date.now();
    while (this.queue.length > 0 && this.tryAdmit(now)) {
      const w = this.queue.shift() as Waiter;
      if (w.signal && w.onAbort) w.signal.removeEventListener("abort", w.onAbort);
      w.resolve();
    }
    if (this.queue.length === 0) return;
    let at = this.blockedUntil;
    for (const w of this.windows) at = Math.max(at, w.nextFree(now, this.marginMs));
    this.timer = setTimeout(() => this.schedule(), Math.max(1, at - now));
  }
}

/** The limiter of `shared` for this scope (see {@link scopeOf}) and limits, created on first use. */
export function rateLimiterFor(
  shared: ClientShared,
  scope: string,
  limits: { perMinute: number; perHour: number },
): RateLimiter {
  const id = `${scope}|${limits.perMinute}|${limits.perHour}`;
  let limiter = shared.rateLimiters.get(id);
  if (!limiter) {
    limiter = new RateLimiter([
      { limit: limits.perMinute, windowMs: 60_000 },
      { limit: limits.perHour, windowMs: 3_600_000 },
    ]);
    shared.rateLimiters.set(id, limiter);
  }
  return limiter;
}
