/* Entry point for a wasm2c-translated benchmark: instantiates module
 * "prog" and provides the five WASI calls the benchmarks import. */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prog.h"
#include "wasm-rt-impl.h"

#define WASI_ESUCCESS 0
#define WASI_EBADF 8
#define WASI_EFAULT 21
#define WASI_ESPIPE 70

struct Z_wasi_snapshot_preview1_instance_t {
	wasm_rt_memory_t *memory;
};

static jmp_buf exit_jump;
static int exit_status;

/* Guest pointers are checked against the memory size so that a bad
 * iovec cannot read outside the sandbox. */
static u8 *guest_range(wasm_rt_memory_t *memory, u32 address, u32 length)
{
	if ((u64)address + length > memory->size)
		return NULL;
	return memory->data + address;
}

u32 Z_wasi_snapshot_preview1Z_fd_write(struct Z_wasi_snapshot_preview1_instance_t *wasi,
				       u32 fd, u32 iovs, u32 iovs_len, u32 nwritten_out)
{
	if (fd != 1 && fd != 2)
		return WASI_EBADF;
	u8 *iov = guest_range(wasi->memory, iovs, iovs_len * 8);
	u8 *out = guest_range(wasi->memory, nwritten_out, 4);
	if (!iov || !out)
		return WASI_EFAULT;
	u32 total = 0;
	for (u32 i = 0; i < iovs_len; i++) {
		u32 base, length;
		memcpy(&base, iov + i * 8, 4);
		memcpy(&length, iov + i * 8 + 4, 4);
		u8 *bytes = guest_range(wasi->memory, base, length);
		if (!bytes)
			return WASI_EFAULT;
		for (u32 done = 0; done < length;) {
			ssize_t n = write((int)fd, bytes + done, length - done);
			if (n < 0)
				return WASI_EBADF;
			done += (u32)n;
		}
		total += length;
	}
	memcpy(out, &total, 4);
	return WASI_ESUCCESS;
}

/* Reports every descriptor as an unknown file type with no rights: the
 * libc then treats stdout as fully buffered, as it does under node. */
u32 Z_wasi_snapshot_preview1Z_fd_fdstat_get(struct Z_wasi_snapshot_preview1_instance_t *wasi,
					    u32 fd, u32 stat_out)
{
	u8 *stat = guest_range(wasi->memory, stat_out, 24);
	if (fd > 2)
		return WASI_EBADF;
	if (!stat)
		return WASI_EFAULT;
	memset(stat, 0, 24);
	return WASI_ESUCCESS;
}

u32 Z_wasi_snapshot_preview1Z_fd_seek(struct Z_wasi_snapshot_preview1_instance_t *wasi, u32 fd,
				      u64 offset, u32 whence, u32 position_out)
{
	(void)wasi, (void)fd, (void)offset, (void)whence, (void)position_out;
	return WASI_ESPIPE;
}

u32 Z_wasi_snapshot_preview1Z_fd_close(struct Z_wasi_snapshot_preview1_instance_t *wasi, u32 fd)
{
	(void)wasi;
	return fd <= 2 ? WASI_ESUCCESS : WASI_EBADF;
}

void Z_wasi_snapshot_preview1Z_proc_exit(struct Z_wasi_snapshot_preview1_instance_t *wasi,
					 u32 status)
{
	(void)wasi;
	exit_status = (int)status;
	longjmp(exit_jump, 1);
}

int main(void)
{
	static Z_prog_instance_t instance;
	static struct Z_wasi_snapshot_preview1_instance_t wasi;
	wasm_rt_init();
	Z_prog_init_module();
	Z_prog_instantiate(&instance, &wasi);
	wasi.memory = Z_progZ_memory(&instance);
	if (setjmp(exit_jump) == 0) {
		wasm_rt_trap_t trap = wasm_rt_impl_try();
		if (trap != WASM_RT_TRAP_NONE) {
			fprintf(stderr, "trap: %s\n", wasm_rt_strerror(trap));
			return 134;
		}
		Z_progZ__start(&instance);
	}
	Z_prog_free(&instance);
	wasm_rt_free();
	return exit_status;
}
