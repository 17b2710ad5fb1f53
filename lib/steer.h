#ifndef XG_STEER_H
#define XG_STEER_H
/*
 * Steering (man 1 xg, Steering a run): messages a person hands to the run
 * that holds a conversation ("xg say"), kept in the conversation's inbox
 * until the run takes them before its next request.  The inbox is
 * $state/steer/ID/ (0700), and holds
 *
 *   lock       its lock (0600), taken for each step below and let go at
 *              once (xg_lock_timeout_ms)
 *   open       the marker of the run that takes the messages: one line,
 *              {"run": RUN, "pid": PID}, flock-held by that run from the
 *              moment it opens the inbox to the moment it closes it; a
 *              marker whose lock can be had is a dead run's, so no run
 *   00000001   the messages, each {"text", "sent"} (RFC 3339), written
 *   00000002   whole (xg_write_atomic, 0600) and named by a number one
 *   ...        past the greatest there, so their names sort in the order
 *              they came
 *
 * Every step runs under the lock, so a message is either written while a
 * run holds the inbox open, and then taken by it, or refused: a run closes
 * its inbox only under the lock, once it has found no message there.  It
 * is not a queue for later runs: a run that opens the inbox drops what a
 * run that died (killed, and never closing it) had not taken.
 *
 * Every function reports its own error (xg_error) and returns -1 with
 * errno set, or an invalid jv; a lock not had in time is EWOULDBLOCK.
 */
#include "json.h"

/* The longest text a message may hold, and the most messages an inbox
 * keeps before its run takes them. */
#define XG_STEER_TEXT_MAX ((size_t)1 << 20)
#define XG_STEER_PENDING_MAX 100

/* A run's hold on its conversation's inbox. */
struct xg_steer {
	char *dir;	/* $state/steer/ID, NULL while closed */
	int fd;		/* the marker, held; -1 while closed */
};

#define XG_STEER_INIT { NULL, -1 }

/* Opens the inbox of conversation conv for run: what is in it is dropped,
 * and the marker written and held.  0, or -1. */
int xg_steer_open(struct xg_steer *s, const char *conv, const char *run);

/*
 * Takes the messages that came since the last take, oldest first: an
 * array of {"text", "sent"} (owned), empty when none came; invalid after
 * an error (then the inbox is as it was).  how:
 *   XG_STEER_TAKE           the inbox stays open
 *   XG_STEER_TAKE_OR_CLOSE  it closes when no message came, so none
 *                           can come after the run's last look
 *   XG_STEER_CLOSE          it closes whatever came
 * A closed inbox gives an empty array.
 */
enum { XG_STEER_TAKE, XG_STEER_TAKE_OR_CLOSE, XG_STEER_CLOSE };
jv xg_steer_take(struct xg_steer *s, int how);

/* Whether s is open. */
int xg_steer_is_open(const struct xg_steer *s);
/* Lets go of s when it is still open (its lock could not be had to close
 * it): the marker left is then a dead run's, so no message is taken. */
void xg_steer_release(struct xg_steer *s);

/*
 * Hands text to the run that holds conversation conv's inbox open, when
 * run is NULL or names that run; *holder (when not NULL) is then its id,
 * the caller's to free.  0; or -1 with errno ESRCH, unreported, when no
 * run holds it (or not that run: *holder, when not NULL, is then the one
 * that does, or NULL), EMSGSIZE when text is longer than
 * XG_STEER_TEXT_MAX, EAGAIN when XG_STEER_PENDING_MAX messages wait
 * (both reported), or another errno (reported).
 */
int xg_steer_send(const char *conv, const char *run, const char *text, char **holder);

#endif
