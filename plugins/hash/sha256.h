/* SHA-256 (FIPS 180-4), incremental: init, feed any number of chunks, finish into 32 bytes. */
#ifndef SHA256_H
#define SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct sha256 {
    uint32_t state[8];
    uint64_t length;
    uint8_t block[64];
    size_t filled;
} sha256;

void sha256_init(sha256 *h);
void sha256_update(sha256 *h, const void *data, size_t size);
void sha256_finish(sha256 *h, uint8_t digest[32]);

#endif
