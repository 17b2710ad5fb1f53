#ifndef XG_CONVERSATION_H
#define XG_CONVERSATION_H
/*
 * Conversations: $state/conversations/ID.jsonl, append-only (design.md
 * section 4, man 5 xg-records).  The first line is a header
 *   {"type":"conversation","schema":"xg/1","id":ID,"created":T,"cwd":DIR}
 * and every later line an entry with a "type" and an "at" (RFC 3339):
 * message, model_change, variant_change, compaction, goal.
 *
 * Appends take the file's exclusive flock (xg_lock_timeout_ms) and end with
 * fsync; the header is written by the first append, under the same lock.  An
 * append the disk cuts short takes its bytes back (xg_append_fd).  A crash
 * mid-append leaves a torn last line: readers skip it and say so, and the
 * next append starts on a fresh line, so it never spoils an entry.
 *
 * Readers that want the newest entries read from the end of the file, so a
 * long conversation costs what its tail costs.
 *
 * A run holds its conversation from start to end (xg_conv_hold), a lock of
 * its own beside the file, so a second run waits for the first rather than
 * mix its turns in.
 */
#include <pthread.h>
#include "json.h"

/*
 * The validators of a conversation's names, each with the one phrase every
 * program says after the quoted name ("'x' is not a mode name (...)").
 *
 * A conversation id is 1 to 128 of [A-Za-z0-9._-], not starting with '.'
 * or '-'.  A mode (a turn's, a request's) is "normal", "plan" or any other
 * of 1 to 64 of [a-z0-9_-], starting with a letter.
 */
#define XG_CONV_ID_BAD "is not a conversation id (1 to 128 of [A-Za-z0-9._-], not starting with '.' or '-')"
#define XG_CONV_MODE_MAX 64
#define XG_CONV_MODE_BAD "is not a mode name (1 to 64 of [a-z0-9_-], starting with a letter)"
int xg_conv_id_valid(const char *id);
int xg_conv_mode_valid(const char *mode);
/* A new id: the UTC time and random hex, "20261130-105624-3f9a1c2b". */
char *xg_conv_new_id(void);
/* The file's path (which need not exist); the caller frees it. */
char *xg_conv_path(const char *id);
/* Whether the conversation's file exists. */
int xg_conv_exists(const char *id);

/*
 * Holds the conversation for a run: an exclusive flock on ID.run.lock
 * beside its file (created 0600; the appends' own lock is the file's, taken
 * briefly), so two runs never interleave their entries.  Waits at most
 * xg_lock_timeout_ms, telling waiting (when not NULL) once when the wait
 * passes a second (fs.h).  Returns the descriptor (close-on-exec; closing
 * it lets go), or -1 reported with errno set: EWOULDBLOCK when another
 * process held it throughout, named in the message.
 */
int xg_conv_hold(const char *id, xg_lock_waiting_fn waiting, void *ctx);

/*
 * Appends entry (consumed) to the conversation, adding "at" when it has
 * none, and creating the file with its header (cwd from getcwd) when it is
 * new.  0 on success, -1 on error (reported) with errno set: EWOULDBLOCK
 * when the lock timed out (xg_exit_for_errno gives exit 75).
 */
int xg_conv_append(const char *id, jv entry);

/*
 * As xg_conv_append, but first calls still(id, ctx) under the
 * conversation's lock, and appends only when it returns 1: a decision made
 * from an earlier read is checked again where no other writer can change
 * the file.  still may read the conversation (xg_conv_last_model and the
 * like open it anew and take no lock), but must not append to it.  Returns
 * 1 when still returned 0 (nothing is written), -1 when it returned -1 (it
 * reports its own error), else as xg_conv_append.  The file and the
 * conversations directory are created mode 0600 and 0700.
 */
typedef int (*xg_conv_check_fn)(const char *id, void *ctx);
int xg_conv_append_if(const char *id, jv entry, xg_conv_check_fn still, void *ctx);

/*
 * As xg_conv_append, but the fsync that ends the append runs on a thread
 * of its own, so that the caller (a run with its next request to send)
 * goes on meanwhile.  The entry is written, and readable, when it returns;
 * it is durable once xg_conv_sync_wait has returned 0, and the lock is held
 * until then.  One at a time: an append given a sync that is still running
 * waits for it first.  When the thread cannot be started the fsync is done
 * at once.  xg_conv_sync_wait returns 0, or -1 with errno when the fsync
 * (or the close) failed, after reporting it; 0 when there is none.
 */
struct xg_conv_sync {
	pthread_t thread;
	int running;
	int fd;
	int err;		/* errno of the fsync or close that failed */
	char *path;		/* for the message */
};
int xg_conv_append_async(const char *id, jv entry, struct xg_conv_sync *sync);
int xg_conv_sync_wait(struct xg_conv_sync *sync);

/*
 * Calls visit for every entry from the newest to the oldest (the header
 * last), until visit returns nonzero, which xg_conv_scan_back then returns.
 * The entry is borrowed: jv_copy it to keep it.  Lines that are not JSON
 * objects are skipped; *torn (when not NULL) is set when the last line was
 * torn.  Returns 0 when every entry was visited, -1 on error (reported;
 * errno ENOENT for a conversation that does not exist).
 */
typedef int (*xg_conv_visit_fn)(jv entry, void *ctx);
int xg_conv_scan_back(const char *id, xg_conv_visit_fn visit, void *ctx, int *torn);

/*
 * As xg_conv_scan_back, also saying what it skipped: whether the last line
 * was torn, how many whole lines were not JSON objects (a damaged entry in
 * the middle: a torn append that a later one followed, a disk's fault),
 * and the number of the first of them, counting the header as line 1 (0
 * when the scan stopped before reaching it).
 */
struct xg_conv_damage {
	int torn;
	long bad;
	long first_bad;
};
int xg_conv_scan_back_checked(const char *id, xg_conv_visit_fn visit, void *ctx,
			      struct xg_conv_damage *damage);

/* The newest entry whose "type" is type (owned), jv_null() when there is
 * none, jv_invalid() on error. */
jv xg_conv_last_of_type(const char *id, const char *type, int *torn);

/*
 * The model the conversation last ran on, read from the end: the "to" and
 * "effort" of its newest model_change, or the "model" and "effort" of its
 * newest assistant message, whichever comes later.  An object
 * {"id", "effort" (null when none), "entry": "model_change"|"message"}
 * (owned); jv_null() when no entry names a model or the conversation does
 * not exist; jv_invalid() on error (reported).
 */
jv xg_conv_last_model(const char *id, int *torn);

#endif
