// harness.mjs: runs every export of a binaryen -ttf module in V8 (node),
// printing what twasm-fuzz-diff prints for twasmc: each call, the values
// logged through the fuzzing-support imports, the results or the trap's
// kind, and a hash of memory after the call.
// usage: node harness.mjs MODULE.wasm...   One module's lines go to stdout;
// several modules' (a batch: node starts once) each to the module's path
// with .v8 for .wasm, ending in a line "== end".
import { readFileSync, writeFileSync } from 'node:fs';
import { argv } from 'node:process';

let out = [];
const f32 = new Float32Array(1), u32 = new Uint32Array(f32.buffer);
const f64 = new Float64Array(1), u64 = new BigUint64Array(f64.buffer);
const hex = (v, w) => v.toString(16).padStart(w, '0');
const show = {
  i32: (v) => String(v | 0),
  i64: (v) => BigInt.asIntN(64, BigInt(v)).toString(),
  f32: (v) => (Number.isNaN(v) ? 'nan' : ((f32[0] = v), hex(u32[0], 8))),
  f64: (v) => (Number.isNaN(v) ? 'nan' : ((f64[0] = v), hex(u64[0], 16))),
  ref: (v) => (v === null ? 'null' : 'nonnull'),
};
const log = (kind) => (v) => { out.push(`log ${kind} ${show[kind](v)}`); };
const imports = {
  'fuzzing-support': {
    'log-i32': log('i32'), 'log-i64': log('i64'), 'log-f32': log('f32'), 'log-f64': log('f64'),
    'log-v128': () => {}, // never runs: V8 throws a TypeError at the call
  },
};

// ---- the types of exported functions, read off the binary ----------------
function reader(buf) {
  let p = 0;
  const u8 = () => buf[p++];
  const leb = () => { let r = 0, s = 0, b; do { b = buf[p++]; r |= (b & 0x7f) << s; s += 7; } while (b & 0x80); return r >>> 0; };
  return { u8, leb, get pos() { return p; }, set pos(v) { p = v; }, bytes: (n) => { const s = buf.subarray(p, p + n); p += n; return s; } };
}
const kinds = { 0x7f: 'i32', 0x7e: 'i64', 0x7d: 'f32', 0x7c: 'f64', 0x7b: 'v128', 0x70: 'ref', 0x6f: 'ref' };
const exportIndex = new Map(); // name -> position among all exports
let skipped = 0;
function exportTypes(buf) {
  exportIndex.clear();
  skipped = 0;
  const r = reader(buf);
  r.pos = 8;
  const types = [], funcs = [], exports = new Map();
  let imported = 0;
  while (r.pos < buf.length) {
    const id = r.u8(), size = r.leb(), end = r.pos + size;
    if (id === 1) {
      for (let n = r.leb(); n-- > 0;) {
        r.u8();
        const params = []; for (let k = r.leb(); k-- > 0;) params.push(kinds[r.u8()]);
        const results = []; for (let k = r.leb(); k-- > 0;) results.push(kinds[r.u8()]);
        types.push({ params, results });
      }
    } else if (id === 2) {
      for (let n = r.leb(); n-- > 0;) {
        r.bytes(r.leb()); r.bytes(r.leb());
        const kind = r.u8();
        if (kind === 0) { funcs.push(types[r.leb()]); imported++; }
        else if (kind === 1) { r.u8(); const f = r.u8(); r.leb(); if (f & 1) r.leb(); }
        else if (kind === 2) { const f = r.u8(); r.leb(); if (f & 1) r.leb(); }
        else { r.u8(); r.u8(); }
      }
    } else if (id === 3) {
      for (let n = r.leb(); n-- > 0;) funcs.push(types[r.leb()]);
    } else if (id === 7) {
      for (let n = r.leb(); n-- > 0;) {
        const name = new TextDecoder().decode(r.bytes(r.leb()));
        const kind = r.u8(), index = r.leb();
        if (kind === 0) exports.set(name, funcs[index]), exportIndex.set(name, exportIndex.size + skipped);
        else skipped++;
      }
    }
    r.pos = end;
  }
  return exports;
}

// ---- traps by kind, as twasm-fuzz-diff names them ------------------------
const trapKinds = [
  [/unreachable/, 'unreachable'], [/memory access out of bounds|data segment/, 'mem'],
  [/divide by zero|remainder by zero/, 'div0'], [/divide result unrepresentable/, 'overflow'],
  [/float unrepresentable/, 'conv'], [/null function|signature mismatch/, 'indirect'],
  [/table index is out of bounds|table access|element segment|out of bounds table/, 'table'],
  [/call stack size/, 'stack'], [/type incompatibility when transforming from\/to JS/, 'js'],
];
function trapKind(e) {
  const msg = String(e && e.message);
  for (const [re, kind] of trapKinds) if (re.test(msg)) return kind;
  return 'other:' + msg.replace(/\s+/g, ' ');
}

function memHash(memory) {
  if (!memory) return 'mem none';
  // FNV-1a over 32-bit words (little-endian), as twasm-fuzz-diff
  const m = new Uint32Array(memory.buffer);
  let h = 0x811c9dc5;
  for (let i = 0; i < m.length; i++) h = Math.imul(h ^ m[i], 16777619) >>> 0;
  return `mem ${memory.buffer.byteLength >>> 16} ${hex(h, 8)}`;
}

const zero = { i32: 0, i64: 0n, f32: 0, f64: 0, ref: null };

// One module's lines.
function runModule(bytes) {
  out = [];
  let instance;
  try {
    instance = new WebAssembly.Instance(new WebAssembly.Module(bytes), imports);
  } catch (e) {
    // V8 rejects the module (wasm-validate's check let it through): the
    // comparison then wants twasmc to reject it too (run.sh's compare)
    if (e instanceof WebAssembly.CompileError) return 'invalid';
    return `instantiate ${e instanceof WebAssembly.RuntimeError || e instanceof RangeError ? 'trap ' + trapKind(e) : 'error'}`;
  }
  const ex = instance.exports, types = exportTypes(bytes);
  const reset = types.has('hangLimitInitializer') ? ex.hangLimitInitializer : null;
  for (const [name, type] of types) {
    if (name === 'hangLimitInitializer') continue;
    out.push(`call ${name}`);
    try {
      if (reset) reset();
      let r = ex[name](...type.params.map((k) => zero[k]));
      if (type.results.length === 0) out.push('result');
      else {
        if (type.results.length === 1) r = [r];
        out.push('result ' + type.results.map((k, i) => show[k](r[i])).join(' '));
      }
    } catch (e) {
      out.push(`trap ${trapKind(e)}`);
    }
    out.push(memHash(ex.memory));
    // for reducing a difference: memory after the call, as twasm-fuzz-diff
    if (process.env.TWASM_FUZZ_MEMDUMP && ex.memory)
      writeFileSync(`${process.env.TWASM_FUZZ_MEMDUMP}.${exportIndex.get(name)}`, new Uint8Array(ex.memory.buffer));
  }
  return out.join('\n');
}

const paths = argv.slice(2);
if (paths.length === 1) console.log(runModule(readFileSync(paths[0])));
else for (const p of paths) writeFileSync(p.replace(/\.wasm$/, '.v8'), runModule(readFileSync(p)) + '\n== end\n');
