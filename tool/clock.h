/* The tool's one clock for measuring: seconds on CLOCK_MONOTONIC (run
 * times, QGPU_TIMING's splits, --hwdec auto's probes, batch reports). */
#ifndef QGPU_TOOL_CLOCK_H
#define QGPU_TOOL_CLOCK_H

double monotonic_seconds(void);

#endif
