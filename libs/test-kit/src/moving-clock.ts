// A delete that waits on another transaction's row lock sees time pass before its statement runs.
// The events tests of every service reproduce that wait the same way: the clock jumps while the
// delete runs, and the event must carry a time no earlier than the jump.

/** What Prisma's `$extends` is given here: the one query hook these tests need. */
interface ExtendableClient {
  $extends(extension: { query: Record<string, { deleteMany(params: { args: unknown; query: (args: unknown) => Promise<unknown> }): Promise<unknown> }> }): unknown;
}

/**
 * `prisma` whose `model.deleteMany` first moves the clock `ms` on (fake timers must be on while
 * it runs: `whileClockMoves`); `movedTo()` is the time it moved to, for the event to be held to.
 */
export function clockMovingOnDelete<Client extends object>(prisma: Client, model: string, ms = 60_000): { prisma: Client; movedTo(): Date } {
  let movedTo: Date | undefined;
  // Each service's generated client has its own $extends type; the hook used here is the same in all.
  const extended = (prisma as unknown as ExtendableClient).$extends({
    query: {
      [model]: {
        async deleteMany({ args, query }) {
          jest.setSystemTime(Date.now() + ms);
          movedTo = new Date();
          return query(args);
        },
      },
    },
  }) as unknown as Client;
  return {
    prisma: extended,
    movedTo: () => {
      if (!movedTo) throw new Error(`${model}.deleteMany never ran: the clock never moved`);
      return movedTo;
    },
  };
}

/** Runs `action` with Date under fake timers that still advance (timers, ticks and hrtime stay real). */
export async function whileClockMoves<T>(action: () => Promise<T>): Promise<T> {
  jest.useFakeTimers({ advanceTimers: true, doNotFake: ['hrtime', 'nextTick', 'performance', 'queueMicrotask', 'setImmediate', 'clearImmediate', 'setInterval', 'clearInterval', 'setTimeout', 'clearTimeout'] });
  try {
    return await action();
  } finally {
    jest.useRealTimers();
  }
}
