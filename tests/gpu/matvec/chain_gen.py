#!/usr/bin/env python3
"""chain_gen.py MV_F32_PTX OUT_PTX: the matrix-vector kernel's summing chain
alone (matrix-vector round 13, docs/PERFORMANCE.md).  Reads the committed
mv_f32 PTX that ptx_matvec.c emits (matvec_gen), takes its whole-chunk
block (the basic block with the most mul.rn.f32: 128 ld.shared.v4.f32,
256 mul.rn.f32, 256 add.rn.f32 and the chunk's address arithmetic) and
pastes that text, unchanged, into the loop of a new kernel, chain_f32,
whose shared memory (the same mv_w and mv_v) is filled once before the
loop.  Inside the timed loop there is no global load, no shared store and
no barrier (unless asked): one thread an output sums the chunk REPS
times, the two buffers alternating as in the committed kernel.  Three
register-only kernels in the same module read this part's latencies:
  chain_fadd     s = s + b, 256 dependent add.rn.f32 an iteration
  chain_fmuladd  s = (s * c) + b, 256 dependent mul.rn.f32 + add.rn.f32
  chain_muladd   s = s + x_i * y_j over the 256 pairs i, j < 16: the
                 chunk's products and adds without its loads (the 16 x_i
                 advanced by e once an iteration, off the chain, so the
                 products are not loop-invariant)
chain_f32_st is chain_f32 with the committed kernel's staging (DEPTH 1):
before each chunk threads 0-255 load their share of the other buffer
from global memory (4 ld.global.v4.f32 of W, rows t / 64 + 0, 4, 8, 12,
one ld.global.f32 of v; the bytes the fill copied, so the sums do not
change, and from L2, since every block reads the same 35 KB), after it
they store it to shared memory, then the barrier: the staging without
DRAM.
Every kernel: (src, out, cycles, smid, reps, lanes, warps, mode); a
thread sums when its lane < lanes and its warp < warps; it writes its sum
to out[thread] and the clock64 cycles of its loop to cycles[thread];
thread 0 of a block writes the block's SM to smid[block].  mode bit 0:
every thread of the block meets at bar.sync 0 after each iteration; bit 1
(chain_f32_st, with bit 0): the staging.  Layout of
src (f32): mv_w's bytes, then mv_v's (chain_f32, chain_f32_st); b, c, e, x_0..15,
y_0..15 (the others).  The first line of OUT_PTX says the chunk's layout
for chain_bw.cu's check:
  // chain: terms T w_row R w_buffer B v_buffer V w_bytes WB v_bytes VB
(T terms a chunk; in f32 elements: R between rows of W, B between W's
two buffers, V between v's two buffers).  Before writing, the chunk's
PTX is run here on random shared memory (check_layout) and must sum to
what that layout gives in k order, or nothing is written (exit 1)."""
import random
import re
import struct
import sys

TERMS_REGS = 256


def fail(msg):
    sys.exit(f"{sys.argv[1]}: error: {msg}")


def blocks_of(lines):
    """Basic blocks as (label, [lines]) of the kernel's body."""
    blocks, label, body = [], None, []
    for line in lines:
        m = re.match(r"^(\$L__BB\w+):", line)
        if m:
            blocks.append((label, body))
            label, body = m.group(1), []
        else:
            body.append(line)
    blocks.append((label, body))
    return blocks


def regs(text):
    return re.findall(r"%[a-z]+\d+", text)


def operands(line):
    """(defined registers, read registers) of one PTX instruction."""
    code = line.split("//")[0].strip().rstrip(";")
    if not code:
        return [], []
    parts = code.split(None, 1)
    if len(parts) < 2:
        return [], []
    if parts[0].startswith("@"):
        return [], regs(code)
    ops = parts[1]
    if parts[0].startswith("st.") or parts[0].startswith("bra"):
        return [], regs(ops)
    if ops.startswith("{"):  # vector destination
        dest, rest = ops.split("}", 1)
        return regs(dest), regs(rest)
    dest, _, rest = ops.partition(",")
    return regs(dest), regs(rest)


def chunk_of(path):
    text = open(path).read()
    lines = text.splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith(".visible .entry mv_f32(")), None)
    if start is None:
        fail("no .entry mv_f32")
    body_at = lines.index("{", start)
    decls = [l for l in lines[body_at:] if l.strip().startswith(".reg ")]
    shared = [l for l in lines[body_at:] if l.strip().startswith(".shared ")]
    label, body = max(blocks_of(lines[body_at:]), key=lambda b: sum("mul.rn.f32" in l for l in b[1]))
    while body and (body[-1].strip().startswith("bra") or not body[-1].strip()):
        body.pop()
    count = lambda op: sum(l.split() != [] and l.split()[0] == op for l in body)
    loads, muls, adds = count("ld.shared.v4.f32"), count("mul.rn.f32"), count("add.rn.f32")
    if (loads, muls, adds) != (TERMS_REGS // 2, TERMS_REGS, TERMS_REGS):
        fail(f"block {label}: {loads} ld.shared.v4.f32, {muls} mul.rn.f32, {adds} add.rn.f32, "
             f"not the whole chunk ({TERMS_REGS // 2}, {TERMS_REGS}, {TERMS_REGS})")
    if any(l.split()[0].startswith(("bar", "st.", "ld.global", "@", "setp")) for l in body if l.split()):
        fail(f"block {label}: not straight-line shared loads and arithmetic")
    defined, live_in = set(), []
    for line in body:
        dests, reads = operands(line)
        live_in += [r for r in reads if r not in defined and r not in live_in]
        defined.update(dests)
    # what each live-in register is, from its definition in mv_f32
    role = {}
    for reg in live_in:
        defs = [l.strip() for l in lines[body_at:] if re.match(r"^\s*[a-z][\w.]*\s+" + re.escape(reg) + ",", l)]
        for d in defs:
            if re.match(r"mov\.u64\s+%rd\d+, mv_w;", d):
                role["w_base"] = reg
            elif re.match(r"mov\.u64\s+%rd\d+, mv_v;", d):
                role["v_base"] = reg
            elif m := re.match(r"mul\.lo\.s64\s+%rd\d+, %rd1, (\d+);", d):
                role["row"], w_row = reg, int(m.group(1))
            elif re.match(r"and\.b64\s+%rd\d+, %rd\d+, 1;", d):
                role["parity"] = reg
            elif reg.startswith("%f"):
                role["sum"] = reg
    if sorted(role) != ["parity", "row", "sum", "v_base", "w_base"] or len(live_in) != 5:
        fail(f"block {label}: live-in registers {live_in} ({role}), expected W's and v's shared bases, "
             f"the row's offset, the buffer parity and the sum")
    last = body[-1].split()
    if last[0] != "add.rn.f32" or last[1].rstrip(",") != role["sum"]:
        fail(f"block {label}: the last add does not write the sum {role['sum']}")
    w_buffer = re.search(r"mul\.lo\.s64\s+%rd\d+, " + re.escape(role["parity"]) + r", (\d+);", "\n".join(body))
    v_buffer = re.search(r"shl\.b64\s+%rd\d+, " + re.escape(role["parity"]) + r", (\d+);", "\n".join(body))
    if not w_buffer or not v_buffer:
        fail(f"block {label}: no buffer offsets from the parity {role['parity']}")
    sizes = {m.group(1): int(m.group(2)) for m in (re.search(r"\.b8 (mv_\w+)\[(\d+)\]", s) for s in shared) if m}
    if sorted(sizes) != ["mv_v", "mv_w"]:
        fail(f"shared arrays {sorted(sizes)}, expected mv_w and mv_v")
    layout = (TERMS_REGS, w_row, int(w_buffer.group(1)), 1 << int(v_buffer.group(1)), sizes["mv_w"], sizes["mv_v"])
    return label, body, decls, shared, role, layout


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def check_layout(body, role, layout):
    """Runs the chunk's PTX on random shared memory for a few rows and both
    buffers (f32 rounding after each multiply and add: through a double it
    is exact for one operation) and checks it against what chain_bw.cu
    expects: the sum in k order of W[parity, row, k] * v[parity, k]."""
    terms, w_row, w_buffer, v_buffer, w_bytes, v_bytes = layout
    rand = random.Random(13)
    w = [f32(rand.randint(-64, 64) / 32) for _ in range(w_bytes // 4)]
    v = [f32(rand.randint(-64, 64) / 32) for _ in range(v_bytes // 4)]
    w_base, v_base = 1 << 20, 2 << 20
    for row in (0, 5, 15):
        for parity in (0, 1):
            r = {role["w_base"]: w_base, role["v_base"]: v_base, role["row"]: row * w_row, role["parity"]: parity,
                 role["sum"]: f32(0.375)}
            for line in body:
                code = line.split("//")[0].strip().rstrip(";")
                if not code:
                    continue
                op, args = code.split(None, 1)
                if op == "ld.shared.v4.f32":
                    m = re.match(r"\{(.*)\},\s*\[(%rd\d+)(?:\+(\d+))?\]$", args)
                    at = r[m.group(2)] + int(m.group(3) or 0)
                    base, mem = (w_base, w) if at < v_base else (v_base, v)
                    if not 0 <= (at - base) // 4 <= len(mem) - 4:
                        fail(f"row {row}, buffer {parity}: the chunk loads at byte {at - base} of "
                             f"{'mv_w' if mem is w else 'mv_v'}, outside it")
                    for e, reg in enumerate(x.strip() for x in m.group(1).split(",")):
                        r[reg] = mem[(at - base) // 4 + e]
                    continue
                d, a, b = (x.strip() for x in args.split(","))
                val = lambda x: r[x] if x.startswith("%") else int(x)
                if op == "mul.rn.f32":
                    r[d] = f32(val(a) * val(b))
                elif op == "add.rn.f32":
                    r[d] = f32(val(a) + val(b))
                elif op == "mul.lo.s64":
                    r[d] = val(a) * val(b)
                elif op == "add.s64":
                    r[d] = val(a) + val(b)
                elif op == "shl.b64":
                    r[d] = val(a) << val(b)
                else:
                    fail(f"the chunk's {op}: not interpreted")
            want = f32(0.375)
            for k in range(terms):
                want = f32(want + f32(w[parity * w_buffer + row * w_row + k] * v[parity * v_buffer + k]))
            if r[role["sum"]] != want:
                fail(f"row {row}, buffer {parity}: the chunk sums to {r[role['sum']]}, the layout {layout} "
                     f"in k order to {want}")


HEAD = """.visible .entry {name}(
	.param .u64 {name}_src,
	.param .u64 {name}_out,
	.param .u64 {name}_cycles,
	.param .u64 {name}_smid,
	.param .u32 {name}_reps,
	.param .u32 {name}_lanes,
	.param .u32 {name}_warps,
	.param .u32 {name}_mode
)
.maxntid 512, 1, 1
{{
{decls}
	.reg .b64 	%x<24>;
	.reg .b32 	%y<24>;
	.reg .pred 	%q<8>;
	.reg .f32 	%g<40>;
	ld.param.u64 	%x0, [{name}_src];
	ld.param.u64 	%x1, [{name}_out];
	ld.param.u64 	%x2, [{name}_cycles];
	ld.param.u64 	%x3, [{name}_smid];
	ld.param.u32 	%y0, [{name}_reps];
	ld.param.u32 	%y1, [{name}_lanes];
	ld.param.u32 	%y2, [{name}_warps];
	ld.param.u32 	%y3, [{name}_mode];
	cvta.to.global.u64 	%x0, %x0;
	cvta.to.global.u64 	%x1, %x1;
	cvta.to.global.u64 	%x2, %x2;
	cvta.to.global.u64 	%x3, %x3;
	mov.u32 	%y4, %tid.x;
	mov.u32 	%y5, %ntid.x;
	and.b32 	%y7, %y4, 31;
	shr.u32 	%y8, %y4, 5;
	setp.lt.u32 	%q1, %y7, %y1;
	setp.lt.u32 	%q2, %y8, %y2;
	and.pred 	%q1, %q1, %q2;
	and.b32 	%y6, %y3, 1;
	setp.ne.u32 	%q3, %y6, 0;
	and.b32 	%y6, %y3, 2;
	setp.ne.u32 	%q6, %y6, 0;
	setp.lt.u32 	%q7, %y4, 256;
	and.pred 	%q6, %q6, %q7;
	and.pred 	%q6, %q6, %q3;
"""

FILL = """	mov.u32 	%y6, %y4;
$C_fill_{arr}:
	setp.ge.u32 	%q0, %y6, {floats};
	@%q0 bra 	$C_filled_{arr};
	mul.wide.u32 	%x4, %y6, 4;
	add.s64 	%x5, %x0, %x4;
	ld.global.f32 	%g0, [%x5+{src_at}];
	mov.u64 	%x6, {arr};
	add.s64 	%x6, %x6, %x4;
	st.shared.f32 	[%x6], %g0;
	add.u32 	%y6, %y6, %y5;
	bra.uni 	$C_fill_{arr};
$C_filled_{arr}:
"""

# chain_f32_st, mode bit 1: thread t's slots of W (rows t / 64 + 0, 4,
# 8, 12, columns 4 (t % 64) ..) and of v (element t): in shared memory
# (%x12, %x14) and in src (%x16, %x18), buffer 0.
SLOTS = """	shr.u32 	%y13, %y4, 6;
	mul.lo.u32 	%y13, %y13, {row};
	and.b32 	%y14, %y4, 63;
	shl.b32 	%y14, %y14, 4;
	add.u32 	%y13, %y13, %y14;
	cvt.u64.u32 	%x12, %y13;
	add.s64 	%x16, %x0, %x12;
	mov.u64 	%x13, mv_w;
	add.s64 	%x12, %x13, %x12;
	shl.b32 	%y15, %y4, 2;
	cvt.u64.u32 	%x14, %y15;
	add.s64 	%x18, %x0, %x14;
	add.s64 	%x18, %x18, {w_bytes};
	mov.u64 	%x15, mv_v;
	add.s64 	%x14, %x15, %x14;
"""

# Before the chunk of buffer p: the slots of buffer p ^ 1 loaded from src
# (the bytes the fill copied, so the sums do not change; from L2, as every
# block reads the same 35 KB) ...
LOADS = """	@!%q6 bra 	$C_loaded;
	xor.b32 	%y16, %y10, 1;
	mul.wide.u32 	%x20, %y16, {w1};
	add.s64 	%x21, %x16, %x20;
	add.s64 	%x22, %x12, %x20;
	ld.global.v4.f32 	{{%g4, %g5, %g6, %g7}}, [%x21];
	ld.global.v4.f32 	{{%g8, %g9, %g10, %g11}}, [%x21+{rows4}];
	ld.global.v4.f32 	{{%g12, %g13, %g14, %g15}}, [%x21+{rows8}];
	ld.global.v4.f32 	{{%g16, %g17, %g18, %g19}}, [%x21+{rows12}];
	mul.wide.u32 	%x20, %y16, {v1};
	add.s64 	%x23, %x18, %x20;
	add.s64 	%x19, %x14, %x20;
	ld.global.f32 	%g20, [%x23];
$C_loaded:
"""

# ... and after it stored there, before the barrier: the committed
# kernel's staging (DEPTH 1), its global loads from L2 instead of DRAM.
STORES = """	@!%q6 bra 	$C_stored;
	st.shared.v4.f32 	[%x22], {{%g4, %g5, %g6, %g7}};
	st.shared.v4.f32 	[%x22+{rows4}], {{%g8, %g9, %g10, %g11}};
	st.shared.v4.f32 	[%x22+{rows8}], {{%g12, %g13, %g14, %g15}};
	st.shared.v4.f32 	[%x22+{rows12}], {{%g16, %g17, %g18, %g19}};
	st.shared.f32 	[%x19], %g20;
$C_stored:
"""

LOOP_HEAD = """	mov.u32 	%y9, 0;
	bar.sync 	0;
	mov.u64 	%x7, %clock64;
$C_loop:
	setp.ge.u32 	%q4, %y9, %y0;
	@%q4 bra 	$C_done;
	and.b32 	%y10, %y9, 1;
{loads}	@!%q1 bra 	$C_summed;
"""

LOOP_TAIL = """$C_summed:
{stores}	@!%q3 bra 	$C_next;
	bar.sync 	0;
$C_next:
	add.u32 	%y9, %y9, 1;
	bra.uni 	$C_loop;
$C_done:
	mov.u64 	%x8, %clock64;
	sub.s64 	%x8, %x8, %x7;
	mov.u32 	%y10, %ctaid.x;
	mad.lo.u32 	%y11, %y10, %y5, %y4;
	mul.wide.u32 	%x9, %y11, 4;
	add.s64 	%x9, %x1, %x9;
	st.global.f32 	[%x9], {sum};
	mul.wide.u32 	%x10, %y11, 8;
	add.s64 	%x10, %x2, %x10;
	st.global.u64 	[%x10], %x8;
	setp.ne.u32 	%q5, %y4, 0;
	@%q5 bra 	$C_end;
	mov.u32 	%y12, %smid;
	mul.wide.u32 	%x11, %y10, 4;
	add.s64 	%x11, %x3, %x11;
	st.global.u32 	[%x11], %y12;
$C_end:
	ret;
}}
"""


def chain_kernel(name, body, decls, shared, role, layout, staging):
    terms, w_row, w_buffer, v_buffer, w_bytes, v_bytes = layout
    out = [HEAD.format(name=name, decls="\n".join(decls + shared))]
    out.append(FILL.format(arr="mv_w", floats=w_bytes // 4, src_at=0))
    out.append(FILL.format(arr="mv_v", floats=v_bytes // 4, src_at=w_bytes))
    out.append(f"""	mov.u64 	{role['w_base']}, mv_w;
	mov.u64 	{role['v_base']}, mv_v;
	cvt.u64.u32 	%x6, %y7;
	mul.lo.s64 	{role['row']}, %x6, {w_row};
	mov.f32 	{role['sum']}, 0f00000000;
""")
    slots = {"row": w_row * 4, "rows4": 4 * w_row * 4, "rows8": 8 * w_row * 4, "rows12": 12 * w_row * 4,
             "w1": w_buffer * 4, "v1": v_buffer * 4, "w_bytes": w_bytes}
    if staging:
        out.append(SLOTS.format(**slots))
    out.append(LOOP_HEAD.format(loads=LOADS.format(**slots) if staging else ""))
    out.append(f"""	cvt.u64.u32 	{role['parity']}, %y10;
	// the whole chunk of mv_f32, as ptx_matvec.c emits it
""")
    out.append("\n".join(body) + "\n")
    out.append(LOOP_TAIL.format(sum=role["sum"], stores=STORES.format(**slots) if staging else ""))
    return "".join(out)


def register_kernel(name, ops):
    """A register-only chain: b in %g1, c in %g2, e in %g3, x_i in %g4+i,
    y_j in %g20+j, the sum in %g0."""
    out = [HEAD.format(name=name, decls="")]
    out.append("".join(f"\tld.global.f32 \t%g{1 + i}, [%x0+{4 * i}];\n" for i in range(35)))
    out.append("\tmov.f32 \t%g0, 0f00000000;\n")
    out.append(LOOP_HEAD.format(loads=""))
    out.append("".join(ops))
    out.append(LOOP_TAIL.format(sum="%g0", stores=""))
    return "".join(out)


def module_text(path):
    """chain.ptx's text: the layout line, chain_f32, chain_f32_st and the
    register chains (chain_pipe.py appends its variants to it)."""
    label, body, decls, shared, role, layout = chunk_of(path)
    check_layout(body, role, layout)
    source = open(path).read().splitlines()
    header = [l for l in source[:8] if l.startswith((".version", ".target", ".address_size"))]
    fadd = ["\tadd.rn.f32 \t%g0, %g0, %g1;\n"] * TERMS_REGS
    fmuladd = ["\tmul.rn.f32 \t%g0, %g0, %g2;\n\tadd.rn.f32 \t%g0, %g0, %g1;\n"] * TERMS_REGS
    muladd = [f"\tmul.rn.f32 \t%g36, %g{4 + i}, %g{20 + j};\n\tadd.rn.f32 \t%g0, %g0, %g36;\n"
              for i in range(16) for j in range(16)]
    muladd += [f"\tadd.rn.f32 \t%g{4 + i}, %g{4 + i}, %g3;\n" for i in range(16)]
    text = ["// chain: terms %d w_row %d w_buffer %d v_buffer %d w_bytes %d v_bytes %d\n" % layout,
            f"// Generated by tests/gpu/matvec/chain_gen.py from {path} (block {label})\n",
            "\n".join(header) + "\n\n",
            chain_kernel("chain_f32", body, decls, shared, role, layout, False), "\n",
            chain_kernel("chain_f32_st", body, decls, shared, role, layout, True), "\n"]
    for name, ops in (("chain_fadd", fadd), ("chain_fmuladd", fmuladd), ("chain_muladd", muladd)):
        text += [register_kernel(name, ops), "\n"]
    return "".join(text)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: chain_gen.py MV_F32_PTX OUT_PTX")
    label, body, decls, shared, role, layout = chunk_of(sys.argv[1])
    text = module_text(sys.argv[1])
    with open(sys.argv[2], "w") as f:
        f.write(text)
    print(f"{sys.argv[2]}: chain_f32 from {label} ({len(body)} lines: 128 ld.shared.v4.f32, 256 mul.rn.f32, "
          f"256 add.rn.f32), live-in {role}; layout {layout}; chain_f32_st (with the staging), chain_fadd, "
          f"chain_fmuladd, chain_muladd")


if __name__ == "__main__":
    main()
