/* The tests' own OpenCL context (cl_env.h). */
#include <string.h>

#include "cl_env.h"
#include "feature.h"
#include "test_util.h"

int test_cl_env_open(TestClEnv *env)
{
    QgpuContext *probe = test_open(1);
    cl_int status;
    memset(env, 0, sizeof(*env));
    if (!probe)
        return -1;
    env->device = qgpu_cl_device(probe);
    qgpu_close(&probe); /* device ids of root devices stay valid */
    env->cl = clCreateContext(NULL, 1, &env->device, NULL, NULL, &status);
    if (!CHECK(status == CL_SUCCESS, "clCreateContext: %d", status))
        return -1;
    env->queue = clCreateCommandQueue(env->cl, env->device, 0, &status);
    return CHECK(status == CL_SUCCESS, "clCreateCommandQueue: %d", status) ? 0 : -1;
}

void test_cl_env_close(TestClEnv *env)
{
    if (env->queue)
        clReleaseCommandQueue(env->queue);
    if (env->cl)
        clReleaseContext(env->cl);
}
