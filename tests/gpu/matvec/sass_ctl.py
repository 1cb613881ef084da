#!/usr/bin/env python3
"""sass_ctl.py CUBIN [FUNCTION [SHOW]]: the summing chain of a kernel's
machine code without a disassembler (matrix-vector round 12,
docs/PERFORMANCE.md).  Reads FUNCTION's .text (default mv_f32) from an
sm_90 cubin with readelf, splits it into 16-byte instructions and takes
the straight-line run (to a branch, exit or barrier) with the most FADD.
For that block it prints the instructions by opcode, the stall cycles the
compiler encoded (their sum: the fewest cycles one warp takes to issue the
block) and, for each scoreboard wait, the encoded cycles since the
instruction that set that scoreboard (for the summing block: how far ahead
of their first use the shared loads were issued; a wait shorter than the
load's latency stalls the warp for the difference).

Encoding facts used (Volta to Hopper): an instruction is two little-endian
64-bit words; the opcode is bits 0-11 of the first (FADD 0x221, FMUL
0x220, FFMA 0x223, LDS 0x984, STS 0x388, LDG 0x981, BAR 0xb1d, BRA 0x947,
EXIT 0x94d); in the second, bits 41-44 are the stall count, 46-48 the
scoreboard the instruction sets when done (7: none), 52-57 the
scoreboards it waits for; in a register-register FMUL or FADD the
sources are bytes 3 and 4 of the first word (RZ: 255), and the block's
count of those whose two sources have the same parity (the same register
bank, if banks are register number mod 2 as measured on Volta and Turing)
is printed as "same-bank pairs"."""
import collections
import struct
import subprocess
import sys

NAMES = {0x221: "FADD", 0x220: "FMUL", 0x223: "FFMA", 0x984: "LDS", 0x388: "STS", 0x981: "LDG",
         0x386: "STG", 0xB1D: "BAR", 0x947: "BRA", 0x94D: "EXIT", 0x918: "NOP"}
ENDS = ("BRA", "EXIT", "BAR")


def text_of(path, function):
    sections = subprocess.run(["readelf", "-S", "-W", path], capture_output=True, text=True, check=True).stdout
    for line in sections.splitlines():
        if ".text." + function + " " in line + " " and "PROGBITS" in line:
            fields = line.split("]", 1)[1].split()
            offset, size = int(fields[3], 16), int(fields[4], 16)
            with open(path, "rb") as f:
                f.seek(offset)
                return f.read(size)
    sys.exit(f"{path}: no .text.{function}")


def instructions(text):
    for at in range(0, len(text) - 15, 16):
        low, high = struct.unpack("<QQ", text[at:at + 16])
        yield {"at": at, "op": NAMES.get(low & 0xFFF, "0x%03x" % (low & 0xFFF)), "stall": (high >> 41) & 0xF,
               "sets": (high >> 46) & 7, "waits": (high >> 52) & 0x3F, "a": (low >> 24) & 0xFF,
               "b": (low >> 32) & 0xFF}


def main():
    path = sys.argv[1]
    function = sys.argv[2] if len(sys.argv) > 2 else "mv_f32"
    show = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    blocks, block = [], []
    every = list(instructions(text_of(path, function)))
    for insn in every:
        block.append(insn)
        if insn["op"] in ENDS:
            blocks.append(block)
            block = []
    blocks.append(block)
    best = max(blocks, key=lambda b: sum(i["op"] == "FADD" for i in b))
    ops = collections.Counter(i["op"] for i in best)
    adds = ops["FADD"]
    if not adds:
        print(f"  sass-ctl {function}: no FADD")
        return
    stalls = sum(i["stall"] for i in best)
    leads, set_at, cycle = [], {}, 0
    for insn in best:
        for sb in range(6):
            if insn["waits"] >> sb & 1 and sb in set_at:
                leads.append(cycle - set_at.pop(sb))
        if insn["sets"] != 7:
            set_at[insn["sets"]] = cycle
        cycle += insn["stall"]
    same = collections.Counter(i["op"] for i in best if i["op"] in ("FMUL", "FADD") and 255 not in (i["a"], i["b"])
                               and i["a"] % 2 == i["b"] % 2)
    others = ", ".join(f"{op} {n}" for op, n in ops.most_common() if op not in ("FADD", "FMUL", "LDS"))
    print(f"  sass-ctl {function}: {len(every)} instructions; summing block {len(best)}: {adds} FADD, "
          f"{ops['FMUL']} FMUL, {ops['LDS']} LDS, {others}; {len(best) / adds:.2f} a term")
    print(f"  sass-ctl: encoded stalls {stalls} cycles, {stalls / adds:.2f} a term", end="")
    if leads:
        common = collections.Counter(leads).most_common(1)[0][0]
        print(f"; {len(leads)} scoreboard waits, lead min {min(leads)} / most {common} / max {max(leads)} cycles")
    else:
        print("; no scoreboard wait")
    print(f"  sass-ctl: same-bank pairs: FMUL {same['FMUL']} of {ops['FMUL']}, FADD {same['FADD']} of {adds}")
    for insn in best[:show]:
        print(f"    {insn['at']:05x} {insn['op']:6s} stall {insn['stall']:2d} sets {insn['sets']} waits {insn['waits']:02x}"
              f" sources R{insn['a']} R{insn['b']}")


if __name__ == "__main__":
    main()
