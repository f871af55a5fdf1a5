/*
 * The two libcrypto calls the webhook signature check needs, behind fixed, prefixed names so Swift
 * never touches OpenSSL's macros or its deprecated HMAC_CTX API. Both are one-shot: a webhook body
 * (at most 25 MB) is in memory anyway.
 */
#ifndef PWB_COPENSSL_SHIM_H
#define PWB_COPENSSL_SHIM_H

#include <stddef.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

/* The length of an HMAC-SHA256 digest in bytes. */
#define PWB_SHA256_DIGEST_LENGTH 32

/*
 * HMAC-SHA256(key, data) into out[0..<32]. Returns 1 on success, 0 if libcrypto failed (it does not
 * for SHA-256 with in-memory input, but the caller must not compare an unwritten buffer).
 * A key longer than INT_MAX bytes is refused (HMAC takes an int length).
 */
static inline int pwb_hmac_sha256(const void *key, size_t key_length, const unsigned char *data,
                                  size_t data_length, unsigned char *out) {
    static const unsigned char empty = 0;
    unsigned int out_length = 0;
    if (key_length > 0x7fffffff) {
        return 0;
    }
    /* HMAC() treats a NULL key as "reuse the previous key"; an empty key must be a real pointer. */
    if (key == NULL) {
        key = &empty;
    }
    if (data == NULL) {
        data = &empty;
    }
    if (HMAC(EVP_sha256(), key, (int)key_length, data, data_length, out, &out_length) == NULL) {
        return 0;
    }
    return out_length == PWB_SHA256_DIGEST_LENGTH;
}

/* 1 when the two buffers hold the same bytes; the time taken depends only on `length`. */
static inline int pwb_constant_time_equal(const void *left, const void *right, size_t length) {
    return CRYPTO_memcmp(left, right, length) == 0;
}

#endif
