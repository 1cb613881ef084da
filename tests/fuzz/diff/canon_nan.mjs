// canon_nan.mjs: binaryen's --denan for SIMD, which binaryen 108's lacks.
// The spec lets an engine choose the bits of a NaN that arithmetic makes;
// V8 canonicalises some (f64x2.max), x86 keeps an operand's payload, and a
// NaN stored to memory then makes the memory hashes differ where both
// engines are right.  In the module's text (wasm-dis), every f32x4/f64x2
// operation whose lanes may be such a NaN is wrapped in a call of a
// function that makes each NaN lane 0 (v128.and with fNxM.eq x x).
// usage: node canon_nan.mjs IN.wat OUT.wat [IN.wat OUT.wat]...
import { readFileSync, writeFileSync } from 'node:fs';
import { argv } from 'node:process';

const ops = new Map();
for (const shape of ['f32x4', 'f64x2'])
  for (const op of ['add', 'sub', 'mul', 'div', 'min', 'max', 'pmin', 'pmax', 'sqrt', 'ceil', 'floor', 'trunc', 'nearest'])
    ops.set(`${shape}.${op}`, shape);
ops.set('f32x4.demote_f64x2_zero', 'f32x4');
ops.set('f64x2.promote_low_f32x4', 'f64x2');

function canon(src) {
  let out = '';
  const wrapped = []; // per open paren: whether its close needs one more
  let i = 0, used = false;
  while (i < src.length) {
    const c = src[i];
    if (c === '"') { // a string: copied as it is, escapes included
      let j = i + 1;
      while (j < src.length && src[j] !== '"') j += src[j] === '\\' ? 2 : 1;
      out += src.slice(i, j + 1);
      i = j + 1;
    } else if (c === ';' && src[i + 1] === ';') { // line comment
      const j = src.indexOf('\n', i);
      const end = j < 0 ? src.length : j;
      out += src.slice(i, end);
      i = end;
    } else if (c === '(' && src[i + 1] === ';') { // block comment
      const j = src.indexOf(';)', i);
      const end = j < 0 ? src.length : j + 2;
      out += src.slice(i, end);
      i = end;
    } else if (c === '(') {
      const m = /^[a-z0-9_.]+/.exec(src.slice(i + 1, i + 40));
      const shape = m && ops.get(m[0]);
      if (shape) { out += `(call $__canon_${shape} `; used = true; }
      wrapped.push(Boolean(shape));
      out += c;
      i++;
    } else if (c === ')') {
      out += wrapped.pop() ? '))' : ')';
      i++;
    } else {
      out += c;
      i++;
    }
  }
  if (used) {
    const end = out.lastIndexOf(')');
    out = out.slice(0, end) +
      ' (func $__canon_f32x4 (param v128) (result v128)\n' +
      '  (v128.and (local.get 0) (f32x4.eq (local.get 0) (local.get 0))))\n' +
      ' (func $__canon_f64x2 (param v128) (result v128)\n' +
      '  (v128.and (local.get 0) (f64x2.eq (local.get 0) (local.get 0))))\n' + out.slice(end);
  }
  return out;
}

for (let k = 2; k + 1 < argv.length; k += 2) writeFileSync(argv[k + 1], canon(readFileSync(argv[k], 'utf8')));
