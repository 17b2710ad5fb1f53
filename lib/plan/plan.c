/*
 * The plan classifier (design.md B9, ADR-0077).
 *
 * One pass over the reply finds the code in it, CommonMark's way: fenced
 * code blocks line by line, then the inline code spans of the text between
 * them.  Each piece of code is reported, in order, to code_region(), which
 * moves a cursor through the tags pcre2 finds: a tag that starts before the
 * region is outside code and is accepted; one inside it is skipped.  So
 * neither the regions nor the tags are ever stored, and the block's text is
 * not copied: classifying costs no memory beyond the reply (and an LF copy
 * of it when it has CR LF), and every step is linear in its length.
 *
 * Simplifications, all documented in xg-classify-plan(1): only fences at
 * the top level count (not inside lists or block quotes), indented code
 * blocks and HTML are ordinary text, a paragraph ends at a blank line or a
 * fence, and a run of more than XG_PLAN_MAX_TICKS backticks never opens a
 * code span (cmark has the same limit; it keeps the scan linear).
 */
#include "xg.h"
#include "plan/plan.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif

#define NONE SIZE_MAX
#define XG_PLAN_MAX_TICKS 80
#define XG_PLAN_MAX_PROBLEMS 32

enum tag_kind { TAG_PLAN, TAG_BLOCKED, TAG_LEGACY };

static const char *const tag_name[] = { "proposed_plan", "plan_blocked", "plan_clarification" };

struct scan {
	const char *s;
	size_t n;
	struct xg_plan_result *out;
	int failed;

	/* The next tag outside the code seen so far; tag_start is NONE when
	 * there are no more. */
	pcre2_code *re;
	pcre2_match_data *md;
	int jit;
	size_t search_from;
	size_t tag_start, tag_end;

	/* Where the line count stands: line_no is the line of line_pos. */
	size_t line_pos, line_no;

	/* The block being read: open_kind is -1 when none is open. */
	int open_kind;
	size_t open_line, open_content;
	/* Complete blocks of each outcome kind. */
	size_t nblocks[2];
	size_t first_line[2], second_line[2];
	size_t first_start[2], first_end[2];
	int legacy_seen;

	/* Inline code: after a failed search for a closing run, the last
	 * position of a run of each length up to the end of the paragraph. */
	int scanned;
	size_t last_run[XG_PLAN_MAX_TICKS + 1];
};

const char *xg_plan_outcome_name(enum xg_plan_outcome outcome)
{
	switch (outcome) {
	case XG_PLAN_READY: return "plan_ready";
	case XG_PLAN_NO_PLAN: return "no_plan";
	case XG_PLAN_BLOCKED: return "blocked";
	case XG_PLAN_INVALID: return "invalid";
	}
	return "invalid";
}

int xg_plan_exit_status(enum xg_plan_outcome outcome)
{
	switch (outcome) {
	case XG_PLAN_READY: return XG_PLAN_EXIT_READY;
	case XG_PLAN_NO_PLAN: return XG_PLAN_EXIT_NO_PLAN;
	case XG_PLAN_BLOCKED: return XG_PLAN_EXIT_BLOCKED;
	case XG_PLAN_INVALID: return XG_PLAN_EXIT_INVALID;
	}
	return XG_PLAN_EXIT_INVALID;
}

void xg_plan_result_release(struct xg_plan_result *r)
{
	size_t i;

	for (i = 0; i < r->nproblems; i++)
		free(r->problems[i].message);
	free(r->problems);
	free(r->owned);
	memset(r, 0, sizeof(*r));
}

__attribute__((format(printf, 4, 5)))
static void problem(struct xg_plan_result *r, const char *code, size_t line,
		    const char *fmt, ...)
{
	struct xg_plan_problem *p;
	va_list ap;
	char msg[256];

	/* A hostile reply could hold a million stray tags; the first few say
	 * all a person or a repair turn needs. */
	if (r->nproblems >= XG_PLAN_MAX_PROBLEMS)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	XG_ALLOC_GROW(r->problems, r->nproblems + 1, r->alloc);
	p = &r->problems[r->nproblems++];
	p->code = code;
	p->message = xg_strdup(msg);
	p->line = line;
}

/* Spaces and tabs only: CommonMark's blank line. */
static int blank(const char *p, const char *e)
{
	for (; p < e; p++)
		if (*p != ' ' && *p != '\t')
			return 0;
	return 1;
}

static int all_white(const char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strchr(" \t\n\r\f\v", p[i]) || !p[i])
			return 0;
	return 1;
}

static size_t run_length(const char *p, const char *e, char c)
{
	const char *q = p;

	while (q < e && *q == c)
		q++;
	return (size_t)(q - p);
}

/* The fence length when the line [p, e) opens a fenced code block (up to
 * three spaces, then three or more backticks or tildes; a backtick fence's
 * info string has no backtick), else 0. */
static size_t fence_open(const char *p, const char *e, char *fence_char)
{
	const char *q = p;
	size_t len;

	while (q < e && *q == ' ' && q - p < 3)
		q++;
	if (q == e || (*q != '`' && *q != '~'))
		return 0;
	len = run_length(q, e, *q);
	if (len < 3)
		return 0;
	if (*q == '`' && memchr(q + len, '`', (size_t)(e - q - len)))
		return 0;
	*fence_char = *q;
	return len;
}

/* Whether [p, e) closes a fence of len fence_char: up to three spaces, at
 * least as many of the same character, then only spaces and tabs. */
static int fence_close(const char *p, const char *e, char fence_char, size_t len)
{
	const char *q = p;
	size_t n;

	while (q < e && *q == ' ' && q - p < 3)
		q++;
	n = run_length(q, e, fence_char);
	return n >= len && blank(q + n, e);
}

static size_t line_of(struct scan *sc, size_t pos)
{
	const char *p;

	while (sc->line_pos < pos &&
	       (p = memchr(sc->s + sc->line_pos, '\n', pos - sc->line_pos))) {
		sc->line_no++;
		sc->line_pos = (size_t)(p - sc->s) + 1;
	}
	sc->line_pos = pos;
	return sc->line_no;
}

static void next_tag(struct scan *sc)
{
	int rc;

	sc->tag_start = sc->tag_end = NONE;
	if (sc->failed || sc->search_from >= sc->n)
		return;
	if (sc->jit)
		rc = pcre2_jit_match(sc->re, (PCRE2_SPTR)sc->s, sc->n, sc->search_from, 0,
				     sc->md, NULL);
	else
		rc = pcre2_match(sc->re, (PCRE2_SPTR)sc->s, sc->n, sc->search_from, 0,
				 sc->md, NULL);
	if (rc == PCRE2_ERROR_NOMATCH)
		return;
	if (rc < 0) {
		PCRE2_UCHAR msg[128];

		pcre2_get_error_message(rc, msg, sizeof(msg));
		xg_error("cannot scan the reply for plan tags: %s", (char *)msg);
		sc->failed = 1;
		return;
	}
	sc->tag_start = pcre2_get_ovector_pointer(sc->md)[0];
	sc->tag_end = pcre2_get_ovector_pointer(sc->md)[1];
	sc->search_from = sc->tag_end;
}

/* [*a, *b) less the blank lines before and after it. */
static void trim_blank_lines(const char *s, size_t *a, size_t *b)
{
	const char *nl;

	while ((nl = memchr(s + *a, '\n', *b - *a)) && blank(s + *a, nl))
		*a = (size_t)(nl - s) + 1;
	for (;;) {
		nl = memrchr(s + *a, '\n', *b - *a);
		if (!nl) {
			if (blank(s + *a, s + *b))
				*b = *a;
			return;
		}
		if (!blank(nl + 1, s + *b))
			return;
		*b = (size_t)(nl - s);
	}
}

static void complete_block(struct scan *sc, int kind, size_t end)
{
	size_t a = sc->open_content, b = end;

	trim_blank_lines(sc->s, &a, &b);
	if (a == b)
		problem(sc->out, XG_PLAN_EMPTY_BLOCK, sc->open_line,
			"The <%s> block on line %zu is empty.", tag_name[kind], sc->open_line);
	if (sc->nblocks[kind] == 0) {
		sc->first_line[kind] = sc->open_line;
		sc->first_start[kind] = a;
		sc->first_end[kind] = b;
	} else if (sc->nblocks[kind] == 1) {
		sc->second_line[kind] = sc->open_line;
	}
	sc->nblocks[kind]++;
	sc->open_kind = -1;
}

/* A tag outside code: pair it with the open block. */
static void accept_tag(struct scan *sc)
{
	const char *t = sc->s + sc->tag_start;
	int closing = t[1] == '/';
	size_t namelen = sc->tag_end - sc->tag_start - 2 - (size_t)closing;
	int kind = namelen == 13 ? TAG_PLAN : namelen == 12 ? TAG_BLOCKED : TAG_LEGACY;
	size_t line = line_of(sc, sc->tag_start);

	if (kind == TAG_LEGACY) {
		if (!sc->legacy_seen)
			problem(sc->out, XG_PLAN_LEGACY_CLARIFICATION, line,
				"The <%s%s> tag on line %zu is no longer accepted: ask with "
				"ask_user, or end with a <plan_blocked> block.",
				closing ? "/" : "", tag_name[kind], line);
		sc->legacy_seen = 1;
	} else if (!closing && sc->open_kind < 0) {
		sc->open_kind = kind;
		sc->open_line = line;
		sc->open_content = sc->tag_end;
	} else if (!closing) {
		problem(sc->out, XG_PLAN_UNBALANCED_TAG, line,
			"The <%s> tag on line %zu opens a block inside the <%s> block "
			"opened on line %zu.", tag_name[kind], line,
			tag_name[sc->open_kind], sc->open_line);
	} else if (sc->open_kind == kind) {
		complete_block(sc, kind, sc->tag_start);
	} else if (sc->open_kind < 0) {
		problem(sc->out, XG_PLAN_UNBALANCED_TAG, line,
			"The </%s> tag on line %zu closes no open block.", tag_name[kind], line);
	} else {
		problem(sc->out, XG_PLAN_UNBALANCED_TAG, line,
			"The </%s> tag on line %zu does not close the <%s> block opened "
			"on line %zu.", tag_name[kind], line, tag_name[sc->open_kind],
			sc->open_line);
	}
}

/* [start, end) is code: the tags before it are outside code, those in it
 * are text. */
static void code_region(struct scan *sc, size_t start, size_t end)
{
	while (sc->tag_start < start) {
		accept_tag(sc);
		next_tag(sc);
	}
	while (sc->tag_start < end)
		next_tag(sc);
}

/* Where the run of exactly len backticks that closes a code span starts,
 * searching [from, end); NONE when there is none.  The first failed search
 * of a paragraph goes over the rest of it again to note the last run of
 * each length, so every later opener without a closer is known at once and
 * the paragraph is scanned a bounded number of times. */
static size_t find_closer(struct scan *sc, size_t from, size_t end, size_t len)
{
	const char *s = sc->s, *p;
	size_t q, k;

	if (sc->scanned && (sc->last_run[len] == NONE || sc->last_run[len] < from))
		return NONE;
	for (q = from; q < end && (p = memchr(s + q, '`', end - q)); q = (size_t)(p - s) + k) {
		k = run_length(p, s + end, '`');
		if (k == len)
			return (size_t)(p - s);
	}
	if (sc->scanned)
		return NONE;	/* not reached: last_run said there was one */
	memset(sc->last_run, 0xff, sizeof(sc->last_run));
	for (q = from; q < end && (p = memchr(s + q, '`', end - q)); q = (size_t)(p - s) + k) {
		k = run_length(p, s + end, '`');
		if (k <= XG_PLAN_MAX_TICKS)
			sc->last_run[k] = (size_t)(p - s);
	}
	sc->scanned = 1;
	return NONE;
}

/* The inline code spans of the paragraphs in [a, b), which holds no fence
 * and ends at a blank line or a fence. */
static void scan_inline(struct scan *sc, size_t a, size_t b)
{
	const char *s = sc->s;
	size_t i = a;

	sc->scanned = 0;
	while (i < b) {
		const char *p = memchr(s + i, '`', b - i);
		size_t o, len, slashes = 0, close;

		if (!p)
			return;
		o = (size_t)(p - s);
		len = run_length(p, s + b, '`');
		while (o - slashes > i && s[o - slashes - 1] == '\\')
			slashes++;
		if (slashes % 2) {
			/* "\`" is a literal backtick; the run starts after it. */
			o++;
			len--;
		}
		if (len == 0 || len > XG_PLAN_MAX_TICKS ||
		    (close = find_closer(sc, o + len, b, len)) == NONE) {
			i = o + len;
			continue;
		}
		code_region(sc, o, close + len);
		i = close + len;
	}
}

/* Finds the fenced code blocks line by line, and the inline code between
 * them. */
static void scan_reply(struct scan *sc)
{
	const char *s = sc->s;
	size_t n = sc->n, pos = 0, para = 0;

	while (pos < n && !sc->failed) {
		const char *nl = memchr(s + pos, '\n', n - pos);
		size_t eol = nl ? (size_t)(nl - s) : n, next = nl ? eol + 1 : n;
		size_t flen, end = n, p;
		char fc;

		if ((flen = fence_open(s + pos, s + eol, &fc)) == 0) {
			if (blank(s + pos, s + eol)) {
				scan_inline(sc, para, pos);
				para = next;
			}
			pos = next;
			continue;
		}
		scan_inline(sc, para, pos);
		/* An unclosed fence runs to the end of the reply. */
		for (p = next; p < n; ) {
			const char *nl2 = memchr(s + p, '\n', n - p);
			size_t eol2 = nl2 ? (size_t)(nl2 - s) : n;

			if (fence_close(s + p, s + eol2, fc, flen)) {
				end = nl2 ? eol2 + 1 : n;
				break;
			}
			p = nl2 ? eol2 + 1 : n;
		}
		code_region(sc, pos, end);
		pos = para = end;
	}
	scan_inline(sc, para, n);
	code_region(sc, n, n);
}

static void finish(struct scan *sc)
{
	struct xg_plan_result *r = sc->out;
	int k;

	if (sc->open_kind >= 0)
		problem(r, XG_PLAN_UNBALANCED_TAG, sc->open_line,
			"The <%s> tag on line %zu opens a block that is never closed.",
			tag_name[sc->open_kind], sc->open_line);
	for (k = TAG_PLAN; k <= TAG_BLOCKED; k++)
		if (sc->nblocks[k] > 1)
			problem(r, XG_PLAN_DUPLICATE_BLOCK, sc->second_line[k],
				"The reply has %zu <%s> blocks, the second on line %zu; "
				"one is allowed.", sc->nblocks[k], tag_name[k], sc->second_line[k]);
	if (sc->nblocks[TAG_PLAN] && sc->nblocks[TAG_BLOCKED]) {
		size_t lp = sc->first_line[TAG_PLAN], lb = sc->first_line[TAG_BLOCKED];

		problem(r, XG_PLAN_CONFLICTING_BLOCKS, lp > lb ? lp : lb,
			"The reply has both a <proposed_plan> block (line %zu) and a "
			"<plan_blocked> block (line %zu); one outcome is allowed.", lp, lb);
	}
	if (r->nproblems > 0) {
		r->outcome = XG_PLAN_INVALID;
		return;
	}
	if (sc->nblocks[TAG_PLAN] == 0 && sc->nblocks[TAG_BLOCKED] == 0) {
		r->outcome = XG_PLAN_NO_PLAN;
		return;
	}
	k = sc->nblocks[TAG_PLAN] ? TAG_PLAN : TAG_BLOCKED;
	r->outcome = k == TAG_PLAN ? XG_PLAN_READY : XG_PLAN_BLOCKED;
	r->text = sc->s + sc->first_start[k];
	r->textlen = sc->first_end[k] - sc->first_start[k];
}

/* The reply with every CR LF made LF, in a new buffer; NULL when it has
 * none, so the common case copies nothing. */
static char *lf_copy(const char *reply, size_t len, size_t *outlen)
{
	const char *p = reply, *e = reply + len, *cr;
	char *copy, *q;

	/* memchr is much faster than memmem for a two-byte needle. */
	while ((cr = memchr(p, '\r', (size_t)(e - p))) && (cr + 1 == e || cr[1] != '\n'))
		p = cr + 1;
	if (!cr)
		return NULL;
	p = reply;
	q = copy = xg_malloc(len + 1);
	while ((cr = memchr(p, '\r', (size_t)(e - p)))) {
		memcpy(q, p, (size_t)(cr - p));
		q += cr - p;
		p = cr + 1;
		if (p == e || *p != '\n')
			*q++ = '\r';
	}
	memcpy(q, p, (size_t)(e - p));
	q += e - p;
	*q = '\0';
	*outlen = (size_t)(q - copy);
	return copy;
}

static int compile_tags(struct scan *sc)
{
	static const char pattern[] = "</?(?:proposed_plan|plan_blocked|plan_clarification)>";
	PCRE2_SIZE erroff;
	int errcode;

	sc->re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, 0, &errcode,
			       &erroff, NULL);
	if (!sc->re) {
		PCRE2_UCHAR msg[128];

		pcre2_get_error_message(errcode, msg, sizeof(msg));
		return xg_error("cannot compile the plan tag pattern: %s", (char *)msg);
	}
	/*
	 * JIT where the platform has it; the interpreter otherwise, and under
	 * valgrind: the JIT's search reads whole aligned words, so it looks
	 * at the uninitialised bytes after the end of the reply (harmlessly,
	 * but make check VALGRIND=1 would count it).
	 */
	sc->jit = !RUNNING_ON_VALGRIND && pcre2_jit_compile(sc->re, PCRE2_JIT_COMPLETE) == 0;
	sc->md = pcre2_match_data_create_from_pattern(sc->re, NULL);
	if (!sc->md)
		xg_die(XG_EX_SOFTWARE, "out of memory");
	return 0;
}

int xg_plan_classify(const char *reply, size_t len, struct xg_plan_result *out)
{
	struct scan sc;
	char *copy;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (all_white(reply, len)) {
		out->outcome = XG_PLAN_INVALID;
		problem(out, XG_PLAN_EMPTY_REPLY, 0, "The reply is empty.");
		return 0;
	}
	memset(&sc, 0, sizeof(sc));
	copy = lf_copy(reply, len, &sc.n);
	sc.s = copy ? copy : reply;
	if (!copy)
		sc.n = len;
	sc.out = out;
	sc.open_kind = -1;
	sc.line_no = 1;
	if (compile_tags(&sc) < 0) {
		free(copy);
		return -1;
	}
	next_tag(&sc);
	scan_reply(&sc);
	if (sc.failed)
		rc = -1;
	else
		finish(&sc);
	pcre2_match_data_free(sc.md);
	pcre2_code_free(sc.re);
	if (out->text && copy)
		out->owned = copy;
	else
		free(copy);
	if (rc < 0)
		xg_plan_result_release(out);
	return rc;
}

jv xg_plan_record(const struct xg_plan_result *r)
{
	jv rec = xg_rec_new("plan"), problems = jv_array();
	size_t i;

	rec = xg_json_set(rec, "outcome", jv_string(xg_plan_outcome_name(r->outcome)));
	if (r->text)
		rec = xg_json_set(rec, r->outcome == XG_PLAN_READY ? "plan" : "blocked",
				  xg_json_string_bytes(r->text, r->textlen));
	for (i = 0; i < r->nproblems; i++) {
		const struct xg_plan_problem *p = &r->problems[i];
		jv o = jv_object();

		o = xg_json_set(o, "code", jv_string(p->code));
		o = xg_json_set(o, "message", jv_string(p->message));
		if (p->line)
			o = xg_json_set(o, "line", jv_number((double)p->line));
		problems = jv_array_append(problems, o);
	}
	return xg_json_set(rec, "problems", problems);
}

int xg_plan_write(struct xg_rec_writer *w, const struct xg_plan_result *r)
{
	struct xg_buf line = XG_BUF_INIT(0);
	/* The line built here goes out like a record read: same flushing. */
	struct xg_rec rec = { .raw = NULL };
	int rc;

	xg_plan_record_line(&line, r);
	rec.raw = line.buf;
	rec.rawlen = line.len;
	rc = xg_rec_pass(w, &rec);
	xg_buf_release(&line);
	return rc;
}

void xg_plan_read_reply(int fd, const char *name, struct xg_buf *b, size_t max)
{
	struct stat st;

	/* A file's size makes room at once, sparing the copies of growing. */
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    (unsigned long long)st.st_size <= max)
		xg_buf_grow(b, (size_t)st.st_size + 1);
	for (;;) {
		size_t room = 1 << 20;
		ssize_t n;

		/* One byte over the limit is enough to know it is too long. */
		if (b->len <= max && max - b->len < room)
			room = max - b->len + 1;
		if (b->len > max || xg_buf_grow(b, room) < 0)
			xg_die(XG_EX_DATAERR, "%s: the reply is longer than the limit of %zu bytes",
			       name, max);
		do
			n = read(fd, b->buf + b->len, room);
		while (n < 0 && errno == EINTR);
		if (n < 0)
			xg_die_errno(xg_exit_for_errno(errno), "cannot read %s", name);
		if (n == 0)
			return;
		b->len += (size_t)n;
		b->buf[b->len] = '\0';
	}
}

struct reply_scan {
	const char *name;	/* the input, for messages */
	struct xg_buf *reply;
	size_t line;		/* where the reply came from; 0: none yet */
	int from_run_end;	/* a run_end's reply wins over any message */
};

static int take_reply(const struct xg_rec *rec, void *arg)
{
	struct reply_scan *s = arg;
	const char *role, *field;
	int is_end, is_msg;
	jv_kind kind;
	jv v;

	if (!rec)
		return 0;
	role = xg_json_string_peek(rec->v, "role");
	is_end = rec->type && !strcmp(rec->type, "run_end");
	is_msg = rec->type && !strcmp(rec->type, "message") && role && !strcmp(role, "assistant");
	if (!is_end && (!is_msg || s->from_run_end))
		return 0;
	field = is_end ? "reply" : "text";
	v = xg_json_get_peek(rec->v, field);
	kind = jv_get_kind(v);
	if (kind != JV_KIND_STRING && kind != JV_KIND_NULL && kind != JV_KIND_INVALID)
		xg_die(XG_EX_DATAERR, "%s: line %zu: field '%s' of a %s record must be a string, found %s",
		       s->name, rec->lineno, field, rec->type, xg_json_kind_peek(v));
	xg_buf_reset(s->reply);
	if (kind == JV_KIND_STRING &&
	    xg_buf_add(s->reply, jv_string_value(v), (size_t)jv_string_length_bytes(jv_copy(v))) < 0)
		xg_die(XG_EX_DATAERR, "%s: line %zu: field '%s' is longer than the limit of %zu bytes",
		       s->name, rec->lineno, field, s->reply->max);
	s->line = rec->lineno;
	s->from_run_end |= is_end;
	return 0;
}

size_t xg_plan_records_reply(struct xg_rec_reader *r, struct xg_rec_writer *w,
			     struct xg_buf *reply)
{
	struct reply_scan s = { r->name, reply, 0, 0 };

	if (xg_rec_filter(r, w, NULL, take_reply, &s))
		xg_die_errno(XG_EX_IOERR, "cannot write standard output");
	if (!s.line)
		xg_die(XG_EX_DATAERR, "%s: no run_end record and no assistant message to classify",
		       r->name);
	return s.line;
}

/* A JSON string as libjq writes it; the record's ceiling is the buffer's. */
static void json_string(struct xg_buf *b, const char *s, size_t n)
{
	if (xg_json_write_string(b, s, n) < 0)
		xg_die(XG_EX_SOFTWARE, "the plan record is too long");
}

void xg_plan_record_line(struct xg_buf *b, const struct xg_plan_result *r)
{
	size_t i;

	/* Room for the text and a little escaping at once. */
	xg_buf_grow(b, r->textlen + r->textlen / 8 + 4096);
	xg_buf_addf(b, "{\"type\":\"plan\",\"outcome\":\"%s\"", xg_plan_outcome_name(r->outcome));
	if (r->text) {
		xg_buf_addstr(b, r->outcome == XG_PLAN_READY ? ",\"plan\":" : ",\"blocked\":");
		json_string(b, r->text, r->textlen);
	}
	xg_buf_addstr(b, ",\"problems\":[");
	for (i = 0; i < r->nproblems; i++) {
		const struct xg_plan_problem *p = &r->problems[i];

		xg_buf_addf(b, "%s{\"code\":\"%s\",\"message\":", i ? "," : "", p->code);
		json_string(b, p->message, strlen(p->message));
		if (p->line)
			xg_buf_addf(b, ",\"line\":%zu", p->line);
		xg_buf_addch(b, '}');
	}
	xg_buf_addstr(b, "]}");
}
