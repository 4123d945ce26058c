/*
 * Closing decoders in the background: a batch job's slot starts its next
 * job while the finished job's decoders are closed (NVDEC's decoder and
 * surfaces destroyed, files closed) by a closing thread.
 */
#ifndef QGPU_TOOL_CLOSER_H
#define QGPU_TOOL_CLOSER_H

#include "decode.h"

/* Takes *dec (set to NULL) and closes it on a closing thread; closes it at
 * once when no thread can be started or too many wait already. */
void closer_close(Decoder **dec);

/* Waits until every decoder handed over is closed, and stops the threads. */
void closer_drain(void);

#endif
