/* unit_fake.h: for the unit tests that drive the runtime's CUDA layer
 * through the stand-in libcuda.so.1 of tests/fake_cuda ($FAKE_CUDA_DIR). */
#ifndef TW_UNIT_FAKE_H
#define TW_UNIT_FAKE_H

#include <stdbool.h>

/* Loads the fake driver (as an old driver, FAKE_CUDA=old); with a tag,
 * the fake logs its calls and waits to /tmp/twasm-test-TAG-PID.log.
 * False without $FAKE_CUDA_DIR or when the driver does not come up. */
bool unit_fake_up(const char *tag);
/* The log's path (empty before a tagged unit_fake_up). */
const char *unit_fake_log(void);
/* Lines of the log equal to line (without its newline). */
int unit_fake_logged(const char *line);

#endif
