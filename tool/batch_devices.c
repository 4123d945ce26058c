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

/* The listed name of selector "P:D" (else the selector itself). */
static void on_name(void *opaque, int platform, int device, const char *type, const char *name,
                    const char *platform_name)
{
    Device *dev = opaque;
    char spec[32];
    (void)type;
    (void)platform_name;
    snprintf(spec, sizeof(spec), "%d:%d", platform, device);
    if (!strcmp(spec, dev->spec))
        snprintf(dev->name, sizeof(dev->name), "%s", name);
}

int devices_resolve(Devices *d, const char *spec, char *err, size_t len)
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
        qgpu_list_devices(on_name, dev);
        if (!p[n])
            break;
        p += n + 1;
    }
    return 0;
}

void devices_free(Devices *d)
{
    free(d->list);
    memset(d, 0, sizeof(*d));
}
