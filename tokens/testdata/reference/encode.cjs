// Reference encoder for the tokens package's tests: js-tiktoken (an
// independent JavaScript implementation with its own copy of OpenAI's
// ranks), run by reference_test.go.
//
//   node encode.cjs NPMDIR encode IN OUT  -- token ids of every item
//   node encode.cjs NPMDIR time IN SECONDS -- warm encoding time per item
//   node encode.cjs NPMDIR stages IN SECONDS -- where js-tiktoken's time goes
//
// IN holds items, each a uint32 little-endian byte length and the bytes
// (decoded as UTF-8 with U+FFFD for ill-formed input, as TextDecoder
// does). OUT receives, per item and per encoding (o200k_base, then
// cl100k_base), a uint32 token count and the uint32 ids.
'use strict';
const fs = require('fs');
const path = require('path');
const { createRequire } = require('module');

const [dir, mode, input, arg] = process.argv.slice(2);
const req = createRequire(path.join(dir, 'package.json'));
const { Tiktoken } = req('js-tiktoken/lite');
const encoders = [
  new Tiktoken(req('js-tiktoken/ranks/o200k_base')),
  new Tiktoken(req('js-tiktoken/ranks/cl100k_base')),
];

// Warm-up CPU per item and encoding (µs), and timed rounds.
const WARMUP = 500e3;
const ROUNDS = 3;

// cpuPerPass runs f repeatedly for at least budget µs of CPU (and at
// least twice) and returns CPU nanoseconds per pass.
function cpuPerPass(f, budget) {
  let passes = 0;
  let used = 0;
  const start = process.cpuUsage();
  do {
    f();
    passes++;
    const d = process.cpuUsage(start);
    used = d.user + d.system;
  } while (used < budget || passes < 2);
  return used * 1000 / passes;
}

const raw = fs.readFileSync(input);
const decoder = new TextDecoder('utf-8', { fatal: false });
const items = [];
for (let i = 0; i < raw.length;) {
  const n = raw.readUInt32LE(i);
  items.push(decoder.decode(raw.subarray(i + 4, i + 4 + n)));
  i += 4 + n;
}

if (mode === 'encode') {
  const out = fs.openSync(arg, 'w');
  for (const text of items) {
    for (const enc of encoders) {
      const ids = enc.encode(text, [], []);
      const buf = Buffer.alloc(4 * (ids.length + 1));
      buf.writeUInt32LE(ids.length, 0);
      for (let k = 0; k < ids.length; k++) buf.writeUInt32LE(ids[k], 4 * (k + 1));
      fs.writeSync(out, buf);
    }
  }
  fs.closeSync(out);
} else if (mode === 'time') {
  // Warm: the ranks are parsed by the constructors above; each item is
  // then encoded for WARMUP µs of CPU (JIT, regex compilation, inline
  // caches), and timed in ROUNDS rounds of about SECONDS in all. The
  // fastest round is reported, as CPU nanoseconds per pass: the figure
  // most favourable to js-tiktoken.
  const budget = Number(arg) * 1e6 / items.length / encoders.length; // µs
  const result = [];
  for (const text of items) {
    const row = [];
    for (const enc of encoders) {
      const encode = () => enc.encode(text, [], []);
      cpuPerPass(encode, Math.min(budget / 2, WARMUP));
      let best = Infinity;
      for (let k = 0; k < ROUNDS; k++) best = Math.min(best, cpuPerPass(encode, budget / ROUNDS));
      row.push(best);
    }
    result.push(row);
  }
  process.stdout.write(JSON.stringify(result));
} else if (mode === 'stages') {
  // js-tiktoken's encode, stage by stage, on warm code, per item and
  // encoding (MB/s of CPU): the pattern's matches alone; matches plus
  // the per-piece UTF-8 encoding, key string and rank-map look-up that
  // encode does before merging; the whole encode.
  const budget = Number(arg) * 1e6 / items.length / encoders.length / 3;
  const te = new TextEncoder();
  for (const text of items) {
    for (const enc of encoders) {
      const re = new RegExp(enc.patStr, 'ug');
      const stages = {
        match: () => { let n = 0; for (const m of text.matchAll(re)) n += m[0].length; return n; },
        lookup: () => { let n = 0; for (const m of text.matchAll(re)) n += enc.rankMap.get(te.encode(m[0]).join(',')) ?? 1; return n; },
        encode: () => enc.encode(text, [], []),
      };
      const row = [];
      for (const [name, f] of Object.entries(stages)) {
        cpuPerPass(f, Math.min(budget / 2, WARMUP));
        row.push(`${name} ${(Buffer.byteLength(text) / cpuPerPass(f, budget) * 1e3).toFixed(1)}`);
      }
      console.log(`${Buffer.byteLength(text)} bytes: ${row.join(', ')} MB/s`);
    }
  }
} else {
  console.error('usage: node encode.cjs NPMDIR encode|time|stages IN OUT|SECONDS');
  process.exit(2);
}
