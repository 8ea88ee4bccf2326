// The baseline of the throughput benchmarks: graphile-worker draining no-op jobs with one worker of
// concurrency 16 in this process (no network hop), on the same PostgreSQL as ours.
import { Logger, makeWorkerUtils, run } from "graphile-worker";

const quiet = new Logger(() => () => {});

/**
 * Queues `tasks` no-op jobs, then drains them. `meter` starts when the worker starts and its
 * returned function is read as the last job ends (for CPU counters); its value comes back as `metered`.
 */
export async function drainGraphileWorker<T>(
  url: string,
  tasks: number,
  concurrency: number,
  meter: () => Promise<() => Promise<T> | T> | (() => Promise<T> | T),
) {
  const utils = await makeWorkerUtils({ connectionString: url, logger: quiet });
  await utils.migrate();
  for (let i = 0; i < tasks; i += 50) await Promise.all(Array.from({ length: Math.min(50, tasks - i) }, () => utils.addJob("noop", {})));
  let processed = 0;
  let finish: () => void = () => {};
  const allDone = new Promise<void>((resolve) => {
    finish = resolve;
  });
  const read = await meter();
  const t0 = performance.now();
  const worker = await run({
    connectionString: url,
    concurrency,
    noHandleSignals: true,
    logger: quiet,
    taskList: {
      noop: async () => {
        if (++processed === tasks) finish();
      },
    },
  });
  await allDone;
  const metered = await read();
  const seconds = (performance.now() - t0) / 1000;
  await worker.stop();
  await utils.release();
  return { processed, seconds, metered };
}
