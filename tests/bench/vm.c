/* Interpreter workload: a stack bytecode VM with switch dispatch running
 * recursive fib, plus a recursive Ackermann in plain C. */
#include <stdint.h>
#include <stdio.h>

enum opcode { OP_PUSH, OP_ARG, OP_ADD, OP_SUB, OP_LT, OP_JZ, OP_JMP, OP_CALL, OP_RET };

struct frame {
	int return_pc;
	int base; /* stack index of the frame's argument */
};

/* fib(n): if n < 2 return n; return fib(n-1) + fib(n-2).  Entry at 0. */
static const int32_t fib_code[] = {
	OP_ARG, OP_PUSH, 2, OP_LT, OP_JZ, 8,   /* 0: n < 2 ? */
	OP_ARG, OP_RET,                        /* 6: return n */
	OP_ARG, OP_PUSH, 1, OP_SUB, OP_CALL, 0, /* 8: fib(n-1) */
	OP_ARG, OP_PUSH, 2, OP_SUB, OP_CALL, 0, /* 14: fib(n-2) */
	OP_ADD, OP_RET,                        /* 20 */
};

static int32_t stack[1 << 16];
static struct frame frames[1 << 12];

static int32_t run(const int32_t *code, int32_t argument)
{
	int sp = 0, fp = 0, pc = 0;
	stack[sp++] = argument;
	frames[0] = (struct frame){-1, 0};
	for (;;) {
		int32_t a, b;
		switch (code[pc++]) {
		case OP_PUSH: stack[sp++] = code[pc++]; break;
		case OP_ARG: stack[sp++] = stack[frames[fp].base]; break;
		case OP_ADD: b = stack[--sp]; a = stack[--sp]; stack[sp++] = a + b; break;
		case OP_SUB: b = stack[--sp]; a = stack[--sp]; stack[sp++] = a - b; break;
		case OP_LT: b = stack[--sp]; a = stack[--sp]; stack[sp++] = a < b; break;
		case OP_JZ: a = stack[--sp]; pc = a ? pc + 1 : code[pc]; break;
		case OP_JMP: pc = code[pc]; break;
		case OP_CALL:
			fp++;
			frames[fp] = (struct frame){pc + 1, sp - 1};
			pc = code[pc];
			break;
		case OP_RET:
			a = stack[--sp];
			sp = frames[fp].base;
			pc = frames[fp].return_pc;
			stack[sp++] = a;
			if (fp-- == 0)
				return a;
			break;
		default: return -1;
		}
	}
}

static uint32_t ackermann(uint32_t m, uint32_t n)
{
	if (m == 0)
		return n + 1;
	if (n == 0)
		return ackermann(m - 1, 1);
	return ackermann(m - 1, ackermann(m, n - 1));
}

int main(void)
{
	int32_t fib = run(fib_code, 32);
	uint32_t ack = 0;
	for (int i = 0; i < 40; i++)
		ack += ackermann(2, 2000 + (uint32_t)i) + ackermann(3, 7);
	printf("fib(32) %d ackermann %u\n", fib, ack);
	return 0;
}
