/*
 * The start stage, xg-choices start: the records of its input flow through
 * unchanged, each request followed by its notices and its model record.
 */
#include "xg.h"
#include "choices/internal.h"

/*
 * The records flow through xg_rec_filter, and right after each request
 * come that request's notices and its model record, or one model record at
 * the end when no request came.  A start that fails still writes its model
 * record, with "id": null, and the records after it still flow; the stage
 * exits with the first failure's code, or 74 when its output cannot be
 * written.
 */

struct stage {
	struct xg_choices c;
	int init_rc;		/* xg_choices_init's: the catalog could not be read */
	struct xg_choices_want want;
	struct xg_rec_writer *w;
	int worst;		/* the first failure's exit code */
};

/* Writes the records of the start for one request (rec NULL: for no
 * request); keeps the first failure's code and goes on, but stops on a
 * write error. */
static int start_one(const struct xg_rec *rec, void *ctx)
{
	struct stage *s = ctx;
	jv out;
	int rc, i, n, wrc = 0;

	s->want.lineno = rec ? rec->lineno : 0;
	if (s->init_rc) {
		out = jv_array_append(jv_array(),
				      xg_choices_null_record(s->want.model ? "flag" : "mode", NULL,
							     s->want.mode ? s->want.mode : "normal",
							     "the model catalog cannot be read"));
		out = jv_array_set(out, 0, xg_json_set(jv_array_get(jv_copy(out), 0), "exit",
						       jv_number(s->init_rc)));
		rc = s->init_rc;
	} else {
		rc = xg_choices_start(&s->c, &s->want, rec ? jv_copy(rec->v) : jv_null(), &out);
	}
	n = xg_json_length_peek(out);
	for (i = 0; i < n && wrc == 0; i++)
		wrc = xg_rec_write(s->w, jv_array_get(jv_copy(out), i));
	jv_free(out);
	if (rc && !s->worst)
		s->worst = rc;
	return wrc < 0 ? XG_EX_IOERR : 0;
}

int xg_choices_filter(const struct xg_choices_want *want, int verbose, int fd,
		      struct xg_rec_writer *w)
{
	struct stage s = { .want = *want, .w = w };
	struct xg_rec_reader r;
	int rc;

	xg_rec_reader_init(&r, fd, "standard input");
	s.init_rc = xg_choices_init(&s.c, verbose);
	rc = xg_rec_filter(fd >= 0 ? &r : NULL, w, "request", start_one, &s);
	xg_choices_release(&s.c);
	xg_rec_reader_release(&r);
	return rc ? rc : s.worst;
}
