/* Errors and logging: a context's last message (qgpu_error,
 * qgpu_cl_error), the log callback (qgpu_log), the names of qgpu and
 * OpenCL codes. A leaf of the library: it calls nothing else in it. */
#include <stdarg.h>
#include <stdio.h>

#include "internal.h"

int qgpu_error(QgpuContext *ctx, int err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->error, sizeof(ctx->error), fmt, ap);
    va_end(ap);
    return err;
}

int qgpu_cl_error(QgpuContext *ctx, cl_int status, const char *what)
{
    int err = QGPU_ERR_OPENCL;
    if (status == CL_MEM_OBJECT_ALLOCATION_FAILURE || status == CL_OUT_OF_RESOURCES ||
        status == CL_INVALID_BUFFER_SIZE)
        err = QGPU_ERR_DEVICE_MEMORY;
    else if (status == CL_OUT_OF_HOST_MEMORY)
        err = QGPU_ERR_NO_MEMORY;
    return qgpu_error(ctx, err, "%s: %s (%d) on %s", what, qgpu_cl_status_name(status),
                      (int)status, ctx->device_name);
}

void qgpu_log(QgpuContext *ctx, int level, const char *fmt, ...)
{
    char message[1024];
    va_list ap;
    if (!ctx->cfg.log_callback || level > ctx->cfg.log_level)
        return;
    va_start(ap, fmt);
    vsnprintf(message, sizeof(message), fmt, ap);
    va_end(ap);
    ctx->cfg.log_callback(ctx->cfg.log_opaque, level, message);
}

const char *qgpu_last_error(const QgpuContext *ctx)
{
    return ctx ? ctx->error : "";
}

const char *qgpu_strerror(int err)
{
    switch (err) {
    case QGPU_OK: return "success";
    case QGPU_ERR_INVALID_ARG: return "invalid argument";
    case QGPU_ERR_NO_MEMORY: return "out of host memory";
    case QGPU_ERR_NO_DEVICE: return "no matching OpenCL device";
    case QGPU_ERR_OPENCL: return "OpenCL error";
    case QGPU_ERR_BUILD: return "kernel build failed";
    case QGPU_ERR_UNSUPPORTED: return "unsupported input";
    case QGPU_ERR_MISMATCH: return "reference and distorted pictures differ";
    case QGPU_ERR_UNKNOWN_FEATURE: return "unknown feature, option or score";
    case QGPU_ERR_BAD_OPTION: return "invalid option value";
    case QGPU_ERR_STATE: return "call not allowed in this state";
    case QGPU_ERR_DEVICE_MEMORY: return "out of device memory";
    case QGPU_ERR_IO: return "input/output error";
    case QGPU_ERR_MODEL: return "invalid model";
    case QGPU_ERR_CUDA: return "CUDA error";
    }
    return "unknown error";
}

const char *qgpu_cl_status_name(cl_int status)
{
    switch (status) {
    case CL_SUCCESS: return "CL_SUCCESS";
    case CL_DEVICE_NOT_FOUND: return "CL_DEVICE_NOT_FOUND";
    case CL_DEVICE_NOT_AVAILABLE: return "CL_DEVICE_NOT_AVAILABLE";
    case CL_COMPILER_NOT_AVAILABLE: return "CL_COMPILER_NOT_AVAILABLE";
    case CL_MEM_OBJECT_ALLOCATION_FAILURE: return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
    case CL_OUT_OF_RESOURCES: return "CL_OUT_OF_RESOURCES";
    case CL_OUT_OF_HOST_MEMORY: return "CL_OUT_OF_HOST_MEMORY";
    case CL_PROFILING_INFO_NOT_AVAILABLE: return "CL_PROFILING_INFO_NOT_AVAILABLE";
    case CL_MEM_COPY_OVERLAP: return "CL_MEM_COPY_OVERLAP";
    case CL_BUILD_PROGRAM_FAILURE: return "CL_BUILD_PROGRAM_FAILURE";
    case CL_MAP_FAILURE: return "CL_MAP_FAILURE";
    case CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST:
        return "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST";
    case CL_INVALID_VALUE: return "CL_INVALID_VALUE";
    case CL_INVALID_DEVICE_TYPE: return "CL_INVALID_DEVICE_TYPE";
    case CL_INVALID_PLATFORM: return "CL_INVALID_PLATFORM";
    case CL_INVALID_DEVICE: return "CL_INVALID_DEVICE";
    case CL_INVALID_CONTEXT: return "CL_INVALID_CONTEXT";
    case CL_INVALID_COMMAND_QUEUE: return "CL_INVALID_COMMAND_QUEUE";
    case CL_INVALID_HOST_PTR: return "CL_INVALID_HOST_PTR";
    case CL_INVALID_MEM_OBJECT: return "CL_INVALID_MEM_OBJECT";
    case CL_INVALID_BINARY: return "CL_INVALID_BINARY";
    case CL_INVALID_BUILD_OPTIONS: return "CL_INVALID_BUILD_OPTIONS";
    case CL_INVALID_PROGRAM: return "CL_INVALID_PROGRAM";
    case CL_INVALID_PROGRAM_EXECUTABLE: return "CL_INVALID_PROGRAM_EXECUTABLE";
    case CL_INVALID_KERNEL_NAME: return "CL_INVALID_KERNEL_NAME";
    case CL_INVALID_KERNEL: return "CL_INVALID_KERNEL";
    case CL_INVALID_ARG_INDEX: return "CL_INVALID_ARG_INDEX";
    case CL_INVALID_ARG_VALUE: return "CL_INVALID_ARG_VALUE";
    case CL_INVALID_ARG_SIZE: return "CL_INVALID_ARG_SIZE";
    case CL_INVALID_KERNEL_ARGS: return "CL_INVALID_KERNEL_ARGS";
    case CL_INVALID_WORK_DIMENSION: return "CL_INVALID_WORK_DIMENSION";
    case CL_INVALID_WORK_GROUP_SIZE: return "CL_INVALID_WORK_GROUP_SIZE";
    case CL_INVALID_WORK_ITEM_SIZE: return "CL_INVALID_WORK_ITEM_SIZE";
    case CL_INVALID_GLOBAL_OFFSET: return "CL_INVALID_GLOBAL_OFFSET";
    case CL_INVALID_EVENT_WAIT_LIST: return "CL_INVALID_EVENT_WAIT_LIST";
    case CL_INVALID_EVENT: return "CL_INVALID_EVENT";
    case CL_INVALID_OPERATION: return "CL_INVALID_OPERATION";
    case CL_INVALID_BUFFER_SIZE: return "CL_INVALID_BUFFER_SIZE";
    case CL_INVALID_GLOBAL_WORK_SIZE: return "CL_INVALID_GLOBAL_WORK_SIZE";
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR (no OpenCL driver installed)";
    }
    return "unknown OpenCL status";
}
