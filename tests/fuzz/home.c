/*
 * The fuzz targets' XG_HOME (fuzz.h): one directory for the whole process,
 * and the input written where the reader under test looks for it.
 */
#include "xg.h"
#include "fuzz.h"

static char home[64];

void fuzz_home(void)
{
	if (home[0])
		return;
	snprintf(home, sizeof(home), "/tmp/xg-fuzz-XXXXXX");
	if (!mkdtemp(home))
		abort();
	setenv("XG_HOME", home, 1);
	setenv("XG_SHARE_DIR", FUZZ_SHARE, 1);
	unsetenv("XG_ACCOUNT");
	unsetenv("OPENAI_API_KEY");
	unsetenv("ANTHROPIC_API_KEY");
	unsetenv("OPENROUTER_API_KEY");
	xg_prog_init("xg-fuzz");
}

const char *fuzz_write(const char *rel, const uint8_t *data, size_t size)
{
	static char path[512];
	char *dir, *slash;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", home, rel);
	dir = xg_strdup(path);
	slash = strrchr(dir, '/');
	*slash = '\0';
	if (xg_mkdir_p(dir, 0700) < 0)
		abort();
	free(dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || xg_write_all(fd, data, size) < 0 || close(fd) < 0)
		abort();
	return path;
}
