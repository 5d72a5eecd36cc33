// A worker process for the shutdown tests: its handler runs input.ms
// milliseconds or until its signal aborts, and it stops on SIGTERM with
// the grace period of GRACE_MS.

import { Client, Worker } from '../../src/index.js';

const client = new Client(/** @type {string} */ (process.env.OCYLESS_URL));
const worker = new Worker(client, async (job) => {
  process.stdout.write(`started ${job.id}\n`);
  await new Promise((resolve) => {
    const t = setTimeout(resolve, job.input.ms);
    job.signal.addEventListener('abort', () => {
      clearTimeout(t);
      process.stdout.write(`aborted ${job.id}: ${job.signal.reason.name}\n`);
      resolve(undefined);
    }, { once: true });
  });
  return { slept: job.input.ms };
}, { queues: [/** @type {string} */ (process.env.QUEUE)], shutdownGrace: Number(process.env.GRACE_MS), heartbeatInterval: -1 });
await worker.run();
process.stdout.write('stopped\n');
