#!/usr/bin/env python3
"""chain_pipe.py MV_F32_PTX OUT_PTX: the matrix-vector chunk with its loads
taken off the chain's path (matrix-vector round 14, docs/PERFORMANCE.md).
Writes everything chain_gen.py writes (chain_f32, the committed chunk's
PTX text; chain_f32_st; the register chains) and, in the same module,
chunk variants generated here with W and/or v held in registers that were
loaded a sub-chunk or more before the multiplies that read them:

  chain_f32_w    W from shared memory into registers (64-term sub-chunks,
                 2 register sets: sub-chunk j+1 loaded while j is summed);
                 v a shared broadcast per 4 terms, as committed
  chain_f32_wg   W from global memory into registers (the thread's own
                 row, ld.global.v4.f32; 64-term sub-chunks, 2 sets), v
                 a shared broadcast
  chain_f32_wg4  the same with 32-term sub-chunks and 4 sets (loaded 96
                 terms ahead: for a DRAM latency, not an L2 one)
  chain_f32_v    v from shared into registers (64-term sub-chunks, 2
                 sets), W from shared per 4 terms, as committed
  chain_f32_wv   both from shared into registers (32-term sub-chunks, 2
                 sets each: 64 + 64 registers)
  chain_f32_wgv  W from global, v from shared, both into registers
                 (32-term sub-chunks, 2 sets each)

Each output is one thread's in-order chain of separate mul.rn.f32 and
add.rn.f32 in k order, as committed, so the sums are bit-identical to
chain_f32's (chain_bw.cu checks every one against the CPU).  Registers
filled from shared memory restart at each chunk (sub-chunk 0 loaded at
the chunk's top): a real kernel's staging writes the other buffer before
the barrier, so a load of the next chunk from shared memory may not cross
it.  Registers filled from global memory run ahead across chunks (the
loop carries them; the first sets are loaded before the loop), since
global memory is not restaged.  Kernel parameters, src layout, mode bits
and the staging (mode 3: chain_f32_st's, L2 loads before the chunk,
shared stores and the barrier after it) are chain_gen.py's.

Before writing, each variant's setup, prologue and three chunks (buffers
0, 1, 0) are run here on the CPU (f32 rounding each operation) for rows
0, 5 and 15 and must sum to what chain_f32's layout gives in k order
(check_variant); otherwise nothing is written (exit 1)."""
import random
import sys

import chain_gen as cg

# name: (W source, v source, sub-chunk terms, register sets).  A source is
# "smem" (a shared load per 4 terms, on the chain's path, as committed),
# "sreg" (shared memory into registers ahead) or "greg" (global memory
# into registers ahead).
VARIANTS = {
    "chain_f32_w": ("sreg", "smem", 64, 2),
    "chain_f32_wg": ("greg", "smem", 64, 2),
    "chain_f32_wg4": ("greg", "smem", 32, 4),
    "chain_f32_v": ("smem", "sreg", 64, 2),
    "chain_f32_wv": ("sreg", "sreg", 32, 2),
    "chain_f32_wgv": ("greg", "sreg", 32, 2),
}

# Address registers: %pa0 the row's byte offset; %pa9/%pa10 shared W (the
# row) and v, buffer 0; %pa11/%pa12 the same in src (global); per chunk
# %pa13-%pa16 those for this buffer, %pa17/%pa18 src's for the next one.
BASE = {("W", "smem"): "%pa13", ("W", "sreg"): "%pa13", ("W", "greg"): "%pa15",
        ("v", "smem"): "%pa14", ("v", "sreg"): "%pa14", ("v", "greg"): "%pa16"}
NEXT = {"W": "%pa17", "v": "%pa18"}
FIRST = {"W": "%pa11", "v": "%pa12"}


def fail(msg):
    sys.exit(f"{sys.argv[1]}: error: {msg}")


def load(space, regs, base, at, volatile=False):
    """One v4 load; volatile for the loads into the pipeline's registers:
    ptxas moves a plain load down to its use (the value is dead on the
    never-taken branch out of a sub-chunk, so it may cross it), which
    would put the load back on the chain's path."""
    space = f"volatile.{space}" if volatile else space
    return f"\tld.{space}.v4.f32 \t{{{', '.join(regs)}}}, [{base}+{at}];\n"


def pipe_regs(op, sub, sets):
    prefix = "%pw" if op == "W" else "%pv"
    return [[f"{prefix}{s * sub + t}" for t in range(sub)] for s in range(sets)]


def sub_loads(op, src, regs, base, first_term):
    """Loads of one sub-chunk of op into regs, 4 terms a load."""
    space = "global" if src == "greg" else "shared"
    return [load(space, regs[t:t + 4], base, 4 * (first_term + t), True) for t in range(0, len(regs), 4)]


def variant_text(w_src, v_src, sub, sets, layout):
    """(setup, prologue, body) PTX lines of one variant.  setup runs in
    every thread before the loop; prologue only in summing threads
    before the loop; body is the chunk, in summing threads, with the
    buffer parity in %y10."""
    terms, w_row, w_buffer, v_buffer, w_bytes, v_bytes = layout
    if terms % (sub * sets) or sub % 4:
        fail(f"sub-chunk {sub} x {sets} sets does not divide {terms} terms")
    src = {"W": w_src, "v": v_src}
    piped = [op for op in ("W", "v") if src[op] != "smem"]
    regs = {op: pipe_regs(op, sub, sets) for op in piped}
    setup = [f"\tcvt.u64.u32 \t%pa0, %y7;\n", f"\tmul.lo.s64 \t%pa0, %pa0, {4 * w_row};\n",
             "\tmov.u64 \t%pa9, mv_w;\n", "\tadd.s64 \t%pa9, %pa9, %pa0;\n", "\tmov.u64 \t%pa10, mv_v;\n",
             "\tadd.s64 \t%pa11, %x0, %pa0;\n", f"\tadd.s64 \t%pa12, %x0, {w_bytes};\n",
             "\tmov.f32 \t%ps0, 0f00000000;\n", "\tand.b32 \t%py1, %y3, 4;\n",
             "\tsetp.ne.u32 \t%pp0, %py1, 0;\n"]
    prologue = []
    for op in piped:
        if src[op] == "greg":  # runs ahead across chunks: the first sets before the loop
            for s in range(sets - 1):
                prologue += sub_loads(op, src[op], regs[op][s], FIRST[op], s * sub)
    body = ["\tcvt.u64.u32 \t%pa1, %y10;\n", "\txor.b32 \t%py0, %y10, 1;\n", "\tcvt.u64.u32 \t%pa2, %py0;\n",
            f"\tmul.lo.s64 \t%pa3, %pa1, {4 * w_buffer};\n", f"\tmul.lo.s64 \t%pa4, %pa1, {4 * v_buffer};\n",
            f"\tmul.lo.s64 \t%pa5, %pa2, {4 * w_buffer};\n", f"\tmul.lo.s64 \t%pa6, %pa2, {4 * v_buffer};\n",
            "\tadd.s64 \t%pa13, %pa9, %pa3;\n", "\tadd.s64 \t%pa14, %pa10, %pa4;\n",
            "\tadd.s64 \t%pa15, %pa11, %pa3;\n", "\tadd.s64 \t%pa16, %pa12, %pa4;\n",
            "\tadd.s64 \t%pa17, %pa11, %pa5;\n", "\tadd.s64 \t%pa18, %pa12, %pa6;\n"]
    subs = terms // sub
    for op in piped:
        if src[op] == "sreg":  # restarts at each chunk: the first sets at its top
            for s in range(sets - 1):
                body += sub_loads(op, src[op], regs[op][s], BASE[op, src[op]], s * sub)
    temp = 0
    for j in range(subs):
        ahead = j + sets - 1
        for op in piped:
            if ahead < subs:
                body += sub_loads(op, src[op], regs[op][ahead % sets], BASE[op, src[op]], ahead * sub)
            elif src[op] == "greg":
                body += sub_loads(op, src[op], regs[op][ahead % sets], NEXT[op], (ahead - subs) * sub)
        for g in range(0, sub, 4):
            k = j * sub + g
            operand = {}
            for op in ("W", "v"):
                if src[op] == "smem":
                    tmp = [f"%p{'t' if op == 'W' else 'u'}{temp + e}" for e in range(4)]
                    body.append(load("shared", tmp, BASE[op, "smem"], 4 * k))
                    operand[op] = tmp
                else:
                    operand[op] = regs[op][j % sets][g:g + 4]
            for e in range(4):
                body.append(f"\tmul.rn.f32 \t%pm{temp + e}, {operand['W'][e]}, {operand['v'][e]};\n")
                body.append(f"\tadd.rn.f32 \t%ps0, %ps0, %pm{temp + e};\n")
            temp += 4
        if j < subs - 1:  # never taken (mode bit 2 is never set): keeps ptxas from sinking the loads
            body.append("\t@%pp0 bra \t$C_summed;\n")
    return setup, prologue, body


def check_variant(name, setup, prologue, body, layout):
    """Runs setup, prologue and the body for buffers 0, 1, 0 on the CPU
    for rows 0, 5, 15 and compares the sum with the layout's k order."""
    terms, w_row, w_buffer, v_buffer, w_bytes, v_bytes = layout
    rand = random.Random(14)
    w = [cg.f32(rand.randint(-64, 64) / 32) for _ in range(w_bytes // 4)]
    v = [cg.f32(rand.randint(-64, 64) / 32) for _ in range(v_bytes // 4)]
    spaces = {"shared": [(1 << 20, w), (2 << 20, v)], "global": [(4 << 20, w + v)]}
    for row in (0, 5, 15):
        r = {"%y7": row, "%x0": 4 << 20, "mv_w": 1 << 20, "mv_v": 2 << 20}
        val = lambda x: r[x] if x.startswith(("%", "mv_")) else int(x)
        for parity, lines in [(None, setup + prologue), (0, body), (1, body), (0, body)]:
            if parity is not None:
                r["%y10"] = parity
            for line in lines:
                if line.strip().startswith("@") or line.strip() in ("and.b32 \t%py1, %y3, 4;",
                                                                    "setp.ne.u32 \t%pp0, %py1, 0;"):
                    continue  # mode bit 2, never set
                op, args = line.strip().rstrip(";").split(None, 1)
                if op.startswith("ld."):
                    dests, addr = args.split("}, [")
                    base, at = addr.rstrip("]").split("+")
                    byte = r[base] + int(at)
                    space = op.split(".")[-3]
                    region = [(lo, mem) for lo, mem in spaces[space] if 0 <= byte - lo <= 4 * (len(mem) - 4)]
                    if not region:
                        fail(f"{name}, row {row}: a {space} load at {byte:#x}, outside its memory")
                    lo, mem = region[0]
                    for e, reg in enumerate(x.strip() for x in dests.lstrip("{").split(",")):
                        r[reg] = mem[(byte - lo) // 4 + e]
                    continue
                d, *srcs = (x.strip() for x in args.split(","))
                if op == "mul.rn.f32":
                    r[d] = cg.f32(val(srcs[0]) * val(srcs[1]))
                elif op == "add.rn.f32":
                    r[d] = cg.f32(val(srcs[0]) + val(srcs[1]))
                elif op in ("mul.lo.s64", "add.s64", "xor.b32"):
                    a, b = val(srcs[0]), val(srcs[1])
                    r[d] = a * b if op == "mul.lo.s64" else a + b if op == "add.s64" else a ^ b
                elif op in ("cvt.u64.u32", "mov.u64"):
                    r[d] = val(srcs[0])
                elif op == "mov.f32":
                    r[d] = 0.0
                else:
                    fail(f"{name}: {op} not interpreted")
        want = 0.0
        for parity in (0, 1, 0):
            for k in range(terms):
                want = cg.f32(want + cg.f32(w[parity * w_buffer + row * w_row + k] * v[parity * v_buffer + k]))
        if r["%ps0"] != want:
            fail(f"{name}, row {row}: three chunks sum to {r['%ps0']}, the layout {layout} in k order to {want}")


def pipe_kernel(name, shared, layout, setup, prologue, body, sets_regs):
    terms, w_row, w_buffer, v_buffer, w_bytes, v_bytes = layout
    decls = shared + ["\t.reg .b64 \t%pa<20>;", "\t.reg .b32 \t%py<2>;", "\t.reg .pred \t%pp<1>;", f"\t.reg .f32 \t%pw<{sets_regs}>;",
                      f"\t.reg .f32 \t%pv<{sets_regs}>;", f"\t.reg .f32 \t%pt<{terms}>;",
                      f"\t.reg .f32 \t%pu<{terms}>;", f"\t.reg .f32 \t%pm<{terms}>;", "\t.reg .f32 \t%ps<1>;"]
    # at most 8 warps (chain_bw.cu's runs of these), so up to 255 registers a thread
    out = [cg.HEAD.format(name=name, decls="\n".join(decls)).replace(".maxntid 512,", ".maxntid 256,")]
    out.append(cg.FILL.format(arr="mv_w", floats=w_bytes // 4, src_at=0))
    out.append(cg.FILL.format(arr="mv_v", floats=v_bytes // 4, src_at=w_bytes))
    out += setup
    slots = {"row": w_row * 4, "rows4": 4 * w_row * 4, "rows8": 8 * w_row * 4, "rows12": 12 * w_row * 4,
             "w1": w_buffer * 4, "v1": v_buffer * 4, "w_bytes": w_bytes}
    out.append(cg.SLOTS.format(**slots))
    if prologue:
        out += ["\t@!%q1 bra \t$C_primed;\n"] + prologue + ["$C_primed:\n"]
    out.append(cg.LOOP_HEAD.format(loads=cg.LOADS.format(**slots)))
    out += body
    out.append(cg.LOOP_TAIL.format(sum="%ps0", stores=cg.STORES.format(**slots)))
    return "".join(out)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: chain_pipe.py MV_F32_PTX OUT_PTX")
    label, chunk, decls, shared, role, layout = cg.chunk_of(sys.argv[1])
    text = [cg.module_text(sys.argv[1])]
    for name, (w_src, v_src, sub, sets) in VARIANTS.items():
        setup, prologue, body = variant_text(w_src, v_src, sub, sets, layout)
        check_variant(name, setup, prologue, body, layout)
        text += [pipe_kernel(name, shared, layout, setup, prologue, body, sub * sets), "\n"]
    with open(sys.argv[2], "w") as f:
        f.write("".join(text))
    print(f"{sys.argv[2]}: chain_gen.py's kernels and {', '.join(VARIANTS)} (each checked on the CPU: "
          f"3 chunks, rows 0, 5, 15, bit-identical to the k order)")


if __name__ == "__main__":
    main()
