// Drives a peer job queue for shared/bench (peers_test.go), which measures
// the redis-server around each phase:
//
//   node peer.mjs <bullmq|bee-queue> <lifecycle|enqueue> <socket> <jobs> <concurrency> <input JSON>
//
// Before each phase it prints "ready <phase>" and waits for a "go" line on
// stdin (the Go side reads INFO meanwhile); after it, "done <phase>". Then
// "end". Phases: "enqueue" adds <jobs> jobs with <concurrency> adds in
// flight and no worker running; in lifecycle mode "process" then runs a
// worker of <concurrency> until every job has completed. A warm-up on a
// queue of its own (connections made, scripts loaded) comes first, outside
// the phases. Anything unexpected exits non-zero with the error on stderr.
import { createInterface } from 'node:readline';

const [peer, mode, socket, jobsArg, concArg, inputArg] = process.argv.slice(2);
const jobs = Number(jobsArg);
const concurrency = Number(concArg);
if (!['bullmq', 'bee-queue'].includes(peer) || !['lifecycle', 'enqueue'].includes(mode) || !socket ||
    !(jobs > 0) || !(concurrency > 0) || inputArg === undefined) {
  console.error('usage: node peer.mjs <bullmq|bee-queue> <lifecycle|enqueue> <socket> <jobs> <concurrency> <input JSON>');
  process.exit(2);
}
const input = JSON.parse(inputArg);

const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();

// phase announces name, waits for the go-ahead, runs fn and reports.
async function phase(name, fn) {
  process.stdout.write(`ready ${name}\n`);
  const { value, done } = await lines.next();
  if (done || value.trim() !== 'go') {
    throw new Error(`phase ${name}: expected "go" on stdin, got ${done ? 'end of input' : JSON.stringify(value)}`);
  }
  await fn();
  process.stdout.write(`done ${name}\n`);
}

// limited calls fn n times with at most c calls in flight.
async function limited(n, c, fn) {
  let started = 0;
  const loop = async () => {
    while (started < n) {
      started++;
      await fn();
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, c) }, loop));
}

// untilCount resolves once subscribe's callback has been called n times,
// and rejects on the first failure.
function untilCount(n, subscribe) {
  return new Promise((resolve, reject) => {
    let seen = 0;
    subscribe(() => {
      if (++seen === n) resolve();
    }, reject);
  });
}

async function bullmq() {
  const { Queue, Worker } = await import('bullmq');
  // A Worker needs maxRetriesPerRequest null; the Queue gets the same.
  const connection = { path: socket, maxRetriesPerRequest: null };
  const worker = (name, autorun) => new Worker(name, async () => {}, { connection, concurrency, autorun });
  const watch = (w) => (ok, fail) => {
    w.on('completed', ok);
    w.on('failed', (job, err) => fail(err));
    w.on('error', fail);
  };

  const warmQueue = new Queue('warm', { connection });
  const warmWorker = worker('warm', true);
  const warmed = untilCount(concurrency, watch(warmWorker));
  await limited(concurrency, concurrency, () => warmQueue.add('job', input));
  await warmed;
  await warmWorker.close();
  await warmQueue.close();

  const queue = new Queue('bench', { connection });
  await queue.waitUntilReady();
  let w;
  if (mode === 'lifecycle') {
    w = worker('bench', false);
    await w.waitUntilReady();
  }
  await phase('enqueue', () => limited(jobs, concurrency, () => queue.add('job', input)));
  if (w) {
    await phase('process', () => {
      const all = untilCount(jobs, watch(w));
      w.run().catch(() => {}); // failures reach the 'error' listener
      return all;
    });
    await w.close();
  }
  await queue.close();
}

async function beeQueue() {
  const { default: BeeQueue } = await import('bee-queue');
  const redis = { path: socket };
  const producer = (name) => new BeeQueue(name, { redis, isWorker: false, getEvents: false });
  const worker = (name) => new BeeQueue(name, { redis, getEvents: false });
  const watch = (w) => (ok, fail) => {
    w.on('succeeded', ok);
    w.on('failed', (job, err) => fail(err));
    w.on('error', fail);
  };

  const warmP = producer('warm');
  const warmW = worker('warm');
  await Promise.all([warmP.ready(), warmW.ready()]);
  const warmed = untilCount(concurrency, watch(warmW));
  warmW.process(concurrency, async () => {});
  await limited(concurrency, concurrency, () => warmP.createJob(input).save());
  await warmed;
  await warmW.close();
  await warmP.close();

  const queue = producer('bench');
  await queue.ready();
  let w;
  if (mode === 'lifecycle') {
    w = worker('bench');
    await w.ready();
  }
  await phase('enqueue', () => limited(jobs, concurrency, () => queue.createJob(input).save()));
  if (w) {
    await phase('process', () => {
      const all = untilCount(jobs, watch(w));
      w.process(concurrency, async () => {});
      return all;
    });
    await w.close();
  }
  await queue.close();
}

try {
  await (peer === 'bullmq' ? bullmq() : beeQueue());
  process.stdout.write('end\n');
  process.exit(0);
} catch (err) {
  console.error(err?.stack ?? String(err));
  process.exit(1);
}
