/* Context life cycle: qgpu_open(), qgpu_open_cl(), qgpu_close(), and the
 * settings made before the first submit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "copy_pool.h"
#include "internal.h"
#include "qgpu/qgpu_opencl.h"

/* qgpu_open() has no context to hold its message: keep it per thread. */
static _Thread_local char open_error[QGPU_ERROR_MAX];

const char *qgpu_version(void)
{
    return QGPU_VERSION;
}

void qgpu_config_default(QgpuConfig *cfg)
{
    if (!cfg)
        return;
    memset(cfg, 0, sizeof(*cfg));
    cfg->pipeline_depth = 2;
    cfg->log_level = QGPU_LOG_WARNING;
}

const char *qgpu_open_error(void)
{
    return open_error;
}

static int create_queues(QgpuContext *ctx)
{
    cl_int status;
    if (!ctx->cl) {
        ctx->cl = clCreateContext(NULL, 1, &ctx->device, NULL, NULL, &status);
        if (status != CL_SUCCESS)
            return qgpu_cl_error(ctx, status, "clCreateContext");
    }
    /* Two in-order queues: uploads of frame n+1 overlap kernels of frame n. */
    ctx->upload_queue = clCreateCommandQueue(ctx->cl, ctx->device, 0, &status);
    if (status != CL_SUCCESS)
        return qgpu_cl_error(ctx, status, "clCreateCommandQueue(upload)");
    ctx->compute_queue = clCreateCommandQueue(
        ctx->cl, ctx->device, ctx->profiling ? CL_QUEUE_PROFILING_ENABLE : 0, &status);
    if (status != CL_SUCCESS)
        return qgpu_cl_error(ctx, status, "clCreateCommandQueue(compute)");
    return 0;
}

/* The caller's context and device (qgpu_open_cl): checked, then retained. */
static int adopt_external(QgpuContext *ctx, cl_context context, cl_device_id device)
{
    cl_device_id *devices;
    size_t size = 0;
    int found = 0, err;
    cl_int status;

    if (!context || !device)
        return qgpu_error(ctx, QGPU_ERR_INVALID_ARG, "qgpu_open_cl: the %s is NULL",
                          context ? "device" : "context");
    status = clGetContextInfo(context, CL_CONTEXT_DEVICES, 0, NULL, &size);
    if (status != CL_SUCCESS || size < sizeof(cl_device_id))
        return qgpu_error(ctx, QGPU_ERR_INVALID_ARG,
                          "qgpu_open_cl: not a usable OpenCL context (%s)",
                          qgpu_cl_status_name(status));
    devices = malloc(size);
    if (!devices)
        return qgpu_error(ctx, QGPU_ERR_NO_MEMORY, "out of memory");
    status = clGetContextInfo(context, CL_CONTEXT_DEVICES, size, devices, NULL);
    for (size_t i = 0; status == CL_SUCCESS && i < size / sizeof(cl_device_id); i++)
        found |= devices[i] == device;
    free(devices);
    if (!found)
        return qgpu_error(ctx, QGPU_ERR_INVALID_ARG,
                          "qgpu_open_cl: the device is not one of the context's devices");
    ctx->device = device;
    if ((err = qgpu_device_describe(ctx)))
        return err;
    if ((status = clRetainContext(context)) != CL_SUCCESS)
        return qgpu_cl_error(ctx, status, "clRetainContext");
    ctx->cl = context;
    if ((status = clRetainDevice(device)) != CL_SUCCESS)
        return qgpu_cl_error(ctx, status, "clRetainDevice");
    ctx->external = true;
    return 0;
}

/* qgpu_open() (external == 0: the device from the selector), qgpu_open_cl()
 * (the caller's context and device) and qgpu_open_shared() (a shared
 * device's context and device, and its programs). */
static int open_context(QgpuContext **out, const QgpuConfig *cfg, int external,
                        cl_context context, cl_device_id device, QgpuDevice *shared)
{
    const char *who = shared ? "qgpu_open_shared" : external ? "qgpu_open_cl" : "qgpu_open";
    QgpuContext *ctx;
    int err;

    open_error[0] = '\0';
    if (!out) {
        snprintf(open_error, sizeof(open_error), "%s: ctx pointer is NULL", who);
        return QGPU_ERR_INVALID_ARG;
    }
    *out = NULL;
    ctx = calloc(1, sizeof(*ctx));
    if (!ctx) {
        snprintf(open_error, sizeof(open_error), "%s: out of memory", who);
        return QGPU_ERR_NO_MEMORY;
    }
    if (cfg)
        ctx->cfg = *cfg;
    else
        qgpu_config_default(&ctx->cfg);
    if (ctx->cfg.pipeline_depth == 0)
        ctx->cfg.pipeline_depth = 2;
    if (ctx->cfg.pipeline_depth < 1 || ctx->cfg.pipeline_depth > QGPU_MAX_SLOTS) {
        snprintf(open_error, sizeof(open_error),
                 "%s: pipeline_depth %d out of range 1..%d", who, ctx->cfg.pipeline_depth,
                 QGPU_MAX_SLOTS);
        free(ctx);
        return QGPU_ERR_INVALID_ARG;
    }
    ctx->slot_count = ctx->cfg.pipeline_depth;
    ctx->cfg.device = NULL; /* not owned: don't keep the caller's pointer */

    {
        const char *profile = getenv("QGPU_PROFILE");
        const char *timing = getenv("QGPU_TIMING");
        ctx->profiling = profile && *profile && strcmp(profile, "0");
        ctx->timing = timing && *timing && strcmp(timing, "0");
    }
    if (shared) {
        ctx->shared = shared;
        qgpu_shared_ref(shared);
    }
    if (external) {
        err = adopt_external(ctx, context, device);
    } else {
        const char *selector = cfg && cfg->device ? cfg->device : getenv("QGPU_DEVICE");
        if (!selector || !*selector)
            selector = "auto";
        err = qgpu_device_select(ctx, selector);
    }
    if (!err)
        err = create_queues(ctx);
    if (err) {
        snprintf(open_error, sizeof(open_error), "%s", ctx->error);
        qgpu_close(&ctx);
        return err;
    }
    qgpu_log(ctx, QGPU_LOG_INFO, "using %s (%s)%s", ctx->device_name, ctx->platform_name,
             shared ? " (shared device)" : external ? " in the caller's OpenCL context" : "");
    *out = ctx;
    return 0;
}

int qgpu_open(QgpuContext **out, const QgpuConfig *cfg)
{
    return open_context(out, cfg, 0, NULL, NULL, NULL);
}

int qgpu_open_cl(QgpuContext **out, cl_context context, cl_device_id device,
                 const QgpuConfig *cfg)
{
    return open_context(out, cfg, 1, context, device, NULL);
}

int qgpu_open_on(QgpuContext **out, const QgpuConfig *cfg, QgpuDevice *dev)
{
    cl_device_id device;
    cl_context context = qgpu_shared_cl(dev, &device);
    return open_context(out, cfg, 1, context, device, dev);
}

void qgpu_close(QgpuContext **pctx)
{
    QgpuContext *ctx;
    if (!pctx || !*pctx)
        return;
    ctx = *pctx;
    for (int i = 1; i < ctx->nb_lanes; i++)
        if (ctx->lane_queue[i])
            clFinish(ctx->lane_queue[i]);
    if (ctx->compute_queue)
        clFinish(ctx->compute_queue);
    if (ctx->upload_queue)
        clFinish(ctx->upload_queue);
    for (int i = 0; i < ctx->nb_features; i++)
        qgpu_feature_free(ctx->features[i]);
    free(ctx->features);
    for (int i = 0; i < ctx->nb_hooks; i++)
        if (ctx->hooks[i].free)
            ctx->hooks[i].free(ctx->hooks[i].opaque);
    free(ctx->hooks);
    qgpu_pipeline_release(ctx);
    qgpu_imports_release(ctx);
    qgpu_copy_pool_destroy(&ctx->copy_pool);
    qgpu_programs_release(ctx);
    qgpu_scores_free(&ctx->scores);
    qgpu_profile_free(ctx);
    for (int i = 1; i < QGPU_MAX_LANES; i++)
        if (ctx->lane_queue[i])
            clReleaseCommandQueue(ctx->lane_queue[i]);
    if (ctx->compute_queue)
        clReleaseCommandQueue(ctx->compute_queue);
    if (ctx->upload_queue)
        clReleaseCommandQueue(ctx->upload_queue);
    if (ctx->cl)
        clReleaseContext(ctx->cl);
    if (ctx->external)
        clReleaseDevice(ctx->device);
    qgpu_shared_unref(ctx->shared);
    free(ctx);
    *pctx = NULL;
}

int qgpu_set_compute_bitdepth(QgpuContext *ctx, int bitdepth)
{
    if (!ctx)
        return QGPU_ERR_INVALID_ARG;
    if (ctx->started)
        return qgpu_error(ctx, QGPU_ERR_STATE,
                          "the compute bit depth must be set before the first submit");
    if (bitdepth != 0 && (bitdepth < 8 || bitdepth > 16))
        return qgpu_error(ctx, QGPU_ERR_BAD_OPTION, "compute bit depth %d: not 0 or 8..16",
                          bitdepth);
    if (ctx->compute_bitdepth && bitdepth && ctx->compute_bitdepth != bitdepth)
        return qgpu_error(ctx, QGPU_ERR_BAD_OPTION,
                          "compute bit depth already set to %d; one context scores at one depth",
                          ctx->compute_bitdepth);
    ctx->compute_bitdepth = bitdepth;
    return 0;
}

int qgpu_frame_hook_add(QgpuContext *ctx, const QgpuFrameHook *hook)
{
    QgpuFrameHook *hooks;
    if (!ctx || !hook || !hook->run) {
        if (hook && hook->free)
            hook->free(hook->opaque);
        return QGPU_ERR_INVALID_ARG;
    }
    if (ctx->started) {
        if (hook->free)
            hook->free(hook->opaque);
        return qgpu_error(ctx, QGPU_ERR_STATE, "models must be added before the first submit");
    }
    hooks = realloc(ctx->hooks, (ctx->nb_hooks + 1) * sizeof(*hooks));
    if (!hooks) {
        if (hook->free)
            hook->free(hook->opaque);
        return qgpu_error(ctx, QGPU_ERR_NO_MEMORY, "out of memory");
    }
    ctx->hooks = hooks;
    ctx->hooks[ctx->nb_hooks++] = *hook;
    return 0;
}
