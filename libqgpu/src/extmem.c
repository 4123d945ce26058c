/*
 * Pictures in OpenCL buffers (qgpu_opencl.h: qgpu_submit_cl_buffer), and
 * memory of another API imported as such a buffer
 * (qgpu_import_memory_fd: cl_khr_external_memory_opaque_fd).
 *
 * A picture in a buffer is a plane per offset, rows `pitch` bytes apart,
 * as CUDA and hardware decoders lay them out: NV12/P010 (luma, then
 * interleaved Cb Cr pairs) or planar. Each plane the features read is
 * copied on the upload queue with clEnqueueCopyBufferRect into the slot's
 * buffers, packed as qgpu_submit() uploads it (NV12's pairs into
 * slot->interleaved, split into planes by semiplanar.c's kernel); the
 * rest is the host path's (pipeline.h).
 *
 * Imported buffers are acquired before the copies and released after them
 * (clEnqueueAcquire/ReleaseExternalMemObjectsKHR, which the extension
 * requires around every use). The entry points are OpenCL 3.0 / extension
 * functions: looked up at run time (clGetExtensionFunctionAddressForPlatform,
 * else the ICD loader's export), so the library still builds and loads
 * against OpenCL 1.2 headers and loaders. Constants: the Khronos OpenCL
 * Extension Specification, cl_khr_external_memory (CL_DEVICE_HANDLE_LIST_KHR
 * 0x2051, CL_DEVICE_HANDLE_LIST_END_KHR 0) and
 * cl_khr_external_memory_opaque_fd (CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR
 * 0x2060), as Debian 12's cl_ext.h also has them.
 *
 * The descriptor given to the import stays the caller's: the driver gets a
 * duplicate. NVIDIA's driver takes over the descriptor it imports (as
 * Vulkan and CUDA imports do) and closes it; handing it the caller's own
 * made the caller's later close() close whatever file had been given that
 * number since (another job's video: "Bad file descriptor" in qgpu batch,
 * NVIDIA H200, driver 580.159.04).
 */
#include <fcntl.h>
#include <unistd.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "pipeline.h"
#include "qgpu/qgpu_opencl.h"

#define EXT_HANDLE_OPAQUE_FD 0x2060 /* CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR */
#define EXT_DEVICE_HANDLE_LIST 0x2051 /* CL_DEVICE_HANDLE_LIST_KHR */
#define EXT_DEVICE_HANDLE_LIST_END 0 /* CL_DEVICE_HANDLE_LIST_END_KHR */

typedef cl_mem(CL_API_CALL *CreateBufferWithPropertiesFn)(cl_context, const cl_ulong *,
                                                           cl_mem_flags, size_t, void *,
                                                           cl_int *);
typedef cl_int(CL_API_CALL *ExternalMemObjectsFn)(cl_command_queue, cl_uint, const cl_mem *,
                                                   cl_uint, const cl_event *, cl_event *);

/* An entry point: the platform's, else the loader's export. */
static void *lookup(cl_platform_id platform, const char *name)
{
    void *fn = clGetExtensionFunctionAddressForPlatform(platform, name);
    return fn ? fn : dlsym(RTLD_DEFAULT, name);
}

static int is_imported(const QgpuContext *ctx, cl_mem buffer)
{
    for (int i = 0; i < ctx->nb_imports; i++)
        if (ctx->imports[i] == buffer)
            return 1;
    return 0;
}

int qgpu_import_memory_fd(QgpuContext *ctx, int fd, size_t size, cl_mem *buffer)
{
    CreateBufferWithPropertiesFn create;
    cl_ulong props[] = {EXT_HANDLE_OPAQUE_FD, (cl_ulong)(unsigned)fd, EXT_DEVICE_HANDLE_LIST,
                        (cl_ulong)(uintptr_t)NULL, EXT_DEVICE_HANDLE_LIST_END, 0};
    cl_mem *grown;
    cl_int status;
    cl_mem mem;

    if (!ctx || !buffer || fd < 0 || !size)
        return QGPU_ERR_INVALID_ARG;
    *buffer = NULL;
    if (!qgpu_device_has_extension(ctx, "cl_khr_external_memory_opaque_fd"))
        return qgpu_error(ctx, QGPU_ERR_UNSUPPORTED,
                          "%s has no cl_khr_external_memory_opaque_fd: memory of other APIs "
                          "cannot be imported",
                          ctx->device_name);
    create = (CreateBufferWithPropertiesFn)lookup(ctx->platform, "clCreateBufferWithProperties");
    if (!create || !lookup(ctx->platform, "clEnqueueAcquireExternalMemObjectsKHR") ||
        !lookup(ctx->platform, "clEnqueueReleaseExternalMemObjectsKHR"))
        return qgpu_error(ctx, QGPU_ERR_UNSUPPORTED,
                          "the OpenCL loader or platform lacks clCreateBufferWithProperties or "
                          "clEnqueueAcquire/ReleaseExternalMemObjectsKHR");
    props[3] = (cl_ulong)(uintptr_t)ctx->device;
    grown = realloc(ctx->imports, (size_t)(ctx->nb_imports + 1) * sizeof(*grown));
    if (!grown)
        return qgpu_error(ctx, QGPU_ERR_NO_MEMORY, "out of memory");
    ctx->imports = grown;
    fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (fd < 0)
        return qgpu_error(ctx, QGPU_ERR_NO_MEMORY, "no file descriptor left to import memory");
    props[1] = (cl_ulong)(unsigned)fd;
    mem = create(ctx->cl, props, CL_MEM_READ_ONLY, size, NULL, &status);
    if (!mem || status != CL_SUCCESS) {
        close(fd); /* not imported: still ours */
        return qgpu_cl_error(ctx, status ? status : CL_INVALID_VALUE,
                             "clCreateBufferWithProperties(opaque fd import)");
    }
    ctx->imports[ctx->nb_imports++] = mem;
    *buffer = mem;
    return 0;
}

void qgpu_imports_release(QgpuContext *ctx)
{
    for (int i = 0; i < ctx->nb_imports; i++)
        clReleaseMemObject(ctx->imports[i]);
    free(ctx->imports);
    ctx->imports = NULL;
    ctx->nb_imports = 0;
}

/* Bytes of a row of plane p of a picture in a buffer. */
static size_t row_bytes(const QgpuVideoFormat *fmt, int layout, int p)
{
    size_t w = (size_t)fmt->plane_w[p] * (size_t)fmt->bytes_per_sample;
    return layout == QGPU_LAYOUT_NV12 && p == 1 ? 2 * w : w;
}

static int check_buffer_picture(QgpuContext *ctx, const QgpuCLBuffer *pic,
                                const QgpuPicture *desc, const char *which)
{
    QgpuVideoFormat fmt;
    cl_context owner = NULL;
    size_t size = 0;
    cl_int status;
    int planes;

    if (!pic->buffer)
        return qgpu_error(ctx, QGPU_ERR_INVALID_ARG, "%s picture: buffer is NULL", which);
    status = clGetMemObjectInfo(pic->buffer, CL_MEM_CONTEXT, sizeof(owner), &owner, NULL);
    if (status == CL_SUCCESS)
        status = clGetMemObjectInfo(pic->buffer, CL_MEM_SIZE, sizeof(size), &size, NULL);
    if (status != CL_SUCCESS)
        return qgpu_error(ctx, QGPU_ERR_INVALID_ARG,
                          "%s picture: buffer is not an OpenCL memory object (%s)", which,
                          qgpu_cl_status_name(status));
    if (owner != ctx->cl)
        return qgpu_error(ctx, QGPU_ERR_INVALID_ARG,
                          "%s picture: buffer belongs to another OpenCL context than the "
                          "library's",
                          which);
    qgpu_format_from_picture(&fmt, desc);
    planes = pic->layout == QGPU_LAYOUT_NV12 ? 2 : fmt.nb_planes;
    for (int p = 0; p < planes; p++) {
        size_t row = row_bytes(&fmt, pic->layout, p), h = (size_t)fmt.plane_h[p];
        if (pic->pitch[p] < row || pic->offset[p] > size ||
            (size - pic->offset[p]) / pic->pitch[p] < h - 1 ||
            size - pic->offset[p] - (h - 1) * pic->pitch[p] < row)
            return qgpu_error(ctx, QGPU_ERR_INVALID_ARG,
                              "%s picture: plane %d (offset %zu, pitch %zu, %zu rows of %zu "
                              "bytes) does not fit in the buffer (%zu bytes) or its pitch is "
                              "shorter than a row",
                              which, p, pic->offset[p], pic->pitch[p], h, row, size);
    }
    return 0;
}

/* Plane p of a picture -> dst at dst_offset, rows packed. */
static cl_int copy_plane(QgpuContext *ctx, const QgpuCLBuffer *pic, int p, size_t row,
                         size_t rows, cl_mem dst, size_t dst_offset)
{
    size_t src_origin[3] = {pic->offset[p], 0, 0}, dst_origin[3] = {dst_offset, 0, 0};
    size_t region[3] = {row, rows, 1};
    return clEnqueueCopyBufferRect(ctx->upload_queue, pic->buffer, dst, src_origin, dst_origin,
                                   region, pic->pitch[p], 0, row, 0, 0, NULL, NULL);
}

/* The planes the device needs of picture `which`, into the slot. */
static int copy_buffer_picture(QgpuContext *ctx, const QgpuCLBuffer *pic, QgpuSlot *slot,
                               int which)
{
    const QgpuVideoFormat *fmt = &ctx->in_fmt;
    size_t offset;
    cl_mem dst = qgpu_submit_target(ctx, slot, which, &offset);
    cl_int status = CL_SUCCESS;

    if (ctx->in_layout == QGPU_LAYOUT_NV12) {
        status = copy_plane(ctx, pic, 0, row_bytes(fmt, QGPU_LAYOUT_NV12, 0),
                            (size_t)fmt->plane_h[0], dst, offset);
        if (status == CL_SUCCESS && ctx->split_chroma)
            status = copy_plane(ctx, pic, 1, row_bytes(fmt, QGPU_LAYOUT_NV12, 1),
                                (size_t)fmt->plane_h[1], slot->interleaved,
                                (size_t)which * qgpu_interleaved_bytes(ctx));
    } else {
        for (int p = 0; p < fmt->nb_planes && fmt->plane_offset[p] < ctx->upload_bytes &&
                        status == CL_SUCCESS;
             p++)
            status = copy_plane(ctx, pic, p, row_bytes(fmt, ctx->in_layout, p),
                                (size_t)fmt->plane_h[p], dst, offset + fmt->plane_offset[p]);
    }
    if (status != CL_SUCCESS)
        return qgpu_cl_error(ctx, status, "clEnqueueCopyBufferRect(frame input)");
    return 0;
}

/* Acquires (release 0) or releases (1) the imported buffers among the two. */
static int external_objects(QgpuContext *ctx, const QgpuCLBuffer *ref, const QgpuCLBuffer *dist,
                            int release)
{
    const char *name = release ? "clEnqueueReleaseExternalMemObjectsKHR"
                               : "clEnqueueAcquireExternalMemObjectsKHR";
    ExternalMemObjectsFn fn;
    cl_mem list[2];
    cl_uint n = 0;
    cl_int status;

    if (is_imported(ctx, ref->buffer))
        list[n++] = ref->buffer;
    if (dist->buffer != ref->buffer && is_imported(ctx, dist->buffer))
        list[n++] = dist->buffer;
    if (!n)
        return 0;
    fn = (ExternalMemObjectsFn)lookup(ctx->platform, name);
    if (!fn)
        return qgpu_error(ctx, QGPU_ERR_UNSUPPORTED, "the platform has no %s", name);
    status = fn(ctx->upload_queue, n, list, 0, NULL, NULL);
    return status == CL_SUCCESS ? 0 : qgpu_cl_error(ctx, status, name);
}

static void describe(QgpuPicture *desc, const QgpuCLBuffer *pic)
{
    memset(desc, 0, sizeof(*desc));
    desc->width = pic->width;
    desc->height = pic->height;
    desc->layout = pic->layout;
    desc->bitdepth = pic->bitdepth;
}

int qgpu_submit_cl_buffer(QgpuContext *ctx, const QgpuCLBuffer *ref, const QgpuCLBuffer *dist)
{
    QgpuPicture ref_desc, dist_desc;
    QgpuSlot *slot;
    int shift[2], err;
    double t;

    if (!ctx)
        return QGPU_ERR_INVALID_ARG;
    if (!ref || !dist)
        return qgpu_error(ctx, QGPU_ERR_INVALID_ARG, "%s picture is NULL",
                          ref ? "distorted" : "reference");
    describe(&ref_desc, ref);
    describe(&dist_desc, dist);
    if ((err = qgpu_submit_check(ctx, &ref_desc, &dist_desc, 0)) ||
        (err = check_buffer_picture(ctx, ref, &ref_desc, "reference")) ||
        (err = check_buffer_picture(ctx, dist, &dist_desc, "distorted")) ||
        (err = qgpu_submit_slot(ctx, &ref_desc, &slot)))
        return err;
    if (!ctx->frames_from_device)
        qgpu_log(ctx, QGPU_LOG_DEBUG, "input from OpenCL buffers: copied on the device");

    t = qgpu_timing_now(ctx);
    err = external_objects(ctx, ref, dist, 0);
    if (!err)
        err = copy_buffer_picture(ctx, ref, slot, 0);
    if (!err)
        err = copy_buffer_picture(ctx, dist, slot, 1);
    if (!err)
        err = external_objects(ctx, ref, dist, 1);
    qgpu_timing_add(ctx, QGPU_TIMING_COPIES, t);
    shift[0] = shift[1] = ctx->in_shift;
    return qgpu_submit_device_finish(ctx, slot, shift, err,
                                     "copying the frame's buffers on the device");
}
