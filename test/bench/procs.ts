/**
 * Child processes for the bench: started optionally pinned to CPU cores, with stdout and
 * stderr drained into a small tail buffer (a full pipe would block a child; the tail
 * explains a crash), tracked so every one of them is stopped at the end, even on failure.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { request } from 'undici';

const OUTPUT_TAIL_CHARS = 4000;
const STOP_GRACE_MS = 5000;

export interface Child {
  name: string;
  pid: number;
  /** The last few KB the child wrote (stdout and stderr), to explain a crash. */
  outputTail(): string;
  running(): boolean;
  /** SIGTERM, then SIGKILL when it has not exited after a grace period. */
  stop(): Promise<void>;
}

export interface SpawnSpec {
  name: string;
  command: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** `taskset -c <cores>` when set; taskset execs the command, so the pid is the command's. */
  cores?: string;
}

function exitOf(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise((done) => proc.once('exit', () => done()));
}

/** Owns every child the bench starts. */
export class ProcessGroup {
  private readonly children = new Set<ChildProcess>();

  start(spec: SpawnSpec): Child {
    const [command, args] =
      spec.cores === undefined
        ? [spec.command, spec.args]
        : ['taskset', ['-c', spec.cores, spec.command, ...spec.args]];
    const proc = spawn(command, args, { cwd: spec.cwd, env: spec.env, stdio: ['ignore', 'pipe', 'pipe'] });
    if (proc.pid === undefined) throw new Error(`${spec.name}: could not start ${command}`);
    this.children.add(proc);
    proc.once('exit', () => this.children.delete(proc));
    let tail = '';
    for (const stream of [proc.stdout, proc.stderr]) {
      stream?.setEncoding('utf8');
      stream?.on('data', (chunk: string) => {
        tail = (tail + chunk).slice(-OUTPUT_TAIL_CHARS);
      });
    }
    const exited = exitOf(proc);
    return {
      name: spec.name,
      pid: proc.pid,
      outputTail: () => tail,
      running: () => proc.exitCode === null && proc.signalCode === null,
      stop: async () => {
        if (proc.exitCode !== null || proc.signalCode !== null) return;
        proc.kill('SIGTERM');
        const timer = setTimeout(() => proc.kill('SIGKILL'), STOP_GRACE_MS);
        await exited;
        clearTimeout(timer);
      },
    };
  }

  /** Last resort from an `exit` handler: no waiting is possible there. */
  killAllNow(): void {
    for (const proc of this.children) proc.kill('SIGKILL');
  }
}

/** Resolves once `url` answers with an accepted status; fails if the child dies first. */
export async function waitForHttp(
  child: Child,
  url: string,
  ok: (status: number) => boolean = (s) => s < 500,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer yet';
  while (Date.now() < deadline) {
    if (!child.running()) throw new Error(`${child.name} exited during start-up:\n${child.outputTail()}`);
    try {
      const res = await request(url, { headersTimeout: 2000, bodyTimeout: 2000 });
      await res.body.dump();
      if (ok(res.statusCode)) return;
      last = `HTTP ${res.statusCode}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(
    `${child.name} not ready at ${url} after ${timeoutMs} ms (${last}):\n${child.outputTail()}`,
  );
}

/** A port that was free a moment ago (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export interface Memory {
  /** Resident set size now, in MB. */
  rssMb: number;
  /** Peak resident set size, in MB. */
  peakMb: number;
}

/** VmRSS and VmHWM from /proc; undefined where /proc is not there. */
export async function readMemory(pid: number): Promise<Memory | undefined> {
  let status: string;
  try {
    status = await readFile(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const kb = (field: string): number =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
}

let clockTicks: number | undefined;

/** Kernel clock ticks per second, the unit of /proc/<pid>/stat CPU times. */
function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    const out = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
    const n = Number(out.stdout?.trim());
    clockTicks = Number.isFinite(n) && n > 0 ? n : 100;
  }
  return clockTicks;
}

/** User + system CPU time the process has used, in ms; undefined where /proc is not there. */
export async function readCpuMs(pid: number): Promise<number | undefined> {
  let stat: string;
  try {
    stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) may contain spaces; fields after its closing paren are fixed.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return ((utime + stime) * 1000) / ticksPerSecond();
}
