#ifndef GS_SHA256_H
#define GS_SHA256_H

#include <stddef.h>
#include <stdint.h>

/// SHA-256 (FIPS 180-4) of `length` bytes at `data` into `digest` (32 bytes).
/// In C so that debug builds hash a 5 MB asset in milliseconds, not seconds.
void gs_sha256(const uint8_t *data, size_t length, uint8_t digest[32]);

#endif
