/*
 * The libcrypto calls the bridge needs, behind fixed, prefixed names so Swift never touches
 * OpenSSL's macros or its deprecated HMAC_CTX API: the webhook signature check (HMAC-SHA256, a
 * constant-time compare; one-shot, a webhook body of at most 25 MB is in memory anyway) and the
 * GitHub App's JWTs (RS256 signatures with the App's PEM key, and their check in the tests' fake
 * GitHub). No bare SHA-256 digest: the core's SHA256 is the bridge's one (see its comment for why,
 * and WebhookSignature's for why the HMAC is libcrypto's all the same).
 */
#ifndef PWB_COPENSSL_SHIM_H
#define PWB_COPENSSL_SHIM_H

#include <stddef.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

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

/*
 * A passphrase callback that gives none: an encrypted key then fails to load. With a NULL callback
 * libcrypto asks for the passphrase on the terminal, so `check-config` at a terminal would prompt
 * and pass while `serve` under systemd (no terminal) fails.
 */
static inline int pwb_no_passphrase(char *buffer, int size, int rwflag, void *userdata) {
    (void)buffer;
    (void)size;
    (void)rwflag;
    (void)userdata;
    return 0;
}

/* A key read from a PEM document in memory by `read` (one of libcrypto's PEM_read_bio_* for keys). */
static inline EVP_PKEY *pwb_pem_key(const void *pem, size_t length,
                                    EVP_PKEY *(*read)(BIO *, EVP_PKEY **, pem_password_cb *, void *)) {
    if (length > 0x7fffffff) {
        return NULL;
    }
    BIO *bio = BIO_new_mem_buf(pem, (int)length);
    if (bio == NULL) {
        return NULL;
    }
    EVP_PKEY *key = read(bio, NULL, pwb_no_passphrase, NULL);
    BIO_free(bio);
    return key;
}

/*
 * The private key in a PEM document (PKCS#1 "RSA PRIVATE KEY", as GitHub hands out App keys, or
 * PKCS#8), or NULL when it is not one or not RSA. Free with pwb_private_key_free.
 */
static inline EVP_PKEY *pwb_private_key_load(const void *pem, size_t length) {
    EVP_PKEY *key = pwb_pem_key(pem, length, PEM_read_bio_PrivateKey);
    if (key != NULL && EVP_PKEY_base_id(key) != EVP_PKEY_RSA) {
        EVP_PKEY_free(key);
        return NULL;
    }
    return key;
}

/* The public key in a PEM document ("PUBLIC KEY"), or NULL. Free with pwb_private_key_free. */
static inline EVP_PKEY *pwb_public_key_load(const void *pem, size_t length) {
    return pwb_pem_key(pem, length, PEM_read_bio_PUBKEY);
}

static inline void pwb_private_key_free(EVP_PKEY *key) {
    EVP_PKEY_free(key);
}

/* The signature's size for `key` (256 for RSA-2048): the buffer pwb_rs256_sign writes into. */
static inline size_t pwb_signature_size(EVP_PKEY *key) {
    int size = EVP_PKEY_get_size(key);
    return size > 0 ? (size_t)size : 0;
}

/*
 * RSASSA-PKCS1-v1_5 with SHA-256 (JWS "RS256") of data into out; *out_length holds the buffer's
 * size on entry (at least pwb_signature_size) and the signature's on return. 1 on success.
 */
static inline int pwb_rs256_sign(EVP_PKEY *key, const unsigned char *data, size_t length, unsigned char *out,
                                 size_t *out_length) {
    EVP_MD_CTX *context = EVP_MD_CTX_new();
    if (context == NULL) {
        return 0;
    }
    int ok = EVP_DigestSignInit(context, NULL, EVP_sha256(), NULL, key) == 1 &&
             EVP_DigestSign(context, out, out_length, data, length) == 1;
    EVP_MD_CTX_free(context);
    return ok;
}

/* 1 when signature is an RS256 signature of data by the private half of `key`. */
static inline int pwb_rs256_verify(EVP_PKEY *key, const unsigned char *data, size_t length,
                                   const unsigned char *signature, size_t signature_length) {
    EVP_MD_CTX *context = EVP_MD_CTX_new();
    if (context == NULL) {
        return 0;
    }
    int ok = EVP_DigestVerifyInit(context, NULL, EVP_sha256(), NULL, key) == 1 &&
             EVP_DigestVerify(context, signature, signature_length, data, length) == 1;
    EVP_MD_CTX_free(context);
    return ok;
}

#endif
