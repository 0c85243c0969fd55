// Reference encoder for the tokens package's tests: js-tiktoken (an
// independent JavaScript implementation with its own copy of OpenAI's
// ranks), run by reference_test.go.
//
//   node encode.cjs NPMDIR encode IN OUT  -- token ids of every item
//   node encode.cjs NPMDIR time IN SECONDS -- warm encoding time per item
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
  // Warm up (JIT, regex compilation, rank tables), then encode each item
  // repeatedly for about SECONDS in all; report CPU nanoseconds per pass.
  const budget = Number(arg) * 1e6 / items.length / encoders.length; // µs
  const result = [];
  for (const text of items) {
    const row = [];
    for (const enc of encoders) {
      for (let w = 0; w < 3; w++) enc.encode(text, [], []);
      let passes = 0;
      const start = process.cpuUsage();
      let used = 0;
      do {
        enc.encode(text, [], []);
        passes++;
        const d = process.cpuUsage(start);
        used = d.user + d.system;
      } while (used < budget);
      row.push(used * 1000 / passes);
    }
    result.push(row);
  }
  process.stdout.write(JSON.stringify(result));
} else {
  console.error('usage: node encode.cjs NPMDIR encode|time IN OUT|SECONDS');
  process.exit(2);
}
