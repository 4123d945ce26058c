/* Decoding ahead on a thread of its own, one per input, so that the
 * reference and the distorted input decode at the same time (two hardware
 * decoder sessions busy, or two CPU decoders) while the reader pairs what
 * they delivered. */
#ifndef QGPU_TOOL_PREFETCH_H
#define QGPU_TOOL_PREFETCH_H

#include <stddef.h>

#include "decode.h"

typedef struct Prefetch Prefetch;

/* Starts the thread on a started decoder; it owns the decoder's reads
 * until prefetch_free. 0, or -1 with a message in err. */
int prefetch_start(Prefetch **p, Decoder *dec, char *err, size_t err_len);

/* The next frame, as decoder_read_owned gives it: 1 with *owner (release
 * with decoder_release) and *pts (decoder_last_pts at its time), 0 at the
 * end, < 0 on an error (message in err) or once cancelled. */
int prefetch_read(Prefetch *p, void **owner, double *pts, char *err, size_t err_len);

/* decoder_error_count as it was when the frame last returned by
 * prefetch_read was decoded. */
unsigned prefetch_lost(const Prefetch *p);

/* Frames left after the last one returned: those decoded ahead plus
 * decoder_count_rest (stops the thread first; nothing can be read after). */
unsigned prefetch_count_rest(Prefetch *p);

/* Makes a waiting prefetch_read return and the thread stop soon (it may
 * be blocked in a read: decoder_abort the decoder too). Safe from any
 * thread. */
void prefetch_cancel(Prefetch *p);

/* Stops and joins the thread, releases the frames decoded ahead. */
void prefetch_free(Prefetch **p);

#endif
