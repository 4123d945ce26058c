/*
 * Test hook: a device that disappears mid-run (doc/reliability.md).
 *
 * With QGPU_TEST_FAIL_AFTER=N in the environment (read once, at the first
 * frame wait), or after qgpu_fault_fail_after(N) in a test, the Nth frame
 * readback waited for in this process, and every later one, reports
 * CL_DEVICE_NOT_AVAILABLE, as a driver does for a lost device (GPU reset,
 * removed eGPU). Everything else, the OpenCL objects included, stays
 * real, so the error path and the release of resources after it are the
 * ones a real loss takes. Unset or 0: off, and the cost is two atomic loads
 * per frame.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "fault.h"

static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static atomic_long fail_at;    /* 1-based wait that fails first; <= 0: off */
static atomic_long waits;      /* frame waits since the hook was armed */

static void read_environment(void)
{
    const char *value = getenv("QGPU_TEST_FAIL_AFTER");
    long n = value ? strtol(value, NULL, 10) : 0;
    atomic_store(&fail_at, n > 0 ? n : 0);
}

void qgpu_fault_fail_after(long n)
{
    pthread_once(&env_once, read_environment);
    atomic_store(&waits, 0);
    atomic_store(&fail_at, n > 0 ? n : 0);
}

cl_int qgpu_fault_frame_wait(cl_int status)
{
    long at;
    pthread_once(&env_once, read_environment);
    at = atomic_load(&fail_at);
    if (at <= 0)
        return status;
    if (atomic_fetch_add(&waits, 1) + 1 >= at)
        return CL_DEVICE_NOT_AVAILABLE;
    return status;
}
