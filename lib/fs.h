#ifndef XG_FS_H
#define XG_FS_H
/*
 * Files.  Whole files are written atomically: a temporary file in the same
 * directory, fsync, rename over the target, fsync of the directory.  A reader
 * sees the old file or the new one, never a part.  Appends take an exclusive
 * flock, wait for it at most a timeout, and end with fsync; one that fails
 * part way (a full disk) cuts the file back to where it ended, so no torn
 * line is left for the next append to bury.
 *
 * Every function here reports its own error (xg_error) and returns -1 with
 * errno set; a lock not had in time is EWOULDBLOCK, which
 * xg_exit_for_errno turns into exit 75.
 */
#include <stddef.h>

struct xg_buf;

#define XG_LOCK_TIMEOUT_MS 10000

/* Writes all of data to fd, going on after EINTR and short writes. */
int xg_write_all(int fd, const void *data, size_t len);
/* Writes data to path atomically with the given mode (e.g. 0644). */
int xg_write_atomic(const char *path, const void *data, size_t len, mode_t mode);
/*
 * Writes data to a file the person named (xg run -o): "-" is standard
 * output; an existing path that is not a regular file (a device, a FIFO)
 * is written through, never replaced; a symlink is followed; a regular
 * file is replaced atomically, keeping its mode (a new one gets 0666 less
 * the umask).  0, or -1 after reporting.
 */
int xg_write_named(const char *path, const void *data, size_t len);
/* The same for a cache, whose reader checks what it reads: not synced, and
 * silent when it fails (-1 with errno), as losing it costs only time. */
int xg_write_cache(const char *path, const void *data, size_t len, mode_t mode);
/* Reads a whole file into b (appending); -1 on error or past b's ceiling,
 * with errno ENOENT left for a missing file. */
int xg_read_file(const char *path, struct xg_buf *b);
/* Reads fd to its end into b (appending); -1 with errno on a read error or
 * past b's ceiling (EFBIG). */
int xg_read_fd(int fd, struct xg_buf *b);
/*
 * The descriptor named by the environment variable name, which a program
 * was started with (a pipe end a pipeline hands a stage): made
 * close-on-exec, and the variable taken out of the environment, so that
 * nothing the program starts holds or sees either.  -1 when the variable
 * is not set, and with a warning when it names no open descriptor above
 * standard error.  Call it before any thread starts: it changes the
 * environment.
 */
int xg_env_fd(const char *name);
/* The whole decimal number in the environment variable name, from lo to
 * hi, in *n: 1; 0 when it is unset or empty; -1 when it is anything else
 * (the caller says what that means, and *n is untouched). */
int xg_env_number(const char *name, long lo, long hi, long *n);
/* Creates a directory and its parents. */
int xg_mkdir_p(const char *path, mode_t mode);

/*
 * Opens (creating it 0600 when create is set: every lock xg keeps is its
 * owner's alone) and locks path exclusively,
 * waiting at most timeout_ms (XG_LOCK_TIMEOUT in the environment overrides
 * the default).  Returns the descriptor, or -1 (errno EWOULDBLOCK on a
 * timeout).
 */
int xg_lock_file(const char *path, int flags, int timeout_ms);
/* As xg_lock_file, creating the file with mode. */
int xg_lock_file_mode(const char *path, int flags, mode_t mode, int timeout_ms);
/*
 * As xg_lock_file_mode; when the lock has not been had after
 * XG_LOCK_TELL_MS, waiting (when not NULL) is called once with the
 * holder's pid (0: unknown) and program name ("" when unknown) and the
 * timeout, and the wait goes on.
 */
#define XG_LOCK_TELL_MS 1000
typedef void (*xg_lock_waiting_fn)(void *ctx, long pid, const char *program, int timeout_ms);
int xg_lock_file_wait(const char *path, int flags, mode_t mode, int timeout_ms,
		      xg_lock_waiting_fn waiting, void *ctx);
/* The timeout from XG_LOCK_TIMEOUT (milliseconds), or the default. */
int xg_lock_timeout_ms(void);
/* The process holding a write lock on fd's file, from /proc/locks; 0 when
 * it cannot be told. */
long xg_lock_holder(int fd);
/*
 * Appends data to fd (opened O_APPEND, its file written by the caller
 * alone: under its lock, or as its one writer), and fsyncs it when sync is
 * set.  A write or fsync that fails takes back what it wrote: the file is
 * cut to the size it had, so a full disk leaves no torn line.  0, or -1
 * with errno of the failure, not reported (the caller names the file).
 */
int xg_append_fd(int fd, const void *data, size_t len, int sync);
/* Appends data to path under its lock as xg_append_fd does, syncing; 0 or
 * -1 as xg_lock_file. */
int xg_append_locked(const char *path, const void *data, size_t len, int timeout_ms);

#endif
