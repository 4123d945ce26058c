/*
 * Test hook for tests/test_tool_errors.c: loaded with LD_PRELOAD into the
 * qgpu tool, it makes clCreateBuffer fail with
 * CL_MEM_OBJECT_ALLOCATION_FAILURE for any buffer larger than
 * $QGPU_TEST_DEVICE_MEMORY bytes, as a device out of memory does; smaller
 * buffers (and every buffer when the variable is unset) are created by the
 * real OpenCL library. The OpenCL types are spelled out (same ABI) so this
 * file needs no OpenCL headers.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#define CL_MEM_OBJECT_ALLOCATION_FAILURE (-4)

typedef void *(*CreateBuffer)(void *context, uint64_t flags, size_t size, void *host,
                              int32_t *status);

void *clCreateBuffer(void *context, uint64_t flags, size_t size, void *host, int32_t *status);

void *clCreateBuffer(void *context, uint64_t flags, size_t size, void *host, int32_t *status)
{
    const char *limit = getenv("QGPU_TEST_DEVICE_MEMORY");
    CreateBuffer real;
    if (limit && size > strtoull(limit, NULL, 10)) {
        if (status)
            *status = CL_MEM_OBJECT_ALLOCATION_FAILURE;
        return NULL;
    }
    real = (CreateBuffer)(uintptr_t)dlsym(RTLD_NEXT, "clCreateBuffer");
    if (!real) {
        if (status)
            *status = CL_MEM_OBJECT_ALLOCATION_FAILURE;
        return NULL;
    }
    return real(context, flags, size, host, status);
}
