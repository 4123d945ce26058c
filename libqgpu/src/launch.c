/*
 * Kernels and buffers for features and the pipeline: creation, release,
 * init-time uploads, and the one launch helper (qgpu_launch) that sets a
 * kernel's arguments from an array, checks each, and enqueues the kernel
 * on the compute queue of the slot's lane as part of the slot's frame.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

int qgpu_kernel_create(QgpuContext *ctx, cl_program program, const char *name,
                       cl_kernel *kernel)
{
    cl_int status;
    *kernel = clCreateKernel(program, name, &status);
    if (status != CL_SUCCESS) {
        char what[256];
        snprintf(what, sizeof(what), "clCreateKernel(%s)", name);
        return qgpu_cl_error(ctx, status, what);
    }
    return 0;
}

void qgpu_kernel_release(cl_kernel *kernel)
{
    if (*kernel)
        clReleaseKernel(*kernel);
    *kernel = NULL;
}

int qgpu_buffer_create(QgpuContext *ctx, size_t bytes, cl_mem *buffer)
{
    cl_int status;
    *buffer = clCreateBuffer(ctx->cl, CL_MEM_READ_WRITE, bytes ? bytes : 1, NULL, &status);
    if (status != CL_SUCCESS) {
        char what[128];
        snprintf(what, sizeof(what), "clCreateBuffer(%zu bytes)", bytes);
        return qgpu_cl_error(ctx, status, what);
    }
    return 0;
}

int qgpu_buffer_upload(QgpuContext *ctx, size_t bytes, const void *data, cl_mem *buffer,
                       const char *what)
{
    cl_int status;
    if (bytes == 0) /* nothing to copy; kernels still get a valid buffer */
        return qgpu_buffer_create(ctx, 0, buffer);
    *buffer = clCreateBuffer(ctx->cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes,
                             (void *)data, &status);
    if (status != CL_SUCCESS) {
        char message[256];
        snprintf(message, sizeof(message), "%s: clCreateBuffer(%zu bytes, copied)", what,
                 bytes);
        return qgpu_cl_error(ctx, status, message);
    }
    return 0;
}

int qgpu_buffer_write(QgpuContext *ctx, cl_mem buffer, size_t bytes, const void *data,
                      const char *what)
{
    cl_int status = clEnqueueWriteBuffer(ctx->compute_queue, buffer, CL_TRUE, 0, bytes, data,
                                         0, NULL, NULL);
    if (status != CL_SUCCESS) {
        char message[256];
        snprintf(message, sizeof(message), "%s: clEnqueueWriteBuffer(%zu bytes)", what, bytes);
        return qgpu_cl_error(ctx, status, message);
    }
    return 0;
}

void qgpu_buffer_release(cl_mem *buffer)
{
    if (*buffer)
        clReleaseMemObject(*buffer);
    *buffer = NULL;
}

/* Size and address of an argument's value for clSetKernelArg. */
static void arg_value(const QgpuArg *a, size_t *size, const void **value)
{
    switch (a->kind) {
    case QGPU_ARG_MEM: *size = sizeof(cl_mem); *value = &a->v.mem; return;
    case QGPU_ARG_INT: *size = sizeof(cl_int); *value = &a->v.i; return;
    case QGPU_ARG_UINT: *size = sizeof(cl_uint); *value = &a->v.u; return;
    case QGPU_ARG_LONG: *size = sizeof(cl_long); *value = &a->v.l; return;
    case QGPU_ARG_ULONG: *size = sizeof(cl_ulong); *value = &a->v.ul; return;
    case QGPU_ARG_FLOAT: *size = sizeof(cl_float); *value = &a->v.f; return;
    case QGPU_ARG_LOCAL: *size = a->v.raw.bytes; *value = NULL; return;
    case QGPU_ARG_VALUE: *size = a->v.raw.bytes; *value = a->v.raw.ptr; return;
    }
    *size = 0;
    *value = NULL;
}

static void kernel_name(cl_kernel kernel, char *name, size_t len)
{
    name[0] = '\0';
    if (clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, len, name, NULL) != CL_SUCCESS)
        snprintf(name, len, "?");
    name[len - 1] = '\0';
}

static int set_args(QgpuContext *ctx, cl_kernel kernel, const char *what, const QgpuArg *args,
                    int nb_args)
{
    char name[128], message[512];
    cl_uint expected = 0;
    cl_int status = clGetKernelInfo(kernel, CL_KERNEL_NUM_ARGS, sizeof(expected), &expected,
                                    NULL);
    if (status != CL_SUCCESS) {
        snprintf(message, sizeof(message), "%s: clGetKernelInfo", what);
        return qgpu_cl_error(ctx, status, message);
    }
    if (expected != (cl_uint)nb_args) {
        kernel_name(kernel, name, sizeof(name));
        return qgpu_error(ctx, QGPU_ERR_OPENCL,
                          "%s: kernel %s takes %u arguments but %d are given (internal error)",
                          what, name, expected, nb_args);
    }
    for (int i = 0; i < nb_args; i++) {
        size_t size;
        const void *value;
        arg_value(&args[i], &size, &value);
        status = clSetKernelArg(kernel, (cl_uint)i, size, value);
        if (status != CL_SUCCESS) {
            kernel_name(kernel, name, sizeof(name));
            snprintf(message, sizeof(message), "%s: argument %d '%s' of kernel %s", what, i,
                     args[i].name, name);
            return qgpu_cl_error(ctx, status, message);
        }
    }
    return 0;
}

cl_command_queue qgpu_slot_queue(QgpuContext *ctx, const QgpuSlot *slot)
{
    return slot->lane > 0 && slot->lane < ctx->nb_lanes ? ctx->lane_queue[slot->lane]
                                                        : ctx->compute_queue;
}

int qgpu_lanes(QgpuContext *ctx)
{
    return ctx->nb_lanes > 1 ? ctx->nb_lanes : 1;
}

int qgpu_launch_after(QgpuContext *ctx, QgpuSlot *slot, cl_kernel kernel, const char *what,
                      const QgpuArg *args, int nb_args, cl_uint dims, const size_t *global,
                      const size_t *local, cl_event *chain)
{
    cl_event event = NULL;
    cl_int status;
    int wait = chain && *chain;
    int err = set_args(ctx, kernel, what, args, nb_args);
    if (err)
        return err;
    status = clEnqueueNDRangeKernel(qgpu_slot_queue(ctx, slot), kernel, dims, NULL, global,
                                    local, wait ? 1 : 0, wait ? chain : NULL,
                                    ctx->profiling || chain ? &event : NULL);
    if (status != CL_SUCCESS)
        return qgpu_cl_error(ctx, status, what);
    ctx->launches++;
    if (chain) {
        if (*chain)
            clReleaseEvent(*chain);
        *chain = event;
        if (event && ctx->profiling)
            clRetainEvent(event); /* one reference each: the chain's, the profile's */
    }
    if (event && ctx->profiling)
        return qgpu_profile_add_event(ctx, slot, what, event);
    return 0;
}

int qgpu_launch(QgpuContext *ctx, QgpuSlot *slot, cl_kernel kernel, const char *what,
                const QgpuArg *args, int nb_args, cl_uint dims, const size_t *global,
                const size_t *local)
{
    return qgpu_launch_after(ctx, slot, kernel, what, args, nb_args, dims, global, local,
                             NULL);
}
