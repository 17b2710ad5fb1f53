#ifndef XG_FUZZ_H
#define XG_FUZZ_H
/*
 * What the libFuzzer targets of tests/fuzz/ share (make fuzz; README
 * there): a private XG_HOME made once, and the input written to a file in
 * it for the readers that read files.
 */
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Makes a fresh XG_HOME under /tmp (once) and points XG_SHARE_DIR at the
 * source tree's share/xg; the caller's initializer calls it. */
void fuzz_home(void);
/* Writes data to rel under XG_HOME (making its directories), mode 0600;
 * returns the path, which stays the same from call to call. */
const char *fuzz_write(const char *rel, const uint8_t *data, size_t size);

#endif
