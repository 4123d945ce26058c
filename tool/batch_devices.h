/*
 * The devices a batch spreads its jobs over (--device): all (every GPU,
 * else every device the OpenCL platforms list), a comma list of selectors
 * (0:0,0:1; the same device may be named twice), or one selector (default:
 * $QGPU_DEVICE, else auto). Each has its counters for the batch's report.
 */
#ifndef QGPU_TOOL_BATCH_DEVICES_H
#define QGPU_TOOL_BATCH_DEVICES_H

#include <stddef.h>

#include "qgpu/qgpu.h"

typedef struct Device {
    char spec[128];          /* passed to each job's --device */
    char name[256];          /* the device's name when known, else the spec */
    int running;             /* jobs running on it now */
    unsigned jobs;           /* jobs scored */
    unsigned long long frames;
    double seconds;          /* wall time of its jobs, summed */
    double device_ms;        /* kernel time its jobs reported (QGPU_PROFILE=1) */
    int timed;               /* device_ms is known */
    int pocl;                /* on PoCL (see batch.c, device_limit) */
    QgpuDevice *shared;      /* opened (devices_resolve's keep_open): the jobs' device */
} Device;

typedef struct Devices {
    Device *list;
    int count;
} Devices;

/* keep_open: each device stays open (shared) for the jobs of this process.
 * 0, or an exit status with a message in err (a usage error for a bad
 * list; the device status when "all" finds none, or when a selector opens
 * no device). */
int devices_resolve(Devices *d, const char *spec, int keep_open, char *err, size_t err_len);

void devices_free(Devices *d);

#endif
