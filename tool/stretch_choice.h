/*
 * Which stretch a CPU session takes beside the input's own CPU decoder
 * (sessions.h, the CPU path): one it can decode whole before the own
 * decoder, reading on, comes to it.
 *
 * On the CPU path both decoders decode at about the same rate, so a
 * session that takes the stretch right after the one being read is late
 * for it (the reader then waits, and the session goes on to take every
 * later stretch, the own decoder only passing frames on); one far enough
 * ahead is ready when the reader comes to it, and the own decoder decodes
 * everything before it without a seek. A pure function, tested on its
 * own (test_stretch_choice in tests/test_tool.c).
 */
#ifndef QGPU_TOOL_STRETCH_CHOICE_H
#define QGPU_TOOL_STRETCH_CHOICE_H

typedef struct StretchView {
    unsigned first;  /* its first frame's index in presentation order */
    unsigned frames; /* its frames */
    int free;        /* nobody took it yet */
} StretchView;

/* The first free stretch k > after of the n that a session decoding
 * `rate` frames/s can decode whole, with `margin` times its time to
 * spare, before the own decoder, at frame `pos` and decoding `own_rate`
 * frames/s, reaches its first frame:
 *     frames[k] / rate * margin <= (first[k] - pos) / own_rate.
 * A rate <= 0 is unknown: the two rates are then taken as equal. -1 when
 * none is. */
int stretch_choose_in_time(const StretchView *st, int n, int after, unsigned pos,
                           double own_rate, double rate, double margin);

#endif
