/*
 * Compiling a loaded variant into a pack record for one model and mode:
 * the stable sections in manifest order (the stable prefix, the same in
 * every mode so a provider's prompt cache covers it for a session; the
 * pack carries its SHA-256), then the mode's dynamic sections, each
 * rendered and fitted into its budget, and the templates as written.
 * Which version to compile is pack.c's business, not this file's.
 *
 * The project instructions (project.c) and the skills list (skills.c),
 * when there are any, go between the stable prefix and the mode's
 * sections, in that order.
 *
 * A section over its budget is cut at the last paragraph boundary that
 * fits, with a notice; "reporting" is never cut (design.md B8), so its
 * going over is exit 78.
 */
#include "xg.h"
#include "prompt/prompt.h"
#include "prompt/internal.h"
#include "sha256.h"

size_t xg_prompt_chars(const char *p, size_t n)
{
	size_t i, c = 0;

	for (i = 0; i < n; i++)
		if (((unsigned char)p[i] & 0xc0) != 0x80)
			c++;
	return c;
}

static size_t trim_end(const char *p, size_t n)
{
	while (n > 0 && isspace((unsigned char)p[n - 1]))
		n--;
	return n;
}

jv xg_prompt_notice(const char *text)
{
	jv n = xg_rec_new("notice");

	n = xg_json_set(n, "from", jv_string(xg_progname ? xg_progname : "xg"));
	return xg_json_set(n, "text", jv_string(text));
}

/*
 * Fits text into budget characters: whole when it fits, else up to the last
 * paragraph boundary (a blank line) that fits.  Returns the bytes kept.
 */
static size_t fit(const char *text, size_t len, size_t budget, size_t *chars, int *cut)
{
	size_t total = xg_prompt_chars(text, len), best = 0, i;

	*cut = 0;
	if (total <= budget) {
		*chars = total;
		return len;
	}
	*cut = 1;
	for (i = 0; i < len; i++) {
		size_t j = i + 1, keep;

		if (text[i] != '\n')
			continue;
		while (j < len && (text[j] == ' ' || text[j] == '\t'))
			j++;
		if (j >= len || text[j] != '\n')
			continue;
		keep = trim_end(text, i);
		if (xg_prompt_chars(text, keep) > budget)
			break;
		best = keep;
	}
	*chars = xg_prompt_chars(text, best);
	return best;
}

struct part {
	const struct xg_prompt_section *s;
	char *text;
	size_t len, chars;
	int cut;
};

/* Fits full, s's text as it goes in (taken), into s's budget. */
static int build_part(const struct xg_prompt_manifest *m, const struct xg_prompt_section *s,
		      char *full, struct part *p, jv *notices)
{
	size_t len = trim_end(full, strlen(full)), all = xg_prompt_chars(full, len);

	p->s = s;
	if (all > s->budget && !strcmp(s->name, "reporting")) {
		free(full);
		xg_error("%s:%zu: section 'reporting' is %zu characters, over its budget of %zu; "
			 "it is never cut", m->path, s->lineno, all, s->budget);
		return XG_EX_CONFIG;
	}
	p->len = fit(full, len, s->budget, &p->chars, &p->cut);
	full[p->len] = '\0';
	p->text = full;
	if (p->cut) {
		char *msg = xg_asprintf("section '%s' is %zu characters, over its budget of %zu: "
					"cut at a paragraph boundary to %zu", s->name, all,
					s->budget, p->chars);

		*notices = jv_array_append(*notices, xg_prompt_notice(msg));
		free(msg);
	}
	return 0;
}

static jv section_entry(const struct part *p)
{
	jv e = jv_object();

	e = xg_json_set(e, "name", jv_string(p->s->name));
	e = xg_json_set(e, "chars", jv_number((double)p->chars));
	e = xg_json_set(e, "budget", jv_number((double)p->s->budget));
	e = xg_json_set(e, "cut", jv_bool(p->cut));
	return xg_json_set(e, "kind", jv_string(p->s->stable ? "stable" : "dynamic"));
}

static void join(struct xg_buf *b, const struct part *p)
{
	if (!p->len)
		return;
	if (b->len)
		xg_buf_addstr(b, "\n\n");
	xg_buf_add(b, p->text, p->len);
}

int xg_prompt_compile(const struct xg_prompt_manifest *m, const struct xg_prompt_target *t,
		      jv *pack, jv *notices)
{
	struct xg_buf sys = XG_BUF_INIT(0);
	jv vars = jv_object(), sections = jv_array(), templates = jv_object(), out;
	char sha[65];
	size_t i;
	int pass, rc = 0;

	if (t->model && *t->model)
		vars = xg_json_set(vars, "model", jv_string(t->model));
	/* Pass 0: the stable prefix; pass 1: the mode's sections; 2: templates. */
	for (pass = 0; pass < 3 && !rc; pass++) {
		for (i = 0; i < m->nr && !rc; i++) {
			const struct xg_prompt_section *s = &m->sec[i];
			int template = !strcmp(s->mode, "-");
			struct part p = { 0 };
			char *full;

			if (pass == 0 ? !s->stable :
			    pass == 1 ? (s->stable || template ||
					 (strcmp(s->mode, "all") && strcmp(s->mode, t->mode))) :
			    !template)
				continue;
			full = pass < 2 ? xg_prompt_render_peek(s->text, s->len, vars) :
					  xg_memdup(s->text, s->len);
			if ((rc = build_part(m, s, full, &p, notices)))
				break;
			if (pass < 2) {
				join(&sys, &p);
				sections = jv_array_append(sections, section_entry(&p));
			} else {
				templates = xg_json_set(templates, s->name, jv_string(p.text));
			}
			free(p.text);
		}
		if (pass)
			continue;
		xg_sha256_hex_of(sys.buf, sys.len, sha);
		/* The project's instructions follow the stable prefix, outside
		 * it, so that prefix is the same in every project. */
		if (t->project && t->project->text) {
			if (sys.len)
				xg_buf_addstr(&sys, "\n\n");
			xg_buf_add(&sys, t->project->text, t->project->len);
			sections = jv_array_append(sections, jv_copy(t->project->entry));
		}
		if (t->skills && t->skills->text) {
			if (sys.len)
				xg_buf_addstr(&sys, "\n\n");
			xg_buf_add(&sys, t->skills->text, t->skills->len);
			sections = jv_array_append(sections, jv_copy(t->skills->entry));
		}
	}
	jv_free(vars);
	if (rc) {
		jv_free(sections);
		jv_free(templates);
		xg_buf_release(&sys);
		return rc;
	}
	out = xg_rec_new("pack");
	out = xg_json_set(out, "variant", jv_string(t->variant));
	out = xg_json_set(out, "version", jv_string(t->version));
	out = xg_json_set(out, "model", t->model && *t->model ? jv_string(t->model) : jv_null());
	out = xg_json_set(out, "mode", jv_string(t->mode));
	out = xg_json_set(out, "stable_sha256", jv_string(sha));
	out = xg_json_set(out, "sections", sections);
	out = xg_json_set(out, "system", jv_string_sized(sys.buf, (int)sys.len));
	out = xg_json_set(out, "templates", templates);
	xg_buf_release(&sys);
	*pack = out;
	return 0;
}
