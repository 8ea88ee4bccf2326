/**
 * Awaits every step sent together in one round trip, then throws the first failure in the order
 * given. Unlike `Promise.all`, it never returns while a step is still in flight, so a failure
 * cannot roll the transaction back under a statement that has not been sent yet. The caller
 * starts the steps, one after the other: a transaction's statements run in the order they were
 * started, so a step started first (its statement built and handed to the connection when it is
 * called) runs first.
 */
export async function pipeline<const T extends readonly unknown[]>(steps: T): Promise<{ -readonly [K in keyof T]: Awaited<T[K]> }> {
  const settled = await Promise.allSettled(steps);
  const failed = settled.find((step) => step.status === "rejected");
  if (failed) throw failed.reason;
  return settled.map((step) => (step as PromiseFulfilledResult<unknown>).value) as never;
}
