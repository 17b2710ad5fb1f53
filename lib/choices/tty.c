/*
 * A key typed at the terminal (xg-choices auth, standard input a
 * terminal): asked for on /dev/tty (else on standard input and error) with
 * the echo off, so the key never shows, and the terminal put back as it
 * was on every way out: the line read, end of input, an error, a signal.
 *
 * A signal that would end the program (interrupt, quit, hang-up,
 * termination) is caught only long enough to put the echo back, and is
 * then raised again with its old handling; a stop from the terminal (^Z)
 * stops with the echo back on, and the question is asked again once the
 * program goes on.  Signals the program ignored stay ignored.
 */
#include "xg.h"
#include "choices/choices.h"
#include <termios.h>

#define KEY_MAX 16384

static volatile sig_atomic_t caught;

static void on_signal(int sig)
{
	caught = sig;
}

static const int watched[] = { SIGINT, SIGQUIT, SIGHUP, SIGTERM, SIGTSTP, SIGTTIN, SIGTTOU };
#define NWATCHED (sizeof(watched) / sizeof(watched[0]))

static void catch_signals(struct sigaction old[NWATCHED])
{
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;	/* no SA_RESTART: a read is cut short */
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < NWATCHED; i++) {
		sigaction(watched[i], NULL, &old[i]);
		if (old[i].sa_handler != SIG_IGN)
			sigaction(watched[i], &sa, NULL);
	}
}

static void release_signals(const struct sigaction old[NWATCHED])
{
	size_t i;

	for (i = 0; i < NWATCHED; i++)
		sigaction(watched[i], &old[i], NULL);
}

static void say(int fd, const char *s)
{
	size_t n = strlen(s);
	ssize_t w;

	while (n > 0 && ((w = write(fd, s, n)) > 0 || (w < 0 && errno == EINTR))) {
		if (w > 0) {
			s += w;
			n -= (size_t)w;
		}
	}
}

/* One line into b with the echo off; 0, 1 at end of input with nothing
 * typed, -1 with errno, or -2 when a signal came (caught says which). */
static int read_line(int in, struct xg_buf *b)
{
	char c;
	ssize_t n;

	while (!caught) {
		n = read(in, &c, 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			return b->len ? 0 : 1;
		if (c == '\n' || c == '\r')
			return 0;
		if (xg_buf_addch(b, c) < 0) {
			errno = EFBIG;
			return -1;
		}
	}
	return -2;
}

int xg_account_ask_key(const char *provider, char **key)
{
	struct xg_buf b = XG_BUF_INIT(KEY_MAX);
	struct sigaction old[NWATCHED];
	struct termios saved, quiet;
	int tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	int in = tty >= 0 ? tty : 0, out = tty >= 0 ? tty : 2, r = -1, sig = 0, err, rc;
	char *prompt = xg_asprintf("%s key (typing is not shown): ", provider);

	*key = NULL;
	if (tcgetattr(in, &saved) == 0) {
		quiet = saved;
		quiet.c_lflag &= ~(tcflag_t)(ECHO | ECHOE | ECHOK | ECHONL);
		quiet.c_lflag |= ICANON;
		for (;;) {
			caught = 0;
			catch_signals(old);
			say(out, prompt);
			r = tcsetattr(in, TCSAFLUSH, &quiet) < 0 ? -1 : read_line(in, &b);
			/* A call a signal cut short is the signal's doing:
			 * from the background, tcsetattr meets SIGTTOU. */
			sig = caught;
			if (sig)
				r = -2;
			err = errno;
			tcsetattr(in, TCSAFLUSH, &saved);
			say(out, "\n");
			release_signals(old);
			errno = err;
			if (r != -2)
				break;
			memset(b.buf, 0, b.alloc);
			b.len = 0;
			raise(sig);	/* a stop returns here once the program goes on */
			if (sig != SIGTSTP && sig != SIGTTIN && sig != SIGTTOU)
				break;
		}
	}
	if (r == 0 || r == 1) {
		rc = xg_account_take_key(&b, key);
	} else if (r == -1 && errno == EFBIG) {
		xg_error("the key is longer than %d bytes", KEY_MAX);
		rc = XG_EX_DATAERR;
	} else if (r == -1) {
		xg_error_errno("cannot read the key from the terminal");
		rc = XG_EX_IOERR;
	} else {
		rc = 128 + sig;
	}
	if (b.alloc)
		memset(b.buf, 0, b.alloc);
	xg_buf_release(&b);
	free(prompt);
	if (tty >= 0)
		close(tty);
	return rc;
}
