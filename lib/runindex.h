#ifndef XG_RUNINDEX_H
#define XG_RUNINDEX_H
/*
 * The runs index: $state/runs.ndjson, one line for every run that ended
 * (design.md section 4, man 5 xg-records, RUNS INDEX).  xg-run appends its
 * line when it ends; xg-log reads the file from its end and adds the line
 * of a run that was killed before it could (found by its live marker).
 *
 * Writers take the exclusive flock of $state/runs.lock (xg_lock_timeout_ms),
 * a file never replaced, so xg-log prune can rewrite the index under it;
 * an append writes one whole line and fsyncs, or, failing part way (a full
 * disk), takes back what it wrote (xg_append_fd); a torn last line left by
 * a crash is ended first, so it never spoils the next line.  Every line is
 * redacted (redact.h).
 *
 * A live marker, $state/runs.live/ID, is a file a run holds an exclusive
 * flock on from its start to its end, and that its index append removes
 * under the index's lock.  A marker whose lock can be had belongs to a run
 * that died without its line: xg-log writes the line for it.  The marker
 * is made with room for that line set aside on the disk, and keeps one
 * line there, replaced whole:
 *
 *   - before the run's first request goes out, its line as it stands then
 *     ("ended" null): its model, workspace, conversation and request, which
 *     a run killed before it wrote any run.json leaves nowhere else;
 *   - when the run's own append fails (a full disk), its line as it ended:
 *     xg-log appends that line rather than guess one from a run.json the
 *     full disk may have kept from the run's start.
 */
#include "json.h"

/* The room a live marker sets aside for its run's line, and the most of
 * it xg-log reads back. */
#define XG_RUNINDEX_LINE_ROOM 16384

/* The index's path (the caller frees it). */
char *xg_runindex_path(void);
/* A run's live marker's path (the caller frees it). */
char *xg_runindex_live_path(const char *id);

/*
 * Creates and locks the run's live marker; returns its descriptor
 * (close-on-exec, so no tool's process keeps the run alive), or -1
 * reported with errno set.
 */
int xg_runindex_live_open(const char *id);
/* Writes line (consumed) into the held live marker fd, in the room it was
 * made with, in place of the line it kept, and syncs it when sync is set;
 * 0, or -1 reported with errno set (the marker then keeps no line). */
int xg_runindex_live_keep(int fd, jv line, int sync);
/* The line a live marker (fd, open for reading) keeps: a "run" record
 * on one whole line (owned), or invalid when it keeps none. */
jv xg_runindex_live_read(int fd);

/*
 * The index line of a run from what its run.json says (summary, only
 * looked at): {"type":"run","run","conversation","parent","workspace",
 * "account","started","ended","ms","status","stop","reason","exit","mode",
 * "model","effort","variant" ("NAME@VERSION"),"snapshot","usage","cost",
 * "tool_calls","requests","slices","goal"?,"request"} (owned).
 */
jv xg_runindex_line_peek(jv summary);

/* Takes the index's lock (runs.lock, created 0600 with its directory);
 * the descriptor (closing it lets go), or -1 reported with errno set
 * (EWOULDBLOCK when the lock timed out). */
int xg_runindex_lock(void);
/* Appends line (consumed) to the index, whose lock the caller holds: a
 * torn last line is ended first; fsync.  0, or -1 reported with errno
 * set. */
int xg_runindex_write_locked(jv line);

/*
 * Appends line (consumed) under the index's lock and then, still under it,
 * removes the live marker at live (when not NULL).  0, or -1 reported
 * with errno set.
 */
int xg_runindex_append(jv line, const char *live);

#endif
