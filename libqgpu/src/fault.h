/* Test hook: a device that goes away in the middle of a run. Private. */
#ifndef QGPU_FAULT_H
#define QGPU_FAULT_H

#include "ocl.h"

/* Passes status through, or returns CL_DEVICE_NOT_AVAILABLE once the hook
 * is armed and this is the Nth (or a later) frame wait of the process.
 * Called by the pipeline on the result of each frame's readback wait. */
cl_int qgpu_fault_frame_wait(cl_int status);

/* Arms the hook for the nth frame wait from now (n >= 1), or disarms it
 * (n <= 0). Overrides QGPU_TEST_FAIL_AFTER. For tests. */
void qgpu_fault_fail_after(long n);

#endif
