// One service's connections, shared fairly between the callers of the gateway. At most `slots`
// requests are at the service at once (its connection pool); the rest wait in one line per
// caller, and a freed connection goes to the lines in turn (round robin), not to whoever queued
// most. When every place in the wait is taken, the caller with the longest line gives up its
// newest request to make room for a caller with a shorter one; a caller that already has the
// longest line is refused itself. So a caller that floods a service waits behind everyone else
// and is the one refused, while a caller asking now and then is served in the next turn.

interface Waiting {
  caller: string;
  start(): void;
  refuse(): void;
}

/** A request's place: running at the service, or waiting for its turn. */
export interface Place {
  /** The request is over (answered, refused, or its client left): frees its connection or its place in line. */
  leave(): void;
}

export class FairShare {
  private running = 0;
  private waiting = 0;
  /** One line per caller; the map's order is the order of turns. */
  private readonly lines = new Map<string, Waiting[]>();

  constructor(
    private readonly slots: number,
    private readonly queueSlots: number,
  ) {}

  /**
   * Runs `start` now if a connection is free, else when it is this caller's turn; `refuse` is
   * called instead if the request loses its place to a caller with a shorter line. Undefined:
   * no place at all (the caller should be answered 503).
   */
  enter(caller: string, start: () => void, refuse: () => void): Place | undefined {
    if (this.running < this.slots && this.waiting === 0) {
      this.running += 1;
      start();
      return this.runningPlace();
    }
    if (this.waiting >= this.queueSlots && !this.makeRoomFor(caller)) return undefined;
    const entry: Waiting = { caller, start, refuse };
    const line = this.lines.get(caller);
    if (line) line.push(entry);
    else this.lines.set(caller, [entry]);
    this.waiting += 1;
    let started = false;
    entry.start = () => {
      started = true;
      start();
    };
    let left = false;
    return {
      leave: () => {
        if (left) return;
        left = true;
        if (started) this.release();
        else this.remove(entry);
      },
    };
  }

  private runningPlace(): Place {
    let left = false;
    return {
      leave: () => {
        if (left) return;
        left = true;
        this.release();
      },
    };
  }

  /** A connection is free: the next line in turn gets it, and goes to the back of the turns. */
  private release(): void {
    this.running -= 1;
    const next = this.lines.entries().next();
    if (next.done) return;
    const [caller, line] = next.value;
    const entry = line.shift();
    this.lines.delete(caller);
    if (!entry) return;
    if (line.length) this.lines.set(caller, line);
    this.waiting -= 1;
    this.running += 1;
    entry.start();
  }

  private remove(entry: Waiting): void {
    const line = this.lines.get(entry.caller);
    const index = line?.indexOf(entry) ?? -1;
    if (!line || index < 0) return;
    line.splice(index, 1);
    if (!line.length) this.lines.delete(entry.caller);
    this.waiting -= 1;
  }

  /** The wait is full: the longest line's newest request gives its place up, if that line is longer than `caller`'s would be. */
  private makeRoomFor(caller: string): boolean {
    let longest: Waiting[] | undefined;
    for (const line of this.lines.values()) if (!longest || line.length > longest.length) longest = line;
    const own = this.lines.get(caller)?.length ?? 0;
    const dropped = longest && longest.length > own + 1 ? longest.pop() : undefined;
    if (!longest || !dropped) return false;
    if (!longest.length) this.lines.delete(dropped.caller);
    this.waiting -= 1;
    dropped.refuse();
    return true;
  }
}
