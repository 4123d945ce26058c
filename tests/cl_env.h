/* The OpenCL context of the tests that hand the library their own OpenCL
 * objects (test_external, test_extmem): the device the other tests use
 * ($QGPU_DEVICE or auto), in a context and queue the test creates. */
#ifndef QGPU_TEST_CL_ENV_H
#define QGPU_TEST_CL_ENV_H

#include "qgpu/qgpu_opencl.h"

typedef struct TestClEnv {
    cl_context cl;
    cl_device_id device;
    cl_command_queue queue; /* the test's own, for writing its inputs */
} TestClEnv;

/* 0, or -1 after a failed check. */
int test_cl_env_open(TestClEnv *env);
void test_cl_env_close(TestClEnv *env);

#endif /* QGPU_TEST_CL_ENV_H */
