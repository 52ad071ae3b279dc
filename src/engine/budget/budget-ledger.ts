/**
 * One run's budget ledger (docs/budgets.md): what its model calls have spent and what the calls in
 * flight have reserved, shared by every step of the run, its map items and its sub-workflow child
 * runs. Pure: the gate (budget-gate.ts) decides from it and waits on it.
 *
 * The bound it keeps: a call starts only while `spent + reserved` is below every limit, and it
 * reserves its worst case first. As a call's actual use never exceeds its reserve (its output is
 * capped by the max_tokens sent, its input is at most one token per prompt byte), `spent` can
 * never pass a limit by more than the reserve of the one call that started last.
 */
import type { BudgetLimits, RunBudget, Spend } from './budget-limits.js';

/** A call's worst case, reserved before it starts. */
export interface CallCost {
  tokens: number;
  /** US dollars; null when the call's models have no price. */
  costUsd: number | null;
}

/** A reservation held by one call in flight. */
export interface Reservation {
  readonly tokens: number;
  readonly costUsd: number;
  settled: boolean;
}

export class BudgetLedger {
  private spentTokens: number;
  private spentCostUsd: number | null;
  private reservedTokens = 0;
  private reservedCostUsd = 0;
  private waiters = new Set<() => void>();

  constructor(
    private current: RunBudget,
    seed: Spend = { tokens: 0, costUsd: null },
  ) {
    this.spentTokens = seed.tokens;
    this.spentCostUsd = seed.costUsd;
  }

  get budget(): RunBudget {
    return this.current;
  }

  get spent(): Spend {
    return { tokens: this.spentTokens, costUsd: this.spentCostUsd };
  }

  /** The largest share of a limit spent (0 when nothing is spent, 1 at a limit). */
  share(): number {
    const { maxTokens, maxCostUsd } = this.current.limits;
    let share = 0;
    if (maxTokens !== undefined) share = Math.max(share, this.spentTokens / maxTokens);
    if (maxCostUsd !== undefined) share = Math.max(share, (this.spentCostUsd ?? 0) / maxCostUsd);
    return share;
  }

  /** Whether a limit is reached: no call starts until it is raised. */
  reached(): boolean {
    return this.share() >= 1;
  }

  /** Whether a call may start now: what is spent and reserved is below every limit. */
  hasRoom(): boolean {
    const { maxTokens, maxCostUsd } = this.current.limits;
    if (maxTokens !== undefined && this.spentTokens + this.reservedTokens >= maxTokens)
      return false;
    if (maxCostUsd !== undefined && (this.spentCostUsd ?? 0) + this.reservedCostUsd >= maxCostUsd)
      return false;
    return true;
  }

  /** Holds a call's worst case until it settles. */
  reserve(worst: CallCost): Reservation {
    const reservation = { tokens: worst.tokens, costUsd: worst.costUsd ?? 0, settled: false };
    this.reservedTokens += reservation.tokens;
    this.reservedCostUsd += reservation.costUsd;
    return reservation;
  }

  /** A call ended: its reserve is released and what it used (null: nothing known) is charged. */
  settle(reservation: Reservation, used: CallCost | null): void {
    if (!reservation.settled) {
      reservation.settled = true;
      this.reservedTokens -= reservation.tokens;
      this.reservedCostUsd -= reservation.costUsd;
    }
    if (used !== null) this.charge(used);
    this.wake();
  }

  /** Adds spend without a reservation (a resumed child run's finished steps). */
  charge(used: CallCost): void {
    this.spentTokens += used.tokens;
    if (used.costUsd !== null) this.spentCostUsd = (this.spentCostUsd ?? 0) + used.costUsd;
  }

  /** New limits (a person raised them). */
  raise(limits: BudgetLimits): void {
    this.current = { ...this.current, limits };
    this.wake();
  }

  /** Resolves at the next change (a call settled, a raise, {@link wake}); rejects on abort. */
  changed(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(signal.reason as Error);
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        this.waiters.delete(done);
        reject(signal.reason as Error);
      };
      const done = (): void => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      this.waiters.add(done);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Wakes every call waiting on the ledger (they look again). */
  wake(): void {
    const waiting = [...this.waiters];
    this.waiters.clear();
    for (const resolve of waiting) resolve();
  }
}
