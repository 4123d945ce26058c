/*
 * Decoding one input with several decoders at once (--decode-sessions,
 * --cpu-sessions).
 *
 * One hardware decoder session is often the limit of a scoring run: NVDEC
 * decodes ~1,000-1,500 1080p frames a second per session while the GPU
 * scores faster, and the CPU's cores sit idle. The file is cut at its key
 * frames into stretches of frames. The input's own decoder decodes on the
 * reading thread, stretch after stretch, without seeking while the next
 * stretch is nobody else's; sessions (decoders of their own on the same
 * file, each on a thread of its own: more like the own one, or CPU
 * decoders beside a hardware one, their frames put on the GPU) take
 * stretches ahead of the one being read and queue what they decode. A
 * session takes the first stretch nobody took after the one being read;
 * a CPU session beside a hardware decoder skips as many more as the own
 * decoder decodes while it decodes one (from the rates so far), so that
 * its frames are ready when they are needed; beside the CPU's own
 * decoder it takes the first it can decode before the own decoder comes
 * to it (stretch_choice.h). The frames are handed out in presentation order,
 * stretch after stretch, exactly the frames one decoder would give.
 *
 * The stretches come from a first pass over the file's packets (read, not
 * decoded): every packet's presentation time stamp and key flag. A
 * stretch is the frames whose time stamps lie between two key frames
 * (merged until each has at least SESSIONS_MIN_FRAMES); its decoder seeks
 * to its key frame, drops the frames before it (an open GOP's leading
 * pictures, which belong to the stretch before) and stops at the first
 * frame of the next stretch. Each stretch must start with its key frame
 * (good or damaged: a decoder's state is fresh there, with one decoder or
 * several) and give no frame more than its packets: when it does not, the
 * run stops with an error rather than score other frames than one decoder
 * would have.
 *
 * Not for: streams (read once), raw video and y4m (nothing to decode),
 * files whose packets lack time stamps or repeat one, files with fewer
 * than two stretches (it says why, and one decoder decodes).
 *
 * Memory: each session queues up to a stretch of decoded frames (at most
 * SESSIONS_MAX_AHEAD), in GPU memory with NVDEC's zero-copy path, within
 * $QGPU_DECODE_SESSIONS_MB (default 3072) per input; fewer sessions when
 * they would not fit.
 *
 * Threads: sessions_start and sessions_free on the thread that owns the
 * input's decoder; sessions_read (which decodes with it) and the counts on
 * the thread that reads it; sessions_abort from any thread.
 */
#ifndef QGPU_TOOL_SESSIONS_H
#define QGPU_TOOL_SESSIONS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "decode.h"

#define SESSIONS_MIN_FRAMES 16
/* A stretch and its end fit a session's queue up to x264's and x265's
 * default key frame interval (250): H.264 and HEVC encodes of films are
 * cut at ~250 frames, and a session that can hold only part of a stretch
 * stops decoding until the reader comes to it. */
#define SESSIONS_MAX_AHEAD 320
/* Frames the reading thread queues ahead of the scoring with sessions
 * (prefetch.c): a session's stretch goes on at once, and the input's own
 * decoder back to decoding. */
#define SESSIONS_READ_AHEAD 48
/* A decoder's frames out at once with sessions besides what it queues
 * itself: the reading thread's queue, the pairing, the pipeline. The own
 * decoder's zero-copy ring has this many slots (decoder_set_ring_slots),
 * a session's this many more than its queue. */
#define SESSIONS_FRAMES_OUT (SESSIONS_READ_AHEAD + 16)

typedef struct Sessions Sessions;

/* Plans the stretches of path's stream and starts n sessions like own and
 * n_cpu on the CPU (decoder_open_session; fewer when there are fewer
 * stretches or memory says so, the CPU ones kept first), each on a thread
 * of its own, with devices of batch slot hw_slot; own (started, its
 * output set) decodes the other stretches on the reading thread;
 * frame_bytes: the size of one delivered frame. 0 when started, 1 when it
 * does not apply (why in note), < 0 an error (message in err). */
int sessions_start(Sessions **out, Decoder *own, const char *path, int stream, int n,
                   int n_cpu, size_t frame_bytes, int hw_slot, char *note, size_t note_len,
                   char *err, size_t err_len);

/* The next frame in presentation order: 1 with *owner (release with
 * decoder_release), *pts (seconds) and *own (1: the own decoder's, which
 * counted it), 0 after the last one, < 0 an error (message in err). */
int sessions_read(Sessions *s, void **owner, double *pts, int *own, char *err,
                  size_t err_len);

/* QGPU_TIMING's lines: where each session's time went (read once the
 * sessions are done). */
void sessions_timing(const Sessions *s, const char *label, FILE *out);

/* Decoders at work: the sessions and the own one. */
int sessions_count(const Sessions *s);

/* The decoder (own or a session's) that delivered owner when it is in
 * GPU memory (decoder_owns_frame), else NULL. */
Decoder *sessions_frame_decoder(const Sessions *s, const void *owner);

/* Decoding errors skipped and frames decoded with errors, in the stretches
 * read so far (and the current one up to its last frame read). */
unsigned sessions_error_count(const Sessions *s);
unsigned sessions_corrupt_count(const Sessions *s);

/* Frames the packets announce after the `delivered` first ones (stops the
 * sessions: nothing can be read afterwards). */
unsigned sessions_count_rest(Sessions *s, unsigned delivered);

/* The zero-copy note of the first session that has one, and the seconds
 * they spent copying frames on the GPU (decode.h; the own decoder's are
 * its own). */
const char *sessions_zero_copy_note(const Sessions *s);
double sessions_zero_copy_seconds(const Sessions *s);

/* Makes sessions_read return an error soon and the sessions stop; safe
 * from any thread, NULL ignored. */
void sessions_abort(Sessions *s);

/* Stops and joins the sessions, releases what they queued, closes their
 * decoders (frames still out keep their memory). */
void sessions_free(Sessions **s);

#endif
