/*
 * crypto.h: randomness, hashing, MACs and constant-time comparison.
 *
 * The only file that includes OpenSSL headers is crypto.c.
 */
#ifndef CS_CRYPTO_H
#define CS_CRYPTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CRYPTO_SHA256_LEN	32
#define CRYPTO_SHA256_HEX	65	/* 64 hex digits and NUL */

/* Fill buf with n random bytes (RAND_bytes). Returns 0, or -1 on failure. */
int	crypto_random(void *buf, size_t n);

/*
 * Make a random token: nbytes random bytes, base64url without padding,
 * into out (size at least crypto_b64url_len(nbytes) + 1). Returns 0 or -1.
 */
int	crypto_token(char *out, size_t outsz, size_t nbytes);

/* SHA-256 of data, as 64 lowercase hex digits plus NUL. */
void	crypto_sha256_hex(const void *data, size_t len, char out[CRYPTO_SHA256_HEX]);
void	crypto_sha256(const void *data, size_t len, uint8_t out[CRYPTO_SHA256_LEN]);

/* HMAC-SHA256. */
void	crypto_hmac_sha256(const void *key, size_t klen, const void *msg,
	    size_t mlen, uint8_t out[CRYPTO_SHA256_LEN]);

/* Constant-time equality of two n-byte buffers (CRYPTO_memcmp). */
bool	crypto_equal(const void *a, const void *b, size_t n);
/* Constant-time equality of two strings, also hiding where they differ. */
bool	crypto_str_equal(const char *a, const char *b);

/* Zero a buffer in a way the compiler keeps. */
void	crypto_wipe(void *buf, size_t n);

/* Length of the base64url (no padding) text for n bytes, without NUL. */
size_t	crypto_b64url_len(size_t n);
/* Encode; out must hold crypto_b64url_len(n) + 1 bytes. Returns length. */
size_t	crypto_b64url_encode(const void *in, size_t n, char *out);
/*
 * Decode base64url (no padding, strict alphabet) into out (size outsz).
 * Returns the decoded length, or -1 on bad input or short buffer.
 */
long	crypto_b64url_decode(const char *in, size_t len, void *out, size_t outsz);
/* Standard base64 (with padding): its length, and the encoder (out holds
 * crypto_b64_len(n) + 1 bytes). */
size_t	crypto_b64_len(size_t n);
size_t	crypto_b64_encode(const void *in, size_t n, char *out);
/* Decode standard base64 (with padding). Same returns. */
long	crypto_b64_decode(const char *in, size_t len, void *out, size_t outsz);

/*
 * Authenticated encryption (AES-256-GCM) of n bytes under a 32-byte key,
 * bound to the additional data ad (adlen bytes, not encrypted). The sealed
 * form is a 12-byte random nonce, the ciphertext and the 16-byte tag:
 * CRYPTO_SEAL_OVERHEAD bytes more than the plaintext. crypto_seal writes it
 * into out (outsz bytes) and returns its length, or -1. crypto_open checks
 * and decrypts; it returns the plaintext's length, or -1 when the key, the
 * additional data or any byte is not the one sealed (nothing written then).
 */
#define CRYPTO_SEAL_KEY		32
#define CRYPTO_SEAL_OVERHEAD	(12 + 16)
long	crypto_seal(const uint8_t key[CRYPTO_SEAL_KEY], const void *ad,
	    size_t adlen, const void *in, size_t n, void *out, size_t outsz);
long	crypto_open(const uint8_t key[CRYPTO_SEAL_KEY], const void *ad,
	    size_t adlen, const void *in, size_t n, void *out, size_t outsz);

#endif
