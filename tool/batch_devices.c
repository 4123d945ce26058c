/* The devices of a batch: see batch_devices.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch_devices.h"
#include "options.h"
#include "qgpu/qgpu.h"

typedef struct Listing {
    Devices *d;
    int gpus_only;
} Listing;

static Device *add_device(Devices *d, const char *spec, const char *name)
{
    Device *grown = realloc(d->list, (d->count + 1) * sizeof(*grown));
    if (!grown)
        return NULL;
    d->list = grown;
    memset(&grown[d->count], 0, sizeof(*grown));
    snprintf(grown[d->count].spec, sizeof(grown->spec), "%s", spec);
    snprintf(grown[d->count].name, sizeof(grown->name), "%s", name);
    return &grown[d->count++];
}

static void on_device(void *opaque, int platform, int device, const char *type,
                      const char *name, const char *platform_name)
{
    Listing *l = opaque;
    char spec[32];
    (void)platform_name;
    if (l->gpus_only && strcmp(type, "gpu"))
        return;
    snprintf(spec, sizeof(spec), "%d:%d", platform, device);
    add_device(l->d, spec, name);
}

/* A device of the list, opened once, so that a selector that matches no
 * device stops the batch before any job (rather than failing every job),
 * and the device's name is known; kept open (keep) for the jobs. */
static int open_device(Device *dev, int keep, char *err, size_t len)
{
    QgpuContext *ctx = NULL;
    if (qgpu_device_open(&dev->shared, dev->spec) ||
        qgpu_open_shared(&ctx, dev->shared, NULL)) {
        snprintf(err, len, "--device %s: %s", dev->spec, qgpu_open_error());
        qgpu_device_close(&dev->shared);
        return -1;
    }
    snprintf(dev->name, sizeof(dev->name), "%s", qgpu_device_name(ctx));
    dev->pocl = strstr(qgpu_platform_name(ctx), "Portable Computing Language") != NULL;
    qgpu_close(&ctx);
    if (!keep)
        qgpu_device_close(&dev->shared);
    return 0;
}

int devices_resolve(Devices *d, const char *spec, int keep_open, char *err, size_t len)
{
    memset(d, 0, sizeof(*d));
    if (!spec) {
        const char *env = getenv("QGPU_DEVICE");
        spec = env && *env ? env : "auto";
    }
    if (!strcmp(spec, "all")) {
        Listing l = {d, 1};
        if (qgpu_list_devices(on_device, &l) < 0 || (!d->count && (l.gpus_only = 0,
                                                     qgpu_list_devices(on_device, &l) < 0))) {
            snprintf(err, len, "--device all: cannot list the OpenCL devices");
            return EXIT_DEVICE;
        }
        if (!d->count) {
            snprintf(err, len, "--device all: no OpenCL device (qgpu --list-devices)");
            return EXIT_DEVICE;
        }
        for (int i = 0; keep_open && i < d->count; i++)
            if (open_device(&d->list[i], 1, err, len)) {
                devices_free(d);
                return EXIT_DEVICE;
            }
        return 0;
    }
    for (const char *p = spec;;) {
        size_t n = strcspn(p, ",");
        char one[128];
        Device *dev;
        if (!n || n >= sizeof(one)) {
            snprintf(err, len, "--device %s: %s", spec, n ? "a selector too long"
                     : "an empty selector in the list (e.g. 0:0,0:1)");
            devices_free(d);
            return EXIT_USAGE;
        }
        snprintf(one, sizeof(one), "%.*s", (int)n, p);
        if (!(dev = add_device(d, one, one))) {
            snprintf(err, len, "out of memory");
            devices_free(d);
            return EXIT_INTERNAL;
        }
        if (open_device(dev, keep_open, err, len)) {
            devices_free(d);
            return EXIT_DEVICE;
        }
        if (!p[n])
            break;
        p += n + 1;
    }
    return 0;
}

void devices_free(Devices *d)
{
    for (int i = 0; i < d->count; i++)
        qgpu_device_close(&d->list[i].shared);
    free(d->list);
    memset(d, 0, sizeof(*d));
}
