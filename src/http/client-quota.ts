/**
 * Counts something each client holds (sockets waiting for a run, by client IP) against a
 * bound. Entries exist only while their count is above zero, so memory follows what is held,
 * not how many clients ever came.
 */
export class ClientQuota {
  readonly max: number;
  private readonly counts = new Map<string, number>();

  constructor(max: number) {
    this.max = max;
  }

  /** Takes one unit for `client`; false (nothing taken) when it already holds `max`. */
  acquire(client: string): boolean {
    const count = this.counts.get(client) ?? 0;
    if (count >= this.max) return false;
    this.counts.set(client, count + 1);
    return true;
  }

  /** Gives back one unit taken by {@link acquire}. */
  release(client: string): void {
    const count = this.counts.get(client) ?? 0;
    if (count <= 1) this.counts.delete(client);
    else this.counts.set(client, count - 1);
  }

  /** Units `client` holds. */
  held(client: string): number {
    return this.counts.get(client) ?? 0;
  }

  /** Clients holding at least one unit. */
  get clients(): number {
    return this.counts.size;
  }
}
