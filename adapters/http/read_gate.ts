/**
 * Admission for the anonymous reads that can cost the database most (near-duplicate searches):
 * at most `max` run at once in a process, so they never hold more than that many of the main
 * pool's connections and listings, writes and health keep theirs; at most `perAddress` of them at
 * once per client address (an IPv6 client by its /64), so one client cannot take them all. A
 * request over its address's share is refused at once (429 `too_many_reads`); one that finds every
 * slot taken waits its turn for at most `waitMs`, then is refused (503 `reads_busy`). Nothing is
 * kept for an address with nothing in flight, so the state is bounded by the slots and the queue
 * (tests/read_gate_test.ts).
 */
import { AppError } from "../../domain/errors.ts";

/** Settings of a gate. */
export interface ReadGateLimits {
  /** Reads at once in the process. */
  max: number;
  /** Reads at once (running or waiting) per client address. */
  perAddress: number;
  /** How long a read waits for a slot before it is refused. */
  waitMs: number;
  /** Reads waiting at most; beyond, refused at once. */
  queue: number;
}

/** The limits the service runs with: half of the main pool's 10 connections at most. */
export const READ_GATE_LIMITS: ReadGateLimits = { max: 4, perAddress: 2, waitMs: 2_000, queue: 32 };

/** See the module comment. */
export class ReadGate {
  #held = 0;
  readonly #waiting: (() => void)[] = [];
  readonly #perAddress = new Map<string, number>();

  constructor(readonly limits: ReadGateLimits = READ_GATE_LIMITS) {}

  /** A slot for a read from `address`; dispose it when the read is done. */
  async enter(address: string): Promise<Disposable> {
    const mine = this.#perAddress.get(address) ?? 0;
    if (mine >= this.limits.perAddress) {
      throw new AppError("too_many_reads", "Too many searches at once from this address", {
        fields: { max_at_once: this.limits.perAddress },
      });
    }
    if (this.#held >= this.limits.max && this.#waiting.length >= this.limits.queue) {
      throw busy();
    }
    this.#perAddress.set(address, mine + 1);
    try {
      if (this.#held < this.limits.max) this.#held++;
      else await this.#wait();
    } catch (e) {
      this.#leave(address);
      throw e;
    }
    let released = false;
    return {
      [Symbol.dispose]: () => {
        if (released) return;
        released = true;
        this.#leave(address);
        const next = this.#waiting.shift();
        if (next) next();
        else this.#held--;
      },
    };
  }

  /** Reads running now, and addresses with a read in flight or waiting. */
  get stats(): { held: number; waiting: number; addresses: number } {
    return { held: this.#held, waiting: this.#waiting.length, addresses: this.#perAddress.size };
  }

  #wait(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiting.splice(this.#waiting.indexOf(handOn), 1);
        reject(busy());
      }, this.limits.waitMs);
      // Woken by a release, the releaser's slot is handed on (held stays the same).
      const handOn = () => {
        clearTimeout(timer);
        resolve();
      };
      this.#waiting.push(handOn);
    });
  }

  #leave(address: string): void {
    const left = (this.#perAddress.get(address) ?? 1) - 1;
    if (left > 0) this.#perAddress.set(address, left);
    else this.#perAddress.delete(address);
  }
}

function busy(): AppError {
  return new AppError("reads_busy", "Too many searches at once, try again shortly");
}
