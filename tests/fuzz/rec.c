/*
 * Fuzz target: the record reader (lib/rec.c), on any bytes, with a small
 * line ceiling so the ceiling is met too; each record read is written back
 * and passed through, as a stage does.
 */
#include "xg.h"
#include "fuzz.h"
#include <sys/mman.h>

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_home();
	setenv("XG_MAX_LINE", "4096", 1);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xg_rec_reader r;
	struct xg_rec_writer w;
	struct xg_rec rec;
	FILE *null = fopen("/dev/null", "w");
	int fd = memfd_create("rec", MFD_CLOEXEC), n;

	if (fd < 0 || !null || xg_write_all(fd, data, size) < 0 || lseek(fd, 0, SEEK_SET) < 0)
		abort();
	xg_rec_reader_init(&r, fd, "fuzz input");
	xg_rec_writer_init(&w, null);
	while ((n = xg_rec_next(&r, &rec)) == 1) {
		xg_rec_pass(&w, &rec);
		xg_rec_write(&w, jv_copy(rec.v));
		xg_rec_release(&rec);
	}
	if (n < 0 && (r.code != XG_EX_DATAERR && r.code != XG_EX_IOERR))
		abort();
	xg_rec_writer_release(&w);
	xg_rec_reader_release(&r);
	fclose(null);
	close(fd);
	return 0;
}
