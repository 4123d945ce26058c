/*
 * Outputs written as the run goes (--log-stream; a batch's summary
 * stream): every write error is kept and reported, never a silently
 * truncated file. The -o log itself is written at the end by the library
 * (qgpu_write_log_ex: temporary file + rename). Also the checks made on
 * every output path before anything is scored or opened for writing.
 */
#ifndef QGPU_TOOL_OUTPUT_H
#define QGPU_TOOL_OUTPUT_H

#include <stddef.h>

typedef struct OutputStream OutputStream;

/* Call first in main: a standard descriptor the caller closed (0, 1 or 2)
 * is opened on /dev/null so that no file the program opens takes its
 * number, and remembered as closed (output_stdout_closed). Returns a mask
 * of the closed ones (1 << fd). */
int output_guard_std_fds(void);

/* Was standard output closed when the program started? */
int output_stdout_closed(void);

/* Can a file be written at path ("-": standard output)? Checked without
 * creating it: not a directory, its directory exists and takes new files
 * (or the file exists and is writable), standard output is open. 0, or -1
 * with "OPTION PATH: cannot write: REASON" in err. */
int output_check(const char *option, const char *path, char *err, size_t err_len);

/* Opens path for writing ("-": standard output). 0, or -1 with a message. */
int output_open(OutputStream **s, const char *option, const char *path, char *err,
                size_t err_len);

/* Writes len bytes and flushes them. 0, or -1 once any write failed (the
 * first error is kept for output_close). */
int output_write(OutputStream *s, const char *text, size_t len);

/* Closes (standard output: flushes). 0, or -1 with "OPTION PATH: write
 * error: REASON" in err when any write failed. Safe on NULL. */
int output_close(OutputStream **s, char *err, size_t err_len);

/* A progress line's duration: "M:SS", or "H:MM:SS" from an hour on. */
void format_duration(char *buf, size_t len, double seconds);

#endif
