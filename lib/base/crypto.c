/* crypto.c: see crypto.h. The only file that includes OpenSSL headers. */
#include <limits.h>
#include <pthread.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include "base/crypto.h"

/*
 * SHA-256 fetched once per process: OpenSSL 3's one-shot SHA256() and
 * EVP_sha256() look the algorithm up in the provider store on every call,
 * which showed as a tenth of a request's user time.
 */
static EVP_MD		*sha256_md;
static pthread_once_t	 sha256_once = PTHREAD_ONCE_INIT;

static void
sha256_fetch(void)
{
	sha256_md = EVP_MD_fetch(NULL, "SHA2-256", NULL);
}

static void
sha256(const void *data, size_t len, uint8_t out[CRYPTO_SHA256_LEN])
{
	pthread_once(&sha256_once, sha256_fetch);
	if (sha256_md == NULL ||
	    EVP_Digest(data, len, out, NULL, sha256_md, NULL) != 1)
		SHA256(data, len, out);
}

int
crypto_random(void *buf, size_t n)
{
	if (n > (size_t)0x7fffffff)
		return -1;
	return RAND_bytes(buf, (int)n) == 1 ? 0 : -1;
}

int
crypto_token(char *out, size_t outsz, size_t nbytes)
{
	uint8_t raw[128];

	if (nbytes > sizeof(raw) || outsz < crypto_b64url_len(nbytes) + 1)
		return -1;
	if (crypto_random(raw, nbytes) == -1)
		return -1;
	crypto_b64url_encode(raw, nbytes, out);
	crypto_wipe(raw, sizeof(raw));
	return 0;
}

void
crypto_sha256(const void *data, size_t len, uint8_t out[CRYPTO_SHA256_LEN])
{
	sha256(data, len, out);
}

void
crypto_sha256_hex(const void *data, size_t len, char out[CRYPTO_SHA256_HEX])
{
	static const char hex[] = "0123456789abcdef";
	uint8_t md[CRYPTO_SHA256_LEN];
	size_t i;

	sha256(data, len, md);
	for (i = 0; i < sizeof(md); i++) {
		out[2 * i] = hex[md[i] >> 4];
		out[2 * i + 1] = hex[md[i] & 15];
	}
	out[2 * sizeof(md)] = '\0';
}

void
crypto_hmac_sha256(const void *key, size_t klen, const void *msg, size_t mlen,
    uint8_t out[CRYPTO_SHA256_LEN])
{
	unsigned int outlen = CRYPTO_SHA256_LEN;

	pthread_once(&sha256_once, sha256_fetch);
	HMAC(sha256_md != NULL ? sha256_md : EVP_sha256(), key, (int)klen, msg,
	    mlen, out, &outlen);
}

bool
crypto_equal(const void *a, const void *b, size_t n)
{
	return CRYPTO_memcmp(a, b, n) == 0;
}

bool
crypto_str_equal(const char *a, const char *b)
{
	uint8_t ha[CRYPTO_SHA256_LEN], hb[CRYPTO_SHA256_LEN];

	/* Hashing first hides the length and the position of a difference. */
	sha256(a, strlen(a), ha);
	sha256(b, strlen(b), hb);
	return CRYPTO_memcmp(ha, hb, sizeof(ha)) == 0;
}

void
crypto_wipe(void *buf, size_t n)
{
	OPENSSL_cleanse(buf, n);
}

static const char b64url[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
static const char b64std[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t
crypto_b64url_len(size_t n)
{
	return (n / 3) * 4 + (n % 3 == 0 ? 0 : n % 3 + 1);
}

size_t
crypto_b64url_encode(const void *in, size_t n, char *out)
{
	const uint8_t	*p = in;
	size_t		 i, o = 0;

	for (i = 0; i + 2 < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
		out[o++] = b64url[v >> 18];
		out[o++] = b64url[(v >> 12) & 63];
		out[o++] = b64url[(v >> 6) & 63];
		out[o++] = b64url[v & 63];
	}
	if (n - i == 1) {
		uint32_t v = (uint32_t)p[i] << 16;
		out[o++] = b64url[v >> 18];
		out[o++] = b64url[(v >> 12) & 63];
	} else if (n - i == 2) {
		uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;
		out[o++] = b64url[v >> 18];
		out[o++] = b64url[(v >> 12) & 63];
		out[o++] = b64url[(v >> 6) & 63];
	}
	out[o] = '\0';
	return o;
}

size_t
crypto_b64_len(size_t n)
{
	return (n + 2) / 3 * 4;
}

size_t
crypto_b64_encode(const void *in, size_t n, char *out)
{
	size_t	o = crypto_b64url_encode(in, n, out), i;

	for (i = 0; i < o; i++)
		if (out[i] == '-')
			out[i] = '+';
		else if (out[i] == '_')
			out[i] = '/';
	while (o % 4 != 0)
		out[o++] = '=';
	out[o] = '\0';
	return o;
}

static long
b64_decode(const char *alpha, const char *in, size_t len, void *out,
    size_t outsz, int padded)
{
	uint8_t		*q = out;
	uint32_t	 acc = 0;
	size_t		 i, o = 0, bits = 0, pad = 0;

	if (padded) {
		while (len > 0 && in[len - 1] == '=' && pad < 2)
			len--, pad++;
		if ((len + pad) % 4 != 0)
			return -1;
	} else if (len % 4 == 1)
		return -1;
	for (i = 0; i < len; i++) {
		const char *c;

		if (in[i] == '\0' || (c = strchr(alpha, in[i])) == NULL)
			return -1;
		acc = acc << 6 | (uint32_t)(c - alpha);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (o >= outsz)
				return -1;
			q[o++] = (uint8_t)(acc >> bits);
		}
	}
	/* Leftover bits must be zero (canonical encoding). */
	if ((acc & ((1u << bits) - 1)) != 0)
		return -1;
	return (long)o;
}

long
crypto_b64url_decode(const char *in, size_t len, void *out, size_t outsz)
{
	return b64_decode(b64url, in, len, out, outsz, 0);
}

long
crypto_b64_decode(const char *in, size_t len, void *out, size_t outsz)
{
	return b64_decode(b64std, in, len, out, outsz, 1);
}

#define GCM_NONCE	12
#define GCM_TAG		16

long
crypto_seal(const uint8_t key[CRYPTO_SEAL_KEY], const void *ad, size_t adlen,
    const void *in, size_t n, void *out, size_t outsz)
{
	EVP_CIPHER_CTX	*x;
	unsigned char	*o = out;
	int		 len, fin;
	long		 rc = -1;

	if (n > INT_MAX - CRYPTO_SEAL_OVERHEAD || adlen > INT_MAX ||
	    outsz < n + CRYPTO_SEAL_OVERHEAD)
		return -1;
	if (RAND_bytes(o, GCM_NONCE) != 1 || (x = EVP_CIPHER_CTX_new()) == NULL)
		return -1;
	if (EVP_EncryptInit_ex(x, EVP_aes_256_gcm(), NULL, key, o) == 1 &&
	    (adlen == 0 ||
	     EVP_EncryptUpdate(x, NULL, &len, ad, (int)adlen) == 1) &&
	    EVP_EncryptUpdate(x, o + GCM_NONCE, &len, in, (int)n) == 1 &&
	    EVP_EncryptFinal_ex(x, o + GCM_NONCE + len, &fin) == 1 &&
	    EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_GET_TAG, GCM_TAG,
	    o + GCM_NONCE + len + fin) == 1)
		rc = GCM_NONCE + len + fin + GCM_TAG;
	EVP_CIPHER_CTX_free(x);
	return rc;
}

long
crypto_open(const uint8_t key[CRYPTO_SEAL_KEY], const void *ad, size_t adlen,
    const void *in, size_t n, void *out, size_t outsz)
{
	EVP_CIPHER_CTX		*x;
	const unsigned char	*p = in;
	unsigned char		 tag[GCM_TAG];
	int			 len, fin;
	long			 rc = -1;

	if (n < CRYPTO_SEAL_OVERHEAD || n > INT_MAX || adlen > INT_MAX ||
	    outsz < n - CRYPTO_SEAL_OVERHEAD)
		return -1;
	memcpy(tag, p + n - GCM_TAG, GCM_TAG);
	if ((x = EVP_CIPHER_CTX_new()) == NULL)
		return -1;
	if (EVP_DecryptInit_ex(x, EVP_aes_256_gcm(), NULL, key, p) == 1 &&
	    (adlen == 0 ||
	     EVP_DecryptUpdate(x, NULL, &len, ad, (int)adlen) == 1) &&
	    EVP_DecryptUpdate(x, out, &len,
	    p + GCM_NONCE, (int)(n - CRYPTO_SEAL_OVERHEAD)) == 1 &&
	    EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_SET_TAG, GCM_TAG, tag) == 1 &&
	    EVP_DecryptFinal_ex(x, (unsigned char *)out + len, &fin) == 1)
		rc = len + fin;
	else
		OPENSSL_cleanse(out, n - CRYPTO_SEAL_OVERHEAD);
	EVP_CIPHER_CTX_free(x);
	return rc;
}
