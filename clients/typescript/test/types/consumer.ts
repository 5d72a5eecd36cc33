// Compiled by `npm run typecheck` (never run): the declarations in types/
// serve a TypeScript program through the package's exports.
import {
  Client, Worker, OcylessError, permanent, withGroup, verifySignature, parseDuration,
  type Job, type TakenJob, type WaitResult,
} from 'ocyless';

const c = new Client('http://127.0.0.1:8023', { retries: 2 });

async function main(): Promise<void> {
  const { id, existing }: { id: number; existing: boolean } = await c.createJob('q', { input: { n: 1 }, timeout: '10m', delay: 5000 });
  const taken: TakenJob[] = await c.take('q', { count: 5, worker: 'w', wait: 20_000 });
  const job = await c.getJob(id, { fields: ['status', 'history'] });
  const status: string = job.status;
  const r: WaitResult = await c.createAndWait('q', { input: [1, 2] }, 10_000, { fields: ['status', 'output'] });
  if (r.ended) console.log(r.job?.output);
  const ended: boolean | undefined = (await c.waitJob(r.id, '20s', { signal: AbortSignal.timeout(30_000) })).ended;
  // @ts-expect-error: a wait is required
  await c.waitJob(r.id);
  const ms: number = parseDuration((await c.getQueue('q')).timeout);
  await c.updateJob(id, { status: 'failed', error: { group: 'g' }, retry_in: 0 }, { attempt: taken[0]?.attempt });
  // @ts-expect-error: not a status
  await c.updateJob(id, { status: 'done' });
  for await (const j of c.allJobs(null, { status: 'failed' })) console.log(j.error?.group);
  try {
    await c.heartbeat(id, { attempt: 1 });
  } catch (err) {
    if (err instanceof OcylessError && err.isStaleAttempt) console.log(err.status, err.body);
  }
  const w = new Worker(c, async (j: Job) => {
    if (j.signal.aborted) throw withGroup(permanent(new Error('x')), 'g');
    return { ok: true, input: j.input };
  }, { queues: ['q'], concurrency: 4, batch: { maxItems: 100 }, onFinish: (_j, err) => console.log(err) });
  await w.run({ signal: AbortSignal.timeout(1000) });
  verifySignature('body', 't=1,v1=00', 'secret');
  console.log(existing, status, ms, ended);
}
void main;
