/* unit_fake.h: for the unit tests that drive the runtime's CUDA layer
 * through the stand-in libcuda.so.1 of tests/fake_cuda ($FAKE_CUDA_DIR). */
#ifndef TW_UNIT_FAKE_H
#define TW_UNIT_FAKE_H

#include <stdbool.h>
#include <stdint.h>

struct rt_resident;

/* Loads the fake driver (as an old driver, FAKE_CUDA=old); with a tag,
 * the fake logs its calls and waits to /tmp/twasm-test-TAG-PID.log.
 * False without $FAKE_CUDA_DIR or when the driver does not come up. */
bool unit_fake_up(const char *tag);
/* The log's path (empty before a tagged unit_fake_up). */
const char *unit_fake_log(void);
/* Lines of the log equal to line (without its newline). */
int unit_fake_logged(const char *line);

/* A fixture for tests of rt_resident: mem bytes of host pages (filled
 * with a pattern) under a new rt_resident, and a SIGSEGV handler that lets
 * rt_resident_fault open what it protects (any other fault goes to the
 * previous handler).  unit_resident_down undoes it. */
struct rt_resident *unit_resident_up(uint8_t **host, uint32_t mem);
void unit_resident_down(struct rt_resident *res, uint8_t *host, uint32_t mem);
/* Faults the handler saw since unit_resident_up. */
int unit_resident_faults(void);

#endif
