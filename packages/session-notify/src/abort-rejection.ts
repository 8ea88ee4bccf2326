/** Rejects once `signal` aborts: a step that stalls (an SMTP server, a host's describe) must not hold the drain past its claim. */
export const rejectOnAbort = (signal: AbortSignal): Promise<never> =>
  new Promise<never>((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
