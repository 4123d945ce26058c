/* QgpuDevice: one OpenCL context and its compiled programs, shared by the
 * library contexts opened on it (qgpu_open_shared). The program list is
 * guarded by a mutex (program.c looks up and builds under it); the
 * reference count by an atomic. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "internal.h"

struct QgpuDevice {
    atomic_int refs;
    cl_context cl;
    cl_device_id device;
    pthread_mutex_t lock;
    QgpuProgram *programs;
    int nb_programs;
};

int qgpu_device_open(QgpuDevice **out, const char *selector)
{
    QgpuConfig cfg;
    QgpuContext *probe = NULL;
    QgpuDevice *dev;
    int err;

    if (!out)
        return QGPU_ERR_INVALID_ARG;
    *out = NULL;
    /* a context on the selector finds the device and creates the OpenCL
     * context (its messages in qgpu_open_error()); the device keeps both */
    qgpu_config_default(&cfg);
    cfg.device = selector;
    if ((err = qgpu_open(&probe, &cfg)))
        return err;
    if (!(dev = calloc(1, sizeof(*dev))) || pthread_mutex_init(&dev->lock, NULL)) {
        free(dev);
        qgpu_close(&probe);
        return QGPU_ERR_NO_MEMORY;
    }
    atomic_init(&dev->refs, 1);
    dev->cl = probe->cl;
    dev->device = probe->device;
    clRetainContext(dev->cl);
    qgpu_close(&probe);
    *out = dev;
    return 0;
}

void qgpu_shared_ref(QgpuDevice *dev)
{
    atomic_fetch_add(&dev->refs, 1);
}

void qgpu_shared_unref(QgpuDevice *dev)
{
    if (!dev || atomic_fetch_sub(&dev->refs, 1) != 1)
        return;
    for (int i = 0; i < dev->nb_programs; i++) {
        clReleaseProgram(dev->programs[i].program);
        free(dev->programs[i].key);
    }
    free(dev->programs);
    clReleaseContext(dev->cl);
    pthread_mutex_destroy(&dev->lock);
    free(dev);
}

void qgpu_device_close(QgpuDevice **dev)
{
    if (!dev)
        return;
    qgpu_shared_unref(*dev);
    *dev = NULL;
}

int qgpu_open_shared(QgpuContext **ctx, QgpuDevice *dev, const QgpuConfig *cfg)
{
    if (!dev) {
        if (ctx)
            *ctx = NULL;
        return QGPU_ERR_INVALID_ARG;
    }
    return qgpu_open_on(ctx, cfg, dev);
}

QgpuProgram **qgpu_shared_programs(QgpuDevice *dev, int **count)
{
    pthread_mutex_lock(&dev->lock);
    *count = &dev->nb_programs;
    return &dev->programs;
}

void qgpu_shared_unlock(QgpuDevice *dev)
{
    pthread_mutex_unlock(&dev->lock);
}

cl_context qgpu_shared_cl(const QgpuDevice *dev, cl_device_id *device)
{
    *device = dev->device;
    return dev->cl;
}
