/* A minimal SQLite VFS for tests/bench/real.sh: SQLite's unix VFS needs
 * fcntl locks, fchown and the like that wasm32-wasi lacks, so every build
 * of speedtest1 (native glibc, native musl, Wasm) is made with
 * -DSQLITE_OS_OTHER=1 -DSQLITE_TEMP_STORE=3 and this file, and runs on an
 * in-memory database (":memory:"): the VFS is asked only for randomness
 * (a fixed sequence, so that runs are repeatable), the time and sleep.
 * Opening a file fails; the three builds run the same SQLite code. */
#include <string.h>
#include <time.h>

#include "sqlite3.h"

static int vfs_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags, int *out_flags)
{
	(void)vfs, (void)name, (void)flags, (void)out_flags;
	file->pMethods = 0;
	return SQLITE_CANTOPEN;
}

static int vfs_delete(sqlite3_vfs *vfs, const char *name, int sync_dir)
{
	(void)vfs, (void)name, (void)sync_dir;
	return SQLITE_IOERR_DELETE;
}

static int vfs_access(sqlite3_vfs *vfs, const char *name, int flags, int *res)
{
	(void)vfs, (void)name, (void)flags;
	*res = 0;
	return SQLITE_OK;
}

static int vfs_full_pathname(sqlite3_vfs *vfs, const char *name, int n, char *out)
{
	(void)vfs;
	sqlite3_snprintf(n, out, "%s", name);
	return SQLITE_OK;
}

/* xorshift64: the same bytes in every build and every run */
static int vfs_randomness(sqlite3_vfs *vfs, int n, char *out)
{
	static unsigned long long state = 0x9e3779b97f4a7c15ull;
	(void)vfs;
	for (int i = 0; i < n; i++) {
		state ^= state << 13;
		state ^= state >> 7;
		state ^= state << 17;
		out[i] = (char)(state >> 56);
	}
	return n;
}

static int vfs_sleep(sqlite3_vfs *vfs, int us)
{
	(void)vfs;
	return us;
}

/* milliseconds since the Julian epoch, as SQLite's own VFSes count */
static int vfs_time64(sqlite3_vfs *vfs, sqlite3_int64 *out)
{
	struct timespec ts;
	(void)vfs;
	clock_gettime(CLOCK_REALTIME, &ts);
	*out = 24405875 * (sqlite3_int64)8640000 + (sqlite3_int64)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	return SQLITE_OK;
}

static int vfs_time(sqlite3_vfs *vfs, double *out)
{
	sqlite3_int64 ms;
	vfs_time64(vfs, &ms);
	*out = ms / 86400000.0;
	return SQLITE_OK;
}

static int vfs_last_error(sqlite3_vfs *vfs, int n, char *out)
{
	(void)vfs;
	if (n > 0)
		out[0] = 0;
	return 0;
}

static sqlite3_vfs bench_vfs = {
	.iVersion = 2,
	.szOsFile = sizeof(sqlite3_file),
	.mxPathname = 512,
	.zName = "bench",
	.xOpen = vfs_open,
	.xDelete = vfs_delete,
	.xAccess = vfs_access,
	.xFullPathname = vfs_full_pathname,
	.xRandomness = vfs_randomness,
	.xSleep = vfs_sleep,
	.xCurrentTime = vfs_time,
	.xGetLastError = vfs_last_error,
	.xCurrentTimeInt64 = vfs_time64,
};

int sqlite3_os_init(void)
{
	return sqlite3_vfs_register(&bench_vfs, 1);
}

int sqlite3_os_end(void)
{
	return SQLITE_OK;
}
