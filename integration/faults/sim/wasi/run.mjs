// run.mjs runs a Go test binary built for GOOS=wasip1 GOARCH=wasm under
// Node.js's WASI, with every random byte the Go runtime asks the host for
// drawn from a seeded generator. The program is single-threaded there and
// time inside its synctest bubbles is virtual, so the runtime's random
// state (select, map order, math/rand's global source) is the only input
// that can differ between two runs: with the same seed, a run is repeated
// exactly (make sim-replay; docs/design.md §7.2).
//
//	node run.mjs [-rand K] [-pin N] test.wasm [test flags...]
//	node run.mjs -explore A:B test.wasm [test flags...]
//
// -rand K seeds the generator with K (default 1). -pin N runs the binary
// with the seeds K, K+1, ... K+N-1 until one run fails, and prints the
// seed of that run; it exits 0 if one failed (the failure was pinned),
// 1 if none did. -explore A:B runs the schedules A..B-1 (test flag -seed),
// each in a fresh instance whose random seed is the schedule's seed, until
// one fails; it then runs that one twice more, checks that the two runs
// printed the same history, and prints the second run. It exits 1 if a
// schedule failed, 0 if none did.
import { readFile } from 'node:fs/promises';
import { WASI } from 'node:wasi';
import { argv, env, exit } from 'node:process';
import { openSync, closeSync, readFileSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');

process.removeAllListeners('warning'); // WASI's "experimental" notice

let args = argv.slice(2);
let rand = 1n, pin = 0, explore = null;
for (;;) {
  if (args[0] === '-explore') { explore = args[1].split(':').map(BigInt); args = args.slice(2); continue; }
  if (args[0] === '-rand') { rand = BigInt(args[1]); args = args.slice(2); continue; }
  if (args[0] === '-pin') { pin = Number(args[1]); args = args.slice(2); continue; }
  break;
}
const [wasmPath, ...testArgs] = args;
if (!wasmPath) {
  console.error('usage: node run.mjs [-rand K] [-pin N] test.wasm [test flags...]');
  exit(2);
}
const M = 0xFFFFFFFFFFFFFFFFn;

// ctlArgs gives the make variables for the test's -control and -mode flags.
function ctlArgs() {
  let s = '';
  for (const [flag, name] of [['-control', 'CONTROL'], ['-mode', 'MODE']]) {
    const i = testArgs.indexOf(flag);
    if (i >= 0 && testArgs[i + 1]) s += ` ${name}=${testArgs[i + 1]}`;
  }
  return s;
}

// splitmix64: a small generator of good quality, fully determined by its seed.
function generator(seed) {
  let s = seed & M;
  return () => {
    s = (s + 0x9E3779B97F4A7C15n) & M;
    let z = s;
    z = ((z ^ (z >> 30n)) * 0xBF58476D1CE4E5B9n) & M;
    z = ((z ^ (z >> 27n)) * 0x94D049BB133111EBn) & M;
    return z ^ (z >> 31n);
  };
}

// run instantiates the module afresh (a new Go process) with random seed k
// and returns its exit code.
async function run(mod, k, extra = [], out = 1) {
  const wasi = new WASI({
    version: 'preview1',
    args: [wasmPath, ...testArgs, ...extra, `-rand=${k}`],
    stdout: out,
    stderr: out,
    env: { ...env },
    preopens: { '/': '/' },
    returnOnExit: true,
  });
  const imports = wasi.getImportObject();
  const next = generator(k);
  let memory;
  imports.wasi_snapshot_preview1.random_get = (ptr, len) => {
    const b = new Uint8Array(memory.buffer, ptr, len);
    for (let i = 0; i < len; i += 8) {
      let v = next();
      for (let j = 0; j < 8 && i + j < len; j++) { b[i + j] = Number(v & 0xFFn); v >>= 8n; }
    }
    return 0;
  };
  const inst = await WebAssembly.instantiate(mod, imports);
  memory = inst.exports.memory;
  const code = wasi.start(inst);
  memory = null;
  // An ended instance keeps its linear memory (hundreds of MB) until V8
  // collects it; collect at once, or a loop of runs exhausts memory.
  gc();
  return code;
}

const mod = await WebAssembly.compile(await readFile(wasmPath));
if (explore) {
  const [from, to] = explore;
  const t0 = Date.now();
  const null_ = openSync('/dev/null', 'w');
  for (let seed = from; seed < to; seed++) {
    if (await run(mod, seed, [`-seed=${seed}`], null_) === 0) {
      continue;
    }
    const secs = (Date.now() - t0) / 1000;
    console.log(`run.mjs: schedule ${seed} failed, after ${seed - from + 1n} schedules in ${secs.toFixed(1)}s`);
    const lines = [];
    for (let i = 0; i < 2; i++) {
      const path = join(tmpdir(), `redlease-sim-${process.pid}-${i}.out`);
      const fd = openSync(path, 'w');
      await run(mod, seed, [`-seed=${seed}`, '-test.v'], fd);
      closeSync(fd);
      const text = readFileSync(path, 'utf8');
      unlinkSync(path);
      lines.push(text.split('\n').filter((l) => l.startsWith('sim-replay:')).join('\n'));
      if (i === 1) {
        process.stdout.write(text);
      }
    }
    if (lines[0] === '' || lines[0] !== lines[1]) {
      console.log(`run.mjs: NOT EXACT: two runs of schedule ${seed} differ:\n${lines[0]}\n${lines[1]}`);
      exit(3);
    }
    console.log(`run.mjs: two more runs of schedule ${seed} printed the same history: ${lines[0]}`);
    console.log(`run.mjs: replay it exactly with: make sim-replay SEED=${seed} RAND=${seed}` + ctlArgs());
    exit(1);
  }
  const n = to - from, secs = (Date.now() - t0) / 1000;
  console.log(`run.mjs: ${n} schedules (seeds ${from}..${to - 1n}) in ${secs.toFixed(1)}s (${(Number(n) / secs).toFixed(1)} per second), none failed`);
  exit(0);
}
if (pin <= 0) {
  exit(await run(mod, rand));
}
for (let k = rand; k < rand + BigInt(pin); k++) {
  if (await run(mod, k) !== 0) {
    console.log(`\nrun.mjs: pinned: random seed ${k} reproduces the failure; replay it exactly with RAND=${k}`);
    exit(0);
  }
}
console.log(`\nrun.mjs: no failure in ${pin} runs (random seeds ${rand}..${rand + BigInt(pin) - 1n})`);
exit(1);
